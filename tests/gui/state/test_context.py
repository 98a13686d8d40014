"""AppContext without a window: errors become `error_raised`, never exceptions; files that
cannot be read are reported and kept as they are."""
from __future__ import annotations

from core.errors import MemsenseError
from memsense_gui.state import paths
from memsense_gui.state.context import AppContext


def make(qtbot, home) -> tuple[AppContext, list]:
    ctx = AppContext(home, paths.settings(home))
    raised = []
    ctx.error_raised.connect(lambda exc, where: raised.append((str(exc), where)))
    return ctx, raised


def test_attempt_reports_a_failure_and_returns_false(qtbot, app_home):
    ctx, raised = make(qtbot, app_home)
    assert ctx.attempt(lambda: None, "Nothing")

    def fail():
        raise MemsenseError("the file is not TOML; save it as .toml")

    assert not ctx.attempt(fail, "Importing settings")
    assert raised == [("the file is not TOML; save it as .toml", "Importing settings")]


def test_a_corrupt_presets_file_is_reported_once_the_loop_runs_and_kept(qtbot, app_home):
    (app_home / "presets.json").write_text("{not json")
    ctx, raised = make(qtbot, app_home)
    qtbot.waitUntil(lambda: bool(raised), timeout=2000)
    assert raised[0][1] == "Your presets"
    assert (app_home / "presets.json").read_text() == "{not json"
    ctx.presets.save("fresh", ctx.current.config)
    assert (app_home / "presets.recovered.json").exists()


def test_a_corrupt_judged_set_is_reported_and_new_grades_go_beside_it(qtbot, app_home):
    location = str(app_home / "stores" / "demo")
    path = paths.judged_file(app_home, location)
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2")
    ctx, raised = make(qtbot, app_home)
    ctx.open_judgments(location)
    assert len(raised) == 1 and "demo.recovered.json" in raised[0][1]
    assert ctx.judgments.path == path.with_name("demo.recovered.json")
    assert path.read_text() == "[1, 2"
    assert ctx.current_grades() == {}  # no query on screen yet


def test_the_engines_the_app_is_tested_and_benchmarked_with_satisfy_the_protocol():
    from tests.fixtures import assert_recall_engine
    from tests.gui.fixtures import FakeEngine
    from tools.bench_gui import SyntheticEngine

    for engine in (FakeEngine, SyntheticEngine):
        assert_recall_engine(engine)
