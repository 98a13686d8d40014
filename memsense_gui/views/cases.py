"""Cases: every judged question of the open store, pass or fail under the current settings.

Filter by category, search the words of the question and answer, or show only failing cases;
the selected case shows its expected answer, its gold sessions (returned or not, at which
rank), its metric in each kept run of the question file (a sparkline and a table, from
`state.question_runs`) and the text of its evidence turns, highlighted. Double-click (or Open) runs it in the
inspector with its gold sessions marked. Several cases can be selected and handed to Find a fix
(its button, the context menu, Ctrl+Shift+F).
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter, QTextBrowser,
    QVBoxLayout, QWidget,
)

from core.evaluation.evaluate import QuestionOutcome, category_name
from core.evaluation.judged import session_docid
from core.evaluation.question_runs import RunValue
from core.recall.pool import RecallPool
from core.recall.lexical.snippet import message_parts
from core.records import Question
from memsense_gui import theme
from memsense_gui.models.cases import CaseFilter, CasesModel, categories
from memsense_gui.models.history import time_text
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.views.tables import fit_columns, make_table, set_columns


QUESTION_CHARS = 20
"""The Question column is never narrower than this many digits' width."""
SIDE_BY_SIDE = 2.0
"""The panel puts the details beside the list when it is this many times wider than high."""


class CasesPanel(QWidget):
    """The case list; `case_opened(user, question text, gold session ids, evidence turn ids)`
    on double-click."""

    case_opened = Signal(str, str, object, object)
    source_requested = Signal()
    fix_requested = Signal(object)  # tuple of the selected cases' question ids

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = CasesModel(self)
        self.filter = CaseFilter(self)
        self.filter.setSourceModel(self.model)
        self.filter.setSortRole(RAW_ROLE)
        self.view = make_table(self.model)
        self.view.setModel(self.filter)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # file order until a header is clicked
        self.view.setObjectName("cases-table")
        self.pools: dict[str, RecallPool] = {}
        self.run_values: Callable[[str], Sequence[RunValue]] = lambda _question_id: ()
        """A question's value in each kept run of its file, oldest first (the window sets it)."""
        self.source = QLabel("no questions")
        self.source.setWordWrap(True)
        self.choose = QPushButton("Questions…")
        self.category = QComboBox()
        self.category.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search questions and answers…")
        self.search.setClearButtonEnabled(True)
        self.failing = QCheckBox("failing only")
        self.count = QLabel()
        self.details = QTextBrowser()
        self.details.setObjectName("case-details")
        self.open_button = QPushButton("Open in inspector")
        self.fix_button = QPushButton("Find a fix…")
        self.fix_button.setToolTip("Search for settings that win the selected cases back (Ctrl+Shift+F)")
        self._build()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.addWidget(self.source, 1)
        top.addWidget(self.choose)
        layout.addLayout(top)
        row = QHBoxLayout()
        row.addWidget(self.category)
        row.addWidget(self.search, 1)
        row.addWidget(self.failing)
        layout.addLayout(row)
        layout.addWidget(self.count)
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("cases-split")
        split.setChildrenCollapsible(False)
        split.addWidget(self.view)
        below = QWidget()
        box = QVBoxLayout(below)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.details, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button, 1)
        buttons.addWidget(self.fix_button)
        box.addLayout(buttons)
        split.addWidget(below)
        split.setSizes([300, 200])
        layout.addWidget(split, 1)
        fit_columns(self.view, {self.model.RESULT: 5, self.model.CATEGORY: 11, self.model.USER: 10,
                                self.model.METRIC: 11, self.model.GOLD: 8, self.model.RETURNED: 10})
        set_columns(self.view, first=(self.model.RESULT, self.model.QUESTION, self.model.METRIC))  # the key ones
        self.view.horizontalHeader().setStretchLastSection(False)
        self.view.viewport().installEventFilter(self)  # its width changes: the Question column follows
        self.category.currentIndexChanged.connect(self._refilter)
        self.search.textChanged.connect(self._refilter)
        self.failing.toggled.connect(self._refilter)
        self.choose.clicked.connect(self.source_requested)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._show_details())
        self.view.doubleClicked.connect(lambda _i: self.open_selected())
        self.open_button.clicked.connect(self.open_selected)
        self.fix_button.clicked.connect(lambda: self.fix_requested.emit(self.selected_cases()))
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, slot in (("Open in inspector", self.open_selected),
                           ("Find a fix for the selected cases…", lambda: self.fix_requested.emit(self.selected_cases()))):
            action = QAction(text, self.view)
            action.triggered.connect(slot)
            self.view.addAction(action)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """Wide and low (the bottom dock at 1280×720): the case list beside the selected case's
        details; tall: above them."""
        super().resizeEvent(event)
        wide = event.size().width() > SIDE_BY_SIDE * event.size().height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != orientation:
            self.split.setOrientation(orientation)
            length = event.size().width() if wide else event.size().height()
            self.split.setSizes([int(length * 0.65), int(length * 0.35)])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_question()
        return False

    def key_width(self) -> int:
        """The panel width that shows the key columns (pass, question at its least, metric) whole:
        what the window gives the Cases dock when it is raised."""
        header, m = self.view.horizontalHeader(), self.model
        least = self.view.fontMetrics().horizontalAdvance("0") * QUESTION_CHARS
        key = sum(header.sectionSize(c) for c in (m.RESULT, m.METRIC))
        chrome = self.width() - self.view.viewport().width()  # frame, scroll bar, margins
        return key + least + max(chrome, self.view.verticalScrollBar().sizeHint().width() + 8)

    def fit_question(self) -> None:
        """The Question column takes the width the others leave; when that is too little, the key
        columns (pass, question, metric) fill the view and the others scroll into view on the right."""
        header, m = self.view.horizontalHeader(), self.model
        width = self.view.viewport().width()
        least = self.view.fontMetrics().horizontalAdvance("0") * QUESTION_CHARS
        others = sum(header.sectionSize(c) for c in range(m.columnCount()) if c != m.QUESTION)
        key = sum(header.sectionSize(c) for c in (m.RESULT, m.METRIC))
        header.resizeSection(m.QUESTION, width - others if width - others >= least else max(least, width - key))

    # ---- data -----------------------------------------------------------------------------------------
    def set_source(self, text: str) -> None:
        self.source.setText(text)

    def set_cases(self, questions: Sequence[Question], pools: dict[str, RecallPool]) -> None:
        self.pools = pools
        self.model.set_questions(questions)
        self.category.blockSignals(True)
        self.category.clear()
        self.category.addItem(f"all categories ({len(questions)})", None)
        for cat, n in categories(questions).items():
            self.category.addItem(f"{cat} {category_name(cat)} ({n})", cat)
        self.category.blockSignals(False)
        self._refilter()

    def set_outcomes(self, outcomes: Sequence[QuestionOutcome], metric: str) -> None:
        self.model.set_outcomes(outcomes, metric)
        self._refilter()
        self._show_details()

    def _refilter(self) -> None:
        self.filter.set_filter(self.category.currentData(), self.search.text(), self.failing.isChecked())
        passing, scored = self.model.counts()
        shown = self.filter.rowCount()
        score = f"; {passing} of {scored} pass ({self.model.metric} = 1)" if scored else ""
        self.count.setText(f"{shown} of {self.model.rowCount()} cases shown{score}")

    # ---- the selected case ----------------------------------------------------------------------------
    def selected_row(self) -> int | None:
        rows = self.view.selectionModel().selectedRows()
        return self.filter.mapToSource(rows[0]).row() if rows else None

    def selected_cases(self) -> tuple[str, ...]:
        """The question ids of every selected case, in table order."""
        rows = sorted(self.view.selectionModel().selectedRows(), key=lambda i: i.row())
        return tuple(self.model.question(self.filter.mapToSource(r).row()).question_id for r in rows)

    def select_row(self, source_row: int) -> None:
        self.view.selectRow(self.filter.mapFromSource(self.model.index(source_row, 0)).row())

    def open_selected(self) -> None:
        row = self.selected_row()
        if row is not None:
            q = self.model.question(row)
            self.case_opened.emit(q.user_id, q.text, tuple(session_docid(q.user_id, s) for s in q.gold_sessions),
                                  tuple(q.gold_turns))

    def show_details(self) -> None:
        """The selected case again (the runs kept changed)."""
        self._show_details()

    def _show_details(self) -> None:
        row = self.selected_row()
        if row is None:
            self.details.setHtml("<p>Select a case to see its expected answer and evidence.</p>")
            return
        q = self.model.question(row)
        self.details.setHtml(case_html(q, self.model.outcome(row), self.pools.get(q.question_id), self.model.metric,
                                       self.run_values(q.question_id)))


SPARKS = "▁▂▃▄▅▆▇█"
RUNS_SHOWN = 8
"""The newest runs a case's table lists (the sparkline shows them all)."""


def sparkline(values: Sequence[float]) -> str:
    """One block per value in [0, 1], its height the value."""
    return "".join(SPARKS[round(min(max(v, 0.0), 1.0) * (len(SPARKS) - 1))] for v in values)


def runs_html(runs: Sequence[RunValue], metric: str) -> str:
    """The case's metric in each kept run of its question file: a sparkline, then the newest runs."""
    esc = html.escape
    if not runs:
        return f"<p><i>No kept run of this question file scored it on {esc(metric)} yet (Evaluate keeps one).</i></p>"
    t = theme.current()
    rows = "".join(
        f"<tr><td>{esc(v.label)}</td><td>{esc(time_text(v.time))}</td><td align=right>{v.value:.2f}</td>"
        f"<td style='color:{t.up if v.passes else t.down}'>{'' if v.passes is None else 'pass' if v.passes else 'fail'}"
        "</td></tr>" for v in reversed(runs[-RUNS_SHOWN:]))
    more = f" (the newest {RUNS_SHOWN} listed)" if len(runs) > RUNS_SHOWN else ""
    kept = len({v.run_id for v in runs})
    configs = f", {len(runs)} configs" if len(runs) != kept else ""
    return (f"<p><b>{esc(metric)} across {kept} kept run{'s' if kept > 1 else ''}{configs}</b>{more}: "
            f"<span style='font-size:large'>{sparkline([v.value for v in runs])}</span> (oldest → newest)</p>"
            f"<table cellspacing=0 cellpadding=2><tr><th align=left>Run</th><th align=left>Time</th>"
            f"<th align=right>{esc(metric)}</th><th></th></tr>{rows}</table>")


def case_html(q: Question, outcome: QuestionOutcome | None, pool: RecallPool | None, metric: str,
              runs: Sequence[RunValue] = ()) -> str:
    """The case in full: question, expected answer, gold sessions with their rank, the metric
    across the kept runs, evidence turns."""
    t = theme.current()
    esc = html.escape
    out = [f"<p><b>{esc(q.text)}</b><br><i>{esc(category_name(q.category))}, {esc(q.user_id)}</i></p>",
           f"<p><b>Expected answer:</b> {esc(q.answer or '(none given)')}</p>"]
    if outcome is not None:
        verdict = "pass" if outcome.metrics[metric] >= 1 else "fail"
        color = t.up if verdict == "pass" else t.down
        ranks = {s: n for n, s in reversed(list(enumerate(outcome.sessions, start=1)))}
        gold = ", ".join(f"session {s}: " + (f"returned at #{ranks[s]}" if s in ranks else "<b>not returned</b>")
                         for s in outcome.gold_sessions)
        out.append(f"<p><b style='color:{color}'>{verdict}</b> ({esc(metric)} = {outcome.metrics[metric]:.2f}); "
                   f"{gold}</p>")
    out.append(runs_html(runs, metric))
    evidence = set(q.gold_turns)
    if evidence and pool is not None:
        out.append("<p><b>Evidence turns</b> (highlighted in their session):</p>")
        seen: set[str] = set()
        for chunk in pool.chunks:
            if chunk.kind != "session" or not evidence & set(chunk.dia_ids):
                continue
            for dia_id, text in message_parts(chunk):
                if dia_id in evidence and dia_id not in seen:
                    seen.add(dia_id)
                    out.append(f"<p style='background:{t.gold}'>[{esc(dia_id)}] {esc(text)}</p>")
        missing = sorted(evidence - seen)
        if missing:
            out.append(f"<p><i>not in this question's recall pool: {esc(', '.join(missing))}</i></p>")
    return "".join(out)
