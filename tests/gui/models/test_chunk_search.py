"""Why-not search: chunks found by words, with their fates."""
from __future__ import annotations


from PySide6.QtCore import Qt

from memsense_gui.models.chunk_search import ChunkSearchModel
from memsense_gui.models.table import ID_ROLE
from tests.gui.fixtures import cell


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
