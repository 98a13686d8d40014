"""Judged questions as cases: each question's metric under the current settings, pass or fail."""
from __future__ import annotations

from typing import Any, Mapping, Sequence, cast

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from core.evaluation.evaluate import QuestionOutcome, category_name
from core.evaluation.judged import session_qrels
from core.evaluation.metrics import relevant_of
from core.records import Question
from memsense_gui import theme
from memsense_gui.models.table import DISPLAY, TableModel

PASS_AT = 1.0
"""A case passes when its metric reaches this (recall_all@k = 1: every gold session returned)."""


class CasesModel(TableModel):
    """One judged question per row; metric and pass/fail follow the last outcomes given."""

    RESULT, QUESTION, CATEGORY, USER, METRIC, GOLD, RETURNED = range(7)
    HEADERS = ("Pass", "Question", "Category", "User", "metric", "Gold sessions", "Returned sessions")
    NUMERIC = frozenset({METRIC})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.questions: tuple[Question, ...] = ()
        self._outcomes: dict[str, QuestionOutcome] = {}
        self.metric = "recall_all@4"

    def set_questions(self, questions: Sequence[Question]) -> None:
        self.beginResetModel()
        self.questions = tuple(questions)
        self._outcomes = {}
        self._n = len(self.questions)
        self.endResetModel()

    def set_outcomes(self, outcomes: Sequence[QuestionOutcome], metric: str) -> None:
        """New metric values (after a settings change): the rows stay, their values change."""
        self._outcomes = {o.question_id: o for o in outcomes}
        if metric != self.metric:
            self.metric = metric
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, self.METRIC, self.METRIC)
        self.refresh()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and section == self.METRIC and role == DISPLAY:
            return self.metric
        return super().headerData(section, orientation, role)

    def question(self, row: int) -> Question:
        return self.questions[row]

    def outcome(self, row: int) -> QuestionOutcome | None:
        return self._outcomes.get(self.questions[row].question_id)

    def passed(self, row: int) -> bool | None:
        o = self.outcome(row)
        return None if o is None else o.metrics[self.metric] >= PASS_AT

    def counts(self) -> tuple[int, int]:
        """(passing, scored) over every case."""
        scored = [self.passed(r) for r in range(self._n)]
        return sum(1 for p in scored if p), sum(1 for p in scored if p is not None)

    def display(self, row: int, col: int) -> str | None:
        q, o = self.questions[row], self.outcome(row)
        if col == self.RESULT:
            p = self.passed(row)
            return "" if p is None else "pass" if p else "fail"
        if col == self.QUESTION:
            return q.text
        if col == self.CATEGORY:
            return category_name(q.category)
        if col == self.USER:
            return q.user_id
        if col == self.METRIC:
            return "" if o is None else f"{o.metrics[self.metric]:.2f}"
        if col == self.GOLD:
            return " ".join(str(s) for s in sorted(relevant_of(session_qrels(q))))
        return "" if o is None else " ".join(str(s) for s in o.sessions)

    def raw(self, row: int, col: int) -> Any:
        o = self.outcome(row)
        if col == self.METRIC:
            return None if o is None else o.metrics[self.metric]
        if col == self.RESULT:
            return self.passed(row)
        if col == self.CATEGORY:
            return self.questions[row].category
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        if col != self.RESULT:
            return None
        p = self.passed(row)
        return None if p is None else theme.current().qcolor("up" if p else "down")

    def tooltip(self, row: int, col: int) -> str | None:
        q = self.questions[row]
        return f"{q.text}\nexpected: {q.answer or '(no answer given)'}"


class CaseFilter(QSortFilterProxyModel):
    """Rows of one category (or all) whose question, answer or user holds the search words."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.category: int | None = None
        self.words: tuple[str, ...] = ()
        self.only_failing = False

    def set_filter(self, category: int | None, text: str, only_failing: bool = False) -> None:
        self.beginFilterChange()
        self.category, self.words, self.only_failing = category, tuple(text.lower().split()), only_failing
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        model = cast(CasesModel, self.sourceModel())  # the proxy is made over a CasesModel
        q = model.question(row)
        if self.category is not None and q.category != self.category:
            return False
        if self.only_failing and model.passed(row) is not False:
            return False
        hay = f"{q.text} {q.answer} {q.user_id} {q.question_id}".lower()
        return all(w in hay for w in self.words)


def categories(questions: Sequence[Question]) -> Mapping[int, int]:
    """Category -> number of questions, in category order."""
    out: dict[int, int] = {}
    for q in sorted(questions, key=lambda q: q.category):
        out[q.category] = out.get(q.category, 0) + 1
    return out
