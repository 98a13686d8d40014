"""The app's run history against a file another process writes too: a run the app keeps is read alone and
added to the list; runs another process keeps or deletes are said in one line and the list read again."""
from __future__ import annotations

from core.evaluation.experiments import delete_run
from core.evaluation.history import History, history_path
from memsense_gui.state import run_history
from memsense_gui.state.run_history import RunHistory
from tests.evaluation.test_experiments import _keep, five_runs  # noqa: F401 - the fixture


def _listed(qtbot, history: RunHistory, whole: bool = True) -> list[int]:
    with qtbot.waitSignal(history.listed, timeout=10_000) as listed:
        history.list_runs(whole)
    return [r.id for r in listed.args[0]]


def _elsewhere(qtbot, history: RunHistory, change) -> tuple[str, list[int]]:
    """`change(history file)` made by "another process", then what the poll says and the runs then listed."""
    lines: list[str] = []
    history.changed_elsewhere.connect(lines.append)
    with History(history_path(history.locate()[0]), create=False) as other:
        change(other)
    with qtbot.waitSignal(history.listed, timeout=10_000) as listed:
        history._look()  # what the poll does every POLL_MS
    qtbot.waitUntil(lambda: bool(lines), timeout=5_000)
    history.changed_elsewhere.disconnect(lines.append)
    return lines[0], [r.id for r in listed.args[0]]


def test_the_apps_runs_are_read_alone_and_other_processes_changes_are_said(qtbot, five_runs, monkeypatch):  # noqa: F811
    store, dataset, ids = five_runs
    reads: list[int | None] = []
    real = run_history.read_runs
    monkeypatch.setattr(run_history, "read_runs", lambda path, after=None, task=None: reads.append(after)
                        or real(path, after, task))
    history = RunHistory(lambda: (str(store), "model"))
    assert _listed(qtbot, history) == ids and reads == [None]

    with History(history_path(store), create=False) as mine:  # the app keeps a run: only it is read
        new = history.own(_keep(mine, dataset, 7))
    assert _listed(qtbot, history, whole=False) == [*ids, new] and reads[-1] == ids[-1]
    history._look()  # the file changed, by this app: nothing to say
    qtbot.wait(300)
    assert not history._looking and len(reads) == 2

    line, listed = _elsewhere(qtbot, history, lambda other: _keep(other, dataset, 8))
    assert listed == [*ids, new, new + 1]
    assert line == f"The run history was changed by another process (run {new + 1} kept); the list is read again."

    line, listed = _elsewhere(qtbot, history, lambda other: (delete_run(other, ids[1]), delete_run(other, ids[2])))
    assert listed == [ids[0], *ids[3:], new, new + 1] and f"runs {ids[1]}, {ids[2]} deleted" in line

    # a run deleted under an incremental read: the list is read whole, not kept with the deleted run in it
    with History(history_path(store), create=False) as other:
        delete_run(other, ids[0])
    lines: list[str] = []
    history.changed_elsewhere.connect(lines.append)
    with History(history_path(store), create=False) as mine:
        last = history.own(_keep(mine, dataset, 9))
    history.list_runs(whole=False)
    qtbot.waitUntil(lambda: [r.id for r in history.runs] == [*ids[3:], new, new + 1, last], timeout=10_000)
    assert lines == [f"The run history was changed by another process (run {ids[0]} deleted); the list is read again."]

    history.shutdown()  # the window closed: a run announced late reads nothing
    assert history.list_runs(whole=False) is None
