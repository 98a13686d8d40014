"""A pinned baseline through the real window: "Moved" is measured against it (not the previous
slider position), results it returned that dropped out are listed greyed, a new query is
compared with the same baseline, and clearing it brings back movement since the last change."""
from __future__ import annotations

from PySide6.QtCore import Qt

from memsense_gui import theme
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from tests.gui.fixtures import cell


def _moves(model: ResultsModel) -> dict[str, str]:
    return {cell(model, r, ResultsModel.CHUNK, ID_ROLE): cell(model, r, ResultsModel.MOVED)
            for r in range(model.rowCount())}


def _expect(model: ResultsModel, ranking, base_ids: list[str]) -> None:
    """Every result's movement against `base_ids`, then the dropped ones in baseline order."""
    ids = ranking.result_ids
    assert model.result_count == len(ids)
    for pos, mid in enumerate(ids):
        raw = cell(model, pos, ResultsModel.MOVED, RAW_ROLE)
        if mid in base_ids:
            assert raw == base_ids.index(mid) - pos
        else:
            assert raw is None and cell(model, pos, ResultsModel.MOVED) == "new"
    dropped = [(mid, k) for k, mid in enumerate(base_ids, start=1) if mid not in ids]
    assert model.dropped_ids() == dropped
    muted = theme.current().qcolor("muted")
    for n, (mid, was) in enumerate(dropped):
        row = len(ids) + n
        assert cell(model, row, ResultsModel.CHUNK, ID_ROLE) == mid
        assert cell(model, row, ResultsModel.MOVED) == f"out, was #{was}"
        assert cell(model, row, ResultsModel.RANK) == "" and cell(model, row, ResultsModel.FINAL) == ""
        assert cell(model, row, ResultsModel.SESSION, Qt.ItemDataRole.ForegroundRole) == muted


def test_moved_and_dropped_out_are_relative_to_a_pinned_preset(qtbot, ranked_window):
    w = ranked_window
    s, model, bar = w.ctx.session, w.results.model, w.baseline_bar
    assert bar.label.text() == "Moved: since the last change"
    bar.pin_preset("memsense")  # the defaults, as on screen now
    base_ids = s.baseline.result_ids
    assert s.baseline.config == w.ctx.presets.get("memsense") and "preset “memsense”" in bar.label.text()
    assert set(_moves(model).values()) == {"="}

    # two separate gestures on two knobs: both measured against the pinned preset
    w.tuning.set_knob("top_k", 2)
    w.ctx.current.flush()
    w.tuning.set_knob("mmr_lambda", 0.3)
    w.ctx.current.flush()
    assert s.baseline.result_ids == base_ids
    _expect(model, s.ranking, base_ids)
    assert len(model.dropped_ids()) >= 2  # four returned by the baseline, two now

    # a new query: the same baseline settings, re-ranked on the new pool
    w.query_edit.setText("and what about the weekend")
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.queries.run_query()
    assert s.baseline.pool is s.pool and s.baseline.config == w.ctx.presets.get("memsense")
    _expect(model, s.ranking, s.baseline.result_ids)

    # cleared: movement since the last change again, no dropped rows
    bar.menu.aboutToShow.emit()
    clear = next(a for a in bar.menu.actions() if a.text() == "Clear baseline")
    assert clear.isEnabled()
    clear.trigger()
    assert s.pinned_baseline is None and model.rowCount() == model.result_count == len(s.ranking.result_ids)
    assert bar.label.text() == "Moved: since the last change"
    before = s.ranking.result_ids
    w.tuning.set_knob("top_k", 4)
    w.ctx.current.flush()
    assert s.baseline.result_ids == before and model.dropped_ids() == []


def test_a_snapshot_keeps_the_settings_of_its_moment(qtbot, ranked_window):
    w = ranked_window
    s, bar = w.ctx.session, w.baseline_bar
    w.tuning.set_knob("mmr_lambda", 0.5)
    bar.menu.aboutToShow.emit()
    snapshot = next(a for a in bar.menu.actions() if a.text().startswith("Snapshot"))
    snapshot.trigger()
    pinned = w.ctx.current.config
    assert s.pinned_baseline.config == pinned and "snapshot of" in bar.label.text()
    assert "lambda 0.5" in bar.label.toolTip()
    w.tuning.set_knob("top_k", 1)
    w.ctx.current.flush()
    assert w.ctx.current.config != pinned and s.baseline.config == pinned
    _expect(w.results.model, s.ranking, s.baseline.result_ids)
    # every preset is offered
    presets = next(a for a in bar.menu.actions() if a.text() == "Preset").menu()
    assert [a.text() for a in presets.actions()] == w.ctx.presets.names()


def test_a_pinned_preset_is_followed_when_saved_again_and_kept_as_it_was_when_deleted(qtbot, ranked_window):
    """Found by a walkthrough: a preset pinned as the baseline and then saved with other settings
    kept measuring against its old settings (Compare followed the new ones), and after deleting
    it the caption still named it as a preset."""
    from dataclasses import replace

    w = ranked_window
    s, bar, presets = w.ctx.session, w.baseline_bar, w.ctx.presets
    first = replace(w.ctx.current.config, route_weights={**w.ctx.current.config.route_weights, "lexical": 0.0})
    presets.save("mine", first)
    bar.pin_preset("mine")
    assert s.pinned_baseline.config == first
    second = replace(first, route_weights={**first.route_weights, "lexical": 3.0}, top_k=2)
    presets.save("mine", second)
    qtbot.waitUntil(lambda: s.baseline is not None, timeout=5000)
    assert s.pinned_baseline.config == second and s.baseline.config == second
    assert bar.label.text() == "Moved: against preset “mine”" and "topK 2" in bar.label.toolTip()
    presets.delete("mine")
    assert s.pinned_baseline.config == second
    assert bar.label.text() == "Moved: against preset “mine” as it was (renamed or deleted since)"
    presets.save("mine", first)  # a new preset of the same name is not the one pinned
    assert s.pinned_baseline.config == second
