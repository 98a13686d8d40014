"""One workspace over an open store: its question sets, their one recall, and every run over them (issue 35).

The command line and the app do the same question-set work: load a question file's judged questions and
check they are about the store's users, recall every question once (`core.evaluation.question_set`), re-rank
the pools under each config, and keep the run in the store's history (`core.evaluation.run_keeping`). A
`Workspace` does it, once, for both: the CLI gives it an `Engine` (`open_store`), the app its engine reached
through the engine thread; each asks it and only prints or shows what it returns.

What a workspace holds:
- the store: a recall callable (`recall(user, text, depth, cancel)`), the store's users, its location and
  what keys its pools (`source`: the location, the query model and the lexical route);
- its question sets (`store_questions`: the files attached to the store) and the judged questions of one
  (`question_set`: loaded, filtered, checked against the users, with the file's digest);
- the pools recalled so far, by (user, question text), at least as deep as asked: a question asked again,
  by another command of the same process or another view of the app, is re-ranked, never recalled again
  (each pool carries every chunk of its user, so nothing else reads the store);
- the run history's one way in (`keep`): a run that cannot be kept is a note (`Kept.note`), never a failure.

Evaluate, compare, diagnose, fix, tune (a split or cross-validation), impact and report are
`core.evaluation.workspace_runs`'s functions of a workspace; what they return carries its history entry.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from core.config import Config
from core.errors import Cancelled, MemsenseError
from core.evaluation.question_set import (Asked, QuestionSetKey, QuestionSetRecall, file_digest, planned_depth,
                                          recall_question_set, recall_source)
from core.recall.pool import RecallPool, deepen
from core.records import Question

__all__ = ["CURRENT", "Kept", "attach_dataset", "Progress", "QuestionSet", "QuestionSetRecall", "StoreRecall", "Workspace",
           "check_question_file", "file_digest", "judged_questions", "open_store", "planned_depth", "pools_at"]

Progress = Callable[[int, int, str], None]
CURRENT = "current settings"
"""The name the app gives the settings on screen: a row of the Evaluation view and a config of a kept run."""
WAIT_S = 0.1
"""How often a caller waiting for another's recall looks at its cancel token and shows its progress."""


SharedRuns = Callable[[], "tuple[str, str | None] | None"]
"""A team's runs database to keep runs in (`core.evaluation.shared_runs`): (its URL, who makes the runs; None:
the OS user), or None for the store's own history."""


class Warm(Protocol):
    """Embeds a batch of query texts ahead of their recalls (`Engine.embed_queries`), with progress and cancel."""

    def __call__(self, queries: Sequence[str], progress: Callable[[int, int], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None: ...


class StoreRecall(Protocol):
    """One question's pool on the store, `depth` deep (`cancel`: the caller's token, for a recall that waits)."""

    def __call__(self, user_id: str, text: str, depth: int, cancel: threading.Event | None) -> RecallPool: ...


@dataclass(frozen=True)
class Kept:
    """A run's history entry: the id it was kept as, or why it was not (one line)."""

    run_id: int | None
    reason: str = ""

    @property
    def note(self) -> str:
        """"" when kept, else the one-line note shown beside the run's figures."""
        return "" if self.run_id is not None else f"not kept in the history ({self.reason})"


@dataclass(frozen=True)
class QuestionSet:
    """The judged questions of a question file that a run evaluates, and the file's identity."""

    path: Path
    questions: tuple[Question, ...]
    digest: str

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(sorted({q.user_id for q in self.questions}))


def _load_judged(path: str | Path) -> list[Question]:
    from core.evaluation.evaluate import judged_only
    from core.evaluation.judged import load_question_set

    return judged_only(load_question_set(path))


def judged_questions(path: str | Path, users: Sequence[str] = ()) -> QuestionSet:
    """The judged questions of a question file (only `users`' when given; each must have some), for a run that
    has not opened the store yet (the command line reads its input before the store). One line for a file with
    none (`repeated_note` words the warning for a question asked twice)."""
    from core.evaluation.evaluate import judged_only
    from core.evaluation.judged import load_question_set

    questions = judged_only(load_question_set(path))
    if users:
        known = {q.user_id for q in questions}
        missing = sorted(set(users) - known)
        if missing:
            raise MemsenseError(f"no judged questions for user {', '.join(missing)}; "
                                f"users with questions: {', '.join(sorted(known))}")
        questions = [q for q in questions if q.user_id in users]
    if not questions:
        raise MemsenseError(f"{path}: no judged questions (categories 1-4 with evidence, or graded 1-3)")
    return QuestionSet(Path(path), tuple(questions), file_digest(path))


def repeated_note(questions: QuestionSet) -> str:
    """One sentence when a user is asked the same question twice ("" otherwise; `repeated_questions_note`)."""
    from core.evaluation.evaluate import repeated_questions_note

    return repeated_questions_note(questions.questions)


def check_question_file(path: Path) -> None:
    """Raise `MemsenseError` unless `path` reads as a question set with at least one judged question."""
    if not _load_judged(path):
        raise MemsenseError(f"{path}: no question in it has evidence (gold sessions) to score against; "
                            "choose a judged question file (LoCoMo JSON or a project question file)")


def attach_dataset(store: str | Path, dataset: str | Path) -> int:
    """After ingesting `dataset` into `store`: attach its judged questions to the store (`store_questions`);
    how many (0: none, nothing attached)."""
    from core.evaluation.store_questions import attach_dataset as attach_questions

    return attach_questions(store, dataset)


def pools_at(pools: Mapping[str, RecallPool], depth: int) -> dict[str, RecallPool]:
    """Every pool able to serve `depth` (deepened from its cached route scores where needed)."""
    return {qid: p if p.serves(depth) else deepen(p, depth) for qid, p in pools.items()}


class Workspace:
    """An open store's question sets, their recalled pools and the runs over them (module docstring)."""

    def __init__(self, location: str, recall: StoreRecall, users: Iterable[str], *, source: str | None = None,
                 model: str | None = None, model_hint: Callable[[], str] | None = None, plan: int = 0,
                 warm: Warm | None = None, shared_runs: SharedRuns | None = None,
                 on_kept: Callable[[int], Any] | None = None):
        self.location = location
        self.users = list(users)
        self.source = source or recall_source(location, "", "bm25")
        """What keys the pools besides the questions: the store, its query model and lexical route."""
        self.model = model
        """The model a kept run names (None: read from the store, `model_key`; with `model_hint`, what it says
        when the store cannot be read for it, e.g. the name the engine gives its model)."""
        self.model_hint = model_hint
        self.plan = plan
        """How deep a recall goes at least, so later runs at other settings re-rank it (`planned_depth`)."""
        self._recall = recall
        self.warm = warm
        """Embeds a batch of query texts ahead of their recalls (None: each recall embeds its own)."""
        self.shared_runs = shared_runs
        """Where a team keeps its runs instead of the store's history, asked at each keep (None: the store's)."""
        self.on_kept = on_kept
        """Told (on the keeping thread) the id of each run kept, shown or not (the app: these runs are its own)."""
        self._known: dict[Asked, RecallPool] = {}
        self._lock = threading.Lock()
        self._progress: tuple[int, int, str] | None = None

    # ---- question sets ------------------------------------------------------------------------------
    def attached(self) -> list[Path]:
        """The question files attached to the store, newest first."""
        from core.evaluation.store_questions import attached

        return attached(self.location)

    def attach(self, path: str | Path) -> bool:
        """Remember `path` as a question file of the store; False when the store's memory of it cannot be
        written (the choice stands, only the memory of it is lost)."""
        from core.evaluation.store_questions import attach

        try:
            attach(self.location, path)
        except (MemsenseError, OSError):
            return False
        return True

    def check_belongs(self, path: str | Path) -> set[str]:
        """Refuse, with one line, a question file about none of the store's users; the users it shares."""
        from core.evaluation.store_questions import check_belongs

        return check_belongs(path, self.users)

    def belongs(self, path: str | Path) -> bool:
        try:
            self.check_belongs(path)
        except MemsenseError:
            return False
        return True

    def question_set(self, path: str | Path, users: Sequence[str] | None = None, none_judged: str = "") -> QuestionSet:
        """The judged questions of `path` about `users` (the store's by default; all of the file's when none is),
        each about a user of the store (one line naming those that are not). `none_judged`: the line for a file
        with no judged question (default: the file's questions, unchecked, as they are)."""
        from core.evaluation.evaluate import check_users

        digest = file_digest(path)
        questions = _load_judged(path)
        if none_judged and not questions:
            raise MemsenseError(none_judged)
        wanted = set(users) if users is not None else set(self.users)
        questions = [q for q in questions if q.user_id in wanted] or questions
        check_users(questions, self.users)
        return QuestionSet(Path(path), tuple(questions), digest)

    # ---- the one recall -----------------------------------------------------------------------------
    def recall(self, questions: QuestionSet, depth: int, progress: Progress | None = None,
               cancel: threading.Event | None = None) -> QuestionSetRecall:
        """The pools of `questions`, each at least `depth` deep: those recalled before in this workspace, the
        others recalled now (at least `plan` deep). One recall at a time: a second caller waits, shown the
        first one's progress; a cancelled recall keeps the pools it made."""
        from core.evaluation.evaluate import check_users

        check_users(questions.questions, self.users)
        while not self._lock.acquire(timeout=WAIT_S):
            if cancel is not None and cancel.is_set():
                raise Cancelled("evaluation cancelled")
            if self._progress is not None and progress is not None:
                progress(*self._progress)
        try:
            key = QuestionSetKey(self.source, questions.digest, questions.users)

            def report(done: int, total: int, what: str) -> None:
                self._progress = (done, total, what)
                if progress is not None:
                    progress(done, total, what)

            def recall(user_id: str, text: str, d: int) -> RecallPool:
                return self._recall(user_id, text, d, cancel)

            self.embed([q.text for q in questions.questions if (q.user_id, q.text) not in self._known], report, cancel,
                       "embed questions")
            return recall_question_set(recall, key, questions.questions, depth, plan=self.plan, known=self._known,
                                       progress=report, cancel=cancel)
        finally:
            self._progress = None
            self._lock.release()

    def pools(self, questions: QuestionSet, configs: Iterable[Config], tune_from: Config | None = None,
              knobs: Sequence[Any] | None = None, progress: Progress | None = None,
              cancel: threading.Event | None = None) -> dict[str, RecallPool]:
        """Question id -> pool, deep enough for every config of `configs` (and, with `tune_from`, every trial of
        a search over `knobs` from there), each able to serve them."""
        configs = list(configs)
        depth = planned_depth(configs, tune_from) if knobs is None else planned_depth(configs, tune_from, knobs)
        return dict(self.recall(questions, depth, progress, cancel).pools)

    def embed(self, texts: Sequence[str], progress: Progress | None, cancel: threading.Event | None,
              what: str) -> None:
        """Embed `texts` in batches ahead of their recalls, when the store can (`warm`), showing `what` in
        `progress`; cancelled: `Cancelled`, nothing recalled yet."""
        if self.warm is None or not texts:
            return
        self.warm(sorted(set(texts)), (lambda done, total: progress(done, total, what)) if progress else None,
                  cancel.is_set if cancel is not None else None)

    def part_recalled(self, questions: QuestionSet) -> QuestionSet:
        """The questions of `questions` whose pools this workspace holds (all of them after a whole recall; the
        first ones after a recall stopped part way)."""
        from dataclasses import replace

        return replace(questions, questions=tuple(q for q in questions.questions if (q.user_id, q.text) in self._known))

    def recall_one(self, user_id: str, text: str, depth: int, cancel: threading.Event | None = None) -> RecallPool:
        """One query's pool, recalled now (a query nobody judged: `workspace_runs.impact`)."""
        return self._recall(user_id, text, depth, cancel)

    def pool_of(self, user_id: str, text: str) -> RecallPool | None:
        """A question's pool on the store, if it was recalled."""
        return self._known.get((user_id, text))

    def missing_gold_note(self, questions: QuestionSet, pools: Mapping[str, RecallPool]) -> str:
        """One sentence when gold sessions of `questions` are not in the store ("" when all are): read from
        the pools, which carry every chunk of their users."""
        from core.evaluation.evaluate import missing_gold_note

        sessions = {q.user_id: {c.session_number for c in pools[q.question_id].user_chunks.values()}
                    for q in questions.questions}
        return missing_gold_note(questions.questions, sessions.__getitem__)

    # ---- the run history ----------------------------------------------------------------------------
    def keep(self, kind: str, dataset: str | Path, configs: Mapping[str, Config], evaluations: Mapping[str, Any],
             summary: Mapping[str, Any], hinted: bool = True) -> Kept:
        """Keep a run in the store's history (`run_keeping.keep_run`); a history that cannot be written
        (damaged, of another shape, locked, read-only, on a full disk, a store with no folder) is a note.
        `hinted`: a store whose model cannot be read names `model_hint`'s (False: the run is not kept)."""
        from core.evaluation.run_keeping import keep_run
        from core.evaluation.shared_runs import open_history
        from core.redact import redact

        try:
            model = self._model() if hinted else self.model
            shared = self.shared_runs() if self.shared_runs is not None else None
            into = open_history(self.location, shared[0], made_by=shared[1]) if shared else None
            run_id = keep_run(self.location, kind, dataset, configs, evaluations, summary, model=model, into=into)
            if self.on_kept is not None:
                self.on_kept(run_id)
            return Kept(run_id)
        except Exception as exc:  # noqa: BLE001 - whatever the history's fault, the run's figures stand
            return Kept(None, redact(str(exc)))

    def _model(self) -> str | None:
        return self.model if self.model is not None or self.model_hint is None else self.model_name()

    def model_name(self) -> str:
        """The model that embedded the store: its meta's key when the store names one (a folder, a Qdrant
        server), else what `model_hint` says (a live Memsense's database is not reopened for it)."""
        from core.evaluation.history import model_key

        if self.model is not None:
            return self.model
        try:
            return model_key(self.location)
        except Exception:  # noqa: BLE001 - a store that cannot be reopened for its meta keeps the hint
            if self.model_hint is None:
                raise
            return self.model_hint() or "unknown"


@contextmanager
def open_store(store: str | Path, *, model: str | None = None, cache_dir: str | None = None,
               options: Mapping[str, Any] | None = None, runs_db: str | None = None) -> Iterator[Workspace]:
    """A workspace on the store folder at `store`, opened once (an `Engine`) and closed after; its runs are kept
    in the shared runs database `runs_db` when given."""
    from core.recall.engine import Engine

    opts = dict(options or {})
    engine = Engine(store, model=model, cache_dir=cache_dir, **opts)
    try:
        def recall(user_id: str, text: str, depth: int, cancel: threading.Event | None = None) -> RecallPool:
            return engine.recall(user_id, text, depth=depth)

        yield Workspace(str(store), recall, engine.users(), warm=engine.embed_queries,
                        source=recall_source(str(store), engine.embedder.key, str(opts.get("lexical", "bm25"))),
                        shared_runs=(lambda: (runs_db, None)) if runs_db else None)
    finally:
        engine.close()
