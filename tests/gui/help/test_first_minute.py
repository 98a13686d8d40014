"""A first minute that teaches: an empty query box offers the store's judged questions; one pick
gives the ranking with its gold marked, and a "why not" of a gold session it missed."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.evaluation.judged import session_docid
from memsense_gui.views.dock import DockId
from tests.gui.window.test_cases import _questions_file


def _window_with_questions(qtbot, make_window, tmp_path):
    w = make_window(open_store=False)
    w.ctx.question_sets.set_path(_questions_file(tmp_path))
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=10_000):
        w.stores.open_store(str(w.ctx.home / "stores" / "fake"))
    return w


def test_down_in_the_empty_query_box_lists_the_judged_questions_and_one_pick_ranks(qtbot, make_window, tmp_path):
    w = _window_with_questions(qtbot, make_window, tmp_path)
    picker = w.picker
    assert len(picker.questions) == 10 and picker.button.isEnabled() and picker.button.text() == "10 questions"
    w.query_edit.clear()
    w.query_edit.setFocus()
    qtbot.keyClick(w.query_edit, Qt.Key.Key_Down)
    assert picker.list.isVisible() and picker.list.count() == 10
    qtbot.keyClick(picker.list, Qt.Key.Key_Down)  # the second question
    q = picker.list.currentItem().data(Qt.ItemDataRole.UserRole + 1)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        qtbot.keyClick(picker.list, Qt.Key.Key_Return)
    assert not picker.list.isVisible()
    assert w.query_edit.text() == q.text and w.user_combo.currentText() == q.user_id
    gold = frozenset(session_docid(q.user_id, s) for s in q.gold_sessions)
    assert w.ctx.session.gold == gold
    ranking = w.ctx.session.ranking
    returned = {ranking.pool.chunks[r.index].session_id for r in ranking.selected_rows}
    missed = gold - returned
    if missed:  # a gold session not returned is pinned in Why not?, and the panel is up
        qtbot.waitUntil(lambda: bool(w.ctx.session.pins), timeout=5_000)
        pinned = w.ctx.session.pins[0]
        assert pinned.rsplit(":", 1)[0] in missed and w.showing(DockId.WHY_NOT)
        qtbot.waitUntil(lambda: "not returned" in w.statusBar().currentMessage(), timeout=2_000)
    else:
        qtbot.waitUntil(lambda: "Every gold session" in w.statusBar().currentMessage(), timeout=2_000)
        assert not w.ctx.session.pins


def test_a_missed_gold_session_gets_its_why_not(qtbot, make_window, tmp_path):
    w = _window_with_questions(qtbot, make_window, tmp_path)
    picker = w.picker
    chased = 0
    for row in range(picker.list.count()):  # every question picked by a click: missed gold is pinned
        for pin in list(w.ctx.session.pins):
            w.ctx.session.unpin(pin)
        w.query_edit.clear()
        qtbot.mouseClick(picker.button, Qt.MouseButton.LeftButton)
        assert picker.list.isVisible()
        item = picker.list.item(row)
        q = item.data(Qt.ItemDataRole.UserRole + 1)
        with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
            qtbot.mouseClick(picker.list.viewport(), Qt.MouseButton.LeftButton, pos=picker.list.visualItemRect(item).center())
        ranking = w.ctx.session.ranking
        returned = {ranking.pool.chunks[r.index].session_id for r in ranking.selected_rows}
        missed = {session_docid(q.user_id, s) for s in q.gold_sessions} - returned
        qtbot.waitUntil(lambda m=bool(missed): bool(w.ctx.session.pins) == m, timeout=5_000)
        if missed:
            assert w.ctx.session.pins[0].rsplit(":", 1)[0] in missed
            chased += 1
    assert chased > 0  # the synthetic questions miss gold sessions: each got its "why not"
    assert QApplication.activePopupWidget() is None


def test_no_questions_about_this_store_say_so(qtbot, make_window):
    w = make_window()  # the demo questions are about demo-* users, not this store's
    assert not w.picker.questions and not w.picker.button.isEnabled()
    assert "no judged question" in w.picker.button.toolTip()
    w.query_edit.clear()
    qtbot.keyClick(w.query_edit, Qt.Key.Key_Down)
    assert not w.picker.list.isVisible()
