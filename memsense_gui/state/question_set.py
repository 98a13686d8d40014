"""The app's question set: which judged questions Cases, Evaluation and Auto-tune evaluate, and
their one recall on the open store (`core.evaluation.question_set`, issue 17).

The questions come from a question file (LoCoMo JSON, project questions or a judged set) or are
those judged in the app; the choice is one for the whole window. Question files belong to stores
(`core.evaluation.store_questions`): choosing one attaches it to the open store (a file about none
of the store's users is refused with one line), and opening a store switches to its newest
attached file (none: no questions until one is chosen).
Their pools are recalled once per store, by whichever view asks first, on that view's worker
thread (each recall itself runs on the engine thread, see `views.evaluation_source`), at the
planned depth: the deepest `route_limit` of every preset, of the current settings at any top_k,
and of every pool limit the auto-tuner may try. Every other view then re-ranks the same pools; a
view that needs deeper lists (settings with larger pool limits) recalls deeper only the
questions whose lists a deeper recall would change. A view that asks while another recalls waits
for it, showing its progress. A cancelled recall keeps the pools it made. Opening a store (a new
engine) starts afresh.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from PySide6.QtCore import QObject, QSettings, Signal

from core.config import TOP_K_MAX, Config
from core.errors import Cancelled, MemsenseError
from core.evaluation.evaluate import judged_only
from core.evaluation.judged import load_question_set
from core.evaluation.store_questions import attach, attached, check_belongs
from core.evaluation.question_set import (Asked, QuestionSetKey, QuestionSetRecall, planned_depth,
                                          recall_question_set)
from core.evaluation.tune import ALL_KNOBS
from core.recall.pool import RecallPool
from core.records import Question

Progress = Callable[[int, int, str], None]
Recall = Callable[[str, str, int], RecallPool]
APP_JUDGED = "app"
"""`evaluation/questions` setting for the questions judged in the app on the open store."""
SETTING = "evaluation/questions"
TUNE_START = Config()
"""Where the auto-tuner starts: Memsense's own settings."""
WAIT_S = 0.1
"""How often a view waiting for another's recall looks at its cancel token and progress."""


class QuestionSets(QObject):
    """The chosen questions and the pools recalled for them on the open store (module docstring)."""

    changed = Signal(str)  # what the questions are now, for a label

    def __init__(self, settings: QSettings, parent: QObject | None = None):
        super().__init__(parent)
        self.settings = settings
        saved = str(settings.value(SETTING, "") or "")
        self.app_judged = saved == APP_JUDGED
        self.path: Path | None = Path(saved) if saved and not self.app_judged and Path(saved).exists() else None
        self.plan = planned_depth([replace(Config(), top_k=TOP_K_MAX)], TUNE_START, ALL_KNOBS)
        self._lock = threading.Lock()
        self._engine: object | None = None
        self._opened = 0  # engines seen: a reopened store or another model is another engine
        self._known: dict[Asked, RecallPool] = {}
        self._progress: tuple[int, int, str] | None = None
        self.location: str | None = None  # the open store's, whose question files these are
        self.users: list[str] = []

    # ---- the choice of questions (GUI thread)
    def label(self) -> str:
        name = "judged in the app" if self.app_judged else self.path.name if self.path else "none chosen"
        return f"questions: {name}"

    def set_path(self, path: str | Path) -> None:
        """Evaluate the questions of the file at `path` from now on, and attach it to the open store. A
        file that is not a question set with a judged question, or whose questions are about none of the
        store's users, raises `MemsenseError` and changes nothing: the set chosen before stays."""
        check_question_file(Path(path))
        if self.location is not None:
            check_belongs(path, self.users)
            self._attach(Path(path))
        self.path = Path(path)
        self.app_judged = False
        self.settings.setValue(SETTING, str(self.path))
        self.changed.emit(self.label())

    def follow_store(self, location: str, users: Sequence[str]) -> None:
        """Another store opened: its question set is its own (the newest file attached to it whose
        questions are about its users; the one chosen stays when it is one of those); none: no file.
        The pools recalled on the store before are let go now, not at the next recall (on the demo store
        they held 110 MB until then); a recall still running on it fills a dict no one keeps."""
        self.location, self.users = location, list(users)
        self._engine, self._known = None, {}
        if self.app_judged:
            self.changed.emit(self.label())
            return
        own = [path for path in attached(location) if self._belongs(path)]
        mine = self.path is not None and self.path.resolve() in [p.resolve() for p in own]
        if not mine:
            if own:
                self.path = own[0]
            elif self.path is not None and self._belongs(self.path):  # the store has none yet: it takes this one
                self._attach(self.path)
            else:  # a store of the demo's users (the demo store) comes with the demo questions
                demo = _demo_questions()
                self.path = demo if demo is not None and self._belongs(demo) else None
                if self.path is not None:
                    self._attach(self.path)
        self.changed.emit(self.label())

    def _belongs(self, path: Path) -> bool:
        try:
            check_belongs(path, self.users)
        except MemsenseError:
            return False
        return True

    def _attach(self, path: Path) -> None:
        if self.location is None:
            return
        try:
            attach(self.location, path)
        except (MemsenseError, OSError):
            pass  # the choice stands for this session; only the store's memory of it is lost

    def attached(self) -> list[Path]:
        """The open store's question files, newest first."""
        return attached(self.location) if self.location else []

    def use_app_judged(self) -> None:
        self.app_judged = True
        self.settings.setValue(SETTING, APP_JUDGED)
        self.changed.emit(self.label())

    def plan_for(self, presets: Iterable[Config], current: Config) -> None:
        """GUI thread, when the presets or the settings change: how deep a recall must be for
        every preset, the current settings at any top_k, and the auto-tuner from `TUNE_START`."""
        self.plan = planned_depth([*presets, replace(current, top_k=TOP_K_MAX)], TUNE_START, ALL_KNOBS)

    # ---- the recall (worker threads)
    def recall(self, engine: object, location: str, recall: Recall, questions: Sequence[Question], digest: str,
               depth: int, progress: Progress, cancel: threading.Event) -> QuestionSetRecall:
        """The pools of `questions` on `engine`, each at least `depth` deep: those recalled before
        on this engine, the others recalled now through `recall` (at the planned depth, or
        deeper when `depth` asks for more). One recall at a time: a second caller waits."""
        while not self._lock.acquire(timeout=WAIT_S):
            if cancel.is_set():
                raise Cancelled("evaluation cancelled")
            if self._progress is not None:
                progress(*self._progress)
        try:
            if engine is not self._engine:
                self._engine, self._known, self._opened = engine, {}, self._opened + 1
            key = QuestionSetKey(f"{location} (engine {self._opened} of this app)", digest,
                                 tuple(sorted({q.user_id for q in questions})))

            def report(done: int, total: int, what: str) -> None:
                self._progress = (done, total, what)
                progress(done, total, what)

            return recall_question_set(recall, key, questions, depth, plan=self.plan, known=self._known,
                                       progress=report, cancel=cancel)
        finally:
            self._progress = None
            self._lock.release()

    def pool_of(self, user_id: str, text: str) -> RecallPool | None:
        """A question's pool on the open store, if it was recalled."""
        return self._known.get((user_id, text))


def _demo_questions() -> Path | None:
    from core.recall.engine import DEMO_QUESTIONS  # loaded already: a store is open

    return DEMO_QUESTIONS if DEMO_QUESTIONS.exists() else None


def check_question_file(path: Path) -> None:
    """Raise `MemsenseError` unless `path` reads as a question set with at least one judged question."""
    if not judged_only(load_question_set(path)):
        raise MemsenseError(f"{path}: no question in it has evidence (gold sessions) to score against; "
                            "choose a judged question file (LoCoMo JSON or a project question file)")
