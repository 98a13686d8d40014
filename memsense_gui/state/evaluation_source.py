"""The window's question set on the open store's workspace: what Evaluation, Auto-tune, Cases, Diagnose, Find a
fix, What-if and the report evaluate (one `EvaluationSource`, owned by the `AppContext`).

Questions come from a question file (LoCoMo JSON, project questions or a judged set; the
demo questions by default) or are those judged in the app on the open store: one choice for
the window (`state.question_set.QuestionSets`), so Cases, Evaluation and Auto-tune evaluate the
same questions. Their pools are the store's workspace's (`core.evaluation.workspace`, one per open store, kept by the
context): recalled once (each recall on the context's engine thread, one question at a time, so the
inspector stays usable) and re-ranked by every view; evaluating again with other presets, tuning,
diagnosing or scoring cases only re-ranks. The runs themselves are `core.evaluation.workspace_runs`'s:
this class only says which file and which users, and keeps the auto-tuner's studies where the app keeps them.

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
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from PySide6.QtCore import QObject, QSettings, Signal

from core.config import Config
from core.config.presets import MEMSENSE
from core.errors import MemsenseError
from core.evaluation import workspace_runs as runs
from core.evaluation.cv import CrossValidation, FoldTrialSeen
from core.evaluation.evaluate import PresetEvaluation
from core.evaluation.parallel import default_jobs
from core.evaluation.space import SearchSpace
from core.evaluation.tune import ALL_KNOBS, KNOBS, Knob, TrialSeen, TuneResult, seed_presets, split_users
from core.evaluation.workspace import CURRENT, Kept, QuestionSet, QuestionSetRecall, Workspace, file_digest
from core.records import Question
from memsense_gui.state import paths
from memsense_gui.state.judgments import NOTHING_JUDGED
from memsense_gui.state.question_set import TUNE_START, QuestionSets

if TYPE_CHECKING:
    from memsense_gui.state.judgments import AppJudgments
    from memsense_gui.state.presets import PresetLibrary

Progress = Callable[[int, int, str], None]


class SourceContext(Protocol):
    """What the question set needs of the application context."""

    home: Path
    settings: QSettings
    location: str | None
    question_sets: QuestionSets
    judgments: AppJudgments
    presets: PresetLibrary

    def open_workspace(self) -> Workspace: ...

    def attempt(self, fn: Callable[[], Any], context: str) -> bool: ...


def fix_metric(start: Config) -> str:
    """The metric a case is won back on: every gold session returned (as `memsense fix` by default)."""
    return f"recall_all@{start.top_k}"


class EvaluationSource(QObject):
    """The window's questions (a file, or judged in the app) and the runs over them on the store's workspace."""

    changed = Signal(str)  # what the questions are now, for a label

    def __init__(self, ctx: SourceContext, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.sets = ctx.question_sets
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
        path = self.ctx.judgments.path if self.app_judged else self.path
        if path is None:
            raise MemsenseError("choose a question file first (Questions…)")
        if self.app_judged and not path.exists():
            raise MemsenseError(NOTHING_JUDGED)
        return path

    def question_set(self, users: Sequence[str] | None = None) -> tuple[Workspace, QuestionSet]:
        """Worker thread: the store's workspace and the judged questions of the chosen users (all the store's
        by default) from the chosen file."""
        ws = self.ctx.open_workspace()
        none_judged = "no question judged in the app has a relevant result yet: grade results 1-3" \
            if self.app_judged else ""
        return ws, ws.question_set(self.question_file(), users, none_judged)

    def cases(self, depth: int, progress: Progress, cancel: threading.Event) -> QuestionSetRecall:
        """Worker thread: the judged questions of the open store, each with its pool `depth` deep (recalled on
        the engine thread only for questions no earlier recall on this store serves)."""
        ws, qs = self.question_set()
        return ws.recall(qs, depth, progress, cancel)

    def recall_questions(self, questions: Sequence[Question], dataset: Path | None, depth: int, progress: Progress,
                         cancel: threading.Event) -> QuestionSetRecall:
        """Worker thread: the pools of `questions` (judged in the app, from `dataset`), `depth` deep."""
        ws = self.ctx.open_workspace()
        digest = file_digest(dataset) if dataset is not None and dataset.exists() else ""
        return ws.recall(QuestionSet(dataset or Path(), tuple(questions), digest), depth, progress, cancel)

    def chunks_of(self, user_id: str, text: str) -> dict:
        """Memory id -> chunk of a question's recall pool ({} if it was not recalled)."""
        try:
            pool = self.ctx.open_workspace().pool_of(user_id, text)
        except MemsenseError:
            return {}
        return {} if pool is None else {c.memory_id: c for c in pool.chunks}

    def evaluate(self, presets: Mapping[str, Config], k: int, progress: Progress,
                 cancel: threading.Event) -> list[PresetEvaluation]:
        """Worker thread: every preset on the question set (kept in the history when the view's run ends)."""
        ws, qs = self.question_set()
        evaluated = runs.evaluate(ws, qs, presets, k, keep=False, progress=progress, cancel=cancel,
                                  rank_progress=progress)
        self.missing_note = evaluated.missing_note
        return evaluated.results

    def keep_evaluation(self, results: Sequence[PresetEvaluation], dataset: Path) -> Kept:
        """Worker thread: keep an Evaluation view run as an "eval" run of the store."""
        return runs.keep_evaluation(self.ctx.open_workspace(), dataset, results)

    def keep_tune(self, configs: Mapping[str, Config], result: TuneResult | CrossValidation, progress: Progress,
                  cancel: threading.Event) -> Kept:
        """Worker thread: keep an auto-tune run, `configs` scored on every question of the set."""
        ws, qs = self.question_set()
        return runs.keep_tune(ws, qs, configs, result, progress, cancel)

    def diagnose(self, cfg: Config, keep: bool, progress: Progress, cancel: threading.Event) -> runs.DiagnoseRun:
        """Worker thread: where each gold session is lost under the settings on screen, kept in the history
        with `keep`."""
        ws, qs = self.question_set()
        return runs.diagnose(ws, qs, cfg, CURRENT, progress, cancel, rank_progress=progress, keep=keep)[0]

    def find_fix(self, start: Config, cases: Sequence[str], trials: int, seed: int, jobs: int, progress: Progress,
                 cancel: threading.Event) -> runs.FixRun:
        """Worker thread: configs that win `cases` back from the settings on screen, kept in the history."""
        ws, qs = self.question_set()
        return runs.fix(ws, qs, (CURRENT, start), cases, fix_metric(start), trials, seed, jobs=jobs,
                        progress=progress, cancel=cancel)[0]

    def report(self, a: tuple[str, Config], b: tuple[str, Config], k: int, progress: Progress,
               cancel: threading.Event) -> str:
        """Worker thread: the HTML report of A and B on the question set."""
        ws, qs = self.question_set()
        return runs.report(ws, qs, a, b, k, str(qs.path), progress, cancel)

    def study_file(self) -> Path:
        """The file of the auto-tune studies of the open store and question set."""
        return paths.study_file(self.ctx.home, self.ctx.location or "", self.question_file())

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

        ws, qs = self.question_set([*train, *test])
        train_q, test_q = split_users(qs.questions, train, test)
        start, knobs = _start_and_knobs(pool_limits, space)
        storage, name = self._study("split", metric, pool_limits, [*sorted(train), "|", *sorted(test)], space)
        result, _pools = runs.tune_split(ws, qs, train_q, test_q, tune_tpe, start, knobs=knobs, metric=metric,
                                         trials=trials, seeds=seed_presets(start), storage=storage, study_name=name,
                                         progress=progress, cancel=cancel, jobs=default_jobs(), on_trial=on_trial)
        return result

    def cross_validate(self, users: Sequence[str], metric: str, trials: int, folds: int, progress: Progress,
                       cancel: threading.Event, pool_limits: bool = True, space: SearchSpace | None = None,
                       on_trial: FoldTrialSeen | None = None, test: Sequence[str] = ()) -> CrossValidation:
        """Worker thread: k-fold cross-validation by user (`core.evaluation.cv`) of a seeded Optuna TPE
        search from Memsense's default, seeded with the built-in RRF presets; `trials` per fold, each
        fold's study kept on disk. What is offered is chosen among the start, every preset (built-in and
        the user's) and the search by the one-standard-error rule (SPEC §16); `test`: users kept out of
        all of it, on whom every contender is then reported (a train/test split)."""
        from core.evaluation.study import tune_tpe

        ws, qs = self.question_set([*users, *test])
        train_q = [q for q in qs.questions if q.user_id in set(users)]
        test_q = [q for q in qs.questions if q.user_id in set(test)]
        start, knobs = _start_and_knobs(pool_limits, space)
        who = [*sorted(users), *(["|", *sorted(test)] if test else [])]
        storage, name = self._study(f"cv{folds}", metric, pool_limits, who, space)
        return runs.cross_validate(ws, qs, train_q, tune_tpe, "tpe", start, self.ctx.presets.all(), test=test_q,
                                   knobs=knobs, metric=metric, folds=folds, trials=trials, seeds=seed_presets(start),
                                   storage=storage, study_name=name, progress=progress, cancel=cancel,
                                   jobs=default_jobs(), on_trial=on_trial,
                                   start_name=MEMSENSE if start == Config() else "start")


def _start_and_knobs(pool_limits: bool, space: SearchSpace | None) -> tuple[Config, tuple[Knob, ...]]:
    """Where a search starts and the knobs it searches: Memsense's settings over every knob (the
    pool limits too with `pool_limits`), or as `space` shapes them."""
    if space is not None:
        return space.start(TUNE_START), space.knobs
    return TUNE_START, ALL_KNOBS if pool_limits else KNOBS
