"""`memsense eval | tune | compare | judge`: evaluate presets on judged questions (SPEC §8-§9).

Added to the `memsense` parser by `core.cli.main` through `add_commands(subparsers)`. Each command
returns what `--json` prints (or None after printing text); a MemsenseError becomes one line
`memsense: error: ...` (handled by `core.cli.main`). Progress goes to stderr.

Presets are named with `--preset NAME` (a built-in one, or one of the user's presets from the
app's presets file, or `--presets FILE`) and `--config FILE` (named after the file); both may
repeat and keep their order. With neither, `eval` runs every built-in preset.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli.arguments import UsageError, check_trials, not_printed, printed, store_folder, top_k_number
from core.cli.workspace import (Ordered, common_options, dataset_argument, fmt, named, preset_store, presets,
                                progress, questions, recall_until_ctrl_c, warn, warn_not_kept, workspace)
from core.errors import MemsenseError
from core.files import check_output

DEFAULT_METRIC = "recall_all@4"
MAX_SWEEP_POINTS = 101
"""The most values a knob's sweep takes (`--sensitivity-points`): a step of 1 % of its range."""


# ------------------------------------------------------------------ eval

def cmd_eval(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.evaluate import category_name
    from core.evaluation.metrics import metric_names

    chosen = presets(args)
    qs = questions(args)
    with workspace(args) as ws:
        qs, stopped = recall_until_ctrl_c(args, ws, qs, chosen.values())  # Ctrl+C: the part done, not kept
        evaluated = runs.evaluate(ws, qs, chosen, args.k, keep=stopped is None, progress=progress(args))
    warn(evaluated.missing_note)
    if stopped is None:
        warn_not_kept(evaluated.kept)
    results, questions_ = evaluated.results, qs.questions
    if args.json:
        return [{**r.to_json(), **(stopped.to_json() if stopped else {})} for r in results]
    names = metric_names(args.k)
    width = max(len(n) for n in chosen) + 2
    if stopped:
        print(stopped.line)
    print(f"{len(questions_)} questions, {len({q.user_id for q in questions_})} users, k = {args.k}")
    print("preset".ljust(width) + "".join(f"{n:>14}" for n in names))
    for r in results:
        print(r.preset.ljust(width) + "".join(f"{r.overall[n]:>14.3f}" for n in names))
    cats = sorted({c for r in results for c in r.per_category})
    for metric in (names[0], names[1], names[4]):
        print(f"\n{metric} per category")
        print("preset".ljust(width) + "".join(f"{f'{c} {category_name(c)}':>16}" for c in cats))
        for r in results:
            print(r.preset.ljust(width) + "".join(f"{fmt(r.per_category.get(c, {}).get(metric)):>16}" for c in cats))
    return None


# ------------------------------------------------------------------ compare

def cmd_compare(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.metrics import metric_key, parse_metric

    base, k = parse_metric(args.metric or f"recall_all@{args.k}", args.k)
    metric = metric_key(base, k)
    name_a, cfg_a = named(args, args.a)
    name_b, cfg_b = named(args, args.b)
    if name_a == name_b:
        name_b += " (b)"
    qs = questions(args)
    with workspace(args) as ws:
        compared, note = runs.compare(ws, qs, (name_a, cfg_a), (name_b, cfg_b), k, metric, args.test,
                                      progress=progress(args))
    warn(note)
    warn_not_kept(compared.kept)
    ev_a, ev_b, summary, questions_ = compared.a, compared.b, compared.summary, qs.questions
    rows = _difference_rows(summary[metric], ev_a, ev_b, args.all)
    if args.json:
        return {"a": name_a, "b": name_b, "metric": metric, "test": args.test, "questions": len(questions_),
                "metrics": {m: {"mean_a": c.mean_a, "mean_b": c.mean_b, "delta": c.delta, "wins": c.wins,
                                "losses": c.losses, "ties": c.ties, "p_value": c.p_value}
                            for m, c in summary.items()},
                "differences": rows}
    _print_compare(name_a, name_b, len(questions_), summary, metric, rows, args)
    return None


def _difference_rows(comparison, ev_a, ev_b, include_ties: bool) -> list[dict]:
    """Per question: A's and B's value and sessions, B's wins first."""
    by_id = {o.question_id: (o, p) for o, p in zip(ev_a.outcomes, ev_b.outcomes)}
    rows = []
    for d in comparison.diffs:
        if d.diff == 0 and not include_ties:
            continue
        oa, ob = by_id[d.question_id]
        rows.append({"question_id": d.question_id, "user": oa.user_id, "category": oa.category, "question": oa.text,
                     "a": d.a, "b": d.b, "diff": d.diff, "gold_sessions": list(oa.gold_sessions),
                     "a_sessions": list(oa.sessions), "b_sessions": list(ob.sessions)})
    rows.sort(key=lambda r: (-r["diff"], r["question_id"]))
    return rows


def _print_compare(name_a: str, name_b: str, n: int, summary: dict, metric: str, rows: list[dict],
                   args: argparse.Namespace) -> None:
    print(f"A = {name_a}, B = {name_b}: {n} questions; B wins / loses = B higher / lower than A")
    print(f"{'metric':<14}{'A':>8}{'B':>8}{'B - A':>9}{'wins':>6}{'losses':>7}{'ties':>6}   p ({args.test})")
    for m, c in summary.items():
        print(f"{m:<14}{c.mean_a:>8.3f}{c.mean_b:>8.3f}{c.delta:>+9.3f}{c.wins:>6}{c.losses:>7}{c.ties:>6}   {c.p_value:.4f}")
    print(f"\nper-question differences in {metric} ({'all' if args.all else 'only those that differ'}):")
    for r in rows:
        print(f"{r['diff']:+.2f} {r['question_id']:<14} cat {r['category']}  gold {r['gold_sessions']}  "
              f"A {r['a_sessions']}  B {r['b_sessions']}  {r['question'][:70]}")


# ------------------------------------------------------------------ judge

def check_tune_outputs(args: argparse.Namespace) -> None:
    """Everything tune writes at the end, checked before minutes of search."""
    from core import config as config_io
    from core.config.presets import PresetStore

    check_trials(args.trials)
    if getattr(args, "study_db", None):
        check_study_file(args, "--study-db", args.study_db)
    if args.sensitivity_points < 0 or args.sensitivity_points == 1:  # one value is no sweep: it was dropped unsaid
        raise UsageError("--sensitivity-points must be 0 (no sweep) or at least 2 (a sweep needs two values), "
                            f"got {args.sensitivity_points}")
    if args.sensitivity_points > MAX_SWEEP_POINTS:  # 100,000 points ran on for hours after the search had ended
        raise UsageError(f"--sensitivity-points {args.sensitivity_points} is more than a sweep needs; give at most "
                         f"{MAX_SWEEP_POINTS} (each point re-ranks every question once per knob)")
    if args.save_preset is not None:
        PresetStore.check_name(args.save_preset)
        preset_store(args)  # a broken presets file is reported now, not after the run
    not_printed("--export", args.export, "the best settings are printed in the report (and in --json); give "
                "--export a file name")
    if args.export:
        check_output(args.export, "export file", (".toml", ".json"))
        config_io.format_for(args.export)


def check_study_file(args: argparse.Namespace, option: str, path: str) -> None:
    """A study file (`--study-db`, or the file of a `--storage` SQLite database or journal) is never the store's
    own database, nor any file of the store or its run history: tuning only reads the store, and Optuna would add
    its tables to whatever file it is given."""
    from core.evaluation.history import history_path
    from core.files import special_file

    kind = special_file(path) or ("folder" if Path(path).is_dir() else None)
    if kind:  # SQLite would call it "disk I/O error" or "unable to open", and advise freeing disk space
        raise MemsenseError(f"{option} {path} is a {kind}, not a file; give the path of a study file, "
                            "e.g. tune-study.sqlite")
    study = Path(path).expanduser().resolve()
    store = Path(args.store).expanduser().resolve()
    if study == store or store in study.parents or study == history_path(args.store):
        raise MemsenseError(f"{option} {path} is a file of the store {args.store} (or its run history), "
                            "which tuning never writes; give a file outside the store folder, e.g. tune-study.sqlite")


def cmd_judge_qrels(args: argparse.Namespace) -> Any:
    from core.evaluation.judged import load_question_set, write_qrels

    check_output(args.out, "qrels output")
    quiet = printed(args, "--out", args.out)
    n = write_qrels(load_question_set(args.dataset), args.out, args.level)
    if args.json:
        return {"qrels": args.out, "judgments": n, "level": args.level}
    if not quiet:
        print(f"wrote {n} judgments to {args.out}")
    return None


def cmd_judge_import(args: argparse.Namespace) -> Any:
    from core.evaluation.judged import JudgedSet, apply_qrels, load_question_set, read_qrels

    check_output(args.out, "judged set", (".json",))
    quiet = printed(args, "--out", args.out)
    questions = load_question_set(args.dataset)
    known = None
    if args.store:
        from core.recall.engine import Engine

        engine = Engine(args.store, model=args.model, cache_dir=args.cache)
        try:
            users = set(engine.users())
            known = {u: {c.memory_id for c in engine.chunks(u)} | {c.session_id for c in engine.chunks(u)}
                     for u in {q.user_id for q in questions} & users}
        finally:
            engine.close()
    qrels = read_qrels(args.qrels, questions, known)
    JudgedSet(apply_qrels(questions, qrels)).save(args.out)
    if args.json:
        return {"judged": args.out, "questions": len(questions), "judged_questions": len(qrels),
                "judgments": sum(len(v) for v in qrels.values())}
    if not quiet:
        print(f"{sum(len(v) for v in qrels.values())} judgments for {len(qrels)} of {len(questions)} questions "
              f"saved in {args.out}")
    return None


def cmd_judge_run(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.judged import session_docid, write_run

    chosen = presets(args, default_all=False)
    if len(chosen) != 1:
        raise UsageError("name exactly one --preset or --config for the run")
    check_output(args.out, "run output")
    quiet = printed(args, "--out", args.out)
    (name, cfg), = chosen.items()
    qs = questions(args)
    with workspace(args) as ws:
        evaluated = runs.evaluate(ws, qs, chosen, cfg.top_k, keep=False, progress=progress(args))
    warn(evaluated.missing_note)
    (ev,) = evaluated.results
    if args.level == "session":
        entries = {o.question_id: [(session_docid(o.user_id, s), sc) for s, sc in zip(o.sessions, o.scores)]
                   for o in ev.outcomes}
    else:
        entries = {o.question_id: list(zip(o.result_ids, o.scores)) for o in ev.outcomes}
    n = write_run(entries, args.out, args.tag or name)
    if args.json:
        return {"run": args.out, "lines": n, "preset": name, "level": args.level}
    if not quiet:
        print(f"wrote {n} run lines of preset {name!r} to {args.out}")
    return None


# ------------------------------------------------------------------ parser

def add_commands(sub: argparse._SubParsersAction) -> None:
    """Add eval, compare, tune and judge to the `memsense` subcommands."""
    sp = sub.add_parser("eval", help="every preset's metrics on judged questions, overall and per category")
    dataset_argument(sp)
    sp.add_argument("--preset", action=Ordered, help="a preset to evaluate (repeatable; default: every built-in)")
    sp.add_argument("--config", action=Ordered, help="a config file to evaluate (repeatable)")
    sp.add_argument("--k", type=top_k_number, default=4, help="cut-off of the metrics (default 4)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    common_options(sp)
    sp.set_defaults(func=cmd_eval)

    sp = sub.add_parser("compare", help="two presets question by question, with a paired significance test")
    dataset_argument(sp)
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--metric", help="metric for the per-question list (default recall_all@k)")
    sp.add_argument("--k", type=top_k_number, default=4, help="the cut-off of the metrics (default 4)")
    sp.add_argument("--test", default="permutation", choices=("permutation", "wilcoxon"),
                    help="paired randomisation test (default) or Wilcoxon signed-rank")
    sp.add_argument("--all", action="store_true", help="list every question, not only those that differ")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    common_options(sp)
    sp.set_defaults(func=cmd_compare)

    judge = sub.add_parser("judge", help="judged questions: TREC qrels in and out, runs out")
    jsub = judge.add_subparsers(dest="judge_command", required=True, help="qrels, import or run")
    sp = jsub.add_parser("qrels", help="export judgments as TREC qrels (qid 0 docid grade)")
    dataset_argument(sp)
    sp.add_argument("--out", required=True, help="qrels file to write")
    sp.add_argument("--level", default="session", choices=("session", "memory"),
                    help="judge sessions (default) or single memories")
    common_options(sp, store=False)
    sp.set_defaults(func=cmd_judge_qrels)
    sp = jsub.add_parser("import", help="read TREC qrels into a judged question set (checked line by line)")
    sp.add_argument("qrels", help="TREC qrels file (qid 0 docid grade per line; - reads standard input)")
    sp.add_argument("--questions", dest="dataset", required=True, help="the question set the qrels judge")
    sp.add_argument("--out", required=True, help="judged set to write (.json)")
    sp.add_argument("--store", type=store_folder, help="also check every document id against this store")
    sp.add_argument("--model", help="with --store: its local sentence-transformers model folder")
    sp.add_argument("--cache", help="with --store: the embedding cache directory")
    common_options(sp, store=False)
    sp.set_defaults(func=cmd_judge_import)
    sp = jsub.add_parser("run", help="export one preset's results as a TREC run (qid Q0 docid rank score tag)")
    dataset_argument(sp)
    sp.add_argument("--preset", action=Ordered, help="the built-in or saved preset to run (or --config)")
    sp.add_argument("--config", action=Ordered, help="the config file to run (or --preset)")
    sp.add_argument("--out", required=True, help="run file to write")
    sp.add_argument("--level", default="session", choices=("session", "memory"),
                    help="rank sessions (default) or single memories")
    sp.add_argument("--tag", help="run tag (default: the preset name)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    common_options(sp, keeps_runs=False)
    sp.set_defaults(func=cmd_judge_run)
