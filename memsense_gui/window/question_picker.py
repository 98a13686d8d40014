"""A first minute that teaches: the query box offers the store's judged questions.

The questions are the window's question set (`ctx.question_sets`: the demo questions on the
demo store) whose users are in the open store. The "Questions" button beside the query box, or
Down in an empty query box, lists them; picking one runs it with its gold sessions marked, and
when a gold session is not returned, pins its chunk in Why not? and shows that panel: the full
ranking, its gold and a "why not" in one click. Each question shows its pass or fail and value
in the last kept run of the file (`state.question_runs`), coloured, "–" when no run scored it.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Protocol, Sequence

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QListWidget, QListWidgetItem, QToolButton

from core.errors import MemsenseError
from core.evaluation.evaluate import category_name
from core.evaluation.judged import load_question_set, session_docid
from core.rank.ranking import Ranking
from core.evaluation.question_runs import RunValue
from core.records import Chunk, Question
from memsense_gui import theme
from memsense_gui.models.history import time_text
from memsense_gui.state.context import AppContext
from memsense_gui.state.question_runs import SOURCE_LABEL, QuestionRuns
from memsense_gui.views.dock import DockId
from memsense_gui.views.why_not import WhyNotPanel
from memsense_gui.window.parts import QuestionOpener, Shell

QUESTION_ROLE = Qt.ItemDataRole.UserRole + 1
ASKED_ROLE = Qt.ItemDataRole.UserRole + 2
"""The question as the list words it (its user first when the store has several asking)."""
ROWS_SHOWN = 12
"""Rows the list shows before it scrolls."""


class PickerUi(Shell, Protocol):
    @property
    def query_edit(self) -> QLineEdit: ...
    @property
    def queries(self) -> QuestionOpener: ...
    @property
    def whynot_panel(self) -> WhyNotPanel: ...


class QuestionPicker(QObject):
    """The judged questions of the open store, one click from a full ranking and a "why not"."""

    def __init__(self, ctx: AppContext, window: PickerUi, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.window = window
        self.questions: list[Question] = []
        self.note = ""
        self._chasing: Question | None = None  # picked: its missed gold gets a "why not"
        self._want_chunks: tuple[str, frozenset[str]] | None = None  # user, missed gold sessions
        self.button = QToolButton()
        self.button.setObjectName("judged-questions-button")
        self.button.setText("Questions")
        self.button.setArrowType(Qt.ArrowType.DownArrow)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setEnabled(False)
        self.list = QListWidget(window.window())
        self.list.setObjectName("judged-questions")
        self.list.setWindowFlags(Qt.WindowType.Popup)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.runs = QuestionRuns(ctx, self._source, self)

    def connect_signals(self) -> None:
        ctx = self.ctx
        self.button.clicked.connect(self.show_list)
        self.list.itemActivated.connect(self.pick)
        self.list.itemClicked.connect(self.pick)
        self.window.query_edit.installEventFilter(self)
        ctx.users_loaded.connect(lambda _users: self.reload())
        ctx.question_sets.changed.connect(lambda _label: self.reload())
        ctx.ranking_updated.connect(self._ranked)
        ctx.chunks_loaded.connect(self._chunks_loaded)
        self.runs.connect_signals()
        self.runs.changed.connect(self._runs_changed)

    # ---- the questions ---------------------------------------------------------------------------
    def _source(self) -> Path | None:
        sets = self.ctx.question_sets
        return self.ctx.judgments.path if sets.app_judged else sets.path

    def reload(self) -> None:
        """The question set's questions about the open store's users."""
        path, users = self._source(), set(self.ctx.users)
        self.questions, self.note = [], ""
        if path is not None and path.exists() and users:
            try:
                self.questions = [q for q in load_question_set(path) if q.user_id in users]
            except MemsenseError as exc:
                self.note = f"the questions of {path.name} cannot be offered: {exc}"
        if not self.questions and not self.note:
            self.note = "no judged question about this store's users (Cases > Questions… picks a file)"
        self._fill()

    def _fill(self) -> None:
        self.list.clear()
        several = len({q.user_id for q in self.questions}) > 1
        for q in self.questions:
            item = QListWidgetItem()
            item.setData(QUESTION_ROLE, q)
            item.setData(ASKED_ROLE, (f"[{q.user_id}] " if several else "") + q.text)
            self.list.addItem(item)
        self._annotate()
        n = len(self.questions)
        self.button.setEnabled(n > 0)
        self.button.setText(f"{n} questions" if n else "Questions")
        self.button.setToolTip(f"Pick one of the store's {n} judged questions: its ranking, its gold sessions "
                               "marked, and why not a gold session that is missed (Down in an empty query box); "
                               f"pass or fail as in {SOURCE_LABEL}" if n else self.note)

    def _runs_changed(self) -> None:
        """A run was kept or the history read again: a hidden list is annotated when it is shown
        (`show_list`), not now (760 LoCoMo questions: 35 ms of the GUI thread each time)."""
        if self.list.isVisible():
            self._annotate()

    def _annotate(self) -> None:
        """Each question's pass or fail and value in the last run of the file that scored it."""
        last = self.runs.latest()
        t = theme.current()
        for row in range(self.list.count()):
            item = self.list.item(row)
            q: Question = item.data(QUESTION_ROLE)
            value = last.get(q.question_id)
            item.setText(f"{verdict(value)}   {item.data(ASKED_ROLE)}")
            if value is not None and value.passes is not None:
                item.setForeground(t.qcolor("up") if value.passes else t.qcolor("down"))
            else:
                item.setData(Qt.ItemDataRole.ForegroundRole, None)
            gold = ", ".join(f"S{s:03d}" for s in q.gold_sessions) or "none"
            item.setToolTip(f"<b>{html.escape(q.text)}</b><br>{html.escape(category_name(q.category))}, "
                            f"{html.escape(q.user_id)}; gold sessions: {gold}<br>expected: "
                            f"{html.escape(q.answer or '(none given)')}<br>{html.escape(last_run_text(value, self.runs.metric))}")

    # ---- the list --------------------------------------------------------------------------------
    def show_list(self) -> QListWidget | None:
        if self.questions:
            self._annotate()  # the metric follows top_k
        if not self.questions:
            self.window.statusBar().showMessage(self.note, 6000)
            return None
        edit = self.window.query_edit
        rows = min(ROWS_SHOWN, self.list.count())
        height = self.list.sizeHintForRow(0) * rows + 2 * self.list.frameWidth() + 4
        self.list.setGeometry(edit.mapToGlobal(QPoint(0, edit.height())).x(),
                              edit.mapToGlobal(QPoint(0, edit.height())).y(), max(edit.width(), 420), height)
        self.list.setCurrentRow(0)
        self.list.show()
        self.list.setFocus()
        return self.list

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Down and not self.window.query_edit.text().strip()
                and event.modifiers() == Qt.KeyboardModifier.NoModifier and self.questions):
            self.show_list()
            return True
        return False

    def run_first(self) -> bool:
        """The first minute (a first start): run the first question, its gold sessions starred and
        a missed one shown in Why not?, as a pick does; False when the store has none."""
        if not self.questions:
            return False
        self.pick(self.list.item(0))
        return True

    def pick(self, item: QListWidgetItem) -> None:
        q: Question = item.data(QUESTION_ROLE)
        self.list.hide()
        self._chasing = q
        self.window.queries.open_question(q.user_id, q.text, tuple(session_docid(q.user_id, s) for s in q.gold_sessions),
                                          tuple(q.gold_turns))

    # ---- after the ranking: why not the missed gold ----------------------------------------------------
    def _ranked(self, ranking: Ranking) -> None:
        q, self._chasing = self._chasing, None
        if q is None or ranking.pool.query != q.text or ranking.pool.user_id != q.user_id:
            return
        gold = [session_docid(q.user_id, s) for s in q.gold_sessions]
        returned = {c.session_id for c in (ranking.pool.chunks[r.index] for r in ranking.selected_rows)}
        missed = frozenset(g for g in gold if g not in returned)
        if not gold:
            return
        if not missed:
            self._say(f"Every gold session ({', '.join(gold)}) is returned", 8000)
            return
        chunk = _chunk_of(ranking.pool.chunks, missed)
        if chunk is not None:
            self._why_not(chunk.memory_id, len(missed))
        else:  # no chunk of it was recalled: look among the user's chunks once they are listed
            self._want_chunks = (q.user_id, missed)

    def _chunks_loaded(self, user_id: str) -> None:
        wanted, self._want_chunks = self._want_chunks, None
        if wanted is None or wanted[0] != user_id:
            return
        chunk = _chunk_of(self.window.whynot_panel.search_model.chunks, wanted[1])
        if chunk is not None:
            self._why_not(chunk.memory_id, len(wanted[1]))

    def _why_not(self, memory_id: str, missed: int) -> None:
        self.ctx.session.pin(memory_id)
        self.window.raise_dock(DockId.WHY_NOT)
        self._say(
            f"{missed} gold session{'s' if missed > 1 else ''} not returned: Why not? shows {memory_id}'s fate "
            "and what it would take", 10000)


    def _say(self, text: str, ms: int) -> None:
        """A status line after the recall's own ("Recalled n chunks"), which follows the ranking."""
        QTimer.singleShot(0, lambda: self.window.statusBar().showMessage(text, ms))


def verdict(value: RunValue | None) -> str:
    """"pass 1.00", "fail 0.50" (a recall metric), the value alone for others, "–" when no run scored it."""
    if value is None:
        return "–"
    shown = f"{value.value:.2f}"
    return shown if value.passes is None else f"{'pass' if value.passes else 'fail'} {shown}"


def last_run_text(value: RunValue | None, metric: str) -> str:
    """Where the question's pass or fail comes from, in words."""
    if value is None:
        return f"no kept run of this question file scored it on {metric} yet (Evaluate keeps one)"
    return (f"last run: {value.label} ({value.kind}, {time_text(value.time)}): {value.metric} = "
            f"{value.value:.2f}")


def _chunk_of(chunks: Sequence[Chunk], sessions: frozenset[str]) -> Chunk | None:
    """The first chunk (session chunks first, then by id) of one of `sessions`."""
    found = [c for c in chunks if c.session_id in sessions]
    return min(found, key=lambda c: (c.kind != "session", c.memory_id)) if found else None

