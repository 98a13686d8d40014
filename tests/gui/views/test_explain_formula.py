"""Explain's Formula tab: the focused chunk's score as a tree of its formula, every number the
one the Results, Candidate pool and Route ranks tables show, and each sum the formula names holding."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.rank.formula import FINAL_ROUNDING
from core.records import ROUTES
from memsense_gui.models.formula_tree import ADDS_ROLE, KEY_ROLE, FormulaTreeModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.route_matrix import RouteMatrixModel
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.views.dock import DockId

DISPLAY = Qt.ItemDataRole.DisplayRole


def nodes(model: FormulaTreeModel, parent: QModelIndex = QModelIndex()):
    """(term index, value index, children's value indices) of every node, depth first."""
    for r in range(model.rowCount(parent)):
        term = model.index(r, FormulaTreeModel.TERM, parent)
        value = model.index(r, FormulaTreeModel.VALUE, parent)
        kids = [model.index(c, FormulaTreeModel.VALUE, term) for c in range(model.rowCount(term))]
        yield term, value, kids
        yield from nodes(model, term)


def by_label(model: FormulaTreeModel) -> dict[str, tuple]:
    return {term.data(DISPLAY): (term, value, kids) for term, value, kids in nodes(model)}


def test_every_number_in_the_tree_is_the_tables_and_the_sums_hold(ranked_window):
    check_tree_against_tables(ranked_window)


@pytest.mark.slow
def test_on_a_demo_question_the_tree_is_the_tables(qtbot, app_home, gui_store, model_cache):
    """The same on the demo store, its first question, the real engine."""
    import json

    from core.recall.engine import DEMO_QUESTIONS, Engine
    from memsense_gui.state import paths
    from memsense_gui.window.main_window import MainWindow

    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: Engine(loc, cache_dir=model_cache))
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=180_000):
        w.stores.open_store(gui_store)
    q = json.loads(DEMO_QUESTIONS.read_text())["questions"][0]
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=60_000):
        w.queries.open_question(q["user"], q["question"], ())
    check_tree_against_tables(w)


def check_tree_against_tables(w) -> None:
    """Every result's tree: its numbers those of the Results and Route ranks tables, its sums holding."""
    results, matrix, tree = w.results.model, w.matrix_panel.model, w.explain_panel.formula_model
    cfg = w.ctx.session.ranking.config
    w.raise_dock(DockId.EXPLAIN)
    assert results.rowCount() >= 2
    checked_mmr, checked_sum = 0, 0
    for row in range(results.rowCount()):
        w.results.view.selectRow(row)
        mid = results.memory_id(row)
        assert tree.root is not None and w.explain_panel.tabs.currentIndex() == 0
        got = by_label(tree)
        table = {col: results.index(row, col).data(RAW_ROLE) for col in range(results.columnCount())}
        shown = {col: results.index(row, col).data(DISPLAY) for col in range(results.columnCount())}
        for label, col in (("Final", ResultsModel.FINAL), ("RRF + turn", ResultsModel.RRF),
                           ("Own RRF", ResultsModel.OWN_RRF), ("Turn support", ResultsModel.TURN_SUPPORT)):
            term, value, _ = got[label]
            assert value.data(RAW_ROLE) == table[col], (mid, label)
            assert value.data(DISPLAY) == shown[col], (mid, label)  # the same figure, the same decimals
        assert got["α · Memory"][1].data(RAW_ROLE) == cfg.alpha * table[ResultsModel.MEMORY]
        root = tree.index(0, FormulaTreeModel.VALUE)
        if table[ResultsModel.MMR] is not None:  # a pick MMR scored: λ·Final − (1−λ)·Max redund.
            checked_mmr += 1
            assert root.data(RAW_ROLE) == table[ResultsModel.MMR]
            relevance, penalty = got["λ · Final"][1].data(RAW_ROLE), got["− (1 − λ) · Max redund."][1].data(RAW_ROLE)
            assert relevance == cfg.mmr_lambda * table[ResultsModel.FINAL]
            assert penalty == -(1 - cfg.mmr_lambda) * table[ResultsModel.REDUNDANCY]
            assert abs(relevance + penalty - table[ResultsModel.MMR]) < 1e-12
        # children add up: Final = RRF + turn + α · Memory (to its 6-decimal rounding), RRF + turn
        # = Own RRF + Turn support, Own RRF = Σ of the route shares
        final_kids = [k.data(RAW_ROLE) for k in got["Final"][2]]
        assert abs(sum(final_kids) - table[ResultsModel.FINAL]) <= FINAL_ROUNDING
        assert sum(k.data(RAW_ROLE) for k in got["RRF + turn"][2]) == table[ResultsModel.RRF]
        own, _, shares = got["Own RRF"]
        if own.data(ADDS_ROLE):  # not on a session outside the pool, fetched for its turns (Own RRF 0)
            assert shares and abs(sum(k.data(RAW_ROLE) for k in shares) - table[ResultsModel.OWN_RRF]) < 1e-12
            checked_sum += 1
        else:
            assert table[ResultsModel.OWN_RRF] == 0.0
        # each route's share is w / (k + the rank the Route ranks table shows)
        mrow = matrix.row_of(mid)
        assert mrow is not None
        for term, value, _ in nodes(tree):
            route = term.data(KEY_ROLE)
            if route in ROUTES:
                rank = matrix.index(mrow, RouteMatrixModel.FIRST_ROUTE + ROUTES.index(route)).data(RAW_ROLE)
                counted = not term.siblingAtColumn(FormulaTreeModel.FORMULA).data(DISPLAY).startswith("not counted")
                want = cfg.weight(route) / (cfg.rrf_k + rank) if counted else 0.0
                assert rank > 0 and value.data(RAW_ROLE) == want, (mid, route)
    assert checked_mmr >= 1 and checked_sum >= 1


def test_a_not_returned_chunk_shows_its_fate_over_its_final(ranked_window):
    w = ranked_window
    w.raise_dock(DockId.EXPLAIN)
    ranking = w.ctx.session.ranking
    outside = next(ranking.pool.chunks[r.index].memory_id for i, r in enumerate(ranking.rows)
                   if i not in ranking.selection.order)
    w.inspector.focus_chunk(outside)
    root = w.explain_panel.formula_model.index(0, FormulaTreeModel.TERM)
    assert root.data(DISPLAY) == "Not picked"
    assert "Final" in {t.data(DISPLAY) for t, _, _ in nodes(w.explain_panel.formula_model)}
