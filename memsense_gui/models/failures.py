"""Tables of the Diagnose and Find-a-fix views: lost gold sessions, and fix candidates.

Every value shown is core's (`core.evaluation.diagnose.LostSession`, `core.evaluation.fix.FixCandidate`);
the models only format it.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtGui import QColor

from core.evaluation.diagnose import STAGE_MEANING, LostSession
from core.evaluation.evaluate import category_name
from core.evaluation.fix import FixCandidate
from memsense_gui import theme
from memsense_gui.models.table import RowsModel, on_screen


class LostSessionsModel(RowsModel[LostSession]):
    """One gold session of one question per row: where it ended up, judged by which chunk."""

    QUESTION, USER, CATEGORY, GOLD, STAGE, RANK, CHUNK = range(7)
    HEADERS = ("Question", "User", "Category", "Gold", "Stage", "Rank", "Judged by")
    HEADER_TIPS = {GOLD: "the gold session's number in its conversation",
                   STAGE: "where the session was lost (SPEC §13): the furthest any of its chunks got",
                   RANK: "result rank when returned, else candidate-pool rank when in the pool",
                   CHUNK: "the session's chunk the stage was judged by (its 'why not' says the same)"}
    NUMERIC = frozenset({GOLD, RANK})

    def item(self, row: int) -> LostSession:
        return self.rows[row]

    def display(self, row: int, col: int) -> str | None:
        i = self.rows[row]
        return (i.query, i.user_id, category_name(i.category), str(i.gold_session), i.stage,
                "" if i.rank is None else str(i.rank), i.memory_id or "—")[col]

    def raw(self, row: int, col: int) -> Any:
        i = self.rows[row]
        if col == self.GOLD:
            return i.gold_session
        if col == self.RANK:
            return i.rank
        if col == self.CATEGORY:
            return i.category
        return self.display(row, col)

    def memory_id(self, row: int) -> str | None:
        return self.rows[row].memory_id

    def tooltip(self, row: int, col: int) -> str | None:
        i = self.rows[row]
        return f"{i.question_id}: {i.query}\n{i.stage}: {STAGE_MEANING[i.stage]}\n{i.reason}"


class FixCandidatesModel(RowsModel[FixCandidate]):
    """One candidate config per row, best first, with what it does on every question."""

    CHANGED, CASES, FIXED, BROKEN, METRIC, P, MEMSENSE = range(7)
    HEADERS = ("Changes", "Cases fixed", "Fixed (all)", "Broken (all)", "metric", "p", "Memsense")
    HEADER_TIPS = {CASES: "of the chosen cases, those the candidate wins back",
                   FIXED: "every question whose metric rises (the chosen cases included)",
                   BROKEN: "every question whose metric falls",
                   P: "paired randomisation test of the metric against the start settings",
                   MEMSENSE: "whether Memsense takes it as request options, or needs a change to its code "
                             "(as export-memsense says)"}
    NUMERIC = frozenset({CASES, FIXED, BROKEN, METRIC, P})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.cases = 0
        self.metric = "metric"

    def set_candidates(self, candidates: Sequence[FixCandidate], cases: int, metric: str) -> None:
        self.cases, self.metric = cases, metric  # read by the reset's headers and cells
        self.set_rows(candidates)

    def headerData(self, section, orientation, role=0):  # noqa: N802 - Qt override
        value = super().headerData(section, orientation, role)
        return self.metric if value == "metric" else value

    def candidate(self, row: int) -> FixCandidate:
        return on_screen(self.rows[row] if 0 <= row < self._n else None)

    def display(self, row: int, col: int) -> str | None:
        c = self.rows[row]
        if col == self.CHANGED:
            return ", ".join(f"{k} {a:g} → {b:g}" for k, (a, b) in c.changed.items())
        if col == self.CASES:
            return f"{len(c.cases_fixed)} of {self.cases}"
        if col == self.FIXED:
            return str(len(c.fixed))
        if col == self.BROKEN:
            return str(len(c.broken))
        if col == self.METRIC:
            return f"{c.metric_before:.3f} → {c.metric_after:.3f}"
        if col == self.P:
            return f"{c.p_value:.3f}"
        return memsense_word(c)

    def raw(self, row: int, col: int) -> Any:
        c = self.rows[row]
        return {self.CHANGED: len(c.changed), self.CASES: len(c.cases_fixed), self.FIXED: len(c.fixed),
                self.BROKEN: len(c.broken), self.METRIC: c.metric_after, self.P: c.p_value}.get(col, self.display(row, col))

    def foreground(self, row: int, col: int) -> QColor | None:
        c = self.rows[row]
        if col == self.METRIC and c.metric_after != c.metric_before:
            return theme.current().qcolor("up" if c.metric_after > c.metric_before else "down")
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        c = self.rows[row]
        lines = [f"{k}: {a:g} → {b:g}" for k, (a, b) in c.changed.items()]
        lines += [f"cases won back: {', '.join(c.cases_fixed) or 'none'}",
                 f"broken: {', '.join(c.broken[:12])}{' …' if len(c.broken) > 12 else ''}" if c.broken else "breaks none"]
        return "\n".join(lines)


def memsense_word(c: FixCandidate) -> str:
    """'request options' or 'needs a code change: …', as `memsense export-memsense` says of it."""
    memsense = c.to_json()["memsense"]
    needs = memsense["needs_code_change"]
    return f"needs a code change: {', '.join(needs)}" if needs else "request options"
