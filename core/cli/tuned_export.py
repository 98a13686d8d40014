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
    """A cross-validation (`core.evaluation.cv.CrossValidation`): the config the one-standard-error rule
    chose, its cross-validated figure (mean over the folds' held-out users), every contender's, and the
    search's own figures (every fold, the gain over the start)."""
    lo, hi = cv.gain_ci
    chosen = cv.chosen
    how = (f"{len(cv.folds)}-fold cross-validation by user, mean over the folds' held-out users; the search: "
           f"{cv.cv_metric:.3f} over {cv.questions} questions each scored by the fold that held it out, start "
           f"{cv.start_metric:.3f}, gain {cv.gain:+.3f} (95 % CI {lo:+.3f} to {hi:+.3f})")
    folds = tuple(FoldFigure(f.number, tuple(f.held_users), f.train, f.held) for f in cv.folds)
    search = f"{cv.search} search, {args.trials} trials per fold, seed {cv.seed}"
    what = (f"tuned from {start_name} ({search})" if chosen.kind == "search" else
            f"{chosen.name}, chosen over the search ({search})")
    return Provenance(preset=what, metric=cv.metric, train=cv.final.best.train if chosen.kind == "search" else None,
                      held_out=chosen.mean, held_out_how=how, folds=folds, choice=choice_lines(cv.choice),
                      **_where(args))


def choice_lines(choice) -> tuple[tuple[str, str], ...]:
    """A choice among configs (`core.evaluation.choice.Choice`) as provenance lines: the chosen one's
    cross-validated estimate with its interval, the runner-up, why it won, and every contender's figure."""
    c = choice.chosen
    lo, hi = c.interval
    lines = [("chosen", f"{c.name}, cross-validated {c.mean:.3f} (95 % interval {lo:.3f} to {hi:.3f}, "
                        f"se {c.se:.3f}), {c.knobs_changed} settings changed from the start"),
             ("runner-up", "none" if choice.runner_up is None else
              f"{choice.runner_up.name}, cross-validated {choice.runner_up.mean:.3f}"),
             ("why", choice.reason() + " (one-standard-error rule, SPEC §16)")]
    lines += [(f"cross-validated {x.name}", f"{x.mean:.3f} ± {x.se:.3f} se, {x.knobs_changed} changed")
              for x in choice.contenders]
    return tuple(lines)
