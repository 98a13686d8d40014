"""Screenshot of the Production view: a live Memsense service's results beside the app's, taken
from the real app under Xvfb, connected through File > Connect to Memsense….

    python tools/screenshot_memsense.py (--database postgresql://… --embedder URL --service URL | --start-memsense) \\
        [--user demo-ana] [--question "…"] [--out resources/screenshots/production.png]

Either a running Memsense (its database, embedding endpoint and service), or --start-memsense:
a real Memsense started here from its own source by ../shared/tools/memsense-service (as the
tests start it, on free loopback ports), fed the demo conversations through its own evaluation
ingest, stopped and removed at the end. The app home is a temporary folder, so your settings are
untouched. `tools/screenshot_layouts.py` connects through the same functions.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first

from tools.screenshot import SIZE, _settle, _wait, under_xvfb, until  # noqa: E402
from memsense_gui.views.connect import MemsenseConnection  # noqa: E402
from memsense_gui.views.dock import DockId  # noqa: E402

DEFAULT_OUT = ROOT / "resources" / "screenshots" / "production.png"
WAIT_S = 120.0
"""The longest wait for the database, the model or the service before the run stops."""
CONNECTION_FIELDS = ("database", "tenant", "scope", "embedder", "service")


def add_memsense_arguments(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """The live Memsense a screenshot connects to: a running one (`--{prefix}database` …) or
    --start-memsense."""
    group = parser.add_argument_group("live Memsense")
    group.add_argument(f"--{prefix}database", help="a running Memsense's database, postgresql://…")
    group.add_argument(f"--{prefix}tenant", default="default")
    group.add_argument(f"--{prefix}scope", default="user")
    group.add_argument(f"--{prefix}embedder", help="the embedding endpoint its queries use")
    group.add_argument(f"--{prefix}service", help="its service URL (POST /v1/memory/search)")
    group.add_argument("--start-memsense", action="store_true",
                       help="start a real Memsense here (../shared/tools/memsense-service) fed the demo "
                            "conversations; stopped and removed at the end")


def check_memsense_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace, prefix: str = "",
                             required: bool = True) -> None:
    """One line when the connection is half given (or, if `required`, not given at all)."""
    dest = prefix.replace("-", "_")
    given = [f"--{prefix}{f}" for f in ("database", "embedder", "service") if getattr(args, dest + f)]
    if args.start_memsense and given:
        parser.error(f"give either --start-memsense or {', '.join(given)}, not both")
    if not args.start_memsense and (given or required) and len(given) < 3:
        parser.error(f"give --{prefix}database, --{prefix}embedder and --{prefix}service of a running Memsense, "
                     "or --start-memsense")


@contextmanager
def memsense_connection(args: argparse.Namespace, prefix: str = "") -> Iterator[MemsenseConnection | None]:
    """The connection the arguments name (None when none is given), a started Memsense's while it runs."""
    if args.start_memsense:
        with demo_memsense() as conn:
            yield conn
        return
    dest = prefix.replace("-", "_")
    values = {f: getattr(args, dest + f) for f in CONNECTION_FIELDS}
    yield MemsenseConnection(**values) if values["database"] else None


@contextmanager
def demo_memsense() -> Iterator[MemsenseConnection]:
    """A real Memsense started from its own source (`tests/memsense_service.py`, the tests' way),
    fed each demo user's conversation through Memsense's own evaluation ingest (hybrid); stopped
    and its work folder removed at the end, whatever happened."""
    from core.ingest import load_conversations
    from core.ingest.locomo import locomo_samples
    from core.recall.engine import DEMO_DATASET
    from tests.memsense_service import SCOPE, TENANT, Unavailable, start_service

    folder = Path(tempfile.mkdtemp(prefix="memsense-service-"))  # as root the service makes its own
    try:
        try:
            service = start_service(folder)
        except Unavailable as why:
            raise SystemExit(f"screenshot: the real Memsense cannot run here: {why}") from None
        try:
            conversations = load_conversations(DEMO_DATASET)
            dataset = service.work / "demo-locomo.json"
            dataset.write_text(json.dumps(locomo_samples(conversations)), encoding="utf-8")
            for index, conv in enumerate(conversations):
                numbers = [s.number for s in conv.sessions]
                took = service.ingest(dataset, index, f"{min(numbers)}-{max(numbers)}", conv.user_id)
                print(f"memsense: ingested {conv.user_id} ({len(numbers)} sessions) in {took:.1f} s", file=sys.stderr)
            yield MemsenseConnection(service.database, TENANT, SCOPE, service.embedder, service.api)
        finally:
            service.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ask_production(app, window, conn: MemsenseConnection, user: str, question: str,
                   gold: Iterable[str] = ()) -> str:
    """Connect `window` as File > Connect to Memsense… does, run `question` for `user` (its gold
    sessions starred) and wait for the service's answer beside the reproduction; the Production
    view raised, the first result selected. Returns the view's summary line."""
    window.memsense.open(conn)
    _wait(app, window.ctx.model_loaded, WAIT_S)
    window.queries.open_question(user, question, set(gold))
    panel = window.memsense.panel
    until(app, lambda: "production and reproduction" in panel.summary.text()
          or "could not answer" in panel.summary.text(), WAIT_S)
    if "could not answer" in panel.summary.text():
        raise SystemExit(f"screenshot: {panel.summary.text()}")
    window.raise_dock(DockId.PRODUCTION)
    window.results.view.selectRow(0)
    return panel.summary.text()


def take(args: argparse.Namespace, conn: MemsenseConnection) -> Path:
    os.environ["MEMSENSE_GUI_HOME"] = tempfile.mkdtemp(prefix="memsense-screenshot-")
    from PySide6.QtWidgets import QApplication

    from memsense_gui.state import paths
    from memsense_gui.window.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    app.setApplicationDisplayName("memsense")
    home = paths.app_home()
    window = MainWindow(home, paths.settings(home))
    window.resize(*SIZE)
    window.show()
    window.default_layout()
    print(ask_production(app, window, conn, args.user, args.question))
    _settle(app)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(args.out)):
        raise SystemExit(f"screenshot: cannot write {args.out}")
    window.close()
    return args.out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshot of the Production view under Xvfb.")
    add_memsense_arguments(parser)
    parser.add_argument("--user", default="demo-ana")
    parser.add_argument("--question", default="How many races has Ana run in 2024?")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    check_memsense_arguments(parser, args)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb([__file__, *argv])
    with memsense_connection(args) as conn:
        assert conn is not None  # checked above
        print(take(args, conn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
