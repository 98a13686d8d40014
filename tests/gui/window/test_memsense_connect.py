"""File > Connect to Memsense… through the real window: a real PostgreSQL with the demo data
(`memsense_pg`), queries embedded by a loopback endpoint, and a loopback service whose answer
the test sets, so the Production view's verdicts are known."""
from __future__ import annotations

import pytest
from core.search import search
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox

from memsense_gui.state import paths
from memsense_gui.window.main_window import MainWindow

pytestmark = pytest.mark.slow

QUESTION = "List all the trips Ana took."


@pytest.fixture
def window(qtbot, app_home):
    w = MainWindow(app_home, paths.settings(app_home))
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    return w


@pytest.fixture
def service(memsense_db):
    s = memsense_db.FakeService()
    yield s
    s.close()


def _menu_action(window, text: str):
    for action in window.findChildren(QAction):
        if action.text().replace("&", "") == text:
            return action
    raise AssertionError(f"no menu item {text!r}")


def _connect(qtbot, window, database: str, embedder: str, service: str = "", tenant: str = "default"):
    _menu_action(window, "Connect to Memsense…").trigger()
    dialog = window.findChild(QDialog, "connect-dialog")
    dialog.database.setText(database)
    dialog.tenant.setText(tenant)
    dialog.embedder.setText(embedder)
    dialog.service.setText(service)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    return dialog


def test_connect_query_and_see_production_beside_the_reproduction(qtbot, window, memsense_pg, embed_endpoint, service):
    from core.recall.memsense.engine import PostgresEngine

    engine = PostgresEngine(memsense_pg.dsn, embedder=embed_endpoint.url + "/embed")
    try:
        ours = search(engine, "demo-ana", QUESTION).results
    finally:
        engine.close()
    service.answer = [{k: r[k] for k in ("memory_id", "final_score", "explain")} for r in ours]

    from memsense_gui.window.layout_notes import CONNECTED_STEP, FIRST_STEPS
    from memsense_gui.window.layouts import Layout

    window.layouts.switch(Layout.PRODUCTION)
    assert window.layout_notes.line.full.endswith(FIRST_STEPS[Layout.PRODUCTION])  # connect first
    dialog = _connect(qtbot, window, "not-a-database", embed_endpoint.url + "/embed")
    assert dialog.isVisible() and "postgresql://" in dialog.problem.text()  # stays open and says why
    dialog.reject()
    with qtbot.waitSignal(window.ctx.model_loaded, timeout=60_000):
        _connect(qtbot, window, memsense_pg.dsn, embed_endpoint.url + "/embed", service.url)
    assert window.layout_notes.line.full.endswith(CONNECTED_STEP)  # that step is done: the next one
    assert window.ctx.users[:3] == ["demo-ana", "demo-mei", "demo-raj"]
    assert "Memsense postgresql://" in window.store_label.text()
    assert "stored vectors: sentence-transformers/all-MiniLM-L6-v2 (384 dims)" in window.model_label.text()
    window.user_combo.setCurrentText("demo-ana")
    window.query_edit.setText(QUESTION)
    panel = window.memsense.panel
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=60_000):
        window.queries.run_query()
    qtbot.waitUntil(lambda: "match" in panel.summary.text() or "differ" in panel.summary.text(), timeout=30_000)
    assert panel.summary.text().startswith("production and reproduction match: 4/4 results")
    assert [panel.model.index(r, 3).data() for r in range(4)] == ["="] * 4
    assert service.asked[-1]["user_id"] == "demo-ana" and service.asked[-1]["top_k"] == 4

    # a tuned setting changes the reproduction, not production: the view says where they part
    asked = len(service.asked)
    window.ctx.current.apply(window.ctx.current.config.with_weights(vec_full=0.0, vec_user=0.0, vec_asst=0.0), "test settings")
    qtbot.waitUntil(lambda: "differ" in panel.summary.text(), timeout=10_000)
    assert len(service.asked) == asked  # same search: production is not asked again
    assert any(panel.model.index(r, 3).data() == "≠" and panel.model.index(r, 6).data() for r in range(4))


def test_connection_errors_show_one_dialog_line(qtbot, window, memsense_pg, embed_endpoint):
    messages = []
    window.ctx.error_reported.connect(messages.append)
    with qtbot.waitSignal(window.ctx.error_reported, timeout=30_000):
        _connect(qtbot, window, memsense_pg.dsn, embed_endpoint.url + "/embed", tenant="nobody")
    assert "no chunks for tenant 'nobody'" in messages[-1]
    box = window.findChild(QMessageBox, "error-dialog")
    assert box is not None and "\n" not in box.text()
