"""A question picked in the comparison, under A and B side by side with snippets and gold marks."""
from __future__ import annotations

from PySide6.QtCore import Qt


def test_a_compared_question_shows_both_sides(qtbot, evaluation_window):
    window, view = evaluation_window("judged")
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    view.b_combo.setCurrentText("bm25_only")
    view.ties_check.setChecked(True)
    table = view.diff_table
    index = table.model().index(0, 1)
    row = view.diff_model.rows[table.model().mapToSource(index).row()]
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):  # a click opens it in the inspector too
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center())
    table.activated.emit(index)  # Enter or double-click: the A/B tab comes to the front
    assert view.tabs.currentWidget() is view.ab_view
    metric = view.metric_combo.currentText()
    a_text, b_text = (side.toPlainText() for side in view.ab_view.sides)
    assert f"A · {view.a_combo.currentText()}" in a_text and f"{metric} = {row['a']:.2f}" in a_text
    assert "B · bm25_only" in b_text and f"{metric} = {row['b']:.2f}" in b_text
    for text, sessions in ((a_text, row["a_sessions"]), (b_text, row["b_sessions"])):
        for rank, s in enumerate(sessions, start=1):
            assert f"#{rank}" in text and f"S{s:03d}" in text
    assert row["question"] in view.ab_view.title.text()
