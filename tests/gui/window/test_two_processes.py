"""Two processes at once (issue 39, class 5): the app and the real `memsense` command on one store and one
history. While the app evaluates, diagnoses and tunes, the command's ingest and drop are refused in one
line and change nothing: the app's figures are those it gave before. Once the app has let the store go,
the drop goes through and the app, opening the store again, reads its users anew. Runs the command keeps
(or deletes) while the app keeps its own are all kept, and the History view lists them within a poll,
saying in one line what another process changed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.evaluation.history import History, history_path
from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS
from memsense_gui.state.run_history import POLL_MS
from tools.soak import build_stores, make_window

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def memsense(*argv: str | Path, wait=None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the real command in its own process; `wait(proc)` runs while it works."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CLI, *map(str, argv)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if wait is not None:
        wait(proc)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def digest(store: Path) -> str:
    """The store's files' digest (`tests.cli.conftest.digest`), read by another process: a file read and
    closed in this one would drop the lock the app's SQLite connection holds on it (POSIX locks are per
    process), and let the command in."""
    script = "import sys; from tests.cli.conftest import digest; print(digest(__import__('pathlib').Path(sys.argv[1])))"
    done = subprocess.run([sys.executable, "-c", script, str(store)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and "[" not in line]  # progress bars aside
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("memsense: error: "), err
    return lines[0]


@pytest.fixture
def stores(tmp_path, model_cache):
    return build_stores(tmp_path / "stores", model_cache)


@pytest.fixture
def window(qtbot, app_home, model_cache, stores):
    w = make_window(app_home, model_cache)
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=180_000):
        w.stores.open_store(stores[0])
    return w


def _metrics(results) -> dict:
    return {r.preset: (dict(r.overall), r.questions) for r in results}


def test_ingest_and_drop_are_refused_while_the_app_works_and_the_app_recovers_after(qtbot, window, stores,
                                                                                    model_cache):
    w, store = window, stores[0]
    ev, failures = w.evaluation, w.failures
    with qtbot.waitSignal(ev.evaluation_finished, timeout=120_000) as first:
        ev.start()
    before, files = _metrics(first.args[0]), digest(store)

    # the app evaluates, diagnoses and tunes; meanwhile the command tries to change the store under it
    ev.start()
    failures.diagnose()
    ev.autotune.trials_spin.setValue(4)
    ev.autotune.start()
    for argv in (("drop", "--store", store, "--user", "demo-ana"),
                 ("ingest", DEMO_DATASET, "--store", store, "--cache", model_cache)):
        code, out, err = memsense(*argv)
        assert code == 1, (out, err)
        line = one_error_line(err)
        assert code == 1 and "is open in another process" in line and "memsense-gui" in line, line
    qtbot.waitUntil(lambda: not ev.slot.running and not failures.diagnose_slot.running
                    and ev.autotune.run_button.isEnabled(), timeout=300_000)
    assert _metrics(ev.results) == before  # the figures of the store as it was, which it still is
    assert "failed" not in failures.diagnose_view.status.text().lower() and failures.diagnose_view.run is not None
    assert digest(store) == files and w.ctx.users == ["demo-ana", "demo-mei", "demo-raj"]

    # another store opened: the app lets this one go, and the drop goes through
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=180_000):
        w.stores.open_store(stores[1])
    code, out, err = memsense("drop", "--store", store, "--user", "demo-raj")
    assert code == 0 and "dropped user 'demo-raj'" in out, err
    with qtbot.waitSignal(w.ctx.users_loaded, timeout=180_000):
        w.stores.open_store(store)  # opened again, no restart: its users are read anew
    assert w.ctx.users == ["demo-ana", "demo-mei"]
    assert [w.user_combo.itemText(i) for i in range(w.user_combo.count())] == w.ctx.users
    assert ev.results == [] and "Press Evaluate" in ev.status.text()  # no figure of the store before is shown
    assert failures.diagnose_view.stale  # the diagnose shown is marked as of the store before


def test_runs_kept_and_deleted_by_the_command_while_the_app_keeps_its_own_are_listed_and_said(qtbot, window,
                                                                                               stores, model_cache):
    w, store = window, stores[0]
    history_view, ev = w.runs.history, w.evaluation
    kept: list[int] = []
    w.ctx.runs.recorded.connect(kept.append)

    def app_evaluates(proc) -> None:  # the app evaluates (and keeps its run) while the command does
        ev.start()
        qtbot.waitUntil(lambda: proc.poll() is not None and bool(kept), timeout=300_000)

    code, _out, err = memsense("eval", DEMO_QUESTIONS, "--store", store, "--cache", model_cache, "--preset",
                               "memsense", "--quiet", wait=app_evaluates)
    assert code == 0, err
    with History(history_path(store), create=False) as history:
        ids = [r.id for r in history.runs()]
    assert len(ids) == 2 and kept[0] in ids  # both kept, neither lost
    cli_run = next(i for i in ids if i != kept[0])
    qtbot.waitUntil(lambda: sorted(r.id for r in history_view.runs_model.runs) == ids, timeout=5 * POLL_MS + 30_000)
    qtbot.waitUntil(lambda: f"run {cli_run} kept" in history_view.note.text(), timeout=5 * POLL_MS)
    assert "changed by another process" in history_view.note.text()

    code, _out, err = memsense("runs", "delete", "--store", store, str(kept[0]))
    assert code == 0, err
    started = time.monotonic()
    qtbot.waitUntil(lambda: [r.id for r in history_view.runs_model.runs] == [cli_run], timeout=5 * POLL_MS + 10_000)
    assert time.monotonic() - started < 5 * POLL_MS / 1000 + 10
    assert f"run {kept[0]} deleted" in history_view.note.text()
