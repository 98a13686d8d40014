"""The app's question set: which judged questions Cases, Evaluation and Auto-tune evaluate on the open
store (their one recall is the store's workspace's, `core.evaluation.workspace`, issue 17).

The questions come from a question file (LoCoMo JSON, project questions or a judged set) or are
those judged in the app; the choice is one for the whole window. Question files belong to stores
(`core.evaluation.store_questions`): choosing one attaches it to the open store (a file about none
of the store's users is refused with one line), and opening a store switches to its newest
attached file (none: no questions until one is chosen).
Their pools are recalled once per store (the context's workspace), by whichever view asks first, on
that view's worker thread (each recall itself runs on the engine thread), at the planned depth: the deepest `route_limit` of every preset, of the current settings at any top_k,
and of every pool limit the auto-tuner may try. Every other view then re-ranks the same pools; a
view that needs deeper lists (settings with larger pool limits) recalls deeper only the
questions whose lists a deeper recall would change. A view that asks while another recalls waits
for it, showing its progress. A cancelled recall keeps the pools it made. Opening a store (a new
engine) starts afresh.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QObject, QSettings, Signal

from core.config import TOP_K_MAX, Config
from core.evaluation.tune import ALL_KNOBS
from core.evaluation.workspace import Workspace, check_question_file, planned_depth

APP_JUDGED = "app"
"""`evaluation/questions` setting for the questions judged in the app on the open store."""
SETTING = "evaluation/questions"
TUNE_START = Config()
"""Where the auto-tuner starts: Memsense's own settings."""


class QuestionSets(QObject):
    """The chosen questions of the open store (module docstring)."""

    changed = Signal(str)  # what the questions are now, for a label

    def __init__(self, settings: QSettings, parent: QObject | None = None):
        super().__init__(parent)
        self.settings = settings
        saved = str(settings.value(SETTING, "") or "")
        self.app_judged = saved == APP_JUDGED
        self.path: Path | None = Path(saved) if saved and not self.app_judged and Path(saved).exists() else None
        self.plan = planned_depth([replace(Config(), top_k=TOP_K_MAX)], TUNE_START, ALL_KNOBS)
        self.workspace: Workspace | None = None  # the open store's, whose question files these are

    # ---- the choice of questions (GUI thread)
    def label(self) -> str:
        name = "judged in the app" if self.app_judged else self.path.name if self.path else "none chosen"
        return f"questions: {name}"

    def set_path(self, path: str | Path) -> None:
        """Evaluate the questions of the file at `path` from now on, and attach it to the open store. A
        file that is not a question set with a judged question, or whose questions are about none of the
        store's users, raises `MemsenseError` and changes nothing: the set chosen before stays."""
        check_question_file(Path(path))
        if self.workspace is not None:
            self.workspace.check_belongs(path)
            self.workspace.attach(path)
        self.path = Path(path)
        self.app_judged = False
        self.settings.setValue(SETTING, str(self.path))
        self.changed.emit(self.label())

    def follow_store(self, workspace: Workspace) -> None:
        """Another store opened: its question set is its own (the newest file attached to it whose
        questions are about its users; the one chosen stays when it is one of those); none: no file."""
        self.workspace = workspace
        if self.app_judged:
            self.changed.emit(self.label())
            return
        own = [path for path in workspace.attached() if workspace.belongs(path)]
        mine = self.path is not None and self.path.resolve() in [p.resolve() for p in own]
        if not mine:
            if own:
                self.path = own[0]
            elif self.path is not None and workspace.belongs(self.path):  # the store has none yet: it takes this
                workspace.attach(self.path)
            else:  # a store of the demo's users (the demo store) comes with the demo questions
                demo = _demo_questions()
                self.path = demo if demo is not None and workspace.belongs(demo) else None
                if self.path is not None:
                    workspace.attach(self.path)
        self.changed.emit(self.label())

    def attached(self) -> list[Path]:
        """The open store's question files, newest first."""
        return self.workspace.attached() if self.workspace is not None else []

    def use_app_judged(self) -> None:
        self.app_judged = True
        self.settings.setValue(SETTING, APP_JUDGED)
        self.changed.emit(self.label())

    def plan_for(self, presets: Iterable[Config], current: Config) -> None:
        """GUI thread, when the presets or the settings change: how deep a recall must be for
        every preset, the current settings at any top_k, and the auto-tuner from `TUNE_START`."""
        self.plan = planned_depth([*presets, replace(current, top_k=TOP_K_MAX)], TUNE_START, ALL_KNOBS)


def _demo_questions() -> Path | None:
    from core.recall.engine import DEMO_QUESTIONS  # loaded already: a store is open

    return DEMO_QUESTIONS if DEMO_QUESTIONS.exists() else None
