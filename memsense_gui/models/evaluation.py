"""The Evaluation view's tables: presets × metrics, and the questions where two presets differ."""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import Qt

from core.evaluation.evaluate import PresetEvaluation, category_name
from core.evaluation.metrics import metric_names
from memsense_gui import theme
from memsense_gui.models.table import TableModel


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


class PresetMetricsModel(TableModel):
    """One row per preset: question count and every metric at k (overall)."""

    PRESET, QUESTIONS = 0, 1
    NUMERIC = frozenset(range(1, 7))

    def __init__(self, parent=None):
        super().__init__(parent)
        self.results: list[PresetEvaluation] = []
        self.metrics: tuple[str, ...] = metric_names(4)
        self.HEADERS = ("preset", "questions", *self.metrics)
        self.stale: frozenset[str] = frozenset()  # presets whose figures are being scored again

    def set_stale(self, presets: Sequence[str]) -> None:
        """Mark the rows of `presets` as stale (their figures are not of the settings they name)."""
        if frozenset(presets) != self.stale:
            self.stale = frozenset(presets)
            if self._n:
                self.dataChanged.emit(self.index(0, 0), self.index(self._n - 1, len(self.HEADERS) - 1))

    def set_results(self, results: Sequence[PresetEvaluation]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self.metrics = results[0].metric_names if results else metric_names(4)
        self.HEADERS = ("preset", "questions", *self.metrics)
        self._n = len(self.results)
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.HEADERS) - 1)

    def raw(self, row: int, col: int) -> Any:
        r = self.results[row]
        if col == self.PRESET:
            return r.preset
        if col == self.QUESTIONS:
            return r.questions
        return r.overall.get(self.metrics[col - 2])

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        if col == self.PRESET and value in self.stale:
            return f"{value} (stale: updating…)"
        return value if isinstance(value, str) else str(value) if col == self.QUESTIONS else _fmt(value)

    def memory_id(self, row: int) -> None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        if self.results[row].preset in self.stale:
            return "scored under earlier settings; being scored again under the settings on screen"
        if col < 2:
            return None
        r, metric = self.results[row], self.metrics[col - 2]
        parts = [f"{c} {category_name(c)}: {_fmt(v.get(metric))} ({r.category_counts[c]} questions)"
                 for c, v in r.per_category.items()]
        return f"{r.preset} — {metric}\n" + "\n".join(parts)

    def foreground(self, row: int, col: int) -> Any:
        return theme.current().qcolor("muted") if self.results[row].preset in self.stale else None

    def background(self, row: int, col: int) -> Any:
        if col < 2 or not self.results:
            return None
        best = max(r.overall.get(self.metrics[col - 2], 0.0) for r in self.results)
        if self.raw(row, col) == best and len(self.results) > 1:
            return theme.current().qcolor("gold")
        return None

    def font(self, row: int, col: int) -> None:
        return None


class QuestionDiffModel(TableModel):
    """Questions where preset B scores differently from A on one metric (optionally all)."""

    HEADERS = ("B − A", "question", "category", "A", "B", "gold", "A sessions", "B sessions", "user")
    DIFF, QUESTION, CATEGORY, A, B, GOLD, A_SESSIONS, B_SESSIONS, USER = range(9)
    NUMERIC = frozenset({DIFF, A, B})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[dict] = []

    def set_rows(self, rows: Sequence[dict]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._n = len(self.rows)
        self.endResetModel()

    def raw(self, row: int, col: int) -> Any:
        r = self.rows[row]
        return (r["diff"], r["question"], r["category"], r["a"], r["b"], r["gold"], r["a_sessions"],
                r["b_sessions"], r["user"])[col]

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        if col == self.DIFF:
            return f"{value:+.2f}"
        if col in (self.A, self.B):
            return _fmt(value)
        if col == self.CATEGORY:
            return f"{value} {category_name(value)}"
        if isinstance(value, tuple):
            return " ".join(str(s) for s in value)
        return str(value)

    def memory_id(self, row: int) -> str:
        return self.rows[row]["question_id"]

    def tooltip(self, row: int, col: int) -> str | None:
        r = self.rows[row]
        return f"{r['question_id']}: {r['question']}\nclick to open it in the inspector with its gold sessions marked"

    def foreground(self, row: int, col: int) -> Any:
        if col != self.DIFF:
            return None
        diff = self.rows[row]["diff"]
        return theme.current().qcolor("up" if diff > 0 else "down") if diff else None

    def background(self, row: int, col: int) -> None:
        return None

    def font(self, row: int, col: int) -> None:
        return None


def diff_rows(a: PresetEvaluation, b: PresetEvaluation, metric: str, include_ties: bool = False) -> list[dict]:
    """Per question: A's and B's value of `metric`, their sessions and the gold ones; wins
    (B higher) first, then losses, each by question id."""
    rows: list[dict[str, Any]] = []
    for oa, ob in zip(a.outcomes, b.outcomes):
        va, vb = oa.metrics[metric], ob.metrics[metric]
        if va == vb and not include_ties:
            continue
        rows.append({"question_id": oa.question_id, "user": oa.user_id, "question": oa.text, "category": oa.category,
                     "a": va, "b": vb, "diff": vb - va, "gold": oa.gold_sessions, "a_sessions": oa.sessions,
                     "b_sessions": ob.sessions})
    rows.sort(key=lambda r: (-r["diff"], r["question_id"]))
    return rows
