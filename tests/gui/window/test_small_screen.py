"""The window on a small screen (1280×720) and a common one (1920×1080): the size asked for is
honoured, the main parts are on screen side by side without overlapping, and enough sliders
and result rows show without scrolling to tune by eye."""
from __future__ import annotations

import itertools
import re

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QWidget

from memsense_gui.models.results import ResultsModel
from memsense_gui.window.evaluation import install_evaluation
from memsense_gui.views.dock import DockId
from memsense_gui.window.layouts import Layout

FRAME = 40
"""Room left for a window manager's title bar and border on a 1280×720 screen."""
SLIDERS_AT = {(1280, 720): 8, (1920, 1080): 16}
"""Sliders fully visible without scrolling. At 1280×720: 8 = the four MMR knobs, the two fusion
knobs and both turn-support knobs, every knob but the eight route weights (their own group,
below, one scroll away); at 1920×1080 all 16."""
RESULT_ROWS = 4
"""Result rows fully visible: every result at Memsense's default top_k (4)."""


def _rect_in(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def _visible_in(widget: QWidget, viewport: QWidget) -> bool:
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return viewport.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_window_fits_the_screen_without_overlaps(qtbot, ranked_window, size):
    w = ranked_window
    install_evaluation(w)
    w.resize(*size)
    w.default_layout()
    qtbot.waitUntil(lambda: (w.width(), w.height()) == size, timeout=5_000)
    qtbot.wait(50)
    # with a title bar and border the whole window still fits a 1280×720 screen
    assert w.minimumSizeHint().height() <= 720 - FRAME and w.minimumSizeHint().width() <= 1280

    parts = {"menu": w.menuBar(), "toolbar": w.query_edit.parentWidget(), "results": w.results,
             "tuning": w.docks[DockId.TUNING], "chunk": w.docks[DockId.CHUNK], "route ranks": w.docks[DockId.ROUTE_RANKS],
             "status": w.statusBar()}
    rects = {name: _rect_in(part, w) for name, part in parts.items()}
    for name, rect in rects.items():
        assert part_visible(parts[name]), name
        assert rect.width() > 0 and rect.height() > 0, name
        assert w.rect().contains(rect), f"{name} {rect} outside the window {w.rect()}"
    for (a, ra), (b, rb) in itertools.combinations(rects.items(), 2):
        assert not ra.intersects(rb), f"{a} {ra} overlaps {b} {rb}"
    for inner in ("results table", "bars"):
        widget = w.results.view if inner == "results table" else w.results.plot_scroll
        assert rects["results"].contains(_rect_in(widget, w)) and widget.height() > 0, inner

    viewport = w.tuning.findChild(QWidget, "knob-viewport")
    shown = [name for name, s in w.tuning.sliders.items() if _visible_in(s, viewport) and s.isVisible()]
    assert len(shown) >= SLIDERS_AT[size], shown

    view = w.results.view
    rows = [r for r in range(view.model().rowCount()) if view.viewport().rect().contains(view.visualRect(
        view.model().index(r, 0)))]
    assert view.model().rowCount() == RESULT_ROWS and len(rows) == RESULT_ROWS
    for col in (ResultsModel.RANK, ResultsModel.PREVIEW, ResultsModel.MOVED):  # where each result moved, too
        assert view.viewport().rect().contains(view.visualRect(view.model().index(0, col))), col

    # a dock scrolls only when it is smaller than its view's minimum (not its preferred) height
    for title, dock in w.docks.items():
        scroll = dock.widget()
        if part_visible(dock) and scroll.viewport().height() >= dock.view.minimumSizeHint().height():
            assert scroll.verticalScrollBar().maximum() == 0, title


def part_visible(widget: QWidget) -> bool:
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def test_the_bars_keep_their_height_and_scroll_when_the_pane_is_short(qtbot, ranked_window):
    from dataclasses import replace

    from memsense_gui.plots.contributions import BAR_PIXELS

    w = ranked_window
    w.resize(1280, 720)
    w.ctx.current.apply(replace(w.ctx.current.config, top_k=10), "test settings")  # every session of the fake pool
    qtbot.waitUntil(lambda: w.results.model.rowCount() == 10, timeout=5_000)
    qtbot.wait(50)
    plot, scroll = w.results.plot, w.results.plot_scroll
    assert plot.height() >= w.results.model.rowCount() * BAR_PIXELS  # never squeezed: each bar keeps its pixels
    assert scroll.viewport().height() < plot.height() and scroll.verticalScrollBar().maximum() > 0


def test_the_evaluation_dock_makes_room_for_every_preset(qtbot, evaluation_window):
    w, view = evaluation_window("judged")
    w.resize(1280, 720)
    w.default_layout()
    qtbot.waitUntil(lambda: (w.width(), w.height()) == (1280, 720), timeout=5_000)
    w.raise_dock(DockId.EVALUATION)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    table, dock = view.metrics_table, w.docks[DockId.EVALUATION]
    rows = table.model().rowCount()
    assert rows == len(w.ctx.presets.all()) + 1  # every preset and the settings on screen

    def every_row_on_screen() -> bool:
        in_table = all(table.viewport().rect().contains(table.visualRect(table.model().index(r, 0)))
                       for r in range(rows))
        viewport = dock.widget().viewport()
        top_left = table.mapTo(viewport, QPoint(0, 0))
        return in_table and viewport.rect().contains(QRect(top_left, table.size()))

    qtbot.waitUntil(every_row_on_screen, timeout=5_000)
    assert w.layouts.current is Layout.EVALUATE  # its own layout, where it is the main view
    assert dock.width() >= 0.6 * w.width() and dock.height() >= 0.8 * w.height()


def test_a_long_query_is_elided_in_the_results_caption_and_whole_in_its_tooltip(qtbot, make_window):
    """Found by a walkthrough at 1280×720: the caption cut the query mid-word ("When did Ana run t")."""
    w = make_window()
    w.resize(1280, 720)
    w.default_layout()
    query = "when did they say they would travel to the mountains with the whole family again next summer"
    w.query_edit.setText(query)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.queries.run_query()
    qtbot.wait(100)
    caption = w.results.caption
    shown = re.search(r"results for <b>(.*?)</b>", caption.text()).group(1)
    assert shown.endswith("…") and query.startswith(shown[:-1]) and len(shown) > 8
    assert caption.fontMetrics().horizontalAdvance(f"4 results for {shown}") <= caption.width()
    assert f"“{query}”" in caption.toolTip()


def test_evaluation_at_1280_shows_the_a_and_b_presets_whole_beside_the_metrics(qtbot, evaluation_window):
    """Found by a walkthrough: the metrics table took the page's whole width and the A/B pickers
    read "memsens" and "fusion_no", the questions cut to a few words."""
    w, view = evaluation_window("judged")
    w.resize(1280, 720)
    w.default_layout()
    w.raise_dock(DockId.EVALUATION)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    qtbot.wait(200)
    for combo in (view.a_combo, view.b_combo):
        longest = max(combo.fontMetrics().horizontalAdvance(combo.itemText(i)) for i in range(combo.count()))
        assert combo.width() > longest, (combo.currentText(), combo.width(), longest)
    left, right = view.split.sizes()
    assert right >= 0.35 * (left + right)


def test_impact_at_1280_fits_its_dock_with_a_query_file_chosen(qtbot, make_window, tmp_path):
    """Found by a walkthrough: the query file's name on the row of the choices pushed Cancel off
    the dock (it scrolled sideways)."""
    from memsense_gui.window.run_actions import install_runs
    from tests.gui.window.test_runs import query_file

    w = make_window()
    views = install_runs(w, install_evaluation(w))
    w.resize(1280, 720)
    w.default_layout()
    named = tmp_path / "queries-exported-from-the-production-logs-of-november.tsv"
    query_file(tmp_path, w.ctx.users).rename(named)
    assert views.impact.set_queries(named)
    w.raise_dock(DockId.IMPACT)
    qtbot.waitUntil(lambda: part_visible(views.impact), timeout=5000)
    qtbot.wait(100)
    scroll = w.docks[DockId.IMPACT].widget()
    assert scroll.horizontalScrollBar().maximum() == 0
    cancel = views.impact.cancel_button
    assert _visible_in(cancel, scroll.viewport())
