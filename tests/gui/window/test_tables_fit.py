"""Every table of every task layout readable at 1280×720 (issue 36): walks each layout, raises each
of its docks in turn and counts the tables whose key columns are not whole inside their viewport
(they would need a sideways scroll). The key columns of the four tables the issue names are
written here from their models: Results (#, the grade given, snippet, final, the MMR score its order follows),
Cases (question, pass, the metric), Evaluation (preset, each metric), Why not? (chunk, fate,
rank), and Production's (each side's id and final, = or ≠); any other table's key column is its
first shown one."""
from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QTableView, QWidget

from memsense_gui.models.cases import CasesModel
from memsense_gui.models.evaluation import PresetMetricsModel
from memsense_gui.models.pins import PinsModel
from memsense_gui.models.production import ProductionModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.views.dock import DockId, ViewDock
from memsense_gui.views.production import ProductionPanel
from memsense_gui.window.failures_actions import install_failures
from memsense_gui.window.layouts import PLANS, Layout
from memsense_gui.window.run_actions import install_runs

SIZE = (1280, 720)


def key_columns(view: QTableView) -> list[int]:
    model = view.model()
    source = model.sourceModel() if hasattr(model, "sourceModel") else model
    if isinstance(source, ResultsModel):
        return [ResultsModel.RANK, ResultsModel.GRADE, ResultsModel.PREVIEW, ResultsModel.FINAL, ResultsModel.MMR]
    if isinstance(source, CasesModel):
        return [CasesModel.QUESTION, CasesModel.RESULT, CasesModel.METRIC]
    if isinstance(source, PresetMetricsModel):
        return [PresetMetricsModel.PRESET, *range(PresetMetricsModel.QUESTIONS + 1, source.columnCount())]
    if isinstance(source, PinsModel):
        return [PinsModel.CHUNK, PinsModel.STATUS, PinsModel.RANK]
    if isinstance(source, ProductionModel):
        return [ProductionModel.RANK, ProductionModel.PROD, ProductionModel.PROD_FINAL, ProductionModel.MATCH,
                ProductionModel.OURS, ProductionModel.OURS_FINAL]
    header = view.horizontalHeader()
    return [header.logicalIndex(v) for v in range(header.count())
            if not header.isSectionHidden(header.logicalIndex(v))][:1]


def cut_columns(view: QTableView, frame: QWidget | None = None) -> list[str]:
    """The key columns of `view` not whole inside its viewport, nor inside `frame` (the viewport
    of the dock's scroll area: a dock whose view is wider than it scrolls sideways too); hidden
    ones count as cut."""
    header, width = view.horizontalHeader(), view.viewport().width()
    cut = []
    for c in key_columns(view):
        x = header.sectionViewportPosition(c)
        inside = 0 <= x and x + header.sectionSize(c) <= width and header.sectionSize(c) >= 24
        if inside and frame is not None:
            left = view.viewport().mapTo(frame, QPoint(x, 0)).x()
            inside = 0 <= left and left + header.sectionSize(c) <= frame.width()
        if header.isSectionHidden(c) or not inside:
            cut.append(str(view.model().headerData(c, header.orientation())))
    return cut


def _tables(widget: QWidget) -> list[QTableView]:
    return [t for t in widget.findChildren(QTableView) if t.isVisible() and not t.visibleRegion().isEmpty()]


def walk(qtbot, w) -> dict[str, list[str]]:
    """Each layout, each of its docks raised in turn: the tables with cut key columns, by name."""
    found: dict[str, list[str]] = {}
    for layout in Layout:
        w.layouts.switch(layout)
        w.default_layout()
        qtbot.wait(30)
        plan = PLANS[layout]
        places: list[tuple[str, QWidget]] = [("results", w.results)] if plan.results else []
        for which in plan.docks:
            dock = w.docks.get(which)
            if dock is None:
                continue
            dock.raise_()
            qtbot.wait(30)
            places.append((which.value, dock))
            for name, place in places:
                frame = place.widget().viewport() if isinstance(place, ViewDock) else None
                for table in _tables(place):
                    cut = cut_columns(table, frame)
                    if cut:
                        found[f"{layout.value}/{name}/{table.objectName() or type(table.model()).__name__}"] = cut
    return found


def test_no_table_of_any_layout_needs_a_sideways_scroll_at_1280(qtbot, evaluation_window):
    w, view = evaluation_window("judged")
    install_runs(w, view)
    install_failures(w)
    w.add_view(DockId.PRODUCTION, ProductionPanel())
    w.resize(*SIZE)
    w.show()
    qtbot.waitUntil(lambda: (w.width(), w.height()) == SIZE, timeout=5_000)
    w.default_layout()
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    w.query_edit.setText("where did they travel")
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.queries.run_query()
    session = w.ctx.session
    target = next(c.memory_id for c in session.pool.chunks
                  if c.kind == "session" and c.memory_id not in session.ranking.result_ids)
    session.pin(target)
    qtbot.wait(100)
    found = walk(qtbot, w)
    print(f"tables whose key columns need a sideways scroll at 1280×720: {len(found)}")
    for name, cut in sorted(found.items()):
        print(f"  {name}: {', '.join(cut)}")
    assert not found, found


def test_a_click_in_the_a_b_list_keeps_b_minus_a_and_the_header_in_view(qtbot, evaluation_window):
    """Found at 1280×720: clicking a question scrolled the A/B list sideways, B − A out of view."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from memsense_gui.models.evaluation import QuestionDiffModel

    w, view = evaluation_window("judged")
    w.resize(*SIZE)
    w.show()
    w.raise_dock(DockId.EVALUATION)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    view.ties_check.setChecked(True)  # every question listed
    table = view.diff_table
    qtbot.waitUntil(lambda: table.model().rowCount() > 0 and table.isVisible(), timeout=5_000)
    table.setColumnWidth(QuestionDiffModel.QUESTION, table.viewport().width() + 200)  # a long question
    index = table.model().index(0, QuestionDiffModel.QUESTION)
    rect = table.visualRect(index)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 5, rect.center().y()))
    qtbot.wait(QApplication.doubleClickInterval() + 250)
    assert table.horizontalScrollBar().value() == 0
    assert not cut_columns_of(table, [QuestionDiffModel.DIFF])


def cut_columns_of(view: QTableView, columns: list[int]) -> list[int]:
    header, width = view.horizontalHeader(), view.viewport().width()
    return [c for c in columns if header.sectionViewportPosition(c) < 0
            or header.sectionViewportPosition(c) + header.sectionSize(c) > width]
