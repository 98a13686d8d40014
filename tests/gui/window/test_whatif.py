""""What would it take" beside "Why not?", through the real window over a fake engine."""
from __future__ import annotations

from core.rank.whatif import apply_change
from core.rank.rerank import rerank
from memsense_gui.views.dock import DockId


def test_a_pinned_chunk_shows_verified_changes_that_bring_it_in(qtbot, ranked_window):
    w = ranked_window
    session = w.ctx.session
    current = w.ctx.current
    ranking = session.ranking
    target = next(c.memory_id for c in session.pool.chunks
                  if c.kind == "session" and c.memory_id not in ranking.result_ids)
    w.raise_dock(DockId.WHY_NOT)
    session.pin(target)
    model = w.whynot_panel.whatif_model
    qtbot.waitUntil(lambda: model.answer is not None and model.answer.memory_id == target, timeout=20_000)
    assert model.rowCount() == len(model.answer.changes) > 0
    assert "What would it take" in w.whynot_panel.whatif_label.text()
    for row in range(model.rowCount()):
        change = model.change(row)
        after = rerank(session.pool, apply_change(current.config, change.knob, change.value)).result_ids
        assert after.index(target) + 1 == change.rank
        assert model.index(row, model.RANK).data() == str(change.rank)


def test_a_returned_pin_needs_nothing(qtbot, ranked_window):
    w = ranked_window
    w.raise_dock(DockId.WHY_NOT)
    first = w.ctx.session.ranking.result_ids[0]
    w.ctx.session.pin(first)
    assert "nothing" in w.whynot_panel.whatif_label.text() and w.whynot_panel.whatif_model.rowCount() == 0
