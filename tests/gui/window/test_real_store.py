"""The whole flow through the real window on the real engine: the demo store, built into a
temporary folder (cached embeddings make a rebuild take seconds), then queried and tuned."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core import config as config_io
from core.config import Config
from core.rank.rerank import rerank
from memsense_gui.models.compare import CompareModel
from memsense_gui.models.pins import PinsModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from memsense_gui.state import paths
from memsense_gui.window.main_window import MainWindow

pytestmark = pytest.mark.slow


@pytest.fixture
def window(qtbot, app_home, gui_store, model_cache):
    from core.recall.engine import Engine

    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: Engine(loc, cache_dir=model_cache))
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=180_000):
        w.stores.open_store(gui_store)
    return w


def questions():
    from core.recall.engine import DEMO_QUESTIONS

    return json.loads(DEMO_QUESTIONS.read_text())["questions"]


def test_demo_flow_on_the_real_engine(qtbot, window, tmp_path):
    w = window
    assert {"demo-ana", "demo-mei", "demo-raj"} <= set(w.ctx.users)
    q = questions()[0]
    gold = {str(int(e.split(":")[0][1:])) for e in q["evidence"]}  # session numbers
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=60_000):
        w.queries.open_question(q["user"], q["question"], gold)
    pool = w.ctx.session.pool
    assert pool.user_id == q["user"] and pool.query == q["question"]
    ids = [w.results.model.index(r, 0).data(ID_ROLE) for r in range(w.results.model.rowCount())]
    assert ids == rerank(pool, Config()).result_ids and len(ids) == Config().top_k
    assert any(w.results.model.index(r, ResultsModel.SESSION).data().startswith("★") for r in range(len(ids)))

    # a slider re-ranks the cached pool: find a lambda that changes the ranking, apply it
    lam = next(v for v in (0.3, 0.5, 1.0, 0.0) if rerank(pool, replace(Config(), mmr_lambda=v)).result_ids != ids)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=5000):
        w.tuning.set_knob("mmr_lambda", lam)
    w.ctx.current.flush()
    after = w.ctx.session.ranking.result_ids
    assert after == rerank(pool, replace(Config(), mmr_lambda=lam)).result_ids != ids
    assert w.ctx.session.pool is pool  # no new search
    moved = [w.results.model.index(r, ResultsModel.MOVED).data() for r in range(len(after))]
    assert any(m and (m[0] in "▲▼" or m == "new") for m in moved)

    # why not: pin a chunk that dropped out, or any turn chunk
    target = next((m for m in ids if m not in after), None) or next(c.memory_id for c in pool.chunks if c.kind == "turn")
    w.queries.focus_why_not()
    qtbot.waitUntil(lambda: w.whynot_panel.search_model.chunk_count > 0, timeout=10_000)
    w.whynot_panel.search.setText(target)
    w.whynot_panel.search_view.selectRow(0)
    w.whynot_panel.pin_button.click()
    assert w.ctx.session.pins == (target,)
    assert w.whynot_panel.pins_model.index(0, PinsModel.REASON).data() == w.ctx.session.ranking.fate(target).reason

    # presets: save, compare with the built-in
    assert w.tuning.save_preset("diverse")
    w.comparisons.compare("memsense", "diverse")
    cm = w.compare_panel.model
    assert cm.a.result_ids == ids and cm.b.result_ids == after
    for r, mid in enumerate(after):
        assert cm.index(r, CompareModel.B_FROM_A).data(RAW_ROLE) == (ids.index(mid) - r if mid in ids else None)

    # export the settings and load them back identical
    for ext in ("toml", "json"):
        assert w.exports.export_config(tmp_path / f"s.{ext}")
        assert config_io.load(tmp_path / f"s.{ext}") == w.ctx.current.config
    assert w.exports.export_results(tmp_path / "results.json")
    assert json.loads((tmp_path / "results.json").read_text())["query"] == q["question"]
