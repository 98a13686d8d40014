"""The main window through qtbot, over a fake engine (synthetic pools): the whole flow."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel

from core import config as config_io
from core.config import Config
from core.recall.query_text import MAX_QUERY_CHARS
from core.rank.rerank import rerank
from memsense_gui.models.compare import CompareModel
from memsense_gui.models.pins import PinsModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from memsense_gui.state import paths
from memsense_gui.window.main_window import MainWindow
from memsense_gui.window.menus import SHORTCUTS
from tests.gui.fixtures import FakeEngine, error_boxes, fake_builder, result_ids
from memsense_gui.views.dock import DockId


def test_full_flow(qtbot, make_window, tmp_path):
    window = make_window()
    assert [window.user_combo.itemText(i) for i in range(window.user_combo.count())] == list(FakeEngine.USERS)

    # ask: type and press Enter
    window.query_edit.setFocus()
    qtbot.keyClicks(window.query_edit, "where did they travel")
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=5000):
        qtbot.keyClick(window.query_edit, Qt.Key.Key_Return)
    engine = window.engines[-1]
    pool = window.ctx.session.pool
    assert engine.recalls == [("synth-a", "where did they travel")]
    assert result_ids(window) == rerank(pool, Config()).result_ids
    window.raise_dock(DockId.CANDIDATE_POOL)
    assert window.pool_panel.model.rowCount() >= 32 and window.matrix_panel.model.rowCount() >= 32

    # move a slider: re-ranks the cached pool (no new recall), ranks change, movement shows
    before = result_ids(window)
    lam = next(v for v in (0.0, 0.2, 1.0, 0.5) if rerank(pool, replace(Config(), mmr_lambda=v)).result_ids != before)
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=2000):
        window.tuning.set_knob("mmr_lambda", lam)
    window.ctx.current.flush()
    after = result_ids(window)
    assert after == rerank(pool, replace(Config(), mmr_lambda=lam)).result_ids != before
    assert len(engine.recalls) == 1
    moved = [window.results.model.index(r, ResultsModel.MOVED).data() for r in range(len(after))]
    assert any(m and m[0] in "▲▼" or m == "new" for m in moved)
    for r, mid in enumerate(after):
        if mid in before:
            assert window.results.model.index(r, ResultsModel.MOVED).data(RAW_ROLE) == before.index(mid) - r

    # why not: search, pin, see the fate follow the settings
    dropped = next(m for m in before if m not in after) if set(before) != set(after) else pool.chunks[-1].memory_id
    panel = window.whynot_panel
    window.queries.focus_why_not()
    qtbot.waitUntil(lambda: panel.search_model.chunk_count > 0, timeout=3000)
    panel.search.setText(dropped.split(":", 1)[1])
    assert panel.search_model.rowCount() >= 1
    panel.search_view.selectRow(0)
    assert panel.search_view.selectionModel().selectedRows()[0].data(ID_ROLE) == dropped
    qtbot.mouseClick(panel.pin_button, Qt.MouseButton.LeftButton)
    assert window.ctx.session.pins == (dropped,)
    fate_now = panel.pins_model.index(0, PinsModel.REASON).data()
    assert fate_now == window.ctx.session.ranking.fate(dropped).reason
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=2000):
        window.tuning.apply_preset("memsense")
    assert panel.pins_model.index(0, PinsModel.STATUS).data(RAW_ROLE) == window.ctx.session.ranking.fate(dropped).status
    assert window.ctx.session.ranking.fate(dropped).status == "selected" or dropped not in before

    # presets: save one and compare it with the built-in side by side
    window.tuning.set_knob("mmr_lambda", lam)
    window.ctx.current.flush()
    assert window.tuning.save_preset("mine")
    window.comparisons.compare("memsense", "mine")
    cm = window.compare_panel.model
    assert cm.rowCount() == 4
    b_ids = [cm.a.result_ids, cm.b.result_ids]
    assert b_ids == [rerank(pool, Config()).result_ids, rerank(pool, replace(Config(), mmr_lambda=lam)).result_ids]
    for r, mid in enumerate(b_ids[1]):
        expected = b_ids[0].index(mid) - r if mid in b_ids[0] else None
        assert cm.index(r, CompareModel.B_FROM_A).data(RAW_ROLE) == expected

    # export settings and load them back identical (TOML and JSON); results; plots
    window.tuning.set_knob("route_weights.lexical", 2.25)
    window.ctx.current.flush()
    for ext in ("toml", "json"):
        path = tmp_path / f"settings.{ext}"
        assert window.exports.export_config(path)
        assert config_io.load(path) == window.ctx.current.config
    assert window.exports.import_config(tmp_path / "settings.toml")
    assert window.ctx.current.config.weight("lexical") == 2.25
    assert window.exports.export_results(tmp_path / "results.json")
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [r["memory_id"] for r in doc["results"]] == window.ctx.session.ranking.result_ids
    assert doc["config"]["lambda"] == lam and "explain" in doc["results"][0]
    for which in ("contributions", "mmr", "matrix"):
        for ext in ("png", "svg"):
            assert window.exports.export_plot(which, tmp_path / f"{which}.{ext}")
            assert (tmp_path / f"{which}.{ext}").stat().st_size > 500
    assert not error_boxes(window)


def test_selecting_a_result_fills_chunk_explain_and_turn_support(qtbot, ranked_window):
    w = ranked_window
    w.results.view.selectRow(1)
    mid = w.ctx.session.ranking.result_ids[1]
    assert w.chunk_panel.memory_id == mid
    assert mid in w.chunk_panel.browser.toPlainText()
    w.raise_dock(DockId.EXPLAIN)
    assert w.explain_panel.model.path_index("memsense_result", "explain", "mmr", "mmr_score").isValid()
    assert w.explain_panel.model.path_index("status").isValid()
    row = w.ctx.session.ranking.selected_rows[1]
    w.raise_dock(DockId.TURN_SUPPORT)
    assert w.turns_panel.model.rowCount() == row.supporting_turn_count
    # the pool and the matrix show the same chunk
    w.raise_dock(DockId.CANDIDATE_POOL)
    assert w.pool_panel.view.selectionModel().selectedRows()[0].data(ID_ROLE) == mid
    assert w.matrix_panel.model.focused == mid


def test_selecting_a_pool_candidate_explains_its_fate(qtbot, ranked_window):
    w = ranked_window
    w.raise_dock(DockId.CANDIDATE_POOL)
    model = w.pool_panel.model
    r = next(r for r in range(model.rowCount()) if model.fate(r).status not in ("selected", "fallback_fill"))
    mid = model.memory_id(r)
    w.raise_dock(DockId.EXPLAIN)
    w.inspector.focus_chunk(mid)
    assert w.explain_panel.model.path_index("reason").isValid()
    assert w.explain_panel.model.path_index("route_hits").isValid()
    w.raise_dock(DockId.CHUNK)
    assert w.ctx.session.ranking.fate(mid).reason in w.chunk_panel.browser.toPlainText()


def test_keyboard_shortcuts(qtbot, ranked_window):
    from memsense_gui.window.failures_actions import install_failures

    w = ranked_window
    install_failures(w)  # as the app does: its Find a fix shortcut is in the table too
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=2000)
    w.results.view.setFocus()
    qtbot.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert w.query_edit.hasFocus()
    w.results.view.clearSelection()
    qtbot.keyClick(w, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(w, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert w.results.view.selectionModel().selectedRows()[0].row() == 1
    qtbot.keyClick(w, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert w.results.view.selectionModel().selectedRows()[0].row() == 0
    with qtbot.waitSignal(w.ctx.recall_started):
        qtbot.keyClick(w, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not w.ctx.engine_runner.busy, timeout=3000)
    dialog = w.show_shortcuts()
    texts = {dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())}
    assert {"Ctrl+L", "Alt+Down", "Alt+Up", "Return / Ctrl+Return"} <= texts
    bound = {a.shortcut().toString() for a in w.actions() if not a.shortcut().isEmpty()}
    for keys, _ in SHORTCUTS:
        for key in keys.split(" / "):
            assert key == "Return" or key in bound, key
    dialog.close()


def test_errors_become_dialogs_that_say_what_to_do(qtbot, make_window, tmp_path):
    w = make_window()
    bad = tmp_path / "bad.toml"
    bad.write_text('lambda = 3.5\nrrfK = -1\n')
    with qtbot.waitSignal(w.ctx.error_reported) as blocker:
        assert not w.exports.import_config(bad)
    assert "lambda" in blocker.args[0] and "above the maximum" in blocker.args[0]
    assert "rrf_k" in blocker.args[0]
    assert error_boxes(w)
    with qtbot.waitSignal(w.ctx.error_reported) as blocker:
        assert not w.exports.export_config(tmp_path / "settings.yaml")
    assert ".toml or .json" in blocker.args[0]
    with qtbot.waitSignal(w.ctx.error_reported):
        assert not w.exports.export_results(tmp_path / "r.json")  # no query run yet
    assert w.ctx.current.config == Config()  # nothing changed by the failures


def test_a_store_that_cannot_open_is_a_dialog_and_the_window_stays(qtbot, make_window):
    w = make_window(open_store=False, fail_open="the store /x is open in another process; close the other app")
    with qtbot.waitSignal(w.ctx.error_reported, timeout=5000) as blocker:
        w.stores.open_store("/x")
    assert "another process" in blocker.args[0]
    assert w.ctx.engine is None and "No store open" in w.statusBar().currentMessage()
    w.query_edit.setText("anything")
    assert w.queries.run_query() is None  # asks to open a store instead


def test_a_long_paste_is_kept_whole_up_to_the_query_limit_and_a_longer_one_is_said_to_be_cut(qtbot, make_window):
    """Found by a walkthrough: a 100,000-character paste was silently cut to 32,767 (Qt's default)."""
    w = make_window()
    clipboard = QApplication.clipboard()
    w.query_edit.clear()
    clipboard.setText("trip " * 10_000)  # 50,000 characters
    w.query_edit.paste()
    assert len(w.query_edit.text()) == 50_000 and "holds at most" not in w.statusBar().currentMessage()
    w.query_edit.clear()
    clipboard.setText("x" * (MAX_QUERY_CHARS + 5_000))
    w.query_edit.paste()
    assert len(w.query_edit.text()) == MAX_QUERY_CHARS
    assert f"holds at most {MAX_QUERY_CHARS:,} characters" in w.statusBar().currentMessage()


def test_an_unexpected_failure_in_recall_is_a_dialog_not_a_crash(qtbot, make_window, monkeypatch):
    w = make_window()
    monkeypatch.setattr(w.engines[-1], "recall", lambda u, q, depth=None: 1 / 0)
    w.query_edit.setText("boom")
    with qtbot.waitSignal(w.ctx.error_reported, timeout=5000) as blocker:
        w.queries.run_query()
    assert "ZeroDivisionError" in blocker.args[0] and "Nothing stored was changed" in blocker.args[0]
    assert error_boxes(w)[0].detailedText()


def test_open_question_marks_gold_sessions(qtbot, make_window):
    w = make_window()
    pool = FakeEngine("x").pool("synth-b", "which pets")
    top = rerank(pool, Config()).result_ids
    gold_session = pool.chunks[pool.index_of(top[1])].session_id
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=5000):
        w.queries.open_question("synth-b", "which pets", {gold_session})
    assert w.user_combo.currentText() == "synth-b" and w.query_edit.text() == "which pets"
    assert w.results.model.index(1, ResultsModel.SESSION).data().startswith("★")
    assert not w.results.model.index(0, ResultsModel.SESSION).data().startswith("★")
    starred = [w.matrix_panel.model.index(r, w.matrix_panel.model.CHUNK).data()
               for r in range(w.matrix_panel.model.rowCount())]
    assert any(s.startswith("★") for s in starred)
    with qtbot.waitSignal(w.ctx.error_reported):
        w.queries.open_question("nobody", "q", set())


def test_add_view_docks_a_widget(qtbot, make_window):
    w = make_window(open_store=False)
    dock = w.add_view(DockId.EVALUATION, QLabel("evaluation here"))
    assert w.docks[DockId.EVALUATION] is dock and dock.view.text() == "evaluation here"
    assert dock.toggleViewAction() in w.menus.view.actions()


def test_docks_are_found_by_id_under_the_object_names_saved_layouts_use(qtbot, make_window):
    w = make_window(open_store=False)
    names = {which: dock.objectName() for which, dock in w.docks.items()}
    assert names == {which: f"dock-{which.value}" for which in w.docks}
    assert set(names.values()) == {"dock-tuning", "dock-cases", "dock-chunk", "dock-explain", "dock-turn-support",
                                   "dock-why-not", "dock-route-ranks", "dock-candidate-pool", "dock-mmr-trace",
                                   "dock-compare"}  # as in layouts saved before docks had ids
    assert w.dock(DockId.EVALUATION) is None and not w.showing(DockId.EVALUATION)
    w.raise_dock(DockId.WHY_NOT)
    assert w.showing(DockId.WHY_NOT) == w.isVisible() and w.docks[DockId.WHY_NOT].windowTitle() == "Why not?"


def test_dark_appearance_toggles_and_is_remembered(qtbot, make_window, app_home):
    w = make_window(open_store=False)
    w.set_dark(True)
    assert QApplication.instance().palette().window().color().lightness() < 80
    assert w.ctx.settings.value("view/dark") in (True, "true")
    w.set_dark(False)
    assert QApplication.instance().palette().window().color().lightness() > 200


def test_layout_store_and_query_are_remembered(qtbot, make_window, app_home):
    w = make_window()
    w.query_edit.setText("remember me")
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=5000):
        w.queries.run_query()
    w.docks[DockId.COMPARE].raise_()
    w.close()
    settings = paths.settings(app_home)
    assert settings.value("store/last").endswith("fake")
    Path(settings.value("store/last")).mkdir(parents=True, exist_ok=True)
    again = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc),
                       store_builder=fake_builder())
    qtbot.addWidget(again)
    again.restore_layout()
    again.show()
    with qtbot.waitSignal(again.ctx.ranking_updated, timeout=5000):
        again.stores.start()  # reopens the last store and re-runs the last query
    assert again.ctx.location.endswith("fake") and again.query_edit.text() == "remember me"
    with qtbot.waitSignal(again.ctx.chunks_loaded, timeout=5000):
        pass
    # the answer first: the user's whole chunk list (slow for a big user) is read after it
    assert again.ctx.engine.calls == ["recall", "chunks"]
    assert len(again.inspector.user_chunks) == len(again.ctx.engine.chunks(again.queries.user_id))


def test_first_run_builds_the_demo_store_then_opens_it(qtbot, app_home):
    built = []

    def builder(dataset, location, **kw):
        built.append((Path(dataset).name, kw["mode"]))
        return fake_builder()(dataset, location, **kw)

    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc),
                   store_builder=builder)
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.ctx.store_opened, timeout=5000) as blocker:
        w.stores.start()
    assert built == [("demo-conversations.jsonl", "hybrid")]
    assert blocker.args[0] == str(paths.demo_store_dir(app_home))


def test_a_corrupt_presets_file_is_reported_and_kept(qtbot, app_home):
    (app_home / "presets.json").write_text("{not json")
    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.ctx.error_reported, timeout=2000) as blocker:
        pass
    assert "presets" in blocker.args[0]
    assert (app_home / "presets.json").read_text() == "{not json"  # never overwritten
    assert w.tuning.save_preset("fresh")


def test_every_builtin_preset_ranks_without_errors(qtbot, ranked_window):
    from core.config.presets import BUILTIN
    from memsense_gui.plots.contributions import stacks

    w = ranked_window
    for name, cfg in BUILTIN.items():
        if cfg == w.ctx.current.config:  # the settings on screen already: nothing changes, nothing to re-rank
            steps = w.ctx.current.stack.count()
            with qtbot.assertNotEmitted(w.ctx.current.changed):
                w.tuning.apply_preset(name)
            assert w.ctx.current.stack.count() == steps
            continue
        with qtbot.assertNotEmitted(w.ctx.error_reported), qtbot.waitSignal(w.ctx.ranking_updated, timeout=2000):
            w.tuning.apply_preset(name)
        assert w.ctx.current.config == cfg
        ranking = w.ctx.session.ranking
        assert w.results.model.rowCount() == len(ranking.selection.order)
        widths = stacks(ranking).widths
        assert (widths >= 0).all()
        for pos, row in enumerate(ranking.selected_rows):  # the bar parts add up to final_score
            assert abs(widths[pos].sum() - row.final_score) <= 2e-6


def test_every_route_weight_at_zero_says_why_the_results_are_empty(qtbot, make_window):
    window = make_window()
    window.query_edit.setText("where did they travel")
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=5000):
        qtbot.keyClick(window.query_edit, Qt.Key.Key_Return)
    off = Config().with_weights(**{route: 0.0 for route in Config().route_weights})
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=2000):
        window.ctx.current.apply(off, "test settings")
    assert result_ids(window) == []
    assert "Every route weight is 0" in window.statusBar().currentMessage()
    assert not error_boxes(window)  # a message, not a dialog on every slider tick


def test_first_run_window_fits_the_screen(qtbot, make_window, app_home):
    """With no saved geometry the default size is shrunk to the screen (a 1280x720 laptop)."""
    from memsense_gui.window.main_window import DEFAULT_SIZE

    w = make_window(open_store=False)
    w.ctx.settings.remove("window/geometry")
    w.restore_layout()
    screen = w.screen().availableGeometry()
    assert screen.width() < DEFAULT_SIZE[0] or screen.height() < DEFAULT_SIZE[1]  # the offscreen screen is smaller
    assert w.width() == min(DEFAULT_SIZE[0], screen.width())
    assert w.height() == min(DEFAULT_SIZE[1], screen.height())


def _after_a_query(qtbot, app_home, engine_class):
    """A window on a fake store of `engine_class`, once a query is answered."""
    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: engine_class(loc))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.ctx.store_opened, timeout=5000):
        w.stores.open_store(str(app_home / "fake"))
    w.query_edit.setText("anything")
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=5000):
        w.queries.run_query()
    return w


def test_a_recall_note_of_the_engine_shows_in_the_status_bar(qtbot, app_home):
    class SlowStoreEngine(FakeEngine):
        def note(self, user_id):
            return f"user {user_id!r} has no columns file (an older store), so it opens slowly"

    w = _after_a_query(qtbot, app_home, SlowStoreEngine)
    assert w.statusBar().currentMessage() == "User 'synth-a' has no columns file (an older store), so it opens slowly"


def test_a_recall_shows_its_time_and_steps_in_the_status_bar(qtbot, app_home):
    w = _after_a_query(qtbot, app_home, FakeEngine)
    pool = w.ctx.session.pool
    assert re.fullmatch(rf"Recalled {pool.size} chunks in \d+(\.\d)? ms( \(.*\))?", w.statusBar().currentMessage())


def test_recall_timing_reads_tenths_below_ten_ms():
    from memsense_gui.window.query_actions import recall_timing

    assert recall_timing(7.34, {"embed": 5.21, "dense": 0.04, "rank_dense": 12.6}) == \
        " in 7.3 ms (embed 5.2, dense 0.0, rank dense 13)"
    assert recall_timing(250.0, {}) == " in 250 ms"
