"""One tuning study run by many workers (issue 38): each `memsense tune --storage URL --study
NAME` process joins the study kept in a shared storage (`core.evaluation.study_storage`) and
runs trials in it until the study holds `trials` COMPLETE trials, by Optuna's documented way of
distributing a study: `Study.optimize` on an RDB (or journal) storage, each trial created in the
storage when it starts, so the sampler of every worker sees every other worker's trials.

- Each worker recalls its question set once (the caller's pools) and scores a trial with `jobs`
  processes, as a one-worker run does.
- The sampler is TPE with the constant liar (Optuna's setting for parallel workers: a running
  trial counts as a poor one, so two workers are not sent to the same point); its seed is the
  worker's own, so a shared study is not reproducible trial by trial (timing orders the trials).
- Only COMPLETE trials count: a trial of a killed worker is marked failed by the heartbeat
  (`study_storage`), one cancelled by Ctrl+C is pruned; neither is ever scored or chosen.
- The result is chosen by the one-worker rule (`core.evaluation.tune._key`: the best train
  metric, then the tie-break metric, then the earliest trial) over every COMPLETE trial of the
  study when this worker stops, numbered by the study's own trial numbers.
- The study records the metric, the knobs, the start config and the training users (user
  attributes) when it is made; a worker with other ones is refused in one line.
- The start config and the seed presets are queued once (again if their trial was lost).
"""
from __future__ import annotations

import json
import os
import socket
import threading
import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import optuna

from core.config import Config, from_dict
from core.errors import MemsenseError
from core.evaluation.parallel import Evaluator
from core.evaluation.study import (STARTUP_TRIALS, TIE_WEIGHT, _config, _identity, _params, _suggest, importances)
from core.evaluation.study_storage import StudyStorage, open_storage, storage_error
from core.evaluation.tune import ALL_KNOBS, KNOBS, Knob, Progress, Trial, TrialSeen, TuneResult, _key, open_scorer, sensitivity
from core.recall.pool import RecallPool
from core.records import Question

COMPLETE = optuna.trial.TrialState.COMPLETE
WORKER_ATTR, STAGE_ATTR = "worker", "stage"
"""Trial user attributes: which worker (host:pid) ran it, and whether it was the start, a seed or TPE's."""
BUDGET_ATTR = "trials"
"""Study user attribute: the COMPLETE trials its workers run to (not part of its identity)."""
_SHOWN = {"metric": "metric", "knobs": "knob set", "start": "start config", "train_users": "training users"}


def worker_name() -> str:
    """This process as a worker of a shared study: host name and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def join_study(backend: optuna.storages.BaseStorage, storage: StudyStorage, study_name: str,
               identity: Mapping[str, str]) -> optuna.study.Study:
    """Create the study, or join it when it exists with the same identity (one line otherwise)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(n_startup_trials=STARTUP_TRIALS, constant_liar=True)
    try:
        study = optuna.create_study(storage=backend, study_name=study_name, direction="maximize", sampler=sampler,
                                    load_if_exists=True)
        held = study.user_attrs
        for key, value in identity.items():  # a study just made, by this worker or by another still writing its
            if key not in held:              # identity at this instant: the same value written twice is harmless
                study.set_user_attr(key, value)
        held = study.user_attrs  # read again: two workers may have made the study at once
    except Exception as exc:
        raise storage_error(exc, storage) from None
    for key, value in identity.items():
        if held.get(key) != value:
            what = _SHOWN.get(key, key)
            was = f" {held.get(key)}, not {value}" if key == "metric" else ""
            raise MemsenseError(f"the study {study_name!r} in {storage} was made with another {what}{was}; join it "
                                f"with the same --metric, knobs, --start and users as its other workers, or name a "
                                f"new --study")
    return study


def tune_shared(pools: Mapping[str, RecallPool], train: Sequence[Question], test: Sequence[Question],
                metric: str = "recall_all@4", trials: int = 100, seed: int = 0, start: Config | None = None,
                seeds: Sequence[Config] = (), knobs: Sequence[Knob] = KNOBS, sensitivity_points: int = 7,
                storage: StudyStorage | None = None, study_name: str | None = None,
                progress: Progress | None = None, cancel: threading.Event | None = None, jobs: int = 1,
                evaluator: Evaluator | None = None, on_trial: TrialSeen | None = None) -> TuneResult:
    """Run trials of the shared study `study_name` in `storage` until it holds `trials` COMPLETE
    trials (module docstring); the arguments are `core.evaluation.study.tune_tpe`'s."""
    if storage is None or not study_name:
        raise ValueError("a shared study needs a storage and a study name")
    name, scorer = open_scorer(pools, train, test, metric, jobs, evaluator)
    start = start or Config()
    with scorer:
        backend = open_storage(storage)
        study = join_study(backend, storage, study_name, _identity(name, start, [q.user_id for q in train], knobs))
        try:
            study.set_user_attr(BUDGET_ATTR, trials)  # for watchers' ETA (the last worker to join says)
        except Exception as exc:
            raise storage_error(exc, storage) from None
        worker = worker_name()

        def objective(trial: optuna.Trial) -> float:
            if cancel is not None and cancel.is_set():
                raise optuna.TrialPruned()  # created before the cancel was seen: never counted
            trial.set_user_attr(WORKER_ATTR, worker)
            score = scorer(_config(start, knobs, {kn.name: _suggest(trial, kn) for kn in knobs}))
            trial.set_user_attr("train", score.train)
            trial.set_user_attr("tiebreak", score.tiebreak)
            trial.set_user_attr("test", score.test)
            return score.train + TIE_WEIGHT * score.tiebreak

        def after(study: optuna.Study, frozen: optuna.trial.FrozenTrial) -> None:
            done = len(_complete(study))
            if frozen.state == COMPLETE:
                if on_trial is not None:
                    on_trial(_trial(frozen, start, knobs))
                if progress:
                    progress(min(done, trials), trials, f"trial {frozen.number} ({worker}): train "
                             f"{frozen.user_attrs['train']:.3f}; {done} complete in the study")
            if done >= trials or (cancel is not None and cancel.is_set()):
                study.stop()

        try:
            _queue_start(study, start, seeds, knobs)
            if len(_complete(study)) < trials and not (cancel is not None and cancel.is_set()):
                study.optimize(objective, callbacks=[after], gc_after_trial=False)
            if storage.kind != "journal":
                with warnings.catch_warnings():  # Optuna marks fail_stale_trials experimental
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    optuna.storages.fail_stale_trials(study)  # a lost worker's trial, past its grace
            history = _history(study, start, knobs)
        except MemsenseError:
            raise
        except Exception as exc:  # the database went away, refused a write, or was locked past the wait
            raise storage_error(exc, storage) from None
        if not history:
            raise MemsenseError(f"the study {study_name!r} in {storage} has no completed trial yet; run a worker")
        if history[0].stage != "start":  # the start's trial was lost with its worker and not yet run again
            s = scorer(start)
            history.insert(0, Trial(-1, "start", start, s.train, s.test, s.tiebreak))
        best = max(history, key=_key)
        cancelled = cancel is not None and cancel.is_set()
        sens = {} if cancelled or sensitivity_points < 2 else sensitivity(
            best.config, knobs, scorer, sensitivity_points, cancel, progress)
    knob_importances = importances(study, seed) if sensitivity_points >= 2 else {}
    return TuneResult(name, tuple(sorted({q.user_id for q in train})), tuple(sorted({q.user_id for q in test})),
                      len(train), len(test), tuple(history), best, sens, cancelled, knob_importances)


def _queue_start(study: optuna.Study, start: Config, seeds: Sequence[Config], knobs: Sequence[Knob]) -> None:
    """Queue the start and the seeds unless a trial of theirs is waiting, running or complete
    (Optuna's `skip_if_exists`): once when the study is new, again for one lost with its worker."""
    for n, cfg in enumerate((start, *seeds)):
        study.enqueue_trial(_params(cfg, knobs), user_attrs={STAGE_ATTR: "start" if n == 0 else "seed"},
                            skip_if_exists=True)


def _complete(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    return study.get_trials(deepcopy=False, states=(COMPLETE,))


def _trial(t: optuna.trial.FrozenTrial, start: Config, knobs: Sequence[Knob]) -> Trial:
    return Trial(t.number, str(t.user_attrs.get(STAGE_ATTR, "tpe")), _config(start, knobs, t.params),
                 float(t.user_attrs["train"]), t.user_attrs.get("test"), float(t.user_attrs["tiebreak"]))


def _history(study: optuna.Study, start: Config, knobs: Sequence[Knob]) -> list[Trial]:
    """Every COMPLETE trial, the start's first, then by trial number."""
    trials = [_trial(t, start, knobs) for t in _complete(study)]
    return sorted(trials, key=lambda t: (t.stage != "start", t.number))


@dataclass(frozen=True)
class Watched:
    """What a study holds now, read without running a trial: its metric, the start config, its
    COMPLETE trials (the start's first) and the COMPLETE trials its workers run to (0: unknown)."""

    metric: str
    start: Config
    trials: tuple[Trial, ...]
    budget: int

    @property
    def best(self) -> Trial | None:
        """The one-worker rule's choice over the trials (`core.evaluation.tune._key`)."""
        return max(self.trials, key=_key) if self.trials else None


def watch_study(study: optuna.Study) -> Watched:
    """Read a shared study as it is now (`open_watched` opens it): nothing is written."""
    attrs = study.user_attrs
    if "metric" not in attrs or "start" not in attrs:
        raise MemsenseError(f"the study {study.study_name!r} was not made by memsense tune (it records no metric "
                            "and start config); name a study its workers made")
    start = from_dict(json.loads(attrs["start"]))
    names = {part.split("=", 1)[0] for part in str(attrs.get("knobs", "")).split(",") if part}
    knobs = [k for k in ALL_KNOBS if k.name in names]
    budget = attrs.get(BUDGET_ATTR)
    return Watched(str(attrs["metric"]), start, tuple(_history(study, start, knobs)),
                   int(budget) if isinstance(budget, int) else 0)


def open_watched(storage: StudyStorage, study_name: str) -> optuna.Study:
    """The study `study_name` in `storage`, to read (`watch_study`); one line when it is not there."""
    backend = open_storage(storage, heartbeat=False)
    try:
        return optuna.load_study(study_name=study_name, storage=backend)
    except KeyError:
        names = ", ".join(optuna.get_all_study_names(backend)[:10]) or "none"
        raise MemsenseError(f"no study {study_name!r} in {storage}; the studies there: {names}") from None
    except Exception as exc:
        raise storage_error(exc, storage, "read") from None
