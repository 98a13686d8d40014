"""Text beside every rank: results, pool and route-rank matrix show the best-matching sentence
right after the rank, query words drawn in bold."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.recall.lexical.snippet import chunk_snippet
from memsense_gui.models.pool import PoolModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.route_matrix import RouteMatrixModel
from memsense_gui.models.table import ID_ROLE
from memsense_gui.views.snippets import SnippetDelegate, segments
from memsense_gui.views.dock import DockId

_H = Qt.Orientation.Horizontal


def test_segments_split_marked_words():
    assert segments("a «b» c«d»") == [("a ", False), ("b", True), (" c", False), ("d", True)]
    assert segments("plain") == [("plain", False)]
    assert segments("") == []


def test_results_pool_and_matrix_show_a_snippet_after_the_rank(qtbot, make_window):
    w = make_window()
    w.query_edit.setText("which turn of the session")  # the fake engine's chunks read "turn 3 of 1"
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.queries.run_query()
    for which in (DockId.CANDIDATE_POOL, DockId.ROUTE_RANKS):
        w.raise_dock(which)
    pool = w.ctx.session.pool
    tables = ((w.results.view, ResultsModel.RANK, ResultsModel.PREVIEW),
              (w.pool_panel.view, PoolModel.POOL_RANK, PoolModel.SNIPPET),
              (w.matrix_panel.view, RouteMatrixModel.POOL_RANK, RouteMatrixModel.SNIPPET))
    for view, rank_col, snippet_col in tables:
        model = view.model()
        assert snippet_col == rank_col + 1 and model.headerData(snippet_col, _H) == "Snippet"
        assert model.rowCount() > 0
        assert isinstance(view.itemDelegateForColumn(snippet_col), SnippetDelegate)
        marked = 0
        for r in range(model.rowCount()):
            chunk = pool.chunks[pool.index_of(model.index(r, 0).data(ID_ROLE))]
            text = model.index(r, snippet_col).data()
            assert text == chunk_snippet(chunk, pool.query).marked()
            marked += "«" in text
        assert marked, "no snippet marks a query word"
        assert not view.grab().isNull()  # the delegate paints every visible row


def test_a_snippet_is_placed_piece_after_piece_and_cut_with_an_ellipsis_where_the_cell_ends(qtbot):
    from PySide6.QtGui import QFont, QFontMetrics

    from memsense_gui.views.snippets import _placed

    font = QFont()
    bold = QFont(font)
    bold.setBold(True)
    text = "she ran «three» races in «2024» and one more after the summer break"
    wide = _placed(text, 10_000, font.toString())
    assert [p for _x, _w, p, _m in wide] == [p for p, _m in segments(text)]  # all of it, in order
    x = 0
    for left, width, piece, marked in wide:
        assert left == x and width == QFontMetrics(bold if marked else font).horizontalAdvance(piece)
        x += width
    room = wide[2][0] + wide[2][1] // 2  # the cell ends halfway through " races in "
    cut = _placed(text, room, font.toString())
    assert cut[:-1] == wide[:len(cut) - 1] and len(cut) < len(wide)  # nothing after the cut piece
    last_x, last_width, last, _ = cut[-1]
    assert last.endswith("…") and last_x + last_width == room
