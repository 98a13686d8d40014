"""Tables of the Diagnose and Find-a-fix views: lost gold sessions, and fix candidates.

Every value shown is core's (`core.evaluation.diagnose.LostSession`, `core.evaluation.fix.FixCandidate`);
the models only format it.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtGui import QColor

from core.evaluation.diagnose import QuestionLoss, STAGE_MEANING, LostSession
from core.evaluation.evaluate import category_name
from core.evaluation.fix import FixCandidate
from memsense_gui import theme
from memsense_gui.models.table import RowsModel, on_screen


class LostSessionsModel(RowsModel[QuestionLoss]):
    """One question per row: how many of its gold sessions were lost and where (each question once,
    however many of its sessions the filter picked), judged by which chunk."""

    QUESTION, USER, CATEGORY, LOST, STAGE, RANK, CHUNK = range(7)
    HEADERS = ("Question", "User", "Category", "Lost", "Stage", "Returned at", "Judged by")
    HEADER_TIPS = {LOST: "gold sessions of the question not returned in the top k, of all its gold sessions",
                   STAGE: "where each listed session was lost (SPEC §13): the furthest any of its chunks got",
                   RANK: "result ranks of the question's gold sessions that were returned (a lost one has none)",
                   CHUNK: "the chunk the first listed session was judged by (its 'why not' says the same)"}
    NUMERIC = frozenset({LOST, RANK})

    def item(self, row: int) -> LostSession:
        """The first listed gold session of the row's question (what opening the case shows)."""
        return self.rows[row].first

    def display(self, row: int, col: int) -> str | None:
        g = self.rows[row]
        i = g.first
        return (i.query, i.user_id, category_name(i.category), f"{g.lost} of {len(g.gold)}", g.stages,
                ", ".join(map(str, g.returned_ranks)), i.memory_id or "—")[col]

    def raw(self, row: int, col: int) -> Any:
        g = self.rows[row]
        if col == self.LOST:
            return g.lost
        if col == self.RANK:
            return g.returned_ranks[0] if g.returned_ranks else None
        if col == self.CATEGORY:
            return g.first.category
        return self.display(row, col)

    def memory_id(self, row: int) -> str | None:
        return self.rows[row].first.memory_id

    def tooltip(self, row: int, col: int) -> str | None:
        g = self.rows[row]
        lines = [f"{g.first.question_id}: {g.first.query}"]
        lines += [f"session {i.gold_session}: {i.stage} ({STAGE_MEANING[i.stage]}); {i.reason}" for i in g.shown]
        return "\n".join(lines)


class FixCandidatesModel(RowsModel[FixCandidate]):
    """One candidate config per row, in SPEC §16's order (not harmful first, then the metric over every
    question), with what it does on every question and on the questions not used to choose it."""

    CHANGED, VERDICT, METRIC, OTHERS, NET, CASES, FIXED, BROKEN, P, MEMSENSE = range(10)
    HEADERS = ("Changes", "Verdict", "metric (all)", "Others", "Net", "Cases fixed", "Fixed (all)", "Broken (all)",
               "p", "Memsense")
    HEADER_TIPS = {VERDICT: "harmful: lowers the metric over every question with paired p < 0.05 (SPEC §16); "
                            "listed last and never pre-selected",
                   METRIC: "the metric over every question, before → after",
                   OTHERS: "out of sample: the metric over every question but the chosen cases, before → after",
                   NET: "questions whose metric rose minus those whose metric fell, over every question",
                   CASES: "of the chosen cases, those the candidate wins back",
                   FIXED: "every question whose metric rises (the chosen cases included)",
                   BROKEN: "every question whose metric falls",
                   P: "paired randomisation test of the metric over every question against the start settings",
                   MEMSENSE: "whether Memsense takes it as request options, or needs a change to its code "
                             "(as export-memsense says)"}
    NUMERIC = frozenset({METRIC, OTHERS, NET, CASES, FIXED, BROKEN, P})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.cases = 0
        self.metric = "metric"

    def set_candidates(self, candidates: Sequence[FixCandidate], cases: int, metric: str) -> None:
        self.cases, self.metric = cases, metric  # read by the reset's headers and cells
        self.set_rows(candidates)

    def headerData(self, section, orientation, role=0):  # noqa: N802 - Qt override
        value = super().headerData(section, orientation, role)
        return f"{self.metric} (all)" if value == "metric (all)" else value

    def candidate(self, row: int) -> FixCandidate:
        return on_screen(self.rows[row] if 0 <= row < self._n else None)

    def display(self, row: int, col: int) -> str | None:
        c = self.rows[row]
        if col == self.CHANGED:
            return ", ".join(f"{k} {a:g} → {b:g}" for k, (a, b) in c.changed.items())
        if col == self.VERDICT:
            return "harmful" if c.harmful else "safe"
        if col == self.METRIC:
            return f"{c.metric_before:.3f} → {c.metric_after:.3f}"
        if col == self.OTHERS:
            return "—" if c.others_before is None else f"{c.others_before:.3f} → {c.others_after:.3f}"
        if col == self.NET:
            return f"{c.net:+d}"
        if col == self.CASES:
            return f"{len(c.cases_fixed)} of {self.cases}"
        if col == self.FIXED:
            return str(len(c.fixed))
        if col == self.BROKEN:
            return str(len(c.broken))
        if col == self.P:
            return f"{c.p_value:.3f}"
        return memsense_word(c)

    def raw(self, row: int, col: int) -> Any:
        c = self.rows[row]
        return {self.CHANGED: len(c.changed), self.VERDICT: int(c.harmful), self.METRIC: c.metric_after,
                self.OTHERS: c.others_after, self.NET: c.net, self.CASES: len(c.cases_fixed),
                self.FIXED: len(c.fixed), self.BROKEN: len(c.broken),
                self.P: c.p_value}.get(col, self.display(row, col))

    def foreground(self, row: int, col: int) -> QColor | None:
        c = self.rows[row]
        if col == self.VERDICT and c.harmful:
            return theme.current().qcolor("down")
        before, after = ((c.metric_before, c.metric_after) if col == self.METRIC else
                         (c.others_before, c.others_after) if col == self.OTHERS else (None, None))
        if before is not None and after is not None and after != before:
            return theme.current().qcolor("up" if after > before else "down")
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        c = self.rows[row]
        lines = [c.harm_text()] if c.harmful else []
        lines += [f"{k}: {a:g} → {b:g}" for k, (a, b) in c.changed.items()]
        lines += [f"cases won back: {', '.join(c.cases_fixed) or 'none'}",
                 f"broken: {', '.join(c.broken[:12])}{' …' if len(c.broken) > 12 else ''}" if c.broken else "breaks none"]
        return "\n".join(lines)


def memsense_word(c: FixCandidate) -> str:
    """'request options' or 'needs a code change: …', as `memsense export-memsense` says of it."""
    memsense = c.to_json()["memsense"]
    needs = memsense["needs_code_change"]
    return f"needs a code change: {', '.join(needs)}" if needs else "request options"
