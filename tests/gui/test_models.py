"""Models tested without views: pytest-qt's qtmodeltester plus the values they expose."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.config import Config
from core.rerank import rerank
from core.synthetic import synthetic_pool
from core.types import ROUTES
from memsense_gui.models import (
    ID_ROLE, RAW_ROLE, ChunkSearchModel, CompareModel, DictTreeModel, MMRTraceModel, PinsModel, PoolModel,
    ResultsModel, RouteMatrixModel, TurnSupportModel, movement_text, pool_rows,
)

DISPLAY = Qt.ItemDataRole.DisplayRole


@pytest.fixture(scope="module")
def pool():
    return synthetic_pool(n_sessions=10, turns_per_session=8, dim=16, seed=3)


@pytest.fixture(scope="module")
def ranking(pool):
    return rerank(pool, Config(top_k=6))


def cell(model, row, col, role=DISPLAY):
    return model.data(model.index(row, col), role)


def test_results_model_passes_modeltester_and_follows_the_ranking(qtmodeltester, ranking):
    model = ResultsModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    assert model.rowCount() == len(ranking.selection.order) == 6
    for pos, result in enumerate(ranking.results):
        assert cell(model, pos, ResultsModel.RANK, RAW_ROLE) == pos + 1
        assert cell(model, pos, ResultsModel.CHUNK, ID_ROLE) == result["memory_id"]
        assert cell(model, pos, ResultsModel.FINAL, RAW_ROLE) == result["final_score"]
        assert cell(model, pos, ResultsModel.RRF, RAW_ROLE) == result["rrf_score"]
        assert cell(model, pos, ResultsModel.TURN_SUPPORT, RAW_ROLE) == result["explain"]["turn_support"]
        assert cell(model, pos, ResultsModel.MMR, RAW_ROLE) == result["explain"]["mmr"]["mmr_score"]
        assert cell(model, pos, ResultsModel.FINAL) == f"{result['final_score']:.4f}"
    assert cell(model, 0, ResultsModel.MMR) == "top"
    assert cell(model, 0, ResultsModel.MOVED) == ""  # no previous settings yet
    model.set_ranking(None)
    qtmodeltester.check(model)
    assert model.rowCount() == 0


def test_results_show_movement_against_the_previous_settings(ranking, pool):
    before = rerank(pool, replace(ranking.config, mmr_lambda=1.0))
    model = ResultsModel()
    model.set_ranking(ranking, previous=before.result_ids)
    for pos, mid in enumerate(ranking.result_ids):
        raw = cell(model, pos, ResultsModel.MOVED, RAW_ROLE)
        if mid in before.result_ids:
            assert raw == before.result_ids.index(mid) - pos
        else:
            assert raw is None and cell(model, pos, ResultsModel.MOVED) == "new"


@pytest.mark.parametrize("previous, rank, text, delta", [
    (3, 1, "▲2", 2), (1, 4, "▼3", -3), (2, 2, "=", 0), (None, 1, "new", None)])
def test_movement_text(previous, rank, text, delta):
    assert movement_text(previous, rank, True) == (text, delta)
    assert movement_text(previous, rank, False) == ("", None)


def test_gold_sessions_are_marked(ranking):
    model = ResultsModel()
    gold_session = ranking.pool.chunks[ranking.selected_rows[1].index].session_id
    model.set_ranking(ranking, gold={gold_session})
    assert cell(model, 1, ResultsModel.SESSION).startswith("★")
    assert cell(model, 1, ResultsModel.SESSION, Qt.ItemDataRole.BackgroundRole) is not None
    assert not cell(model, 0, ResultsModel.SESSION).startswith("★")


def test_pool_model_lists_the_whole_pool_with_fates(qtmodeltester, ranking):
    model = PoolModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    rows = pool_rows(ranking)
    assert model.rowCount() == len(rows) >= len(ranking.candidates)
    statuses = [cell(model, r, PoolModel.FATE, RAW_ROLE) for r in range(model.rowCount())]
    selected = [cell(model, r, PoolModel.CHUNK, ID_ROLE) for r, s in enumerate(statuses) if s in ("selected", "fallback_fill")]
    assert sorted(selected) == sorted(ranking.result_ids)
    for r in range(model.rowCount()):
        mid = cell(model, r, PoolModel.CHUNK, ID_ROLE)
        assert cell(model, r, PoolModel.REASON) == ranking.fate(mid).reason
        assert cell(model, r, PoolModel.FUSED, RAW_ROLE) == pytest.approx(float(ranking.fused[rows[r]]))


def test_route_matrix_shows_ranks_empty_when_missed(qtmodeltester, ranking):
    model = RouteMatrixModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    assert model.columnCount() == 1 + len(ROUTES)
    rows = pool_rows(ranking)
    for r in range(model.rowCount()):
        for j in range(len(ROUTES)):
            rank = int(ranking.pool.ranks[rows[r], j])
            assert cell(model, r, j + 1, RAW_ROLE) == rank
            assert cell(model, r, j + 1) == (str(rank) if rank else "")
            background = cell(model, r, j + 1, Qt.ItemDataRole.BackgroundRole)
            assert (background is None) == (rank == 0)


def test_route_matrix_strength_falls_with_rank(ranking):
    model = RouteMatrixModel()
    model.set_ranking(ranking)
    strengths = {}
    for r in range(model.rowCount()):
        for c in range(1, model.columnCount()):
            rank = cell(model, r, c, RAW_ROLE)
            if rank:
                strengths.setdefault(rank, model.strength(r, c))
    ordered = [strengths[k] for k in sorted(strengths)]
    assert ordered == sorted(ordered, reverse=True)
    assert strengths.get(1, 1.0) == pytest.approx(1.0)


def test_mmr_trace_lists_every_pick_and_each_duplicate_once(qtmodeltester, pool):
    ranking = rerank(pool, Config(top_k=8, duplicate_threshold=0.5))
    model = MMRTraceModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    events = [(cell(model, r, MMRTraceModel.EVENT), cell(model, r, MMRTraceModel.CHUNK, ID_ROLE))
              for r in range(model.rowCount())]
    picks = [mid for e, mid in events if e == "pick"]
    assert picks == ranking.result_ids
    skips = [mid for e, mid in events if e == "skip"]
    assert len(skips) == len(set(skips))
    all_skipped = {ranking.pool.chunks[ranking.rows[r].index].memory_id
                   for s in ranking.selection.steps for r, _, _ in s.skipped}
    assert set(skips) == all_skipped


def test_turn_support_model_lists_the_sessions_turns(qtmodeltester, ranking):
    row = next(r for r in ranking.selected_rows if r.supporting_turn_count)
    model = TurnSupportModel()
    model.set_row(ranking, row)
    qtmodeltester.check(model)
    assert model.rowCount() == row.supporting_turn_count
    best = [r for r in range(model.rowCount()) if cell(model, r, TurnSupportModel.BEST, RAW_ROLE)]
    assert [cell(model, r, 0, ID_ROLE) for r in best] == [ranking.pool.chunks[row.best_turn].memory_id]
    assert f"{row.turn_support:.4f}" in model.summary()


def test_dict_tree_model_holds_the_explain_record(qtmodeltester, ranking):
    model = DictTreeModel()
    record = ranking.results[1]
    model.set_data(record)
    qtmodeltester.check(model)
    index = model.path_index("explain", "mmr", "mmr_score")
    assert index.isValid()
    value = model.index(index.row(), DictTreeModel.VALUE, index.parent())
    assert value.data(RAW_ROLE) == record["explain"]["mmr"]["mmr_score"]
    assert model.rowCount(QModelIndex()) == len(record)


def test_chunk_search_finds_by_words_and_shows_fates(qtmodeltester, ranking, pool):
    model = ChunkSearchModel()
    model.set_chunks(pool.chunks)
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    assert model.rowCount() == 0
    model.set_filter("turn 3 of 7")
    qtmodeltester.check(model)
    hits = [cell(model, r, ChunkSearchModel.CHUNK, ID_ROLE) for r in range(model.rowCount())]
    assert "synth:S007:T003" in hits  # its user text is "turn 3 of 7"
    by_id = {c.memory_id: c for c in pool.chunks}
    for mid in hits:
        text = f"{mid} {by_id[mid].user_text} {by_id[mid].assistant_text}".lower()
        assert all(w in text for w in ("turn", "3", "of", "7"))
    mid = hits[0]
    assert cell(model, 0, ChunkSearchModel.FATE, Qt.ItemDataRole.ToolTipRole) == ranking.fate(mid).reason


def test_pins_model_follows_the_ranking(qtmodeltester, ranking, pool):
    pins = (ranking.result_ids[0], pool.chunks[-1].memory_id)
    model = PinsModel()
    model.set_pins(pins, ranking)
    qtmodeltester.check(model)
    assert cell(model, 0, PinsModel.STATUS, RAW_ROLE) == "selected"
    assert cell(model, 0, PinsModel.RANK, RAW_ROLE) == 1
    assert cell(model, 1, PinsModel.REASON) == ranking.fate(pins[1]).reason


def test_compare_model_shows_rank_movement(qtmodeltester, pool):
    a = rerank(pool, Config(top_k=5))
    b = rerank(pool, Config(top_k=5, mmr_lambda=1.0))
    model = CompareModel()
    model.set_rankings(a, b)
    qtmodeltester.check(model)
    assert model.rowCount() == 5
    for pos, mid in enumerate(b.result_ids):
        raw = cell(model, pos, CompareModel.B_FROM_A, RAW_ROLE)
        assert raw == (a.result_ids.index(mid) - pos if mid in a.result_ids else None)
    for pos, mid in enumerate(a.result_ids):
        assert cell(model, pos, CompareModel.A_TO_B, RAW_ROLE) == (
            b.result_ids.index(mid) + 1 if mid in b.result_ids else None)


def test_headers_and_alignment(ranking):
    model = ResultsModel()
    model.set_ranking(ranking)
    assert model.headerData(ResultsModel.FINAL, Qt.Orientation.Horizontal) == "Final"
    assert model.headerData(ResultsModel.MMR, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    align = cell(model, 0, ResultsModel.FINAL, Qt.ItemDataRole.TextAlignmentRole)
    assert align & Qt.AlignmentFlag.AlignRight.value
    assert not math.isnan(cell(model, 0, ResultsModel.FINAL, RAW_ROLE))
