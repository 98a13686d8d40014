"""Plot exports you can trust, through the window: drawn from the ranking on screen even when
the panel is tabbed away, under a title (what, user, query, preset, date), with the SVG's
bars, zero line and ticks exactly where the plot's data-to-pixel mapping puts them, and the
whole route-rank matrix (every row) as an image; a message with the path after each save."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from memsense_gui import theme
from memsense_gui.plots.contributions import BAR_HEIGHT
from tests.gui.svg_shapes import shapes, title
from memsense_gui.views.dock import DockId

PX = 0.6  # SVG numbers are written with 6 significant digits


def in_view(placed, shape) -> bool:
    """The shape lies in the plot's data area (not in the legend or the title)."""
    r = placed.data_area.adjusted(-PX, -PX, PX, PX)
    return all(r.left() <= x <= r.right() and r.top() <= y <= r.bottom() for x, y in shape.points)


def export(window, which: str, path):
    assert window.exports.export_plot(which, path) and str(path) in window.statusBar().currentMessage()
    return window.exports.last_plot


def test_mmr_svg_of_a_hidden_panel_has_current_bars_zero_line_and_ticks_in_place(qtbot, ranked_window, tmp_path):
    w = ranked_window
    w.docks[DockId.MMR_TRACE].close()
    qtbot.waitUntil(lambda: not w.mmr_panel.plot.isVisible())
    shown = [s.max_redundancy for s in w.ctx.session.ranking.selection.steps]
    w.tuning.set_knob("mmr_lambda", 0.55)
    w.ctx.current.flush()
    ranking = w.ctx.session.ranking
    assert DockId.MMR_TRACE in w.inspector._stale and shown  # the closed panel was not redrawn
    assert ranking.config.mmr_lambda == 0.55
    path = tmp_path / "mmr.svg"
    placed = export(w, "mmr", path)
    assert placed.band > 20 and placed.size.width() >= 960
    steps = ranking.selection.steps
    relevance = np.array([0.55 * ranking.rows[s.row].final_score for s in steps])
    penalty = np.array([-(1 - 0.55) * s.max_redundancy for s in steps])

    found = shapes(path)
    bars = sorted((s for s in found if s.tag == "rect" and s.fill == theme.ROUTE_COLORS["vec_full"].lower()
                   and in_view(placed, s)), key=lambda s: s.xs[0])
    assert len(bars) == len(steps)
    for k, (bar, height) in enumerate(zip(bars, relevance), start=1):
        left, top = placed.point(k - 0.3, height), placed.point(k + 0.3, 0.0)
        assert bar.xs == pytest.approx((left.x(), top.x()), abs=PX)
        assert bar.ys == pytest.approx((left.y(), top.y()), abs=PX)  # current lambda, current data
    downs = [s for s in found if s.tag == "rect" and s.fill == theme.ROUTE_COLORS["vec_user"].lower()
             and in_view(placed, s)]
    assert sorted(s.ys[1] - s.ys[0] for s in downs) == pytest.approx(  # pixels below the zero line
        sorted(placed.point(0, p).y() - placed.point(0, 0).y() for p in penalty), abs=PX)

    zero = placed.point(1, 0.0).y()
    lines = [s for s in found if s.tag == "polyline" and s.stroke == theme.current().muted.lower()
             and abs(s.ys[1] - s.ys[0]) < 0.01 and s.xs[1] - s.xs[0] > 0.8 * placed.data_area.width()]
    assert any(abs(s.ys[0] - zero) < PX for s in lines), (zero, [s.ys[0] for s in lines])

    axis_bottom = placed.data_area.bottom()
    ticks = [s.xs[0] for s in found if s.tag == "polyline" and abs(s.xs[1] - s.xs[0]) < 0.01
             and 0 < s.ys[1] - s.ys[0] < 12 and abs(s.ys[1] - axis_bottom) < 2]
    for k in range(1, len(steps) + 1):  # a tick under the middle of every bar
        assert min(abs(t - placed.point(k, 0).x()) for t in ticks) < PX

    heading = title(path)
    assert heading.startswith("MMR terms per pick · user ") and ranking.pool.query in heading
    texts = " ".join(s.text for s in found if s.tag == "text")
    assert ranking.pool.query in texts and "preset memsense, changed: lambda 0.55" in texts and " UTC" in texts


def test_contribution_svg_bars_sit_on_their_rank_ticks(qtbot, ranked_window, tmp_path):
    w = ranked_window
    path = tmp_path / "bars.svg"
    on_screen = w.results.plot.size()
    placed = export(w, "contributions", path)
    assert w.results.plot.size() == on_screen  # drawn at least 960 × 540, then put back
    data = w.results.plot.data
    found = shapes(path)
    lexical = [s for s in found if s.tag == "rect" and s.fill == theme.ROUTE_COLORS["lexical"].lower()
               and s.xs[1] - s.xs[0] > 0.5 and in_view(placed, s)]
    rows = [k for k in range(len(data.labels)) if data.widths[k, 4] > 0]  # lexical is the 5th segment
    assert len(lexical) == len(rows) > 0
    left_axis = placed.data_area.left()
    ticks = [s.ys[0] for s in found if s.tag == "polyline" and abs(s.ys[1] - s.ys[0]) < 0.01
             and 0 < s.xs[1] - s.xs[0] < 12 and left_axis - 12 <= s.xs[0] and s.xs[1] <= left_axis + 12]
    for bar, k in zip(sorted(lexical, key=lambda s: s.ys[0]), rows):
        x0 = float(data.widths[k, :4].sum())
        a = placed.point(x0, k - BAR_HEIGHT / 2)
        b = placed.point(x0 + data.widths[k, 4], k + BAR_HEIGHT / 2)
        assert bar.xs == pytest.approx((a.x(), b.x()), abs=PX) and bar.ys == pytest.approx((a.y(), b.y()), abs=PX)
        assert min(abs(t - (a.y() + b.y()) / 2) for t in ticks) < PX  # the rank's tick at the bar's middle
    assert title(path).startswith("Score contributions · user ")


def test_png_exports_carry_the_title_band_and_the_whole_matrix(qtbot, ranked_window, tmp_path):
    w = ranked_window
    for which in ("contributions", "mmr", "matrix"):
        path = tmp_path / f"{which}.png"
        assert w.exports.export_plot(which, path) and str(path) in w.statusBar().currentMessage()
        image = QImage(str(path))
        assert not image.isNull() and image.width() > 200
    model = w.matrix_panel.model
    view = w.matrix_panel.view
    shown = view.viewport().height() // view.rowHeight(0) + 1
    assert model.rowCount() > shown  # the panel shows only some rows…
    image = QImage(str(tmp_path / "matrix.png"))
    assert image.height() / 2 > model.rowCount() * view.rowHeight(0)  # …the file has them all


def test_export_without_results_says_what_to_do(qtbot, make_window, tmp_path):
    w = make_window()
    assert not w.exports.export_plot("mmr", tmp_path / "mmr.svg")
    assert not (tmp_path / "mmr.svg").exists()


def test_the_contribution_bars_export_at_least_min_size_from_a_small_window(qtbot, ranked_window, tmp_path):
    """Found by a walkthrough at 1280×720: the bars (in a scroll area that sizes them to its
    viewport) were drawn at their on-screen width, half of MIN_SIZE, and the title band cut the
    settings out; the scroll area's next layout had undone the export's resize."""
    from memsense_gui.plots.export import MIN_SIZE

    w = ranked_window
    w.resize(1280, 720)
    w.default_layout()
    qtbot.waitUntil(lambda: w.results.plot.width() < MIN_SIZE.width(), timeout=5000)
    qtbot.wait(300)  # the docks settle
    before = w.results.plot.size()
    placed = export(w, "contributions", tmp_path / "bars.png")
    assert placed.size.width() >= MIN_SIZE.width()
    assert QImage(str(tmp_path / "bars.png")).width() >= 2 * MIN_SIZE.width()
    qtbot.waitUntil(lambda: w.results.plot.size() == before, timeout=5000)  # back as it was on screen
    assert w.results.plot_scroll.widgetResizable()
