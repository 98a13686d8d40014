"""The Evaluation and Auto-tune views in the real window: questions open in the inspector, pools cached."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox

from core.config.presets import BUILTIN
from memsense_gui.views.dock import DockId
from tests.gui.fixtures import FakeEngine, eval_questions as questions

PRESETS = {name: BUILTIN[name] for name in ("memsense", "bm25_only", "dense_only")}


def test_evaluation_view_in_the_window_opens_a_question_in_the_inspector(qtbot, evaluation_window):
    window, view = evaluation_window("judged")
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as blocker:
        view.start()
    assert len(blocker.args[0]) == len(window.ctx.presets.all()) + 1  # every preset, then the settings on screen
    assert blocker.args[0][-1].preset == "current settings" and blocker.args[0][-1].config == window.ctx.current.config
    recalls = len(window.engines[-1].recalls)
    assert recalls >= 10  # every question recalled once, on the engine
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    assert len(window.engines[-1].recalls) == recalls  # pools are cached: re-rank only
    view.ties_check.setChecked(True)
    table = view.diff_table
    index = table.model().index(0, 1)
    row = view.diff_model.rows[table.model().mapToSource(index).row()]
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center())
    assert window.query_edit.text() == row["question"]
    assert window.user_combo.currentText() == row["user"]
    assert window.ctx.session.gold == frozenset(f"{row['user']}:S{s:03d}" for s in row["gold"])


def test_autotune_tab_in_the_window(qtbot, evaluation_window):
    window, view = evaluation_window("per_user")
    panel = view.autotune
    assert panel.ticked(panel.train_list) == [window.ctx.users[0]]
    panel.trials_spin.setValue(6)
    with qtbot.waitSignal(panel.tuning_finished, timeout=30_000) as blocker:
        panel.start()
    assert len(blocker.args[0].trials) == 6
    assert panel.save_best("from-window")
    assert "from-window" in window.ctx.presets.all()


def test_gold_sessions_the_store_lacks_are_named_beside_the_figures(qtbot, evaluation_window):
    q = questions(n=1)[0]
    _, view = evaluation_window([{"user": q.user_id, "question": q.text, "answer": "", "category": 1,
                                  "evidence": [f"D{q.gold_sessions[0]}:1", "D99:1"]}])
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    assert "Warning: 1 of 1 questions have gold sessions the store does not hold" in view.status.text()
    assert f"session 99 of {q.user_id}" in view.status.text()


def test_autotune_tab_cross_validates_by_user_in_the_window(qtbot, evaluation_window, monkeypatch):
    monkeypatch.setattr(FakeEngine, "USERS", ("synth-a", "synth-b", "synth-c"))
    window, view = evaluation_window("per_user")
    window.raise_dock(DockId.EVALUATION)  # in the Evaluate layout
    panel = view.autotune
    view.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(panel.folds_spin.isVisible, timeout=5_000)
    assert panel.folds_spin.value() == 3  # 3 users: min(5, 3) folds
    panel.trials_spin.setValue(4)
    with qtbot.waitSignal(panel.tuning_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    cv = blocker.args[0]
    assert sorted(u for f in cv.folds for u in f.held_users) == sorted(window.ctx.users)  # each user held out once
    assert cv.questions == 4 * len(window.ctx.users) and len(cv.final.trials) == 4
    assert panel.folds_text.toPlainText().count("fold ") == 3 and cv.verdict() in panel.status.text()
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a: asked.append(a[2]) or QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("cv-window", True))
    qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    start = next(c for c in cv.choice.contenders if c.kind == "start")
    assert bool(asked) == (cv.chosen.mean - start.mean <= 0)  # asks when the choice gains nothing held out
    assert window.ctx.presets.all()["cv-window"] == cv.best == cv.chosen.config
