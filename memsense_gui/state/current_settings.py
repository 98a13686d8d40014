"""The current settings: the one place the app keeps the config on screen, and its undo stack.

`CurrentSettings` owns the current `core.config.Config` and the `QUndoStack` of its changes.
Nothing else keeps a copy: the tuning panel shows it, the query session ranks under it, every
view that needs "the settings on screen" reads `config`, and every change goes through it as an
undo command:
- `edit(cfg, knob)`: a user's edit on the tuning panel (a slider tick, a typed value, a switch, a
  preset chosen without its diff). The ticks of one slider drag (the same knob, one after
  another) merge into one step, so undo takes the knob back to where the drag began; the next
  drag of that knob, or a value typed in its box, is a step of its own (`end_edit`: a release,
  or Enter).
- `apply(cfg, what)`: settings applied whole (an auto-tune winner, a fix candidate, a run's
  settings, a preset through its diff, imported settings), one step each, never merged.
- `undo`/`redo` through `stack` (Ctrl+Z, Ctrl+Shift+Z).
- `restore(cfg)`: the last session's settings at start; no step, the undo history starts there.

`changed(cfg, cause)` is the one signal of a change (`cause`: the knob edited, "preset:NAME",
"apply", "undo", "redo" or "restore"). A burst of slider ticks is throttled: `config` is always
the newest, `changed` follows at most once per interval (`ConfigThrottle`: the newest wins, the
last tick is always emitted), so the live re-rank and every view that follows the settings run
at most once per interval; any other change is emitted at once.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from core.config import Config
from memsense_gui.state.throttle import ConfigThrottle

MERGE_ID = 1
"""The undo command id of a knob edit: consecutive edits of one knob within one drag merge."""
UNDO_LIMIT = 1000
"""Steps the undo stack keeps: a long day's use holds the newest 1,000 (each step is two small configs)."""
PRESET_CAUSE = "preset:"
"""A preset chosen on the panel without its diff: `edit(cfg, PRESET_CAUSE + name)`, never merged."""


class SettingsChange(QUndoCommand):
    """One change of the current settings: the config before and after.

    A knob edit (`drag` set) merges with the next edit of the same knob in the same drag (or
    typed value); settings applied whole (`drag` None) never merge."""

    def __init__(self, owner: "CurrentSettings", before: Config, after: Config, cause: str, drag: int | None):
        if cause.startswith(PRESET_CAUSE):
            text = f"apply preset {cause[len(PRESET_CAUSE):]}"
        else:
            text = f"change {cause}" if drag is not None else f"apply {cause}"
        super().__init__(text)
        self.owner, self.before, self.after, self.cause, self.drag = owner, before, after, cause, drag
        self._done = False  # redone once (by the push): later redos are the user's

    def id(self) -> int:  # noqa: A003 - Qt override
        return MERGE_ID if self.drag is not None and not self.cause.startswith(PRESET_CAUSE) else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt override
        if not isinstance(other, SettingsChange) or (other.cause, other.drag) != (self.cause, self.drag):
            return False
        self.after = other.after
        return True

    def redo(self) -> None:
        if self._done:
            self.owner._put(self.after, "redo")
            return
        self._done = True  # the push: a knob edit is throttled; a preset and settings applied whole are emitted at once
        self.owner._put(self.after, self.cause if self.drag is not None else "apply", throttled=self.id() == MERGE_ID)

    def undo(self) -> None:
        self.owner._put(self.before, "undo")


class CurrentSettings(QObject):
    """The config on screen and its undo stack; `changed(cfg, cause)` after every change."""

    changed = Signal(object, str)  # Config, cause (see the module)
    gesture_ended = Signal()  # a drag released or a typed value entered, after its last tick was emitted

    def __init__(self, config: Config | None = None, throttle_ms: int = 30, parent: QObject | None = None):
        super().__init__(parent)
        self._config = config or Config()
        self.stack = QUndoStack(self)
        self.stack.setUndoLimit(UNDO_LIMIT)
        self.drags = 0  # finished drags and typed values so far: edits merge only within one
        self.throttle = ConfigThrottle(throttle_ms, self)
        self.throttle.apply.connect(lambda cfg, cause: self.changed.emit(cfg, cause or ""))

    @property
    def config(self) -> Config:
        """The current settings (the newest: a throttled `changed` may still follow)."""
        return self._config

    # ---- changes ---------------------------------------------------------------------------------
    def edit(self, cfg: Config, knob: str) -> None:
        """A user's edit on the panel: one undo step, merged with the previous edit of the same knob
        in the same drag; `changed` is throttled. Nothing when `cfg` is the current settings."""
        if cfg != self._config:
            self.stack.push(SettingsChange(self, self._config, cfg, knob, self.drags))

    def end_edit(self) -> None:
        """A drag released or a typed value entered: its last tick is emitted now, and the next
        edit of the knob is a step of its own."""
        self.flush()
        self.drags += 1
        self.gesture_ended.emit()

    def apply(self, cfg: Config, what: str) -> None:
        """Apply `cfg` whole as one undo step named "apply `what`" (nothing when it is current)."""
        self.flush()
        if cfg != self._config:
            self.stack.push(SettingsChange(self, self._config, cfg, what, None))

    def restore(self, cfg: Config) -> None:
        """The settings of the last session, at start: no undo step; the undo history starts here."""
        self.stack.clear()
        self._put(cfg, "restore")

    def flush(self) -> None:
        """Emit a throttled change now."""
        self.throttle.flush()

    def applied(self) -> None:
        """A re-rank under the settings just went on screen: the next throttle interval starts now."""
        self.throttle.applied()

    def _put(self, cfg: Config, cause: str, throttled: bool = False) -> None:
        """The one place the current settings change (called by the undo commands and `restore`)."""
        self._config = cfg
        self.throttle.request(cfg, cause)
        if not throttled:
            self.throttle.flush()
