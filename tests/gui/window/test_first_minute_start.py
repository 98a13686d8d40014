"""The first minute (issue 36): a first start opens the demo in the Inspect layout with its first
question run and its gold sessions starred; each layout says what it is for, in a line that can
be dismissed (kept in the settings) and brought back from the View menu."""
from __future__ import annotations

from PySide6.QtWidgets import QToolButton

from core.evaluation.judged import session_docid
from memsense_gui.models.results import ResultsModel
from memsense_gui.state import paths
from memsense_gui.window.layout_notes import FIRST_STEPS, dismissed_key
from memsense_gui.window.layouts import PLANS, Layout
from tests.gui.window.test_cases import _questions_file


def test_a_first_start_runs_the_first_question_with_its_gold_starred(qtbot, make_window, tmp_path, app_home):
    w = make_window(open_store=False)
    w.ctx.question_sets.set_path(_questions_file(tmp_path))  # the demo's questions, for the fake engine's users
    assert not w.ctx.settings.contains("store/last")  # no settings yet
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=20_000):
        w.stores.start()  # the demo store is built, opened, and its first question runs
    assert w.ctx.location == str(paths.demo_store_dir(app_home))
    assert w.layouts.current == Layout.INSPECT and w.results.isVisible()
    q = w.picker.questions[0]
    assert w.query_edit.text() == q.text and w.user_combo.currentText() == q.user_id
    assert w.ctx.session.gold == frozenset(session_docid(q.user_id, s) for s in q.gold_sessions)
    model = w.results.model
    starred = {model.chunk(r).session_id for r in range(model.rowCount())
               if model.index(r, ResultsModel.SESSION).data().startswith("★")}
    assert starred and starred <= w.ctx.session.gold


def test_a_later_start_does_not_run_a_question_of_its_own(qtbot, make_window, tmp_path):
    w = make_window()  # a store was opened: the settings name it
    ran: list[bool] = []
    w.picker.run_first = lambda: ran.append(True) or True
    w.query_edit.clear()
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000):
        w.stores.start()
    qtbot.wait(50)
    assert ran == [] and w.ctx.session.ranking is None


def test_each_layout_says_what_it_is_for_until_dismissed(qtbot, make_window):
    w = make_window()
    notes = w.layout_notes
    w.resize(1280, 720)
    bar = w.menuBar()
    qtbot.waitUntil(lambda: notes.line.width() > 300, timeout=2_000)
    late = bar.addMenu("&Later")  # a menu added once the window is laid out (as Diagnose is): not behind »
    for layout in Layout:
        w.layouts.switch(layout)
        assert notes.shown, layout
        text = notes.line.full
        assert layout.label in text and PLANS[layout].purpose in text and FIRST_STEPS[layout] in text
        # beside the menus (no height taken from the views), never over them, elided with the whole line as tip
        qtbot.waitUntil(lambda: notes.line.width() > 300 and notes.line.geometry().left()
                        > max(bar.actionGeometry(a).right() for a in bar.actions()), timeout=2_000)
        assert notes.line.geometry().right() <= bar.width()
        assert notes.line.toolTip() == text and notes.line.label.text()
        later = bar.actionGeometry(late.menuAction())
        assert later.width() > 0 and later.right() < notes.line.geometry().left()
        extension = bar.findChild(QToolButton, "qt_menubar_ext_button")
        assert extension is None or extension.isHidden()  # no menu behind the bar's »
    w.layouts.switch(Layout.EVALUATE)
    notes.line.close_button.click()
    assert not notes.shown and w.ctx.settings.value(dismissed_key(Layout.EVALUATE)) in (True, "true")
    w.layouts.switch(Layout.INSPECT)
    assert notes.shown  # dismissed for Evaluate only
    w.layouts.switch(Layout.EVALUATE)
    assert not notes.shown  # kept, also over the layout's saved state

    again = make_window()  # a new window reads the dismissal from the settings
    again.layouts.switch(Layout.EVALUATE)
    assert not again.layout_notes.shown
    assert again.layout_notes.show_action in again.menus.view.actions()
    again.layout_notes.show_action.trigger()  # View > Show the layouts' notes
    assert again.layout_notes.shown and not again.ctx.settings.contains(dismissed_key(Layout.EVALUATE))
