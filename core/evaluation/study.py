"""The knob search as an Optuna study: seeded TPE, kept on disk so a run can resume (SPEC §12).

Each trial suggests every knob of `core.tune` in its range (log scale for `rrf_k`, whole
numbers for the pool limits), re-ranks the cached pools of the training questions and
maximises their mean metric; the tie-break metric (nDCG@k, or MRR when tuning nDCG) enters the
objective at 1e-6 weight, so it only orders trials with the same metric. The starting config
and the seed presets are queued as the first trials (the same warm start as the local search).

With `storage` (an SQLAlchemy URL such as `sqlite:///tune.db`, or the `Path` of a study file,
`file_storage`) the study is kept there under `study_name`: running again with the same name
continues it up to `trials` completed trials. It remembers the metric, the start config and the
training users, and refuses to continue under different ones. A resumed run draws new points
from a freshly seeded sampler, so it is reproducible run by run, not identical to one
uninterrupted run. The search itself runs on a copy in memory, and each completed trial is added
to the storage while the workers score the next one: a stored study asked and told trial by trial
writes about twenty times a trial (each parameter, attribute and state), a completed trial once
(`tools/bench_question_set.py` measures both).

Trials are asked and told one ahead (`_optimize`): TPE picks the next point while worker
processes score this one (`jobs`, `core.evaluation.parallel`), and since each ask follows the
same tells whatever the timing, a seeded run makes the same trials with any number of jobs.

Parameter importances are Optuna's fANOVA importances of the train objective over the trials;
like the sweep of each knob, they are left out with `sensitivity_points` < 2 (cross-validation's
folds), since fitting the forest takes seconds at hundreds of trials.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

import optuna

from core.config import Config, to_dict
from core.errors import MemsenseError
from core.evaluation.parallel import Evaluator
from core.evaluation.tune import (KNOBS, Knob, Progress, Scorer, Trial, TrialSeen, TuneResult, _key, open_scorer,
                                   sensitivity, set_knobs)
from core.recall.pool import RecallPool
from core.records import Question

TIE_WEIGHT = 1e-6
STARTUP_TRIALS = 10
"""Random trials before TPE starts modelling (after the queued start and seeds)."""


def _suggest(trial: optuna.Trial, knob: Knob) -> float:
    if knob.integer:
        return trial.suggest_int(knob.name, int(knob.low), int(knob.high))
    return trial.suggest_float(knob.name, knob.low, knob.high, log=knob.log)


def _config(start: Config, knobs: Sequence[Knob], params: Mapping[str, float]) -> Config:
    return set_knobs(start, ((knob, params[knob.name]) for knob in knobs if knob.name in params))


def _params(cfg: Config, knobs: Sequence[Knob]) -> dict[str, float]:
    """A config as trial parameters, each clamped into its knob's range."""
    out = {}
    for knob in knobs:
        value = min(knob.high, max(knob.low, knob.get(cfg)))
        if knob.log:
            value = max(value, knob.low)
        out[knob.name] = int(round(value)) if knob.integer else float(value)
    return out


def _identity(metric: str, start: Config, users: Sequence[str], knobs: Sequence[Knob]) -> dict[str, str]:
    return {"metric": metric, "start": json.dumps(to_dict(start), sort_keys=True),
            "train_users": ",".join(sorted(set(users))), "knobs": ",".join(map(_knob_identity, knobs))}


def _knob_identity(knob: Knob) -> str:
    """A knob in a study's identity: its name, with its range when one was chosen for the search."""
    return knob.name if knob.span is None else f"{knob.name}={knob.low:g}..{knob.high:g}"


def storage_reason(exc: BaseException) -> str:
    """Why a study's database failed, in a few words: "the disk is full", or the first line of
    the error (SQLAlchemy appends the SQL statement and its parameters on the lines after)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.DatabaseError) and seen.sqlite_errorcode == sqlite3.SQLITE_FULL:
            return "the disk is full"
        seen = seen.__cause__ or seen.__context__
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


@contextlib.contextmanager
def study_storage(storage: str | Path | None, study_name: str | None) -> Iterator[None]:
    """Database failures of a stored study (opening, or writing a trial) as one line."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except (SQLAlchemyError, optuna.exceptions.StorageInternalError, OSError) as exc:  # OSError: a study file
        raise MemsenseError(f"the tuning study {study_name!r} in {storage} cannot be written or read: "
                            f"{storage_reason(exc)}; trials already stored in it are kept; free disk space, "
                            "or pick another --study-db") from None


def file_storage(path: str | Path) -> optuna.storages.JournalStorage:
    """A study file: Optuna's append-only journal, one line per completed trial kept, cheaper
    than SQLite's commit per trial (`tools/bench_question_set.py --storages N` times both)."""
    from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock

    lock = JournalFileSymlinkLock(str(path))
    if Path(path).is_file():
        lock.acquire()  # Optuna's own lock of the file: no other process is appending while it is mended
        try:
            drop_torn_line(Path(path))
        finally:
            lock.release()
    return optuna.storages.JournalStorage(JournalFileBackend(str(path), lock_obj=lock))


def drop_torn_line(path: Path) -> int:
    """Cut a study file's last line when a crash cut it short (no line end): it is a part of a
    record, never a whole trial, and the next record appended to it would make one line of two,
    which no later open could read, so every trial stored after it would be lost. The bytes cut."""
    with open(path, "rb+") as fh:
        size = fh.seek(0, 2)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        keep = 0
        block = 1 << 16
        end = size
        while end > 0:  # the last line end, read backwards a block at a time
            start = max(0, end - block)
            fh.seek(start)
            found = fh.read(end - start).rfind(b"\n")
            if found >= 0:
                keep = start + found + 1
                break
            end = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


def open_study(storage: str | Path | None, study_name: str | None, seed: int,
               identity: Mapping[str, str]) -> optuna.Study:
    """Create the study, or load it to continue when it exists with the same identity."""
    optuna.logging.set_verbosity(logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=STARTUP_TRIALS)
    try:
        study = optuna.create_study(direction="maximize", sampler=sampler,
                                    storage=file_storage(storage) if isinstance(storage, Path) else storage,
                                    study_name=study_name, load_if_exists=True)
    except Exception as exc:  # SQLAlchemy / Optuna storage errors: a bad URL or an unreadable file
        raise MemsenseError(f"cannot open the tuning study {study_name!r} in {storage}: {storage_reason(exc)}; "
                            "check the path and free disk space, or pick another --study-db") from None
    with study_storage(storage, study_name):
        if not study.user_attrs:
            for key, value in identity.items():
                study.set_user_attr(key, value)
        else:
            for key, value in identity.items():
                if study.user_attrs.get(key) != value:
                    raise MemsenseError(f"the study {study_name!r} in {storage} was run with different {key}"
                                        f"{_difference(key, study.user_attrs.get(key), value)}; continue it with "
                                        "the same settings, or name a new study; its trials are kept")
    return study


def _difference(key: str, stored: object, now: str) -> str:
    """What differs in a study's identity, when it is short enough to say: the knobs only one side tunes."""
    if key == "knobs":
        was = set(str(stored or "").split(",")) - {""}
        this = set(now.split(","))
        parts = [f"{label}: {', '.join(sorted(names)[:6])}{' …' if len(names) > 6 else ''}"
                 for label, names in (("only in the study", was - this), ("only in this run", this - was)) if names]
        return f" ({'; '.join(parts) if was else 'the study names none'})"
    return f" (the study: {stored}; this run: {now})" if key in ("metric", "train_users") else ""


def tune_tpe(pools: Mapping[str, RecallPool], train: Sequence[Question], test: Sequence[Question],
             metric: str = "recall_all@4", trials: int = 100, seed: int = 0, start: Config | None = None,
             seeds: Sequence[Config] = (), knobs: Sequence[Knob] = KNOBS, sensitivity_points: int = 7,
             storage: str | Path | None = None, study_name: str | None = None,
             progress: Progress | None = None,
             cancel: threading.Event | None = None, jobs: int = 1, evaluator: Evaluator | None = None,
             on_trial: TrialSeen | None = None) -> TuneResult:
    """Maximise the train `metric` over `knobs` with seeded TPE in `trials` completed trials;
    `jobs` worker processes score each trial (or `evaluator`, shared by cross-validation);
    `on_trial` is given every completed trial: those a resumed study holds first, then each new
    one as soon as it is scored, numbered and staged as in the result."""
    name, scorer = open_scorer(pools, train, test, metric, jobs, evaluator)
    start = start or Config()
    with scorer:
        identity = _identity(name, start, [q.user_id for q in train], knobs)
        kept = open_study(storage, study_name, seed, identity) if storage is not None else None
        study = open_study(None, None, seed, identity)
        if kept is not None:
            with study_storage(storage, study_name):
                add_stored_trials(study, kept, storage, study_name)
        for cfg in (start, *seeds):  # those already tried (a resumed study) are skipped
            study.enqueue_trial(_params(cfg, knobs), skip_if_exists=True)
        budget = max(1, trials)
        seen: Callable[[int, optuna.trial.FrozenTrial], None] | None = None
        if on_trial is not None:
            for old in _history(study, start, knobs, len(seeds)):
                on_trial(old)
            seen = _announce(on_trial, start, knobs, len(seeds))
        with study_storage(storage, study_name):
            _optimize(study, scorer, start, knobs, budget - len(_complete(study)), budget, progress, cancel,
                      kept.add_trial if kept is not None else None, seen)
        history = _history(study, start, knobs, len(seeds))
        if not history:
            raise MemsenseError("the tuning study has no completed trial; run it again")
        best = max(history, key=_key)
        cancelled = cancel is not None and cancel.is_set()
        sens = {} if cancelled or sensitivity_points < 2 else sensitivity(
            best.config, knobs, scorer, sensitivity_points, cancel, progress)
    knob_importances: dict[str, float] = {}
    if sensitivity_points >= 2:
        if progress:
            progress(0, 0, "importance of each knob (fANOVA)")
        knob_importances = importances(study, seed)
    return TuneResult(name, tuple(sorted({q.user_id for q in train})), tuple(sorted({q.user_id for q in test})),
                      len(train), len(test), tuple(history), best, sens, cancelled, knob_importances)


def _optimize(study: optuna.Study, scorer: Scorer, start: Config, knobs: Sequence[Knob], n: int, budget: int,
              progress: Progress | None, cancel: threading.Event | None,
              keep: Callable[[optuna.trial.FrozenTrial], None] | None = None,
              seen: Callable[[int, optuna.trial.FrozenTrial], None] | None = None) -> None:
    """Run `n` trials by ask and tell, one ahead: the next trial is asked (TPE's own work)
    while this one is scored. Each ask comes after the same tells whatever the timing, so a
    seeded study makes the same trials with any number of jobs. `keep` stores each completed
    trial (on disk) while the workers score the next."""
    def stopped() -> bool:
        return cancel is not None and cancel.is_set()

    def ask() -> tuple[optuna.Trial, int]:
        trial = study.ask()
        cfg = _config(start, knobs, {kn.name: _suggest(trial, kn) for kn in knobs})
        return trial, scorer.submit(cfg)

    done = len(_complete(study))
    best = max((t.user_attrs.get("train", float("nan")) for t in _complete(study)), default=float("nan"))
    pending = ask() if n > 0 and not stopped() else None
    for i in range(n):
        if pending is None:
            break
        trial, ticket = pending
        pending = ask() if i + 1 < n and not stopped() else None
        score = scorer.result(ticket)
        trial.set_user_attr("train", score.train)
        trial.set_user_attr("tiebreak", score.tiebreak)
        trial.set_user_attr("test", score.test)
        frozen = study.tell(trial, score.train + TIE_WEIGHT * score.tiebreak)
        if keep is not None:
            keep(frozen)
        if seen is not None:
            seen(done, frozen)
        done += 1
        best = score.train if not best >= score.train else best
        if progress:
            progress(done, budget, f"trial {trial.number}: train {score.train:.3f}, best {best:.3f}")


def add_stored_trials(study: optuna.Study, kept: optuna.Study, storage: str | Path | None,
                      study_name: str | None) -> None:
    """Add the completed trials of a stored study to `study`, each checked first: a damaged row,
    a text where a number goes or a value out of its knob's range is one line, and the stored
    study is left as it was (nothing has been written to it yet)."""
    where = f"the tuning study {study_name!r} in {storage}"
    keep = "nothing was written to it and its trials are kept; name a new study (--study), or pick another --study-db"
    try:
        trials = _complete(kept)
        for t in trials:
            for name, value in _numbers(t):
                if not _finite_number(value):
                    raise MemsenseError(f"{where} holds {str(value)[:40]!r} as trial {t.number}'s {name}, where a "
                                        f"finite number goes; {keep}")
        study.add_trials(trials)
    except (ValueError, TypeError, LookupError) as exc:  # Optuna reading a value of another type, shape or range
        raise MemsenseError(f"{where} holds a damaged trial ({storage_reason(exc)[:200]}); {keep}") from None


def _numbers(t: optuna.trial.FrozenTrial) -> Iterator[tuple[str, object]]:
    """What must be a finite number in a stored trial: its value, train and tie-break scores, parameters."""
    yield from (("value", v) for v in t.values or [None])
    yield from ((key, t.user_attrs.get(key)) for key in ("train", "tiebreak"))
    if t.user_attrs.get("test") is not None:
        yield "test", t.user_attrs["test"]
    yield from t.params.items()


def _finite_number(value: object) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _complete(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    return [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]


def _history(study: optuna.Study, start: Config, knobs: Sequence[Knob], n_seeds: int) -> list[Trial]:
    return [_trial(n, t, start, knobs, n_seeds) for n, t in enumerate(_complete(study))]


def _trial(n: int, t: optuna.trial.FrozenTrial, start: Config, knobs: Sequence[Knob], n_seeds: int) -> Trial:
    """The `n`-th completed trial of a study as a `Trial`."""
    stage = "start" if n == 0 else "seed" if n <= n_seeds else "tpe"
    return Trial(n, stage, _config(start, knobs, t.params), float(t.user_attrs["train"]),
                 t.user_attrs.get("test"), float(t.user_attrs["tiebreak"]))


def _announce(on_trial: TrialSeen, start: Config, knobs: Sequence[Knob],
              n_seeds: int) -> Callable[[int, optuna.trial.FrozenTrial], None]:
    return lambda n, t: on_trial(_trial(n, t, start, knobs, n_seeds))


def importances(study: optuna.Study, seed: int = 0) -> dict[str, float]:
    """fANOVA importance of each knob for the train objective ({} with too few trials)."""
    if len(_complete(study)) < 3:
        return {}
    try:
        evaluator = optuna.importance.FanovaImportanceEvaluator(seed=seed)
        return {k: float(v) for k, v in optuna.importance.get_param_importances(study, evaluator=evaluator).items()}
    except (RuntimeError, ValueError):  # every trial scored the same: nothing to apportion
        return {}

