"""`memsense`: ingest, search, explain and replay from the command line.

Every command takes `--json`, `-q`, `-v` and `--log-file`; `-` for a dataset, question file or
query reads it from standard input. A problem prints one line `memsense: error: ...` and exits 1
(2 when the command line itself is wrong, 0 on success).
"""
from __future__ import annotations

import argparse
import json
import sys

from core.cli.arguments import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    UsageError,
    add_analyzers,
    add_output_options,
    logging_to,
    seconds,
    store_location,
    top_k_number,
)
from core.cli.commands import (
    cmd_bench,
    cmd_demo,
    cmd_explain,
    cmd_export_memsense,
    cmd_import,
    cmd_ingest,
    cmd_rerank,
    cmd_search,
)
from core.cli.output import SafeStream
from core.errors import MemsenseError
from core.recall.timeouts import EMBED_TIMEOUT_S, SERVICE_TIMEOUT_S
from core.redact import redact


def build_parser() -> argparse.ArgumentParser:
    import shtab

    from core import __version__

    p = Parser(prog="memsense", description=__doc__.splitlines()[0],
               epilog="exit status: 0 success, 1 the command failed, 2 the command line is wrong")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                   help="print the version and exit")
    shtab.add_argument_to(p, ["--print-completion"], help="print a shell completion script for "
                          f"{', '.join(shtab.SUPPORTED_SHELLS)}, e.g. memsense --print-completion bash > "
                          "~/.local/share/bash-completion/completions/memsense")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="what to do (COMMAND --help: its options)")

    def common(sp: argparse.ArgumentParser, store: bool = True, live: bool = False) -> None:
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        if store:
            sp.add_argument("--store", required=True, type=store_location,
                            help="store directory (or http(s):// Qdrant URL)")
            sp.add_argument("--model", help="local sentence-transformers model folder (default: bundled all-MiniLM-L6-v2)")
            sp.add_argument("--cache", help="embedding cache directory (default ~/.cache/memsense)")
        if live:
            add_lexical(sp)
            add_live(sp, service=True)

    sp = sub.add_parser("ingest", help="build or update a store from a LoCoMo JSON or JSONL dataset")
    sp.add_argument("dataset", help="a LoCoMo JSON or conversation JSON Lines file (- reads standard input)")
    sp.add_argument("--mode", default="hybrid", choices=("hybrid", "session", "turn"),
                    help="chunks of whole sessions, of single turns, or both (default: hybrid)")
    sp.add_argument("--facets", default="text", choices=("text", "locomo"),
                    help="facet source: the text (default) or LoCoMo observation/event_summary")
    common(sp)
    sp.set_defaults(func=cmd_ingest)

    for name, fn, extra in (("search", cmd_search, False), ("explain", cmd_explain, True)):
        sp = sub.add_parser(name, help="results with explain and the whole pool" if name == "search"
                            else "why (or why not) one chunk for a query")
        sp.add_argument("--user", required=True, help="the user whose memories are searched")
        sp.add_argument("query", help="the question (- reads it from standard input)")
        choice = sp.add_mutually_exclusive_group()
        choice.add_argument("--config", help="config file (.toml or .json)")
        choice.add_argument("--preset", help="a built-in preset name instead of --config")
        sp.add_argument("--top-k", type=top_k_number, help="results to return (default: the config's top_k)")
        if extra:
            sp.add_argument("--memory", required=True, help="memory_id of the chunk to explain")
        common(sp, live=True)
        sp.set_defaults(func=fn)

    sp = sub.add_parser("import", help="copy users of a live Memsense database (with their stored vectors) "
                                       "into a store for offline work")
    sp.add_argument("database", help="postgresql://USER:PASSWORD@HOST:PORT/DATABASE of the Memsense service")
    sp.add_argument("--user", action="append", help="a user to copy (repeat; default: every user)")
    add_live(sp, service=False, embedder=False)
    common(sp)
    sp.set_defaults(func=cmd_import)

    sp = sub.add_parser("export-memsense", help="settings as a live Memsense takes them: its re-rank options "
                                                "object and top_k, and which knobs need a change to its code")
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--config", help="config file (.toml or .json)")
    choice.add_argument("--preset", help="a built-in preset name instead of --config")
    sp.add_argument("--out", help="write the JSON here (default: print it)")
    common(sp, store=False)
    sp.set_defaults(func=cmd_export_memsense)

    sp = sub.add_parser("rerank", help="replay Memsense-format candidate rows (a case or a list of cases)")
    sp.add_argument("cases", help="a JSON file of Memsense's logged candidate rows (- reads standard input)")
    sp.add_argument("--config", help="base config; case options override it")
    common(sp, store=False)
    sp.set_defaults(func=cmd_rerank)

    sp = sub.add_parser("bench", help="print speed figures for re-rank, recall and ingest")
    sp.add_argument("--dataset", help="LoCoMo file for recall and ingest figures (default ../shared)")
    sp.add_argument("--quick", action="store_true", help="re-rank figures only")
    sp.add_argument("--scale", help="synthetic stores of these sizes instead, e.g. 2000,10000,30000,100000 (no model)")
    sp.add_argument("--users", type=int, default=1, help="with --scale: users in each store (one big, the rest small)")
    sp.add_argument("--out", help="also write the figures as JSON here")
    common(sp, store=False)
    sp.set_defaults(func=cmd_bench)

    sp = sub.add_parser("demo", help="print where the packaged demo data is (e.g. memsense ingest \"$(memsense demo)\" "
                                     "--store S)")
    sp.add_argument("--questions", action="store_true", help="the demo's judged questions instead of its conversations")
    common(sp, store=False)
    sp.set_defaults(func=cmd_demo)

    from core.cli import evaluation, tuning

    evaluation.add_commands(sub)
    from core.cli import store as store_commands

    store_commands.add_commands(sub)
    tuning.add_command(sub)
    from core.cli import failures

    failures.add_commands(sub)
    from core.cli import history

    history.add_command(sub)
    from core.cli import runs

    runs.add_command(sub)
    add_output_options(p)
    return p


def add_lexical(sp: argparse.ArgumentParser) -> None:
    add_analyzers(sp)
    sp.add_argument("--lexical", default="bm25", choices=("bm25", "memsense"),
                    help="the lexical route of a store folder: BM25, or Memsense's English full text "
                         "(every word required, cover-density ranking)")


def add_live(sp: argparse.ArgumentParser, service: bool, embedder: bool = True) -> None:
    """The options of a live Memsense database (--store postgresql://...)."""
    live = sp.add_argument_group("a live Memsense database (postgresql://USER:PASSWORD@HOST:PORT/DB)")
    live.add_argument("--tenant", default="default", help="Memsense tenant_id (default: default)")
    live.add_argument("--scope", default="user", help="Memsense scope (default: user)")
    if embedder:
        live.add_argument("--embedder", help="the embedding endpoint URL Memsense uses (either request shape), "
                                             "or a local sentence-transformers folder of the same model")
        live.add_argument("--embed-timeout", type=seconds("--embed-timeout"), default=EMBED_TIMEOUT_S,
                          help=f"seconds for a whole request to --embedder (default {EMBED_TIMEOUT_S:g})")
    if service:
        live.add_argument("--service", help="the Memsense service URL: show its results beside the reproduction")
        live.add_argument("--service-timeout", type=seconds("--service-timeout"), default=SERVICE_TIMEOUT_S,
                          help=f"seconds for a whole request to --service (default {SERVICE_TIMEOUT_S:g})")


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status (`EXIT_OK`, `EXIT_FAILURE`, `EXIT_USAGE`). Output goes
    through `SafeStream` (no raw terminal escapes); warnings and log records go to stderr at the
    level of -q / -v (and to --log-file)."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(stdout), SafeStream(stderr)
    try:
        return _run(argv)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _run(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        with logging_to(args, sys.stderr):
            out = args.func(args)
        if out is not None and getattr(args, "json", False):
            text = json.dumps(out, indent=2, default=str, allow_nan=False)  # NaN is not JSON: never written
            sys.stdout.write(text + "\n")
    except UsageError as exc:
        print(f"memsense: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemsenseError as exc:
        print(f"memsense: error: {redact(exc)}", file=sys.stderr)  # no password, token or key, whoever wrote it
        return EXIT_FAILURE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("memsense: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a disk or permission fault outside the checks above
        where = f" {exc.filename}" if exc.filename else ""
        print(redact(f"memsense: error: cannot read or write{where} ({exc.strerror or exc}); check the path, its "
                     "permissions and free disk space"), file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
