"""Every panel usable at 1280×720: Why not?'s what-would-change table and the shortcuts list show
their columns inside their viewport, with the default layout."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from memsense_gui.models.whatif import WhatIfModel
from memsense_gui.views.dock import DockId

SIZE = (1280, 720)


def _sections_visible(view: QTableView, columns) -> dict[int, bool]:
    """Each column: its whole header section inside the viewport (no horizontal scrolling)."""
    header, width = view.horizontalHeader(), view.viewport().width()
    return {c: not header.isSectionHidden(c) and header.sectionViewportPosition(c) >= 0
            and header.sectionViewportPosition(c) + header.sectionSize(c) <= width
            and header.sectionSize(c) >= view.fontMetrics().horizontalAdvance(str(view.model().headerData(c, Qt.Orientation.Horizontal))) // 2
            for c in columns}


def _at_1280(qtbot, w):
    w.resize(*SIZE)
    w.default_layout()
    qtbot.waitUntil(lambda: (w.width(), w.height()) == SIZE, timeout=5_000)
    qtbot.wait(50)


def test_why_not_shows_every_what_would_change_column(qtbot, ranked_window):
    w = ranked_window
    _at_1280(qtbot, w)
    session = w.ctx.session
    target = next(c.memory_id for c in session.pool.chunks
                  if c.kind == "session" and c.memory_id not in session.ranking.result_ids)
    w.raise_dock(DockId.WHY_NOT)
    session.pin(target)
    model = w.whynot_panel.whatif_model
    qtbot.waitUntil(lambda: model.answer is not None and model.rowCount() > 0, timeout=20_000)
    qtbot.wait(50)
    shown = _sections_visible(w.whynot_panel.whatif_view, range(model.columnCount()))
    assert all(shown.values()), {WhatIfModel.HEADERS[c]: v for c, v in shown.items()}
    assert w.whynot_panel.whatif_view.viewport().height() >= 2 * w.whynot_panel.whatif_view.rowHeight(0)


def test_shortcuts_list_fits(qtbot, make_window):
    w = make_window()
    _at_1280(qtbot, w)
    dialog = w.show_shortcuts()
    qtbot.waitExposed(dialog)
    assert dialog.height() <= SIZE[1] - 80 and dialog.width() <= SIZE[0]
    table = dialog.table
    assert all(_sections_visible(table, range(2)).values())
    assert table.horizontalScrollBar().maximum() == 0
    for r in range(table.rowCount()):  # every action's words in full, none cut
        text = table.item(r, 1).text()
        assert table.visualItemRect(table.item(r, 1)).height() >= table.fontMetrics().boundingRect(
            0, 0, table.columnWidth(1) - 8, 1000, 0x1000, text).height() - 2, text


def test_cases_shows_its_key_columns_when_raised(qtbot, make_window):
    """The left dock is Tuning's width (~320 px) at 1280×720: raising Cases widens it until its key
    columns (issue 36: pass, question and metric, leftmost) show whole; raising Tuning gives the
    width back."""
    w = make_window()
    w.show()
    _at_1280(qtbot, w)
    tuning_width = w.docks[DockId.TUNING].width()
    w.raise_dock(DockId.CASES)
    m = w.cases_panel.model
    view = w.cases_panel.view
    key = (m.RESULT, m.QUESTION, m.METRIC)
    qtbot.waitUntil(lambda: all(_sections_visible(view, key).values()), timeout=5_000)
    assert w.docks[DockId.CASES].width() <= int(SIZE[0] * 0.45)
    w.raise_dock(DockId.TUNING)
    qtbot.waitUntil(lambda: abs(w.docks[DockId.TUNING].width() - tuning_width) <= 8, timeout=5_000)
