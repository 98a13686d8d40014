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

from core.cli.arguments import UsageError, check_trials, ctrl_c_sets, printed, seed_number, top_k_number
from core.cli.workspace import (common_options, dataset_argument, named, progress, questions, warn, warn_not_kept,
                                workspace)


def _k_config(args: argparse.Namespace, cfg):
    return cfg if args.k is None else replace(cfg, top_k=args.k)


def cmd_diagnose(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.diagnose import RETURNED, STAGES, by_question
    from core.evaluation.evaluate import category_name

    name, cfg = named(args, args.config or args.preset or "memsense")
    cfg = _k_config(args, cfg)
    qs = questions(args)
    with workspace(args) as ws:  # the store is opened once: every pool carries its user's chunks
        run, kept, note = runs.diagnose(ws, qs, cfg, name, progress=progress(args))  # each question re-ranked once
    warn(note)
    warn_not_kept(kept)
    result = run.diagnosis
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

    queries = read_queries(args.queries, default_user=args.user)
    name_a, cfg_a = named(args, args.a)
    name_b, cfg_b = named(args, args.b)
    cfg_a, cfg_b = _k_config(args, cfg_a), _k_config(args, cfg_b)
    with workspace(args) as ws:
        result, stopped = _impact_until_ctrl_c(args, ws, queries, cfg_a, cfg_b)
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


def _impact_until_ctrl_c(args: argparse.Namespace, ws, queries, cfg_a, cfg_b):
    """The impact on the store's workspace, with progress for both stages (the queries embedded in one batch,
    then each recalled and ranked); Ctrl+C stops after the query it is on and the impact of the queries done
    is returned with a `Stopped` (`core.cli.stopping`)."""
    from core.cli.stopping import kept_part
    from core.errors import Cancelled
    from core.evaluation import workspace_runs as runs

    cancel = threading.Event()
    with ctrl_c_sets(cancel):
        try:
            result = runs.impact(ws, queries, cfg_a, cfg_b, progress(args), cancel, keep_partial=True)
        except Cancelled:
            raise KeyboardInterrupt from None  # stopped while embedding, nothing compared yet: "interrupted", exit 130
    _, stopped = kept_part(queries, result.queries, noun="queries")
    return result, stopped


def cmd_fix(args: argparse.Namespace) -> Any:
    from core.evaluation import workspace_runs as runs
    from core.evaluation.fix import check_cases
    from core.evaluation.metrics import parse_metric

    check_trials(args.trials)
    cases = list(dict.fromkeys(c.strip() for c in args.cases.split(",") if c.strip()))  # a case named twice is one
    if not cases:
        raise UsageError("--cases names no question; give question ids, comma-separated (e.g. demo-ana:q0)")
    if args.metric is not None and not args.metric.strip():
        raise UsageError("--metric is empty; name a metric (e.g. recall_all@4), or leave the option out")
    name, cfg = named(args, args.config or args.preset or "memsense")
    metric = args.metric or f"recall_all@{cfg.top_k}"
    parse_metric(metric)
    qs = questions(args)
    check_cases(qs.questions, cases)
    with workspace(args) as ws:
        ws.pools(qs, [cfg], progress=progress(args))  # the recall's own progress bar, then the search's
        cancel = threading.Event()
        with ctrl_c_sets(cancel):
            run, kept, note = runs.fix(ws, qs, (name, cfg), cases, metric, args.trials, args.seed,
                                       progress=progress(args), cancel=cancel)
    seconds = run.seconds
    warn(note)
    result = run.result
    if result.cancelled:
        print(f"memsense: warning: stopped by Ctrl+C after {result.trials} of {args.trials} trials; the best "
              "configs found so far follow", file=sys.stderr)
    warn_not_kept(kept)
    questions_ = qs.questions
    if args.json:
        return {"start": name, "seconds": round(seconds, 3), **result.to_json()}
    print(f"{len(cases)} cases from {name}, {result.trials} trials in {seconds:.1f} s; every figure below re-ranked "
          f"on all {len(questions_)} questions ({result.metric})")
    print(result.verdict())
    for n, c in enumerate(result.candidates, start=1):
        moves = ", ".join(f"{k} {a:g} -> {b:g}" for k, (a, b) in c.changed.items())
        memsense = c.to_json()["memsense"]
        how = ("needs a change to Memsense's code: " + ", ".join(memsense["needs_code_change"])
               if memsense["needs_code_change"] else "Memsense can take it as request options")
        others = ("" if c.others_before is None else
                  f"; on the other {len(questions_) - len(cases)} questions {c.others_before:.3f} -> {c.others_after:.3f}")
        harm = f"\n   HARMFUL: {c.harm_text()}" if c.harmful else ""
        print(f"{n}. {moves}{harm}\n   all {len(questions_)} questions: {result.metric} {c.metric_before:.3f} -> "
              f"{c.metric_after:.3f} (p = {c.p_value:.3f}), net {c.net:+d} ({len(c.fixed)} fixed, {len(c.broken)} "
              f"broken){others}\n   fixes {len(c.cases_fixed)} of {len(cases)} cases "
              f"({', '.join(c.cases_fixed) or 'none'}); {how}")
    return None


def cmd_report(args: argparse.Namespace) -> Any:
    from core.atomic import write_output
    from core.evaluation import workspace_runs as runs
    from core.files import check_output

    check_output(args.out, "report", (".html", ".htm"))
    quiet = printed(args, "--out", args.out)
    name_a, cfg_a = named(args, args.a)
    name_b, cfg_b = named(args, args.b)
    qs = questions(args)
    with workspace(args) as ws:
        page = runs.report(ws, qs, (name_a, cfg_a), (name_b, cfg_b), args.k, str(args.dataset), progress(args))
    questions_ = qs.questions
    write_output(args.out, page, "report")
    if args.json:
        return {"report": args.out, "bytes": len(page.encode()), "questions": len(questions_)}
    if not quiet:
        print(f"wrote {args.out}: {name_a} against {name_b} on {len(questions_)} questions")
    return None


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Add diagnose and impact to the `memsense` subcommands."""
    sp = sub.add_parser("diagnose", help="where each gold session of a question set was lost (SPEC §13)")
    dataset_argument(sp)
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--config", help="config file (.toml or .json)")
    choice.add_argument("--preset", help="a preset name (default: memsense)")
    sp.add_argument("--k", type=top_k_number, help="results per question (default: the config's top_k)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    sp.add_argument("--list", action="store_true", help="also list every lost gold session")
    common_options(sp)
    sp.set_defaults(func=cmd_diagnose)

    sp = sub.add_parser("fix", help="search for configs that win chosen failing questions back, and what they break")
    dataset_argument(sp)
    sp.add_argument("--cases", required=True, help="question ids to win back, comma-separated (e.g. conv-26:q7)")
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--config", help="the start config file (.toml or .json)")
    choice.add_argument("--preset", help="the start preset (default: memsense)")
    sp.add_argument("--metric", help="the metric a case is won back on (default recall_all@top_k)")
    sp.add_argument("--trials", type=int, default=200, help="configs to try (default 200)")
    sp.add_argument("--seed", type=seed_number, default=0, help="the search's random seed (default 0)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    common_options(sp)
    sp.set_defaults(func=cmd_fix)

    sp = sub.add_parser("report", help="A against B on a question set as one self-contained HTML file")
    dataset_argument(sp)
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--k", type=top_k_number, default=4, help="cut-off of the metrics (default 4)")
    sp.add_argument("--out", required=True, help="the report file to write (.html)")
    sp.add_argument("--users", help="only these users' questions (comma-separated)")
    common_options(sp, keeps_runs=False)
    sp.set_defaults(func=cmd_report)

    sp = sub.add_parser("impact", help="what config B changes against A on queries nobody judged (SPEC §14)")
    sp.add_argument("queries", help="query file: USER<TAB>QUERY a line, or JSON Lines with user and query")
    sp.add_argument("--a", required=True, help="preset name or config file (A)")
    sp.add_argument("--b", required=True, help="preset name or config file (B)")
    sp.add_argument("--k", type=top_k_number, help="results per query (default: the configs' top_k, which must agree)")
    sp.add_argument("--user", help="the user of lines that name none")
    common_options(sp, keeps_runs=False)
    sp.set_defaults(func=cmd_impact)
