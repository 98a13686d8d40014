"""`memsense tune`: search the knobs on training users and report held-out users, or
cross-validate over users (`--folds`, SPEC §12), with Optuna's TPE or the local search.

Added to the `memsense` parser by `core.cli.main` through `add_command(subparsers)`; the search runs over
the store's workspace (`core.evaluation.workspace_runs`), with the options and presets of `core.cli.workspace`.
"""
from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from core.cli.evaluation import DEFAULT_METRIC, check_study_file, check_tune_outputs
from core.cli.arguments import ctrl_c_sets, seed_number
from core.cli.workspace import (common_options, dataset_argument, fmt, named, preset_store, progress, questions,
                                users_of, warn, warn_not_kept, workspace)
from core.cli.tuned_export import folds_provenance, split_provenance
from core.cli.arguments import UsageError
from core.config.provenance import save_with_provenance

if TYPE_CHECKING:
    from core.evaluation.workspace import QuestionSet
    from core.records import Question


IN_SAMPLE = ("one training user: the settings offered are the search's best on that user (in sample); name two or "
             "more training users, or use --folds, to choose among the presets and the search out of sample (SPEC §16)")


def cmd_tune(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.metrics import metric_key, parse_metric
    from core.evaluation.tune import seed_presets, split_users

    base, k = parse_metric(args.metric)
    metric = metric_key(base, k)
    check_tune_outputs(args)
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (worker processes), got {args.jobs}")
    if args.storage is not None and args.study_db:
        raise UsageError("--storage and --study-db both name where the study is kept; give one")
    if args.storage is not None:  # a bad address, a refused password, a server out of reach: before the recall
        from core.evaluation.study_storage import check_storage, parse_storage

        storage = parse_storage(args.storage)
        if storage.kind != "postgresql":  # a file: never one of the store's, as with --study-db
            check_study_file(args, "--storage", storage.url.removeprefix("sqlite:///"))
        check_storage(storage)
    if args.folds is not None:
        return _tune_folds(args, metric)
    train_users, test_users = users_of(args.train), users_of(args.test)
    if not train_users:
        raise UsageError("--train names no users; give the training users, comma-separated (e.g. conv-26,conv-30), "
                            "or cross-validate over users with --folds 5")
    start_name, start = named(args, args.start)
    baselines = {n: named(args, n)[1] for n in (args.baseline or ["memsense", "bm25_only"])}
    qs = questions(args, users=train_users + test_users)
    train, test = split_users(qs.questions, train_users, test_users)
    if len({q.user_id for q in train}) >= 2:  # the choice among configs is cross-validated over the training users
        return _tune_folds(args, metric, train, test, qs)
    seeds = [] if args.no_seed_presets else seed_presets(start)
    search, options = _search(args)
    cancel = threading.Event()
    with workspace(args) as ws:
        with ctrl_c_sets(cancel):
            result, pools = runs.tune_split(ws, qs, train, test, search, start, depth_configs=list(baselines.values()),
                                            metric=metric, trials=args.trials, seed=args.seed, seeds=seeds,
                                            sensitivity_points=args.sensitivity_points, progress=progress(args),
                                            cancel=cancel, **options)
        if result.cancelled:
            print(f"memsense: warning: stopped by Ctrl+C after {len(result.trials)} of {args.trials} trials; the best "
                  "settings found so far follow", file=sys.stderr)
        base_scores = {n: {"train": runs.scores(pools, train, c, k, metric),
                           "test": runs.scores(pools, test, c, k, metric) if test else None}
                       for n, c in baselines.items()}
        if args.save_preset:
            preset_store(args).save(args.save_preset, result.best.config)
        if args.export:
            save_with_provenance(result.best.config, args.export, split_provenance(args, start_name, result))
        kept = runs.keep_tune(ws, qs, {start_name: start, "tuned": result.best.config}, result)
    warn(ws.missing_gold_note(qs, pools))
    warn_not_kept(kept)
    if args.json:
        return {**result.to_json(), "start_preset": start_name, "baselines": base_scores,
                "saved_preset": args.save_preset, "exported": args.export, "choice": None, "note": IN_SAMPLE}
    _print_tune(result, start_name, base_scores, args)
    print(IN_SAMPLE)
    return None


def _search(args: argparse.Namespace):
    """The search function and its extra options: Optuna TPE (default) or the local search."""
    from core.evaluation.tune import ALL_KNOBS, tune

    if args.search == "local":
        if args.storage:
            raise UsageError("--storage shares an Optuna study; it goes with --search tpe, not the local search")
        return tune, {"knobs": ALL_KNOBS, "jobs": args.jobs}
    from core.evaluation.study import tune_tpe

    if args.storage:
        from core.evaluation.shared_study import tune_shared
        from core.evaluation.study_storage import parse_storage

        return tune_shared, {"knobs": ALL_KNOBS, "jobs": args.jobs, "storage": parse_storage(args.storage),
                             "study_name": args.study or f"{Path(args.dataset).stem}-{args.metric}"}
    storage = f"sqlite:///{Path(args.study_db).expanduser().resolve()}" if args.study_db else None
    return tune_tpe, {"knobs": ALL_KNOBS, "jobs": args.jobs, "storage": storage,
                      "study_name": args.study or (f"{Path(args.dataset).stem}-{args.metric}" if storage else None)}


def _tune_folds(args: argparse.Namespace, metric: str, train: Sequence[Question] | None = None,
                test: Sequence[Question] = (), qs: QuestionSet | None = None) -> Any:
    """`--folds K` over every user; or, given a train/test split (`train`, `test`: questions), K =
    min(5, training users) over the training users, every contender then reported on `test`."""
    from core.evaluation import workspace_runs as runs
    from core.evaluation.cv import DEFAULT_FOLDS
    from core.evaluation.tune import seed_presets

    if train is None and (args.train or args.test):
        raise UsageError("--folds picks the held-out users itself; leave out --train and --test")
    start_name, start = named(args, args.start)
    presets = preset_store(args).all()
    folds = args.folds if train is None else min(DEFAULT_FOLDS, len({q.user_id for q in train}))
    if qs is None:
        qs = questions(args)
    train = qs.questions if train is None else list(train)
    search, options = _search(args)
    seeds = [] if args.no_seed_presets else seed_presets(start)
    cancel = threading.Event()
    with workspace(args) as ws:
        with ctrl_c_sets(cancel):
            cv = runs.cross_validate(ws, qs, train, search, args.search, start, presets, metric=metric, folds=folds,
                                     trials=args.trials, seed=args.seed, progress=progress(args), seeds=seeds,
                                     sensitivity_points=args.sensitivity_points, start_name=start_name, test=test,
                                     cancel=cancel, **options)
        if args.save_preset:
            preset_store(args).save(args.save_preset, cv.best)
        if args.export:
            save_with_provenance(cv.best, args.export, folds_provenance(args, start_name, cv))
        configs = {start_name: start, **({f"chosen: {cv.chosen.name}": cv.best} if cv.best != start else {})}
        kept = runs.keep_tune(ws, qs, configs, cv)
        note = ws.missing_gold_note(qs, ws.pools(qs, configs.values()))
    warn(note)
    warn_not_kept(kept)
    if args.json:
        return {**cv.to_json(), "start_preset": start_name, "saved_preset": args.save_preset,
                "exported": args.export}
    _print_folds(cv, start_name, args)
    return None


def _print_folds(cv, start_name: str, args: argparse.Namespace) -> None:
    from core import config as config_io

    over = "user" if not cv.test_users else "training user"
    print(f"{cv.metric}: {len(cv.folds)}-fold cross-validation by {over}, {args.search} search, "
          f"{args.trials} trials per fold, seed {cv.seed}; start = {start_name}")
    print(f"{'fold':<6}{'held-out users':<28}{'train':>8}{'held-out':>10}{'start held-out':>16}{'gain':>8}")
    for f in cv.folds:
        print(f"{f.number:<6}{', '.join(f.held_users):<28}{f.train:>8.3f}{f.held:>10.3f}{f.start_held:>16.3f}"
              f"{f.gain:>+8.3f}")
    sd, lo, hi = cv.held_spread
    print(f"held-out spread: sd {sd:.3f}, min {lo:.3f}, max {hi:.3f}")
    print(f"\nchoice among configs, by cross-validated held-out {cv.metric} (mean over folds ± se; "
          f"one-standard-error bar {cv.choice.bar:.3f}):")
    test = f"{'test users':>12}" if cv.test_users else ""
    print(f"{'config':<28}{'cv mean':>9}{'se':>7}{'changed':>9}{test}")
    for c in cv.choice.contenders:
        mark = "  <- chosen" if c is cv.chosen else "  (runner-up)" if c is cv.choice.runner_up else ""
        on_test = f"{cv.test_scores[c.name]:>12.3f}" if cv.test_users else ""
        print(f"{c.name[:27]:<28}{c.mean:>9.3f}{c.se:>7.3f}{c.knobs_changed:>9}{on_test}{mark}")
    if cv.test_users:
        print(f"test users (never seen by the search or the choice): {', '.join(cv.test_users)}")
    print(cv.verdict())
    if cv.chosen.kind == "start":
        print("\nkeep the start: nothing to change")
    else:
        print(f"\noffered config ({cv.chosen.name}):\n" + config_io.dumps(cv.best, "toml"))
    if args.save_preset:
        print(f"saved as preset {args.save_preset!r}")
    if args.export:
        print(f"exported to {args.export}")


def _print_tune(result, start_name: str, base_scores: dict, args: argparse.Namespace) -> None:
    from core import config as config_io

    best = result.best
    print(f"{result.metric}: train users {', '.join(result.train_users)} ({result.train_questions} questions), "
          f"test users {', '.join(result.test_users) or '-'} ({result.test_questions} questions); "
          f"{len(result.trials)} trials{' (cancelled)' if result.cancelled else ''}")
    print(f"{'':<22}{'train':>8}{'test':>8}")
    print(f"{'start: ' + start_name:<22}{fmt(result.start.train):>8}{fmt(result.start.test):>8}")
    for n, s in base_scores.items():
        print(f"{n:<22}{fmt(s['train']):>8}{fmt(s['test']):>8}")
    print(f"{f'tuned (trial {best.number})':<22}{fmt(best.train):>8}{fmt(best.test):>8}")
    print("\nbest settings:\n" + config_io.dumps(best.config, "toml"))
    if args.save_preset:
        print(f"saved as preset {args.save_preset!r}")
    if args.export:
        print(f"exported to {args.export}")


def add_command(sub: argparse._SubParsersAction) -> None:
    """Add `tune` to the `memsense` subcommands."""
    from core.evaluation.parallel import default_jobs

    sp = sub.add_parser("tune", help="search the knobs on training users, report held-out users")
    dataset_argument(sp)
    sp.add_argument("--metric", default=DEFAULT_METRIC, help=f"metric to maximise (default {DEFAULT_METRIC})")
    sp.add_argument("--train", default="", help="training users (comma-separated)")
    sp.add_argument("--test", default="", help="held-out users (comma-separated)")
    sp.add_argument("--folds", type=int, help="k-fold cross-validation by user instead of --train/--test (SPEC §12)")
    sp.add_argument("--users", help="with --folds: only these users' questions (comma-separated)")
    sp.add_argument("--search", default="tpe", choices=("tpe", "local"),
                    help="Optuna seeded TPE (default) or the local search (random + coordinate refinement)")
    sp.add_argument("--study-db", help="keep the Optuna study in this SQLite file, so a run can resume")
    sp.add_argument("--storage", metavar="URL",
                    help="run trials in a study shared by any number of workers: postgresql://USER@HOST:PORT/DB "
                         "(password from PGPASSWORD or ~/.pgpass), sqlite:///FILE or an Optuna journal file")
    sp.add_argument("--study", help="study name in --storage or --study-db (default: dataset and metric)")
    sp.add_argument("--jobs", type=int, default=default_jobs(),
                    help=f"worker processes that score each trial (default: the cores, here {default_jobs()})")
    sp.add_argument("--trials", type=int, default=200, help="number of trials (per fold with --folds; default 200)")
    sp.add_argument("--seed", type=seed_number, default=0, help="seed of the search (default 0): the same seed, "
                                                                 "the same trials")
    sp.add_argument("--start", default="memsense", help="preset or config file to start from (default memsense)")
    sp.add_argument("--baseline", action="append", help="preset to report beside (default memsense and bm25_only)")
    sp.add_argument("--no-seed-presets", action="store_true",
                    help="do not try the built-in RRF presets first (a warm start of the search)")
    sp.add_argument("--sensitivity-points", type=int, default=7, help="values per knob in the sweep (0 = none)")
    sp.add_argument("--save-preset", help="save the best settings as this user preset")
    sp.add_argument("--export", help="export the best settings to a .toml or .json config file")
    common_options(sp)
    sp.set_defaults(func=cmd_tune)
