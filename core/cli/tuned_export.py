"""`memsense tune --export FILE`: the tuned config with a provenance header (`core.config.provenance`)
naming the start preset, the store, the model, the metric with its train and held-out figures (with
`--folds`: the cross-validated figure and every fold's), the date and the knobs changed from
Memsense's defaults. The file still loads as the same config."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypedDict

from core.config.provenance import FoldFigure, Provenance
from core.recall.store import is_url
from core.redact import redact_url

BUNDLED_MODEL = "all-MiniLM-L6-v2 (bundled)"


class _Where(TypedDict):
    store: str
    model: str


def _where(args: argparse.Namespace) -> _Where:
    store = "" if not args.store else redact_url(args.store) if is_url(args.store) else \
        str(Path(args.store).expanduser().resolve())
    return {"store": store,
            "model": str(args.model) if args.model else BUNDLED_MODEL}


def split_provenance(args: argparse.Namespace, start_name: str, result) -> Provenance:
    """A train/test run (`core.evaluation.tune.TuneResult`): the winner on the training users and,
    when users were held out, on them."""
    best = result.best
    how = (f"held-out users {', '.join(result.test_users)}, {result.test_questions} questions; "
           f"start {result.start.test:.3f}" if result.test_users and result.start.test is not None
           else "no user held out")
    return Provenance(preset=f"tuned from {start_name} ({args.search} search, {len(result.trials)} trials, "
                             f"seed {args.seed})", metric=result.metric, train=best.train, held_out=best.test,
                      held_out_how=how, **_where(args))


def folds_provenance(args: argparse.Namespace, start_name: str, cv) -> Provenance:
    """A cross-validation (`core.evaluation.cv.CrossValidation`): the offered config's train figure on
    every user, the cross-validated held-out figure with its gain over the start, and every fold."""
    lo, hi = cv.gain_ci
    how = (f"{len(cv.folds)}-fold cross-validation by user, each of {cv.questions} questions scored by the fold "
           f"that held it out; mean held-out over the folds {sum(f.held for f in cv.folds) / len(cv.folds):.3f}; "
           f"start {cv.start_metric:.3f}, gain {cv.gain:+.3f} (95 % CI {lo:+.3f} to {hi:+.3f})")
    folds = tuple(FoldFigure(f.number, tuple(f.held_users), f.train, f.held) for f in cv.folds)
    return Provenance(preset=f"tuned from {start_name} ({cv.search} search, {args.trials} trials per fold, "
                             f"seed {cv.seed})", metric=cv.metric, train=cv.final.best.train,
                      held_out=cv.cv_metric, held_out_how=how, folds=folds, **_where(args))
