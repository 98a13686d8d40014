"""`memsense diagnose | impact`: where a question set loses its gold sessions (SPEC §13), and
what a config change does to unjudged queries (SPEC §14).

Added to the `memsense` parser by `core.cli.main` through `add_commands(subparsers)`.
"""
from __future__ import annotations

import argparse
import sys
import threading
from dataclasses import replace
from typing import Any

from core.cli.arguments import UsageError, check_trials, ctrl_c_sets, printed, recall_options, seed_number
from core.cli.evaluation import _common, _dataset, _named, _pools, _progress, _questions
from core.cli.history import record
from core.errors import MemsenseError


def _k_config(args: argparse.Namespace, cfg):
    if args.k is not None and args.k < 1:
        raise UsageError("--k must be at least 1")
    return cfg if args.k is None else replace(cfg, top_k=args.k)


def cmd_diagnose(args: argparse.Namespace) -> Any:
    from core.evaluation.diagnose import RETURNED, STAGES, by_question, diagnose
    from core.evaluation.evaluate import category_name

    name, cfg = _named(args, args.config or args.preset or "memsense")
    cfg = _k_config(args, cfg)
    questions = _questions(args)
    pools = _pools(args, questions, [cfg])  # the store is opened once: every pool carries its user's chunks
    result = diagnose(pools, questions, cfg, name=name)  # each question re-ranked once
    assert result.evaluation is not None
    record(args, "diagnose", {name: cfg}, {name: result.evaluation},
           {"k": result.k, "gold_sessions": len(result.items), "stages": result.stages})
    if args.json:
        return {"config": name, **result.to_json()}
    print(f"{name}, k = {result.k}: {result.caption()}")
    cats = sorted(result.per_category)
    print("gold sessions per stage:")
    print(f"{'stage':<20}{'all':>7}" + "".join(f"{category_name(c)[:12]:>14}" for c in cats))
    for stage in STAGES:
        print(f"{stage:<20}{result.stages[stage]:>7}" + "".join(f"{result.per_category[c][stage]:>14}" for c in cats))
    lost = [i for i in result.items if i.stage not in RETURNED]
    if lost and args.list:
        print(f"\nquestions that fail ({result.failing_questions}), each once:")
        for g in by_question(lost, result.items):
            print(f"  {g.first.question_id:<14} lost {g.lost} of {len(g.gold)} gold sessions: {g.stages:<24} "
                  f"{g.first.query[:60]}")
    return None


def cmd_impact(args: argparse.Namespace) -> Any:
    from core.evaluation.impact import read_queries
    from core.recall.engine import Engine

    queries = read_queries(args.queries, default_user=args.user)
    name_a, cfg_a = _named(args, args.a)
    name_b, cfg_b = _named(args, args.b)
    cfg_a, cfg_b = _k_config(args, cfg_a), _k_config(args, cfg_b)
    engine = Engine(args.store, model=args.model, cache_dir=args.cache, **recall_options(args))
    try:
        unknown = sorted({q.user_id for q in queries} - set(engine.users()))
        if unknown:
            raise MemsenseError(f"the store has no user {', '.join(unknown[:5])}; the queries name users of another store?")
        result, stopped = _impact_until_ctrl_c(args, engine, queries, cfg_a, cfg_b)
    finally:
        engine.close()
    totals = result.totals()
    if args.json:
        return {"a": name_a, "b": name_b, **result.to_json(), **(stopped.to_json() if stopped else {})}
    k = result.k
    if stopped:
        print(stopped.line)
    print(f"A = {name_a}, B = {name_b}: {totals['queries']} queries, k = {k}")
    print(f"top {k} changed: set {totals['changed_set']:.1%}, order {totals['changed_order']:.1%}; "
          f"mean overlap@{k} {totals[f'mean_overlap@{k}']:.3f}, mean RBO (p = 0.9) {totals['mean_rbo']:.3f}")
    for label, key in (("entered most often", "entered_most"), ("left most often", "left_most")):
        if totals[key]:
            print(f"{label}: " + ", ".join(f"{m} ({n})" for m, n in totals[key]))
    print("moved most:")
    for q in totals["moved_most"]:
        print(f"  RBO {q['rbo']:.3f}  overlap {q[f'overlap@{k}']:.2f}  {q['user_id']}: {q['query'][:70]}")
    return None


def _impact_until_ctrl_c(args: argparse.Namespace, engine, queries, cfg_a, cfg_b):
    """Embed the queries in one batch (each recall then reads the cache), then recall and re-rank
    each, with progress for both stages; Ctrl+C stops after the query it is on and the impact of
    the queries done is returned with a `Stopped` (`core.cli.stopping`)."""
    from core.cli.stopping import kept_part
    from core.errors import Cancelled
    from core.evaluation.impact import impact

    cancel = threading.Event()
    show = _progress(args)
    with ctrl_c_sets(cancel):
        try:
            engine.embed_queries([q.text for q in queries], cancelled=cancel.is_set,
                                 progress=(lambda d, t: show(d, t, "embed queries")) if show else None)
        except Cancelled:
            raise KeyboardInterrupt from None  # nothing compared yet: "interrupted", exit 130
        result = impact(lambda u, q, d: engine.recall(u, q, depth=d), queries, cfg_a, cfg_b, show,
                        cancelled=cancel.is_set, keep_partial=True)
    _, stopped = kept_part(queries, result.queries, noun="queries")
    return result, stopped


def cmd_fix(args: argparse.Namespace) -> Any:
    import time

    from core.evaluation.evaluate import evaluate_config
    from core.evaluation.fix import check_cases, find_fixes
    from core.evaluation.fix import offered as offered_configs
    from core.evaluation.metrics import parse_metric

    check_trials(args.trials)
    cases = list(dict.fromkeys(c.strip() for c in args.cases.split(",") if c.strip()))  # a case named twice is one
    if not cases:
        raise UsageError("--cases names no question; give question ids, comma-separated (e.g. demo-ana:q0)")
    if args.metric is not None and not args.metric.strip():
        raise UsageError("--metric is empty; name a metric (e.g. recall_all@4), or leave the option out")
    name, cfg = _named(args, args.config or args.preset or "memsense")
    metric = args.metric or f"recall_all@{cfg.top_k}"
    parse_metric(metric)
    questions = _questions(args)
    check_cases(questions, cases)
    pools = _pools(args, questions, [cfg])
    started = time.perf_counter()
    cancel = threading.Event()
    with ctrl_c_sets(cancel):
        result = find_fixes(pools, questions, cases, cfg, metric, args.trials, args.seed, progress=_progress(args),
                            cancel=cancel)
    seconds = time.perf_counter() - started
    if result.cancelled:
        print(f"memsense: warning: stopped by Ctrl+C after {result.trials} of {args.trials} trials; the best "
              "configs found so far follow", file=sys.stderr)
    offered = offered_configs(result)
    record(args, "fix", {name: cfg, **offered}, {n: evaluate_config(pools, questions, c, cfg.top_k)
                                                  for n, c in {name: cfg, **offered}.items()},
           {"metric": result.metric, "cases": list(result.cases), "trials": result.trials,
            "candidates": [{"cases_fixed": len(c.cases_fixed), "fixed": len(c.fixed), "broken": len(c.broken),
                            "net": c.net, "harmful": c.harmful, "metric_after": c.metric_after}
                           for c in result.candidates]})
    if args.json:
        return {"start": name, "seconds": round(seconds, 3), **result.to_json()}
    print(f"{len(cases)} cases from {name}, {result.trials} trials in {seconds:.1f} s; every figure below re-ranked "
          f"on all {len(questions)} questions ({result.metric})")
    print(result.verdict())
    for n, c in enumerate(result.candidates, start=1):
        moves = ", ".join(f"{k} {a:g} -> {b:g}" for k, (a, b) in c.changed.items())
        memsense = c.to_json()["memsense"]
        how = ("needs a change to Memsense's code: " + ", ".join(memsense["needs_code_change"])
               if memsense["needs_code_change"] else "Memsense can take it as request options")
        others = ("" if c.others_before is None else
                  f"; on the other {len(questions) - len(cases)} questions {c.others_before:.3f} -> {c.others_after:.3f}")
        harm = f"\n   HARMFUL: {c.harm_text()}" if c.harmful else ""
        print(f"{n}. {moves}{harm}\n   all {len(questions)} questions: {result.metric} {c.metric_before:.3f} -> "
              f"{c.metric_after:.3f} (p = {c.p_value:.3f}), net {c.net:+d} ({len(c.fixed)} fixed, {len(c.broken)} "
              f"broken){others}\n   fixes {len(c.cases_fixed)} of {len(cases)} cases "
              f"({', '.join(c.cases_fixed) or 'none'}); {how}")
    return None


def cmd_report(args: argparse.Namespace) -> Any:
    from core.atomic import write_output
    from core.evaluation.history import model_key, store_label
    from core.evaluation.diagnose import chunks_of_pools
    from core.evaluation.report import report, report_configs
    from core.files import check_output

    check_output(args.out, "report", (".html", ".htm"))
    quiet = printed(args, "--out", args.out)
    if args.k < 1:
        raise UsageError("--k must be at least 1")
    name_a, cfg_a = _named(args, args.a)
    name_b, cfg_b = _named(args, args.b)
    questions = _questions(args)
    pools = _pools(args, questions, report_configs(cfg_a, cfg_b, args.k))
    chunks_of = chunks_of_pools(pools, questions)
    page = report(pools, questions, (name_a, cfg_a), (name_b, cfg_b), args.k, chunks_of, store_label(args.store),
                  str(args.dataset), model_key(args.store))
    write_output(args.out, page, "report")
    if args.json:
        return {"report": args.out, "bytes": len(page.encode()), "questions": len(questions)}
    if not quiet:
        print(f"wrote {args.out}: {name_a} against {name_b} on {len(questions)} questions")
    return None


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Add diagnose and impact to the `memsense` subcommands."""
    sp = sub.add_parser("diagnose", help="where each gold session of a question set was lost (SPEC §13)")
    _dataset(sp)
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--config", help="config file (.toml or .json)")
    choice.add_argument("--preset", help="a preset name (default: memsense)")
    sp.add_argument("--k", type=int, help="results per question (default: the config's top_k)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    sp.add_argument("--list", action="store_true", help="also list every lost gold session")
    _common(sp)
    sp.set_defaults(func=cmd_diagnose)

    sp = sub.add_parser("fix", help="search for configs that win chosen failing questions back, and what they break")
    _dataset(sp)
    sp.add_argument("--cases", required=True, help="question ids to win back, comma-separated (e.g. conv-26:q7)")
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--config", help="the start config file (.toml or .json)")
    choice.add_argument("--preset", help="the start preset (default: memsense)")
    sp.add_argument("--metric", help="the metric a case is won back on (default recall_all@top_k)")
    sp.add_argument("--trials", type=int, default=200, help="configs to try (default 200)")
    sp.add_argument("--seed", type=seed_number, default=0, help="the search's random seed (default 0)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    _common(sp)
    sp.set_defaults(func=cmd_fix)

    sp = sub.add_parser("report", help="A against B on a question set as one self-contained HTML file")
    _dataset(sp)
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--k", type=int, default=4, help="cut-off of the metrics (default 4)")
    sp.add_argument("--out", required=True, help="the report file to write (.html)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    _common(sp)
    sp.set_defaults(func=cmd_report)

    sp = sub.add_parser("impact", help="what config B changes against A on queries nobody judged (SPEC §14)")
    sp.add_argument("queries", help="query file: USER<TAB>QUERY a line, or JSON Lines with user and query")
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--k", type=int, help="results per query (default: the configs' top_k, which must agree)")
    sp.add_argument("--user", help="the user of lines that name none")
    _common(sp)
    sp.set_defaults(func=cmd_impact)
