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
import sys
from pathlib import Path
from typing import Any

from core.cli.arguments import (UsageError, add_analyzers, check_trials, not_printed, printed, recall_options,
                                store_folder)
from core.cli.history import record
from core.cli.stopping import kept_part
from core.errors import MemsenseError
from core.files import check_output

DEFAULT_METRIC = "recall_all@4"
MAX_SWEEP_POINTS = 101
"""The most values a knob's sweep takes (`--sensitivity-points`): a step of 1 % of its range."""


# ------------------------------------------------------------------ shared pieces

class _Ordered(argparse.Action):
    """Collect --preset NAME and --config FILE into one list, in command-line order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, "chosen", None) or [])
        items.append((self.dest, values))
        namespace.chosen = items


def default_presets_file() -> Path:
    """The app's presets file, in its data folder (`core.machine.data_dir`)."""
    from core.machine import data_dir

    return data_dir() / "presets.json"


def _preset_store(args: argparse.Namespace):
    from core.config.presets import PresetStore

    return PresetStore(Path(args.presets) if getattr(args, "presets", None) else default_presets_file())


def _presets(args: argparse.Namespace, default_all: bool = True) -> dict:
    """Name -> Config for the presets and config files asked for, in order."""
    from core import config as config_io
    from core.config.presets import BUILTIN

    chosen = getattr(args, "chosen", None) or []
    if not chosen:
        return dict(BUILTIN) if default_all else {}
    store = _preset_store(args)
    out = {}
    for kind, value in chosen:
        if kind == "preset":
            out[value] = store.get(value)
        elif value.startswith(RUN_PREFIX):
            name, cfg = _run_config(args, value)
            out[name] = cfg
        else:
            name = Path(value).stem
            while name in out:
                name += "'"
            out[name] = config_io.load(value)
    for cfg in out.values():
        cfg.check_searchable()
    return out


def _named(args: argparse.Namespace, value: str):
    """A preset name, a .toml/.json config file path, or `run:ID[:CONFIG]`: the settings a kept run ranked
    (`memsense runs list` shows them), from the store's run history."""
    from core import config as config_io

    if value.startswith(RUN_PREFIX):
        return _run_config(args, value)
    if value.lower().endswith((".toml", ".json")):
        name, cfg = Path(value).stem, config_io.load(value)
    else:
        name, cfg = value, _preset_store(args).get(value)
    cfg.check_searchable()
    return name, cfg


RUN_PREFIX = "run:"


def _run_config(args: argparse.Namespace, value: str):
    """`run:ID[:CONFIG]`: (a name for it, the config) of a run kept in the store's history."""
    from core.evaluation.history import History, history_path

    head, _, config = value[len(RUN_PREFIX):].partition(":")
    if not head.isdigit() or not 1 <= int(head) < 2**63:
        raise UsageError(f"{value!r}: a kept run is named run:ID or run:ID:CONFIG, e.g. run:12 or run:12:memsense")
    if not getattr(args, "store", None):
        raise UsageError(f"{value!r} names a run of a store's history: give --store")
    with History(history_path(args.store), create=False) as history:
        run = history.run(int(head))
    cfg = run.config(config or None)
    cfg.check_searchable()
    return f"run {run.id} ({config or next(iter(run.configs))})", cfg


def _users(text: str | None) -> list[str]:
    return [u.strip() for u in (text or "").split(",") if u.strip()]


def _questions(args: argparse.Namespace, users: list[str] | None = None):
    from core.evaluation.evaluate import judged_only, repeated_questions_note
    from core.evaluation.judged import load_question_set

    questions = judged_only(load_question_set(args.dataset))
    wanted = users if users is not None else _users(getattr(args, "users", None))
    if wanted:
        known = {q.user_id for q in questions}
        missing = sorted(set(wanted) - known)
        if missing:
            raise MemsenseError(f"no judged questions for user {', '.join(missing)}; "
                                f"users with questions: {', '.join(sorted(known))}")
        questions = [q for q in questions if q.user_id in wanted]
    if not questions:
        raise MemsenseError(f"{args.dataset}: no judged questions (categories 1-4 with evidence, or graded 1-3)")
    note = repeated_questions_note(questions)
    if note:
        print(f"memsense: warning: {note}", file=sys.stderr)
    return questions


def _progress(args: argparse.Namespace):
    if getattr(args, "quiet", False):
        return None
    from core.cli.output import progress_bar

    return progress_bar(sys.stderr)


def _pools(args: argparse.Namespace, questions, configs, tune_from=None, stoppable: bool = False):
    """Open the store, check its users, recall the question set once (`core.evaluation.question_set`:
    one recall per question, every preset re-ranks it); with `tune_from`, deep enough for every
    value of the tuned pool limits from that config. `stoppable`: Ctrl+C during the recall stops it
    after the question it is on, and the pools recalled by then are returned (`core.cli.stopping`)."""
    import contextlib
    import threading

    from core.cli.arguments import ctrl_c_sets
    from core.errors import Cancelled
    from core.recall.engine import Engine
    from core.evaluation.evaluate import check_users
    from core.evaluation.question_set import QuestionSetKey, file_digest, planned_depth, recall_question_set, recall_source

    depth = planned_depth(configs, tune_from)
    engine = Engine(args.store, model=args.model, cache_dir=args.cache, **recall_options(args))
    try:
        check_users(questions, engine.users())
        _warn_missing_gold(questions, engine)
        key = QuestionSetKey(recall_source(str(args.store), engine.embedder.key, args.lexical),
                             file_digest(args.dataset), tuple(sorted({q.user_id for q in questions})))
        known: dict = {}
        cancel, show = threading.Event(), _progress(args)
        try:
            with ctrl_c_sets(cancel) if stoppable else contextlib.nullcontext():
                engine.embed_queries([q.text for q in questions], cancelled=cancel.is_set,
                                     progress=(lambda d, t: show(d, t, "embed questions")) if show else None)
                return recall_question_set(lambda u, q, d: engine.recall(u, q, depth=d), key, questions, depth,
                                           known=known, progress=show, cancel=cancel).pools
        except Cancelled:
            if not stoppable:
                raise
            return {q.question_id: known[q.user_id, q.text] for q in questions if (q.user_id, q.text) in known}
    finally:
        engine.close()


def _warn_missing_gold(questions, engine) -> None:
    """One warning line when gold sessions are not in the store: those questions can only score 0."""
    from core.evaluation.evaluate import missing_gold_note

    note = missing_gold_note(questions, lambda user: {c.session_number for c in engine.chunks(user)})
    if note:
        print(f"memsense: warning: {note}", file=sys.stderr)


def _common(sp: argparse.ArgumentParser, store: bool = True) -> None:
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    if store:
        sp.add_argument("--store", required=True, type=store_folder, help="store directory built from the same dataset")
        sp.add_argument("--model", help="local sentence-transformers model folder (default: bundled all-MiniLM-L6-v2)")
        sp.add_argument("--lexical", default="bm25", choices=("bm25", "memsense"),
                        help="the lexical route: BM25, or Memsense's English full text (every word required)")
        add_analyzers(sp)
        sp.add_argument("--cache", help="embedding cache directory (default ~/.cache/memsense)")
        sp.add_argument("--presets", help="user presets file (default: the app's presets.json)")


def _dataset(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("dataset", help="questions: LoCoMo JSON, project question file or judged set")


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


# ------------------------------------------------------------------ eval

def cmd_eval(args: argparse.Namespace) -> Any:
    from core.evaluation.evaluate import category_name, evaluate_presets
    from core.evaluation.metrics import metric_names

    if args.k < 1:
        raise UsageError("--k must be at least 1")
    presets = _presets(args)
    questions = _questions(args)
    pools = _pools(args, questions, presets.values(), stoppable=True)
    questions, stopped = kept_part(questions, pools, key=lambda q: q.question_id)  # Ctrl+C: the part done
    results = evaluate_presets(pools, questions, presets, args.k)
    if stopped is None:
        record(args, "eval", presets, {r.preset: r for r in results}, {r.preset: dict(r.overall) for r in results})
    if args.json:
        return [{**r.to_json(), **(stopped.to_json() if stopped else {})} for r in results]
    names = metric_names(args.k)
    width = max(len(n) for n in presets) + 2
    if stopped:
        print(stopped.line)
    print(f"{len(questions)} questions, {len({q.user_id for q in questions})} users, k = {args.k}")
    print("preset".ljust(width) + "".join(f"{n:>14}" for n in names))
    for r in results:
        print(r.preset.ljust(width) + "".join(f"{r.overall[n]:>14.3f}" for n in names))
    cats = sorted({c for r in results for c in r.per_category})
    for metric in (names[0], names[1], names[4]):
        print(f"\n{metric} per category")
        print("preset".ljust(width) + "".join(f"{f'{c} {category_name(c)}':>16}" for c in cats))
        for r in results:
            print(r.preset.ljust(width) + "".join(f"{_fmt(r.per_category.get(c, {}).get(metric)):>16}" for c in cats))
    return None


# ------------------------------------------------------------------ compare

def cmd_compare(args: argparse.Namespace) -> Any:
    from core.evaluation.evaluate import evaluate_presets
    from core.evaluation.metrics import compare, metric_key, metric_names, parse_metric

    base, k = parse_metric(args.metric or f"recall_all@{args.k}", args.k)
    metric = metric_key(base, k)
    name_a, cfg_a = _named(args, args.a)
    name_b, cfg_b = _named(args, args.b)
    if name_a == name_b:
        name_b += " (b)"
    questions = _questions(args)
    pools = _pools(args, questions, (cfg_a, cfg_b))
    ev_a, ev_b = evaluate_presets(pools, questions, {name_a: cfg_a, name_b: cfg_b}, k)
    summary = {m: compare(ev_a.scores(m), ev_b.scores(m), m, args.test) for m in metric_names(k)}
    rows = _difference_rows(summary[metric], ev_a, ev_b, args.all)
    record(args, "compare", {name_a: cfg_a, name_b: cfg_b}, {name_a: ev_a, name_b: ev_b},
           {"metric": metric, "delta": summary[metric].delta, "p_value": summary[metric].p_value})
    if args.json:
        return {"a": name_a, "b": name_b, "metric": metric, "test": args.test, "questions": len(questions),
                "metrics": {m: {"mean_a": c.mean_a, "mean_b": c.mean_b, "delta": c.delta, "wins": c.wins,
                                "losses": c.losses, "ties": c.ties, "p_value": c.p_value}
                            for m, c in summary.items()},
                "differences": rows}
    _print_compare(name_a, name_b, len(questions), summary, metric, rows, args)
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

def _check_tune_outputs(args: argparse.Namespace) -> None:
    """Everything tune writes at the end, checked before minutes of search."""
    from core import config as config_io
    from core.config.presets import PresetStore

    check_trials(args.trials)
    if getattr(args, "study_db", None):
        _check_study_db(args)
    if args.sensitivity_points < 0 or args.sensitivity_points == 1:  # one value is no sweep: it was dropped unsaid
        raise UsageError("--sensitivity-points must be 0 (no sweep) or at least 2 (a sweep needs two values), "
                            f"got {args.sensitivity_points}")
    if args.sensitivity_points > MAX_SWEEP_POINTS:  # 100,000 points ran on for hours after the search had ended
        raise UsageError(f"--sensitivity-points {args.sensitivity_points} is more than a sweep needs; give at most "
                         f"{MAX_SWEEP_POINTS} (each point re-ranks every question once per knob)")
    if args.save_preset is not None:
        PresetStore.check_name(args.save_preset)
        _preset_store(args)  # a broken presets file is reported now, not after the run
    not_printed("--export", args.export, "the best settings are printed in the report (and in --json); give "
                "--export a file name")
    if args.export:
        check_output(args.export, "export file", (".toml", ".json"))
        config_io.format_for(args.export)


def _check_study_db(args: argparse.Namespace) -> None:
    """A study file is never the store's own database, nor any file of the store or its run
    history: tuning only reads the store, and Optuna would add its tables to whatever file it is given."""
    from core.evaluation.history import history_path
    from core.files import special_file

    kind = special_file(args.study_db) or ("folder" if Path(args.study_db).is_dir() else None)
    if kind:  # SQLite would call it "disk I/O error" or "unable to open", and advise freeing disk space
        raise MemsenseError(f"--study-db {args.study_db} is a {kind}, not a file; give the path of a study file, "
                            "e.g. tune-study.sqlite")
    study = Path(args.study_db).expanduser().resolve()
    store = Path(args.store).expanduser().resolve()
    if study == store or store in study.parents or study == history_path(args.store):
        raise MemsenseError(f"--study-db {args.study_db} is a file of the store {args.store} (or its run history), "
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
    from core.evaluation.evaluate import evaluate_presets
    from core.evaluation.judged import session_docid, write_run

    presets = _presets(args, default_all=False)
    if len(presets) != 1:
        raise UsageError("name exactly one --preset or --config for the run")
    check_output(args.out, "run output")
    quiet = printed(args, "--out", args.out)
    (name, cfg), = presets.items()
    questions = _questions(args)
    pools = _pools(args, questions, [cfg])
    (ev,) = evaluate_presets(pools, questions, presets, cfg.top_k)
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
    _dataset(sp)
    sp.add_argument("--preset", action=_Ordered, help="a preset to evaluate (repeatable; default: every built-in)")
    sp.add_argument("--config", action=_Ordered, help="a config file to evaluate (repeatable)")
    sp.add_argument("--k", type=int, default=4, help="cut-off of the metrics (default 4)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    _common(sp)
    sp.set_defaults(func=cmd_eval)

    sp = sub.add_parser("compare", help="two presets question by question, with a paired significance test")
    _dataset(sp)
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--metric", help="metric for the per-question list (default recall_all@k)")
    sp.add_argument("--k", type=int, default=4, help="the cut-off of the metrics (default 4)")
    sp.add_argument("--test", default="permutation", choices=("permutation", "wilcoxon"),
                    help="paired randomisation test (default) or Wilcoxon signed-rank")
    sp.add_argument("--all", action="store_true", help="list every question, not only those that differ")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    _common(sp)
    sp.set_defaults(func=cmd_compare)

    judge = sub.add_parser("judge", help="judged questions: TREC qrels in and out, runs out")
    jsub = judge.add_subparsers(dest="judge_command", required=True, help="qrels, import or run")
    sp = jsub.add_parser("qrels", help="export judgments as TREC qrels (qid 0 docid grade)")
    _dataset(sp)
    sp.add_argument("--out", required=True, help="qrels file to write")
    sp.add_argument("--level", default="session", choices=("session", "memory"),
                    help="judge sessions (default) or single memories")
    _common(sp, store=False)
    sp.set_defaults(func=cmd_judge_qrels)
    sp = jsub.add_parser("import", help="read TREC qrels into a judged question set (checked line by line)")
    sp.add_argument("qrels", help="TREC qrels file (qid 0 docid grade per line; - reads standard input)")
    sp.add_argument("--questions", dest="dataset", required=True, help="the question set the qrels judge")
    sp.add_argument("--out", required=True, help="judged set to write (.json)")
    sp.add_argument("--store", type=store_folder, help="also check every document id against this store")
    sp.add_argument("--model", help="with --store: its local sentence-transformers model folder")
    sp.add_argument("--cache", help="with --store: the embedding cache directory")
    _common(sp, store=False)
    sp.set_defaults(func=cmd_judge_import)
    sp = jsub.add_parser("run", help="export one preset's results as a TREC run (qid Q0 docid rank score tag)")
    _dataset(sp)
    sp.add_argument("--preset", action=_Ordered, help="the built-in or saved preset to run (or --config)")
    sp.add_argument("--config", action=_Ordered, help="the config file to run (or --preset)")
    sp.add_argument("--out", required=True, help="run file to write")
    sp.add_argument("--level", default="session", choices=("session", "memory"),
                    help="rank sessions (default) or single memories")
    sp.add_argument("--tag", help="run tag (default: the preset name)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    _common(sp)
    sp.set_defaults(func=cmd_judge_run)
