"""The Runs view's comparison tables: each run's figures against the baseline, and the question ×
run matrix. Every figure is core's (`core.evaluation.experiments.RunComparison`)."""
from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor

from core.evaluation.evaluate import category_name
from core.evaluation.experiments import RunComparison
from memsense_gui import theme
from memsense_gui.models.table import TableModel

SIDE, MEAN, CI, P, WON, LOST = range(6)


class SidesModel(TableModel):
    """One row per run (a config of a kept run): its mean with the 95 % interval, and against the
    baseline the paired p and the questions won and lost."""

    HEADERS = ("Run", "Mean", "95 % CI", "p vs base", "Won", "Lost")
    HEADER_TIPS = {CI: "percentile bootstrap over the questions every run scored",
                   P: "paired randomisation test against the baseline run, over the same questions",
                   WON: "questions where this run's value is above the baseline's",
                   LOST: "questions where it is below"}
    NUMERIC = frozenset({MEAN, CI, P, WON, LOST})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: RunComparison | None = None

    def set_result(self, result: RunComparison | None) -> None:
        self.beginResetModel()
        self.result = result
        self._n = len(result.figures) if result is not None else 0
        self.endResetModel()

    def display(self, row: int, col: int) -> str | None:
        assert self.result is not None
        f = self.result.figures[row]
        base = row == self.result.baseline
        return (f.label, f"{f.mean:.3f}", f"{f.ci[0]:.3f} – {f.ci[1]:.3f}",
                "baseline" if base else f"{f.p_value:.3f}", "" if base else str(f.wins),
                "" if base else str(f.losses))[col]

    def raw(self, row: int, col: int) -> Any:
        assert self.result is not None
        f = self.result.figures[row]
        return {MEAN: f.mean, CI: f.ci[0], P: f.p_value, WON: f.wins, LOST: f.losses}.get(col, self.display(row, col))

    def foreground(self, row: int, col: int) -> QColor | None:
        assert self.result is not None
        f = self.result.figures[row]
        if col != P or f.p_value is None or f.p_value >= 0.05:
            return None
        base = self.result.figures[self.result.baseline].mean
        return theme.current().qcolor("up" if f.mean > base else "down")


class MatrixModel(TableModel):
    """Question × run: each run's value of the metric, ✓ / ✗ for a recall metric's pass or fail;
    the rows those of `rows` (filtered by category and by changed)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: RunComparison | None = None
        self.rows: list[int] = []
        self.HEADERS: tuple[str, ...] = ("Question", "Category")

    def set_rows(self, result: RunComparison | None, rows: list[int]) -> None:
        self.beginResetModel()
        self.result, self.rows = result, rows
        self.HEADERS = ("Question", "Category", *(f.label for f in result.figures)) if result else ("Question",)
        self.NUMERIC = frozenset(range(2, len(self.HEADERS)))
        self._n = len(rows)
        self.endResetModel()

    def question(self, row: int) -> str:
        assert self.result is not None
        return self.result.questions[self.rows[row]]

    def display(self, row: int, col: int) -> str | None:
        assert self.result is not None
        i = self.rows[row]
        q = self.result.questions[i]
        if col == 0:
            return q
        if col == 1:
            c = self.result.categories.get(q)
            return "" if c is None else category_name(c)
        value = self.result.values[i, col - 2]
        passes = self.result.passes(i, col - 2)
        return f"{'' if passes is None else '✓ ' if passes else '✗ '}{value:.3f}"

    def raw(self, row: int, col: int) -> Any:
        assert self.result is not None
        i = self.rows[row]
        return float(self.result.values[i, col - 2]) if col >= 2 else self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        assert self.result is not None
        if col < 2 or not self.result.returned:
            return None
        q = self.result.questions[self.rows[row]]
        ids = self.result.returned[col - 2].get(q)
        return None if ids is None else f"{self.result.figures[col - 2].label} returned:\n" + "\n".join(ids)

    def foreground(self, row: int, col: int) -> QColor | None:
        assert self.result is not None
        if col < 2:
            return None
        i = self.rows[row]
        value, base = self.result.values[i, col - 2], self.result.values[i, self.result.baseline]
        return None if value == base else theme.current().qcolor("up" if value > base else "down")
