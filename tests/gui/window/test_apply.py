"""Apply a suggestion through the real window: its settings diff and rank movement first, then
one step that Ctrl+Z undoes and Ctrl+Shift+Z redoes."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config import Config
from core.config.presets import BUILTIN
from core.rank.rerank import rerank
from core.rank.whatif import apply_change
from memsense_gui.views.apply_diff import rank_moves, settings_diff
from memsense_gui.views.dock import DockId
from tests.gui.fixtures import panel_shows, result_ids, undo_keys


def test_a_what_would_it_take_change_applies_with_its_diff_and_undoes(qtbot, ranked_window):
    w = ranked_window
    session, panel = w.ctx.session, w.whynot_panel
    current = w.ctx.current
    target = next(c.memory_id for c in session.pool.chunks
                  if c.kind == "session" and c.memory_id not in session.ranking.result_ids)
    w.raise_dock(DockId.WHY_NOT)
    session.pin(target)
    model = panel.whatif_model
    qtbot.waitUntil(lambda: model.answer is not None and model.answer.memory_id == target, timeout=20_000)
    n = model.rowCount()
    assert n > 0 and (f"{n} single changes" if n > 1 else "1 single change,") in panel.whatif_label.text()
    assert not panel.whatif_apply.isEnabled()
    panel.whatif_view.selectRow(0)
    change = model.change(0)
    before, shown = current.config, result_ids(w)
    qtbot.mouseClick(panel.whatif_apply, Qt.MouseButton.LeftButton)
    dialog = w.applying.dialog
    after = apply_change(before, change.knob, change.value)
    assert [dialog.settings_table.item(r, 0).text() for r in range(dialog.settings_table.rowCount())] == \
        [name for name, _, _ in settings_diff(before, after)] == [change.knob]
    moves = rank_moves(session.ranking, rerank(session.pool, after))
    assert dialog.moves_table.rowCount() == len(moves)
    assert current.config == before  # nothing applied before Apply
    qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    assert current.config == after and panel_shows(w.tuning, after)
    assert target in result_ids(w) and result_ids(w).index(target) + 1 == change.rank
    undo_keys(qtbot, w)
    assert current.config == before and result_ids(w) == shown
    undo_keys(qtbot, w, redo=True)
    assert current.config == after


def test_cancel_changes_nothing_and_a_preset_cancelled_is_not_shown_as_chosen(qtbot, ranked_window):
    w = ranked_window
    combo = w.tuning.preset_combo
    combo.setCurrentIndex(combo.findText("bm25_only"))
    combo.activated.emit(combo.findText("bm25_only"))
    dialog = w.applying.dialog
    changed = {name for name, _, _ in settings_diff(Config(), BUILTIN["bm25_only"])}
    assert {dialog.settings_table.item(r, 0).text() for r in range(dialog.settings_table.rowCount())} == changed
    dialog.reject()
    assert w.ctx.current.config == Config() and combo.currentText() == "memsense" and w.ctx.current.stack.count() == 0


def test_imported_settings_are_one_undoable_step(qtbot, ranked_window, tmp_path):
    w = ranked_window
    path = tmp_path / "mine.json"
    path.write_text('{"lambda": 0.4, "rrfK": 33}')
    assert w.exports.import_config(path)
    assert w.ctx.current.config.mmr_lambda == 0.4 and w.ctx.current.stack.count() == 1
    undo_keys(qtbot, w)
    assert w.ctx.current.config == Config() and panel_shows(w.tuning, Config())


def test_the_count_of_changes_is_worded_for_one_and_for_many(qtbot):
    from core.rank.whatif import Change, WhatIf
    from memsense_gui.views.why_not import WhyNotPanel

    panel = WhyNotPanel()
    qtbot.addWidget(panel)
    one = Change("lambda", 0.5, 0.78, 3, ())
    for changes, words in (((one,), "1 single change, checked"), ((one, one._replace(knob="rrfK")), "2 single changes")):
        panel.whatif_pending("u:S1")
        panel.show_whatif("u:S1", WhatIf("u:S1", changes, ""))
        assert words in panel.whatif_label.text() and "1 single changes" not in panel.whatif_label.text()
