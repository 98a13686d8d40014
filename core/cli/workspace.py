"""What every question-set command (eval, compare, judge run, diagnose, fix, report, tune) shares: its options,
the presets and config files it names, its judged questions, and the store it opens as a workspace.

The work itself is the workspace's (`core.evaluation.workspace`, `core.evaluation.workspace_runs`); a command
reads its arguments here, calls it, and prints what comes back.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, ContextManager, Iterable

from core.cli.arguments import UsageError, add_analyzers, recall_options, store_folder
from core.cli.runs import add_runs_db

if TYPE_CHECKING:
    from core.cli.stopping import Stopped
    from core.config import Config
    from core.evaluation.workspace import Kept, QuestionSet, Workspace


class Ordered(argparse.Action):
    """Collect --preset NAME and --config FILE into one list, in command-line order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, "chosen", None) or [])
        items.append((self.dest, values))
        namespace.chosen = items


def default_presets_file() -> Path:
    """The app's presets file, in its data folder (`core.machine.data_dir`)."""
    from core.machine import data_dir

    return data_dir() / "presets.json"


def preset_store(args: argparse.Namespace):
    from core.config.presets import PresetStore

    return PresetStore(Path(args.presets) if getattr(args, "presets", None) else default_presets_file())


def presets(args: argparse.Namespace, default_all: bool = True) -> dict:
    """Name -> Config for the presets and config files asked for, in order."""
    from core import config as config_io
    from core.config.presets import BUILTIN

    chosen = getattr(args, "chosen", None) or []
    if not chosen:
        return dict(BUILTIN) if default_all else {}
    store = preset_store(args)
    out = {}
    for kind, value in chosen:
        if kind == "preset":
            out[value] = store.get(value)
        elif value.startswith(RUN_PREFIX):
            name, cfg = run_config(args, value)
            out[name] = cfg
        else:
            name = Path(value).stem
            while name in out:
                name += "'"
            out[name] = config_io.load(value)
    for cfg in out.values():
        cfg.check_searchable()
    return out


def named(args: argparse.Namespace, value: str):
    """A preset name, a .toml/.json config file path, or `run:ID[:CONFIG]`: the settings a kept run ranked
    (`memsense runs list` shows them), from the store's run history."""
    from core import config as config_io

    if value.startswith(RUN_PREFIX):
        return run_config(args, value)
    if value.lower().endswith((".toml", ".json")):
        name, cfg = Path(value).stem, config_io.load(value)
    else:
        name, cfg = value, preset_store(args).get(value)
    cfg.check_searchable()
    return name, cfg


RUN_PREFIX = "run:"


def run_config(args: argparse.Namespace, value: str):
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


def users_of(text: str | None) -> list[str]:
    return [u.strip() for u in (text or "").split(",") if u.strip()]


def questions(args: argparse.Namespace, users: list[str] | None = None) -> QuestionSet:
    """The judged questions of `args.dataset` (`--users`' only, or `users`'), read before the store opens; a
    warning line when a user is asked the same question twice."""
    from core.evaluation.workspace import judged_questions, repeated_note

    qs = judged_questions(args.dataset, users if users is not None else users_of(getattr(args, "users", None)))
    warn(repeated_note(qs))
    return qs


def workspace(args: argparse.Namespace) -> ContextManager[Workspace]:
    """The store of `--store` opened once, as a workspace (`core.evaluation.workspace.open_store`)."""
    from core.evaluation.workspace import open_store

    return open_store(args.store, model=args.model, cache_dir=args.cache, options=recall_options(args),
                      runs_db=getattr(args, "runs_db", None))


def recall_until_ctrl_c(args: argparse.Namespace, ws: Workspace, qs: QuestionSet,
                        configs: Iterable[Config]) -> tuple[QuestionSet, Stopped | None]:
    """Recall `qs` for `configs` on the workspace with progress; Ctrl+C stops the recall after the question it
    is on, and the questions recalled by then are returned with a `Stopped` (`core.cli.stopping`: one warning
    line; nothing recalled: "interrupted", exit 130)."""
    import threading

    from core.cli.arguments import ctrl_c_sets
    from core.cli.stopping import kept_part
    from core.errors import Cancelled

    cancel = threading.Event()
    with ctrl_c_sets(cancel):
        try:
            ws.pools(qs, configs, progress=progress(args), cancel=cancel)
        except Cancelled:
            pass
    part = ws.part_recalled(qs)
    _, stopped = kept_part(qs.questions, {q.question_id: q for q in part.questions}, key=lambda q: q.question_id)
    return (part if stopped is not None else qs), stopped


def warn(note: str) -> None:
    """A warning line on stderr ("" prints nothing)."""
    if note:
        print(f"memsense: warning: {note}", file=sys.stderr)


def warn_not_kept(kept: Kept) -> None:
    """One warning line for a run the history did not keep (damaged, of another shape, locked, read-only,
    on a full disk): the run's output stands, and the history is left as it was."""
    if kept.run_id is None:
        print(f"memsense: warning: this run was not kept in the history: {kept.reason}", file=sys.stderr)


def progress(args: argparse.Namespace):
    if getattr(args, "quiet", False):
        return None
    from core.cli.output import progress_bar

    return progress_bar(sys.stderr)


def common_options(sp: argparse.ArgumentParser, store: bool = True, keeps_runs: bool = True) -> None:
    """`--json`, and with `store` the store's options; `keeps_runs`: the command keeps a run (`--runs-db`)."""
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    if store:
        sp.add_argument("--store", required=True, type=store_folder, help="store directory built from the same dataset")
        sp.add_argument("--model", help="local sentence-transformers model folder (default: bundled all-MiniLM-L6-v2)")
        sp.add_argument("--lexical", default="bm25", choices=("bm25", "memsense"),
                        help="the lexical route: BM25, or Memsense's English full text (every word required)")
        add_analyzers(sp)
        sp.add_argument("--cache", help="embedding cache directory (default ~/.cache/memsense)")
        sp.add_argument("--presets", help="user presets file (default: the app's presets.json)")
        if keeps_runs:
            add_runs_db(sp)


def dataset_argument(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("dataset", help="questions: LoCoMo JSON, project question file or judged set")


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"
