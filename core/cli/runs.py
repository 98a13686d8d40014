"""`memsense runs`: the runs kept beside a store (every eval, compare, tune, diagnose and fix), named,
noted, deleted, and any number of them compared side by side (`core.evaluation.experiments`).

    memsense runs list    --store S
    memsense runs show    --store S RUN
    memsense runs rename  --store S RUN NAME
    memsense runs note    --store S RUN TEXT
    memsense runs delete  --store S RUN
    memsense runs compare --store S RUN[:CONFIG] RUN[:CONFIG] ... [--baseline N] [--metric M]
                          [--across-datasets] [--csv FILE] [--html FILE] [--json]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli.arguments import UsageError, store_folder


def open_runs(args: argparse.Namespace, write: bool = False):
    """The runs `add_runs_source`'s options name: the shared runs database's, else the store's history file."""
    from core.evaluation.shared_runs import open_history

    if args.store is None and not args.runs_db:
        raise UsageError("name the store whose runs to read (--store), or a shared runs database (--runs-db)")
    return open_history(args.store, args.runs_db, create=write)


def add_runs_source(sp: argparse.ArgumentParser) -> None:
    """`--store` and `--runs-db` of the commands that read kept runs (`runs`, `history`): either names them."""
    sp.add_argument("--store", type=store_folder, help="the store the runs ranked (or --runs-db)")
    add_runs_db(sp)


def add_runs_db(sp: argparse.ArgumentParser) -> None:
    """`--runs-db URL`: keep (or read) runs in a PostgreSQL database a team shares."""
    sp.add_argument("--runs-db", metavar="URL",
                    help="keep eval, compare, tune, diagnose and fix runs in this shared PostgreSQL database "
                         "(postgresql://USER@HOST:PORT/DB; password from PGPASSWORD or ~/.pgpass), each named by "
                         "who made it ($MEMSENSE_USER or the OS user), instead of the store's history file")


def run_ref(text: str) -> tuple[int, str | None]:
    """`RUN` or `RUN:CONFIG` (a run id, and the config of it when it ranked several)."""
    head, _, config = text.partition(":")
    try:
        run_id = int(head)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no run id: give RUN or RUN:CONFIG, e.g. 12 or 12:memsense") \
            from None
    if not 1 <= run_id < 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is no run id: ids are whole numbers from 1")
    return run_id, config or None


def cmd_runs(args: argparse.Namespace) -> Any:
    from core.evaluation.experiments import run_names

    action = args.runs_action
    if action in ("rename", "note", "delete"):
        return _change(args)
    with open_runs(args) as history:
        names = run_names(history)
        if action == "show":
            run = history.run(args.run)
            name, note = names.get(run.id, ("", ""))
            out = {**run.head(), "name": name, "note": note, "results": run.results}
            if args.json:
                return out
            print(f"run {run.id}{f' “{name}”' if name else ''}{f' by {run.made_by}' if run.made_by else ''}: {run.kind}, {out['time']}, {out['questions']} "
                  f"questions of {Path(run.dataset).name} (sha256 {run.dataset_sha256[:12]})")
            if note:
                print(f"note: {note}")
            for config in run.configs:
                means = ", ".join(f"{m} {run.mean(m, config):.3f}" for m in run.metrics()
                                  if run.mean(m, config) is not None)
                print(f"  {config}: {means}")
            return None
        if action == "compare":
            return _compare(args, history, names)
        runs = listed(history.runs(), names)
    if args.json:
        return {"runs": runs}
    print_runs(runs)
    return None


def listed(runs, names: dict[int, tuple[str, str]]) -> list[dict[str, Any]]:
    """Each run's head (`Run.head`) with its name and note."""
    return [{**r.head(), "name": names.get(r.id, ("", ""))[0], "note": names.get(r.id, ("", ""))[1]} for r in runs]


def print_runs(runs: list[dict[str, Any]]) -> None:
    """A line per run (`listed`): id, name, time, kind, questions, configs, question file."""
    for r in runs:
        name = f" “{r['name']}”" if r.get("name") else ""
        name += f" by {r['made_by']}" if r.get("made_by") else ""
        print(f"{r['id']:>4}{name}  {r['time']}  {r['kind']:<9} {r['questions']:>5} questions  "
              f"{', '.join(r['configs'])}  {Path(r['dataset']).name}")
    if not runs:
        print("no runs yet")


def _change(args: argparse.Namespace) -> Any:
    from core.evaluation.experiments import delete_run, set_run_name

    with open_runs(args, write=True) as history:
        history.run(args.run)  # an unknown id is one clear line
        if args.runs_action == "delete":
            delete_run(history, args.run)
            print(f"deleted run {args.run}")
        elif args.runs_action == "rename":
            set_run_name(history, args.run, name=args.text)
            print(f"run {args.run} is now named “{args.text}”")
        else:
            set_run_name(history, args.run, note=args.text)
            print(f"noted run {args.run}")
    return None


def _compare(args: argparse.Namespace, history, names: dict) -> Any:
    from core.evaluation.experiments import compare_sides, comparison_html, side_of, question_categories
    from core.atomic import write_output

    if len(args.refs) < 2:
        raise UsageError("compare takes two or more runs: RUN[:CONFIG] RUN[:CONFIG] ...")
    sides = [side_of(history.run(rid), config, names.get(rid, ("", ""))[0]) for rid, config in args.refs]
    if not 1 <= args.baseline <= len(sides):
        raise UsageError(f"--baseline is a position among the {len(sides)} runs named (1 to {len(sides)})")
    result = compare_sides(sides, args.metric, args.baseline - 1, args.across_datasets,
                           question_categories(sides[0].run))
    if args.csv:
        write_output(Path(args.csv), result.to_csv())
    if args.html:
        write_output(Path(args.html), comparison_html(result))
    if args.json:
        return result.to_json()
    print(f"{args.metric} over the {len(result.questions)} questions every run scored"
          + (f" ({result.left_out} scored by only some left out)" if result.left_out else "")
          + (f"; {len(result.datasets)} datasets compared on the questions they share" if len(result.datasets) > 1
             else ""))
    print(f"{'run':<34}{'mean':>7}{'95 % CI':>18}{'p vs base':>11}{'won':>6}{'lost':>6}")
    for n, f in enumerate(result.figures):
        p = "baseline" if n == result.baseline else f"{f.p_value:.3f}"
        print(f"{f.label[:33]:<34}{f.mean:>7.3f}{f'{f.ci[0]:.3f} – {f.ci[1]:.3f}':>18}{p:>11}{f.wins:>6}{f.losses:>6}")
    print(f"{len(result.changed)} questions differ between these runs")
    for label, path in (("CSV", args.csv), ("HTML", args.html)):
        if path:
            print(f"wrote the comparison as {label} to {path}")
    return None


def add_command(sub: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    add_runs_source(common)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    sp = sub.add_parser("runs", help="the runs kept beside a store: list, show, rename, note, delete, compare many")
    actions = sp.add_subparsers(dest="runs_action", required=True, metavar="ACTION",
                                help="list, show, rename, note, delete or compare")
    actions.add_parser("list", parents=[common], help="every run kept, with its name")
    show = actions.add_parser("show", parents=[common], help="one run: its configs' means, its name and note")
    show.add_argument("run", type=lambda t: run_ref(t)[0], metavar="RUN", help="the run's id")
    for name, what in (("rename", "give a run a name"), ("note", "keep a note with a run")):
        p = actions.add_parser(name, parents=[common], help=what)
        p.add_argument("run", type=lambda t: run_ref(t)[0], metavar="RUN", help="the run's id")
        p.add_argument("text", metavar="NAME" if name == "rename" else "TEXT",
                       help="the name (shown in lists and comparisons)" if name == "rename" else "the note")
    delete = actions.add_parser("delete", parents=[common], help="delete a run from the history")
    delete.add_argument("run", type=lambda t: run_ref(t)[0], metavar="RUN", help="the run's id")
    compare = actions.add_parser("compare", parents=[common],
                                 help="any number of runs side by side, question by question")
    compare.add_argument("refs", type=run_ref, nargs="+", metavar="RUN[:CONFIG]",
                         help="two or more runs, each with the config of it to compare when it ranked several")
    compare.add_argument("--metric", default="recall_all@4", help="the metric (default recall_all@4)")
    compare.add_argument("--baseline", type=int, default=1, help="the position of the baseline run (default 1)")
    compare.add_argument("--across-datasets", action="store_true",
                         help="compare runs of different question files on the questions they share")
    compare.add_argument("--csv", help="also write the comparison as CSV")
    compare.add_argument("--html", help="also write the comparison as a self-contained HTML report")
    sp.set_defaults(func=cmd_runs)
