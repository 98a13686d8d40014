"""The app's shared runs (issue 38): two users, each with their own settings file, keep runs in one
PostgreSQL database and each lists the other's by name; the password is never saved; a reader
lists the runs but its rename is refused (`memsense_gui.state.shared_runs`, Settings > Shared runs…)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from tests.evaluation.test_shared_runs_pg import team_db  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # starts PostgreSQL


def _history(tmp_path, qtbot, user: str, name: str, url: str, password: str = ""):
    from memsense_gui.state.run_history import RunHistory
    from memsense_gui.state.shared_runs import SharedRuns

    settings = QSettings(str(tmp_path / f"{user}.ini"), QSettings.Format.IniFormat)
    shared = SharedRuns(settings)
    address = url.replace(f"{user}@", f"{user}:{password}@") if password else url
    shared.set(address, "", name)
    history = RunHistory(lambda: (str(tmp_path / "store"), "test-model"), shared=shared)
    return history, settings


def _keep(history, qtbot, dataset: str, value: float) -> int:
    """Keep a run as the app does: through the store's workspace, which asks the app's shared runs where to."""
    from core.config import Config
    from core.evaluation.workspace import Workspace

    def no_recall(*_):
        raise AssertionError("keeping a run recalls nothing")

    shared = history.shared
    ws = Workspace(str(history.locate()[0]), no_recall, [], model="test-model",
                   shared_runs=lambda: (shared.url(), shared.made_by()))
    results = {"memsense": {f"q{i}": {"recall_all@4": value} for i in range(4)}}
    with qtbot.waitSignal(history.recorded, timeout=30_000) as got:
        history.record("eval", lambda task: ws.keep("eval", dataset, {"memsense": Config()}, results,
                                                    {"memsense": {"recall_all@4": value}}))
    return got.args[0]


def _listed(history, qtbot) -> dict[int, str]:
    with qtbot.waitSignal(history.listed, timeout=30_000) as got:
        history.list_runs()
    return {r.id: r.made_by for r in got.args[0]}


def test_two_users_with_their_own_settings_see_each_others_runs(team_db, tmp_path, qtbot):  # noqa: F811
    dataset = tmp_path / "questions.json"
    dataset.write_text('{"questions": []}')
    alice, alice_settings = _history(tmp_path, qtbot, "alice", "Alice", team_db("alice"), password="pw-never-kept")
    bob, _ = _history(tmp_path, qtbot, "bob", "", team_db("bob"))
    reader, _ = _history(tmp_path, qtbot, "reader", "", team_db("reader"))
    try:
        a = _keep(alice, qtbot, str(dataset), 0.5)
        b = _keep(bob, qtbot, str(dataset), 0.25)
        import getpass

        from memsense_gui.models.history import KIND, RunsModel

        for history in (alice, bob, reader):
            seen = _listed(history, qtbot)
            assert (seen[a], seen[b]) == ("Alice", getpass.getuser())
        with qtbot.waitSignal(reader.listed, timeout=30_000) as got:
            reader.list_runs()
        model = RunsModel()
        model.set_runs(got.args[0], "recall_all@4")
        kinds = {model.run_at(r).id: model.display(r, KIND) for r in range(model.rowCount())}
        assert (kinds[a], kinds[b]) == ("eval · Alice", f"eval · {getpass.getuser()}")  # the History view's Kind
        assert alice.shown().startswith(team_db("alice")) and "Alice" in alice.shown()
        alice_settings.sync()
        text = (tmp_path / "alice.ini").read_text()
        assert "pw-never-kept" not in text and team_db("alice").split("//")[1] in text  # saved without it
        assert alice.shared.password == "pw-never-kept"  # this session's, for the connection
        with qtbot.waitSignal(reader.failed, timeout=30_000) as refused:
            reader.name(a, name="mine")
        assert "may only read there" in refused.args[0]
        assert _listed(alice, qtbot)[a] == "Alice"
    finally:
        for history in (alice, bob, reader):
            history.shutdown()
