"""Undo and redo of every settings change (Ctrl+Z, Ctrl+Shift+Z).

Every edit the tuning panel makes (`config_edited(cfg, knob)`) becomes one step; the ticks of
one slider drag (the same knob, one after another) merge into a single step, so undo takes the
knob back to where the drag began. The next drag of that knob, or a value typed in its box, is
a step of its own (`TuningPanel.edit_finished` ends one: a release, or Enter), as it ends the
movement baseline's gesture (`memsense_gui.state.movement`), which also ends after a pause.
Settings applied whole (an auto-tune winner, a "what would it take" change, a preset through its
diff, imported settings: `apply`) are one step each.
Undo and redo put a config back on the panel silently and re-rank the cached pool with it
(`QuerySession.set_config`), as any edit does.
"""
from __future__ import annotations

from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtCore import QObject

from core.config import Config
from memsense_gui.state.context import AppContext
from memsense_gui.views.tuning import TuningPanel

MERGE_ID = 1


class KnobChange(QUndoCommand):
    """One edit: the config before and after; consecutive edits of one knob within one drag (or
    one typed value) merge."""

    def __init__(self, actions: "UndoActions", before: Config, after: Config, knob: str, drag: int = 0):
        super().__init__(f"apply preset {knob[len('preset:'):]}" if knob.startswith("preset:") else f"change {knob}")
        self.actions, self.before, self.after, self.knob = actions, before, after, knob
        self.drag = drag  # the number of the drag (or typed value) it belongs to: the next one is another step
        self._first = True

    def id(self) -> int:  # noqa: A003 - Qt override
        return -1 if self.knob.startswith("preset:") else MERGE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt override
        if not isinstance(other, KnobChange) or other.knob != self.knob or other.drag != self.drag:
            return False
        self.after = other.after
        return True

    def redo(self) -> None:
        if self._first:  # pushed after the edit was applied: nothing to do the first time
            self._first = False
            return
        self.actions.restore(self.after, "redo")

    def undo(self) -> None:
        self.actions.restore(self.before, "undo")


class SettingsApplied(QUndoCommand):
    """Settings applied whole, in one step (never merged)."""

    def __init__(self, actions: "UndoActions", before: Config, after: Config, what: str):
        super().__init__(f"apply {what}")
        self.actions, self.before, self.after = actions, before, after

    def redo(self) -> None:  # pushing runs it: the settings are applied here
        self.actions.restore(self.after, "apply")

    def undo(self) -> None:
        self.actions.restore(self.before, "undo")


class UndoActions:
    def __init__(self, ctx: AppContext, tuning: TuningPanel, parent: QObject):
        self.tuning = tuning
        self.ctx = ctx
        self.stack = QUndoStack(parent)
        self.current: Config = self.ctx.session.config
        self.drags = 0  # finished drags and typed values so far: edits merge only within one
        # connected here, before the window hands edits to the session: `edited` sees the config
        # as it was before the edit is applied
        tuning.config_edited.connect(self.edited)
        tuning.edit_finished.connect(self._drag_ended)

    def connect(self) -> None:
        self.ctx.session.config_changed.connect(self._applied)

    def _applied(self, cfg: Config) -> None:
        self.current = cfg

    def _drag_ended(self) -> None:
        """A drag released or a typed value entered: the next edit of the knob is a step of its own."""
        self.drags += 1

    def edited(self, cfg: Config, knob: str) -> None:
        """A user edit on the panel: one undo step (merged with the previous one of the same knob
        and the same drag)."""
        before, self.current = self.current, cfg
        if before != cfg:
            self.stack.push(KnobChange(self, before, cfg, knob, self.drags))

    def apply(self, cfg: Config, what: str) -> None:
        """Apply `cfg` whole as one undoable step named "apply `what`" (nothing when it is on screen)."""
        self.ctx.session.flush()
        if cfg != self.current:
            self.stack.push(SettingsApplied(self, self.current, cfg, what))

    def restore(self, cfg: Config, why: str) -> None:
        self.current = cfg
        self.tuning.set_config(cfg)
        self.ctx.session.set_config(cfg, why)
