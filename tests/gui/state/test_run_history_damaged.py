"""The app's run history: one damaged run never hides the others."""
from __future__ import annotations

from tests.evaluation.test_experiments import five_runs  # noqa: F401 - the fixture
from core.evaluation.history import history_path


def test_one_damaged_run_never_hides_the_others_in_the_app(five_runs):  # noqa: F811 - the fixture
    """The app lists the runs that read and names the damaged one (the CLI's `history` refuses in one line)."""
    import sqlite3

    from memsense_gui.state.run_history import read_runs

    store, _, ids = five_runs
    path = history_path(store)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE runs SET results = ? WHERE id = ?", ("{not json", ids[1]))
    db.close()
    runs, _names, damaged, every_id = read_runs(path)
    assert [r.id for r in runs] == [i for i in ids if i != ids[1]]
    assert len(damaged) == 1 and f"run {ids[1]}" in damaged[0] and "\n" not in damaged[0]
    assert every_id == ids  # the damaged run is still counted as kept
