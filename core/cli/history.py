"""`memsense history`: the runs kept beside a store (or in a shared runs database, `--runs-db`), two
compared question by question, and one run's settings written out to re-open (a run is kept by the
workspace that made it: `core.evaluation.workspace.Workspace.keep`).
"""
from __future__ import annotations

import argparse
from typing import Any

from core.cli.arguments import UsageError, printed
from core.cli.runs import add_runs_source, listed, open_runs, print_runs


def cmd_history(args: argparse.Namespace) -> Any:
    from core.evaluation.experiments import run_names
    from core.evaluation.history import compare_runs

    if args.compare and args.export is not None:
        raise UsageError("--compare and --export are two things to do; run them one at a time")
    if args.out is not None and args.export is None:
        raise UsageError("--out goes with --export RUN (the run whose settings to write)")
    with open_runs(args) as history:
        if args.compare:
            a, b = (history.run(i) for i in args.compare)
            diff = compare_runs(a, b, args.metric, args.config_a, args.config_b)
            if args.json:
                return diff.to_json()
            out = diff.to_json()
            print(f"run {a.id} ({out['a']['config']}) against run {b.id} ({out['b']['config']}), {args.metric}: "
                  f"{out['questions']} questions in both; B higher on {out['wins']}, lower on {out['losses']}")
            for d in out["differences"]:
                print(f"  {d['diff']:+.3f}  {d['question_id']}")
            return None
        if args.export is not None:
            from core.config.provenance import Provenance, save_with_provenance
            from core.files import check_output

            if not args.out:
                raise UsageError("--export RUN writes the run's settings to --out FILE (.toml or .json)")
            check_output(args.out, "config output", (".toml", ".json"))
            run = history.run(args.export)
            cfg = run.config(args.config_a)
            name = args.config_a or next(iter(run.configs))
            save_with_provenance(cfg, args.out, Provenance(preset=f"{name} of history run {run.id} ({run.kind})",
                                                           store=run.store, model=run.model))
            if not printed(args, "--out", args.out):
                print(f"wrote the settings of run {run.id} to {args.out}")
            return None
        runs = listed(history.runs(), run_names(history))
    if args.json:
        return {"history": str(history.path), "runs": runs}
    print_runs(runs)
    return None


def add_command(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("history", help="the evaluation, tune, diagnose and fix runs kept beside a store "
                                        "(or in a shared runs database)")
    add_runs_source(sp)
    sp.add_argument("--compare", nargs=2, type=int, metavar=("A", "B"), help="two run ids, question by question")
    sp.add_argument("--metric", default="recall_all@4", help="with --compare: the metric (default recall_all@4)")
    sp.add_argument("--config-a", help="the config of run A (or of --export's run) when it ranked several")
    sp.add_argument("--config-b", help="the config of run B when it ranked several")
    sp.add_argument("--export", type=int, metavar="RUN", help="write one run's settings to --out (re-open them)")
    sp.add_argument("--out", help="with --export: the config file to write (.toml or .json)")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_history)
