"""Apply settings with their before/after diff and the rank movement they cause, in one step.

Every suggestion the app makes (an auto-tune winner, a "what would it take" change, a preset,
a fix candidate) goes through `offer_settings`: a dialog lists each setting that changes (now
and after, named as in config files: `core.config.provenance.changed_knobs`) and the results of
the current query now and after (the cached pool re-ranked under the new settings: a real
re-rank, not an estimate); Apply hands the settings to `apply` once (the window's undo stack
makes that one undoable step), Cancel changes nothing.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from core.config import Config
from core.config.provenance import changed_knobs
from core.rank.ranking import Ranking
from core.recall.pool import RecallPool
from memsense_gui.models.format import short_id

Apply = Callable[[Config, str], Any]
"""`(settings, what they are)`: apply as one undoable step."""


class RankSource(Protocol):
    """What the dialog needs of the query session: the ranking on screen, and a re-rank of the
    current pool under other settings."""

    ranking: Ranking | None

    @property
    def pool(self) -> RecallPool | None: ...

    def deep_enough(self, *configs: Config) -> bool: ...

    def rerank(self, cfg: Config) -> Ranking: ...


@dataclass(frozen=True)
class Move:
    """A result of the current query: its rank now and after (None: not returned)."""

    memory_id: str
    now: int | None
    after: int | None

    def text(self) -> str:
        if self.now is None:
            return "enters"
        if self.after is None:
            return "drops out"
        step = self.now - self.after
        return "=" if step == 0 else f"{'▲' if step > 0 else '▼'}{abs(step)}"


def settings_diff(before: Config, after: Config) -> list[tuple[str, Any, Any]]:
    """(setting, value now, value after) of every setting that differs, config-file names."""
    return [(name, now, new) for name, new, now in changed_knobs(after, before)]


def rank_moves(now: Ranking, after: Ranking) -> list[Move]:
    """Every result of either ranking, in the order of the new one, then those that drop out."""
    old = {m: i + 1 for i, m in enumerate(now.result_ids)}
    new = {m: i + 1 for i, m in enumerate(after.result_ids)}
    return ([Move(m, old.get(m), r) for m, r in new.items()] +
            [Move(m, r, None) for m, r in old.items() if m not in new])


def movement(source: RankSource, after: Config) -> tuple[list[Move], str]:
    """The rank movement `after` causes on the current query, and a line saying what it is."""
    if source.pool is None or source.ranking is None:
        return [], "No query on screen: run one to see the rank movement these settings cause."
    if not source.deep_enough(after):  # the pool deepens on the session's runner; `pool_deepened` follows
        return [], ("Ranking the current query's route lists deeper, as these settings ask (a moment): "
                    "the rank movement shows here when they are ready.")
    moves = rank_moves(source.ranking, source.rerank(after))
    changed = sum(1 for m in moves if m.now != m.after)
    query = source.pool.query
    return moves, (f"Results of “{query}”: {_count(changed, 'result moves', 'results move')} "
                   f"({_count(sum(m.now is None for m in moves), 'enters', 'enter')}, "
                   f"{_count(sum(m.after is None for m in moves), 'drops out', 'drop out')}).")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


class ApplyDiffDialog(QDialog):
    """The settings that change and the rank movement they cause; Apply or Cancel."""

    def __init__(self, what: str, diff: list[tuple[str, Any, Any]], moves: list[Move], note: str, user_id: str = "",
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("apply-diff-dialog")
        self.setWindowTitle(f"Apply {what}?")
        self.diff, self.moves = diff, moves
        layout = QVBoxLayout(self)
        head = QLabel(f"<b>{html.escape(what)}</b>: {_count(len(diff), 'setting changes', 'settings change')}"
                      + ("" if diff else " — these are the settings on screen already"))
        head.setWordWrap(True)
        layout.addWidget(head)
        self.settings_table = _table(("Setting", "Now", "After"),
                                     [(n, _value(a), _value(b)) for n, a, b in diff], "apply-diff-settings")
        layout.addWidget(self.settings_table, 2)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.user_id = user_id
        self.moves_table = _table(("Result", "Now", "After", "Moves"), [], "apply-diff-moves")
        layout.addWidget(self.moves_table, 3)
        self.show_movement(moves, note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button = buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setToolTip("Apply these settings in one step (Ctrl+Z undoes it)")
        self.apply_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(560, 520)

    def show_movement(self, moves: list[Move], note: str) -> None:
        self.moves = moves
        self.note.setText(note)
        _fill(self.moves_table, [(short_id(m.memory_id, self.user_id), _rank(m.now), _rank(m.after), m.text())
                                 for m in moves])
        self.moves_table.setVisible(bool(moves))


def offer_settings(parent: QWidget | None, source: RankSource, now: Config, after: Config, what: str, apply: Apply,
                   user_id: str = "") -> ApplyDiffDialog:
    """Open (window-modal, not blocking) the diff of `after` against the settings on screen
    (`now`) and the movement it causes; Apply calls `apply(after, what)` once."""
    moves, note = movement(source, after)
    dialog = ApplyDiffDialog(what, settings_diff(now, after), moves, note, user_id, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.accepted.connect(lambda: apply(after, what))
    deepened = getattr(source, "pool_deepened", None)  # a QuerySession's: the deeper lists are ranked
    if not moves and deepened is not None:
        def again(*_: Any) -> None:
            if source.pool is not None and source.deep_enough(after):
                dialog.show_movement(*movement(source, after))

        deepened.connect(again)
        dialog.finished.connect(lambda *_: deepened.disconnect(again))
    dialog.open()
    return dialog


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]], name: str) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    _fill(table, rows)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(headers)):
        header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    return table


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            if c:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)
