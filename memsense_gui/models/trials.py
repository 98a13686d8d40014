"""The auto-tuner's trial history: stage, train and test metric, and the main knobs of each trial."""
from __future__ import annotations

from typing import Any, Sequence

from core.evaluation.tune import Trial
from memsense_gui import theme
from memsense_gui.models.table import TableModel


SHOWN_KNOBS = ("rrf_k", "mmr_lambda", "duplicate_threshold", "turn_support_cap", "turn_support_factor", "alpha")


class TrialModel(TableModel):
    """One row per trial: its stage, train and test metric, and the main knobs."""

    HEADERS = ("trial", "stage", "train", "test", *SHOWN_KNOBS, "route weights")
    NUMERIC = frozenset({0, 2, 3, *range(4, 4 + len(SHOWN_KNOBS))})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.trials: list[Trial] = []
        self.best: int | None = None

    def set_trials(self, trials: Sequence[Trial], best: int | None = None) -> None:
        self.beginResetModel()
        self.trials = list(trials)
        self.best = best
        self._n = len(self.trials)
        self.endResetModel()

    def raw(self, row: int, col: int) -> Any:
        t = self.trials[row]
        if col < 4:
            return (t.number, t.stage, t.train, t.test)[col]
        if col < 4 + len(SHOWN_KNOBS):
            return float(getattr(t.config, SHOWN_KNOBS[col - 4]))
        return " ".join(f"{r}={w:g}" for r, w in t.config.route_weights.items() if w)

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        if col in (2, 3):
            return "" if value is None else f"{value:.3f}"
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)

    def memory_id(self, row: int) -> None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        return "the best trial" if self.trials[row].number == self.best else None

    def foreground(self, row: int, col: int) -> None:
        return None

    def background(self, row: int, col: int) -> Any:
        return theme.current().qcolor("gold") if self.trials[row].number == self.best else None

    def font(self, row: int, col: int) -> None:
        return None
