"""Where the Evaluation view's questions and pools come from on the open store.

Questions come from a question file (LoCoMo JSON, project questions or a judged set; the
demo questions by default) or are those judged in the app on the open store. Recall runs
on the context's engine thread one question at a time (so the inspector stays usable), and
the pools are cached per (store, depth, user, question text): evaluating again with other
presets, or after more grading, only re-ranks.

Auto-tuning is a seeded Optuna TPE study kept on disk (`paths.study_file`: one SQLite file
per store and question set, one study per kind of run, metric, knob set and users), so a run
cancelled or cut short by closing the app resumes where it stopped when Tune is pressed again
with the same choices: the trials count is the study's total. With `pool_limits` the pool
limits are searched too (`core.evaluation.tune.ALL_KNOBS`, as the CLI does), which needs
recall pools as deep as the deepest limits ask for.
"""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import (PresetEvaluation, check_users, evaluate_presets, judged_only,
                                      missing_gold_note, recall_depth)
from core.evaluation.judged import load_question_set
from core.evaluation.cv import CrossValidation, cross_validate
from core.evaluation.parallel import default_jobs
from core.evaluation.tune import ALL_KNOBS, KNOBS, TuneResult, knob_depth, seed_presets, split_users
from core.records import Question
from memsense_gui.state import paths
from memsense_gui.state.context import AppContext
from memsense_gui.state.judgments import NOTHING_JUDGED
from memsense_gui.workers.bridge import EngineBridge

Progress = Callable[[int, int, str], None]
APP_JUDGED = "app"
"""`evaluation/questions` setting for the questions judged in the app on the open store."""


class EvaluationSource(QObject):
    """Questions from a file or judged in the app; pools recalled through the context's engine."""

    changed = Signal(str)  # what the questions are now, for a label

    def __init__(self, ctx: AppContext, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.bridge = EngineBridge(ctx.engine_runner)
        saved = str(ctx.settings.value("evaluation/questions", "") or "")
        self.app_judged = saved == APP_JUDGED
        self.path: Path | None = Path(saved) if saved and Path(saved).exists() else _demo_questions()
        self._pools_cache: dict[tuple, dict] = {}
        self.missing_note = ""  # the last evaluation's word on gold sessions the store lacks

    def label(self) -> str:
        name = "judged in the app" if self.app_judged else self.path.name if self.path else "none chosen"
        return f"questions: {name}"

    def set_path(self, path: str | Path) -> None:
        self.path = Path(path)
        self.app_judged = False
        self.ctx.settings.setValue("evaluation/questions", str(self.path))
        self.changed.emit(self.label())

    def use_app_judged(self) -> None:
        """Evaluate the questions graded in the app (0-3 on a result) on the open store."""
        self.app_judged = True
        self.ctx.settings.setValue("evaluation/questions", APP_JUDGED)
        self.changed.emit(self.label())

    def _source(self) -> Path:
        path = self.ctx.judgments.path if self.app_judged else self.path
        if path is None:
            raise MemsenseError("choose a question file first (Questions…)")
        if self.app_judged and not path.exists():
            raise MemsenseError(NOTHING_JUDGED)
        return path

    def _questions(self, users: Sequence[str] | None = None) -> list[Question]:
        if self.ctx.engine is None:
            raise MemsenseError("open a store first (File > Open store…)")
        questions = judged_only(load_question_set(self._source()))
        if self.app_judged and not questions:
            raise MemsenseError("no question judged in the app has a relevant result yet: grade results 1-3")
        wanted = set(users) if users is not None else set(self.ctx.users)
        questions = [q for q in questions if q.user_id in wanted] or questions
        check_users(questions, self.ctx.users)
        return questions

    def _pools(self, questions: Sequence[Question], depth: int, progress: Progress, cancel: threading.Event) -> dict:
        """The pool of every question (id -> pool), recalling on the engine thread only the
        (user, text) pairs not recalled before on this store."""
        cache = self._pools_cache.setdefault((self.ctx.location, depth), {})
        engine = self.ctx.engine
        if engine is None:
            raise MemsenseError("open a store first: there is no store to recall the questions from")
        todo = list(dict.fromkeys((q.user_id, q.text) for q in questions if (q.user_id, q.text) not in cache))
        for n, (user_id, text) in enumerate(todo):
            progress(n, len(todo), "recall")
            cache[user_id, text] = self.bridge.call(engine.recall, user_id, text, depth, cancel=cancel)
        return {q.question_id: cache[q.user_id, q.text] for q in questions}

    def chunks_of(self, user_id: str, text: str) -> dict:
        """Memory id -> chunk of a question's recall pool, from any depth recalled so far ({} if none)."""
        for (location, _depth), cache in self._pools_cache.items():
            pool = cache.get((user_id, text)) if location == self.ctx.location else None
            if pool is not None:
                return {c.memory_id: c for c in pool.chunks}
        return {}

    def cases(self, depth: int, progress: Progress, cancel: threading.Event) -> tuple[list[Question], dict]:
        """Worker thread: the judged questions of the open store and each one's recall pool."""
        questions = self._questions()
        return questions, self._pools(questions, depth, progress, cancel)

    def evaluate(self, presets: Mapping[str, Config], k: int, progress: Progress,
                 cancel: threading.Event) -> list[PresetEvaluation]:
        """Worker thread: load the questions, recall the missing pools on the engine thread, re-rank."""
        questions = self._questions()
        pools = self._pools(questions, recall_depth(presets.values()), progress, cancel)
        sessions = {q.user_id: {c.session_number for c in pools[q.question_id].neighbor_chunks.values()}
                    for q in questions}  # a pool carries every chunk of its user
        self.missing_note = missing_gold_note(questions, sessions.__getitem__)
        return evaluate_presets(pools, questions, presets, k, progress, cancel)

    def study_file(self) -> Path:
        """The SQLite file of the auto-tune studies of the open store and question set."""
        return paths.study_file(self.ctx.home, self.ctx.location or "", self._source())

    def _study(self, kind: str, metric: str, pool_limits: bool, users: Sequence[str]) -> tuple[str, str]:
        """(SQLAlchemy URL, study name) of the study these choices continue."""
        path = self.study_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        who = hashlib.sha1(",".join(users).encode()).hexdigest()[:8]
        return f"sqlite:///{path}", f"{kind}-{metric}-{'pool' if pool_limits else 'fixed-pool'}-{who}"

    def forget_studies(self) -> Path:
        """Delete the saved studies of this store and question set (the next Tune starts afresh)."""
        path = self.study_file()
        path.unlink(missing_ok=True)
        return path

    def tune(self, train: Sequence[str], test: Sequence[str], metric: str, trials: int, progress: Progress,
             cancel: threading.Event, pool_limits: bool = True) -> TuneResult:
        """Worker thread: pools of the chosen users' questions, then a seeded Optuna TPE study
        (`core.evaluation.study.tune_tpe`, kept on disk) from Memsense's default, warm-started
        with the built-in RRF presets; `trials` is the study's total. Trials are scored by worker
        processes on every core (started by 'spawn', never forked from the Qt process) and stopped
        on cancel."""
        from core.evaluation.study import tune_tpe  # optuna: imported when a study starts, not at app start

        questions = self._questions([*train, *test])
        train_q, test_q = split_users(questions, train, test)
        start, knobs = Config(), ALL_KNOBS if pool_limits else KNOBS
        pools = self._pools(questions, max(recall_depth([start]), knob_depth(knobs, start.top_k)), progress, cancel)
        storage, name = self._study("split", metric, pool_limits, [*sorted(train), "|", *sorted(test)])
        return tune_tpe(pools, train_q, test_q, metric, trials=trials, start=start, seeds=seed_presets(start),
                        knobs=knobs, storage=storage, study_name=name, progress=progress, cancel=cancel,
                        jobs=default_jobs())

    def cross_validate(self, users: Sequence[str], metric: str, trials: int, folds: int, progress: Progress,
                       cancel: threading.Event, pool_limits: bool = True) -> CrossValidation:
        """Worker thread: k-fold cross-validation by user (`core.evaluation.cv`) of a seeded Optuna TPE
        search from Memsense's default, seeded with the built-in RRF presets; `trials` per fold, each
        fold's study kept on disk."""
        from core.evaluation.study import tune_tpe

        questions = self._questions(users)
        start, knobs = Config(), ALL_KNOBS if pool_limits else KNOBS
        pools = self._pools(questions, max(recall_depth([start]), knob_depth(knobs, start.top_k)), progress, cancel)
        storage, name = self._study(f"cv{folds}", metric, pool_limits, sorted(users))
        return cross_validate(pools, questions, tune_tpe, "tpe", metric=metric, folds=folds, trials=trials,
                              start=start, seeds=seed_presets(start), knobs=knobs, storage=storage,
                              study_name=name, progress=progress, cancel=cancel,
                              jobs=default_jobs())


def _demo_questions() -> Path | None:
    from core.recall.engine import DEMO_QUESTIONS  # the engine module loads torch: only when asked

    return DEMO_QUESTIONS if DEMO_QUESTIONS.exists() else None
