"""Where the Evaluation view's and the case list's questions and pools come from on the open store.

Questions come from a question file (LoCoMo JSON, project questions or a judged set; the
demo questions by default) or are those judged in the app on the open store: one choice for
the window (`state.question_set.QuestionSets`), so Cases, Evaluation and Auto-tune evaluate the
same questions. Their pools are the window's one question-set recall: recalled once (each recall
on the context's engine thread, one question at a time, so the inspector stays usable) and
re-ranked by every view; evaluating again with other presets, tuning or scoring cases only
re-ranks.

Auto-tuning is a seeded Optuna TPE study kept on disk (`paths.study_file`: one journal file
per store and question set, one study per kind of run, metric, knob set and users), so a run
cancelled or cut short by closing the app resumes where it stopped when Tune is pressed again
with the same choices: the trials count is the study's total. With `pool_limits` the pool
limits are searched too (`core.evaluation.tune.ALL_KNOBS`, as the CLI does), which needs
recall pools as deep as the deepest limits ask for (the question set's planned depth).
"""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.errors import MemsenseError
from core.config.presets import MEMSENSE
from core.evaluation.cv import CrossValidation, FoldTrialSeen, cross_validate
from core.evaluation.evaluate import PresetEvaluation, check_users, evaluate_presets, judged_only, missing_gold_note
from core.evaluation.judged import load_question_set
from core.evaluation.parallel import default_jobs
from core.evaluation.question_set import QuestionSetRecall, file_digest, planned_depth
from core.evaluation.space import SearchSpace
from core.evaluation.tune import ALL_KNOBS, KNOBS, Knob, TrialSeen, TuneResult, seed_presets, split_users
from core.recall.pool import RecallPool
from core.records import Question
from memsense_gui.state import paths
from memsense_gui.state.context import AppContext
from memsense_gui.state.judgments import NOTHING_JUDGED
from memsense_gui.state.question_set import TUNE_START
from memsense_gui.workers.bridge import EngineBridge

Progress = Callable[[int, int, str], None]


class EvaluationSource(QObject):
    """The window's questions (a file, or judged in the app) and their shared recall."""

    changed = Signal(str)  # what the questions are now, for a label

    def __init__(self, ctx: AppContext, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.sets = ctx.question_sets
        self.bridge = EngineBridge(ctx.engine_runner)
        self.sets.changed.connect(self.changed)
        self.missing_note = ""  # the last evaluation's word on gold sessions the store lacks

    @property
    def path(self) -> Path | None:
        return self.sets.path

    @property
    def app_judged(self) -> bool:
        return self.sets.app_judged

    def label(self) -> str:
        return self.sets.label()

    def set_path(self, path: str | Path) -> None:
        self.sets.set_path(path)

    def use_app_judged(self) -> None:
        """Evaluate the questions graded in the app (0-3 on a result) on the open store."""
        self.sets.use_app_judged()

    def question_file(self) -> Path:
        """The file the questions come from (a question file, or the app's judged set of the store)."""
        return self._source()

    def questions(self) -> tuple[list[Question], str]:
        """The judged questions of the open store's users, and the digest of their file."""
        return self._questions()

    def _source(self) -> Path:
        path = self.ctx.judgments.path if self.app_judged else self.path
        if path is None:
            raise MemsenseError("choose a question file first (Questions…)")
        if self.app_judged and not path.exists():
            raise MemsenseError(NOTHING_JUDGED)
        return path

    def _questions(self, users: Sequence[str] | None = None) -> tuple[list[Question], str]:
        """The judged questions of the chosen users (all the store's by default), and the
        digest of the file they come from."""
        if self.ctx.engine is None:
            raise MemsenseError("open a store first (File > Open store…)")
        source = self._source()
        digest = file_digest(source)
        questions = judged_only(load_question_set(source))
        if self.app_judged and not questions:
            raise MemsenseError("no question judged in the app has a relevant result yet: grade results 1-3")
        wanted = set(users) if users is not None else set(self.ctx.users)
        questions = [q for q in questions if q.user_id in wanted] or questions
        check_users(questions, self.ctx.users)
        return questions, digest

    def recalled(self, questions: Sequence[Question], digest: str, depth: int, progress: Progress,
                 cancel: threading.Event) -> QuestionSetRecall:
        """Worker thread: the question set's recall, each pool at least `depth` deep (recalled on
        the engine thread only for questions no earlier recall on this store serves)."""
        return question_set_recall(self.ctx, self.bridge, questions, digest, depth, progress, cancel)

    def chunks_of(self, user_id: str, text: str) -> dict:
        """Memory id -> chunk of a question's recall pool ({} if it was not recalled)."""
        pool = self.sets.pool_of(user_id, text)
        return {} if pool is None else {c.memory_id: c for c in pool.chunks}

    def cases(self, depth: int, progress: Progress, cancel: threading.Event) -> QuestionSetRecall:
        """Worker thread: the judged questions of the open store, each with its pool `depth` deep."""
        return self.recalled(*self._questions(), depth, progress, cancel)

    def evaluate(self, presets: Mapping[str, Config], k: int, progress: Progress,
                 cancel: threading.Event) -> list[PresetEvaluation]:
        """Worker thread: load the questions, take their recall (recalling what is missing), re-rank."""
        questions, digest = self._questions()
        pools = self.recalled(questions, digest, planned_depth(presets.values()), progress, cancel).pools
        sessions = {q.user_id: {c.session_number for c in pools[q.question_id].user_chunks.values()}
                    for q in questions}  # a pool carries every chunk of its user
        self.missing_note = missing_gold_note(questions, sessions.__getitem__)
        return evaluate_presets(pools, questions, presets, k, progress, cancel)

    def study_file(self) -> Path:
        """The file of the auto-tune studies of the open store and question set."""
        return paths.study_file(self.ctx.home, self.ctx.location or "", self._source())

    def _study(self, kind: str, metric: str, pool_limits: bool, users: Sequence[str],
               space: SearchSpace | None = None) -> tuple[Path, str]:
        """(study file, study name) of the study these choices continue (a search space with locks
        or ranges of its own is a study of its own)."""
        path = self.study_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        who = hashlib.sha1(",".join(users).encode()).hexdigest()[:8]
        shaped = f"-space{space.signature()}" if space is not None and space.signature() else ""
        return path, f"{kind}-{metric}-{'pool' if pool_limits else 'fixed-pool'}-{who}{shaped}"

    def forget_studies(self) -> Path:
        """Delete the saved studies of this store and question set (the next Tune starts afresh)."""
        path = self.study_file()
        path.unlink(missing_ok=True)
        return path

    def tune(self, train: Sequence[str], test: Sequence[str], metric: str, trials: int, progress: Progress,
             cancel: threading.Event, pool_limits: bool = True, space: SearchSpace | None = None,
             on_trial: TrialSeen | None = None) -> TuneResult:
        """Worker thread: pools of the chosen users' questions, then a seeded Optuna TPE study
        (`core.evaluation.study.tune_tpe`, kept on disk) from Memsense's default, warm-started
        with the built-in RRF presets; `trials` is the study's total. Trials are scored by worker
        processes on every core (started by 'spawn', never forked from the Qt process) and stopped
        on cancel. `space`: knobs locked and ranges chosen; `on_trial` sees each trial scored."""
        from core.evaluation.study import tune_tpe  # optuna: imported when a study starts, not at app start

        questions, digest = self._questions([*train, *test])
        train_q, test_q = split_users(questions, train, test)
        start, knobs = _start_and_knobs(pool_limits, space)
        pools = self.recalled(questions, digest, planned_depth([start], start, knobs), progress, cancel).pools
        storage, name = self._study("split", metric, pool_limits, [*sorted(train), "|", *sorted(test)], space)
        return tune_tpe(pools, train_q, test_q, metric, trials=trials, start=start, seeds=seed_presets(start),
                        knobs=knobs, storage=storage, study_name=name, progress=progress, cancel=cancel,
                        jobs=default_jobs(), on_trial=on_trial)

    def cross_validate(self, users: Sequence[str], metric: str, trials: int, folds: int, progress: Progress,
                       cancel: threading.Event, pool_limits: bool = True, space: SearchSpace | None = None,
                       on_trial: FoldTrialSeen | None = None, test: Sequence[str] = ()) -> CrossValidation:
        """Worker thread: k-fold cross-validation by user (`core.evaluation.cv`) of a seeded Optuna TPE
        search from Memsense's default, seeded with the built-in RRF presets; `trials` per fold, each
        fold's study kept on disk. What is offered is chosen among the start, every preset (built-in and
        the user's) and the search by the one-standard-error rule (SPEC §16); `test`: users kept out of
        all of it, on whom every contender is then reported (a train/test split)."""
        from core.evaluation.study import tune_tpe

        questions, digest = self._questions([*users, *test])
        train_q = [q for q in questions if q.user_id in set(users)]
        test_q = [q for q in questions if q.user_id in set(test)]
        start, knobs = _start_and_knobs(pool_limits, space)
        presets = self.ctx.presets.all()
        depth = planned_depth([start, *presets.values()], start, knobs)
        pools = self.recalled(questions, digest, depth, progress, cancel).pools
        who = [*sorted(users), *(["|", *sorted(test)] if test else [])]
        storage, name = self._study(f"cv{folds}", metric, pool_limits, who, space)
        return cross_validate(pools, train_q, tune_tpe, "tpe", metric=metric, folds=folds, trials=trials,
                              start=start, seeds=seed_presets(start), knobs=knobs, storage=storage,
                              study_name=name, progress=progress, cancel=cancel,
                              jobs=default_jobs(), on_trial=on_trial, presets=presets,
                              start_name=MEMSENSE if start == Config() else "start", test=test_q)


def _start_and_knobs(pool_limits: bool, space: SearchSpace | None) -> tuple[Config, tuple[Knob, ...]]:
    """Where a search starts and the knobs it searches: Memsense's settings over every knob (the
    pool limits too with `pool_limits`), or as `space` shapes them."""
    if space is not None:
        return space.start(TUNE_START), space.knobs
    return TUNE_START, ALL_KNOBS if pool_limits else KNOBS


def question_set_recall(ctx: AppContext, bridge: EngineBridge, questions: Sequence[Question], digest: str,
                        depth: int, progress: Progress, cancel: threading.Event) -> QuestionSetRecall:
    """Worker thread (never the engine's): the window's one question-set recall
    (`ctx.question_sets`) of `questions`, each pool at least `depth` deep; what no earlier
    recall on this store serves is recalled on the engine thread through `bridge`."""
    engine = ctx.engine
    if engine is None:
        raise MemsenseError("open a store first: there is no store to recall the questions from")

    def recall(user_id: str, text: str, d: int) -> RecallPool:
        return bridge.call(engine.recall, user_id, text, d, cancel=cancel)

    return ctx.question_sets.recall(engine, ctx.location or "", recall, questions, digest, depth, progress, cancel)

