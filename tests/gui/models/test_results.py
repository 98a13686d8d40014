"""The results model under qtmodeltester: values, movement, gold marks, headers."""
from __future__ import annotations

import math
from dataclasses import replace

from PySide6.QtCore import Qt

from core.rank.rerank import rerank
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from tests.gui.fixtures import cell


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


def test_gold_sessions_are_marked(ranking):
    model = ResultsModel()
    gold_session = ranking.pool.chunks[ranking.selected_rows[1].index].session_id
    model.set_ranking(ranking, gold={gold_session})
    assert cell(model, 1, ResultsModel.SESSION).startswith("★")
    assert cell(model, 1, ResultsModel.SESSION, Qt.ItemDataRole.BackgroundRole) is not None
    assert not cell(model, 0, ResultsModel.SESSION).startswith("★")


def test_headers_and_alignment(ranking):
    model = ResultsModel()
    model.set_ranking(ranking)
    assert model.headerData(ResultsModel.FINAL, Qt.Orientation.Horizontal) == "Final"
    assert model.headerData(ResultsModel.MMR, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    align = cell(model, 0, ResultsModel.FINAL, Qt.ItemDataRole.TextAlignmentRole)
    assert align & Qt.AlignmentFlag.AlignRight.value
    assert not math.isnan(cell(model, 0, ResultsModel.FINAL, RAW_ROLE))


def test_snippet_column_follows_the_rank(ranking):
    from core.recall.lexical.snippet import chunk_snippet
    from memsense_gui.models.results import ResultsModel

    model = ResultsModel()
    model.set_ranking(ranking)
    assert ResultsModel.PREVIEW == 1 and model.headerData(1, Qt.Orientation.Horizontal) == "Snippet"
    for pos in range(model.rowCount()):
        chunk = ranking.pool.chunks[ranking.selected_rows[pos].index]
        assert cell(model, pos, ResultsModel.PREVIEW) == chunk_snippet(chunk, ranking.pool.query).marked()
