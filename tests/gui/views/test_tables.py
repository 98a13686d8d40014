"""The shared tables (issue 36): a column chooser on the header's context menu, kept per table with
`QHeaderView.saveState`; a cut cell's whole text as its tooltip; numbers right-aligned; a click
never scrolls a table sideways."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QApplication, QWidget

from memsense_gui.models.table import RIGHT_ALIGNED, RowsModel
from memsense_gui.views.tables import column_menu, cut_text, keep_columns, make_table, save_columns, set_columns

LONG = "a question long enough to be cut short in a narrow column of the table, with more words still"


class Rows(RowsModel[tuple[str, float, str]]):
    HEADERS = ("name", "score", "note")

    def display(self, row: int, col: int) -> str | None:
        value = self.rows[row][col]
        return f"{value:.3f}" if isinstance(value, float) else value

    def raw(self, row: int, col: int):
        return self.rows[row][col]


def _table(qtbot):
    model = Rows()
    model.set_rows([("short", 0.5, LONG), (LONG, 0.25, "x")])
    box = QWidget()
    view = make_table(model)
    view.setParent(box)
    view.setObjectName("test-table")
    qtbot.addWidget(box)
    view.resize(400, 200)
    for c, w in enumerate((80, 60, 120)):
        view.setColumnWidth(c, w)
    box.show()
    qtbot.waitExposed(box)
    return box, view, model


def test_the_header_menu_hides_and_shows_columns_but_never_the_last(qtbot):
    _box, view, _model = _table(qtbot)
    menu = column_menu(view)
    assert [a.text() for a in menu.actions()] == ["name", "score", "note"]
    assert all(a.isChecked() for a in menu.actions())
    menu.actions()[1].setChecked(False)
    assert view.horizontalHeader().isSectionHidden(1)
    column_menu(view).actions()[2].setChecked(False)
    last = column_menu(view).actions()[0]
    assert last.isChecked() and not last.isEnabled()  # the last shown column stays
    column_menu(view).actions()[1].setChecked(True)
    assert not view.horizontalHeader().isSectionHidden(1)


def test_the_header_has_the_menu_on_right_click(qtbot):
    _box, view, _model = _table(qtbot)
    header = view.horizontalHeader()
    assert header.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
    assert header.receivers("2customContextMenuRequested(QPoint)") >= 1


def test_columns_are_kept_per_table(qtbot, tmp_path):
    box, view, _model = _table(qtbot)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    set_columns(view, first=(2, 0), hidden=(1,))
    assert [view.horizontalHeader().logicalIndex(v) for v in range(3)] == [2, 0, 1]
    view.setColumnWidth(2, 150)
    save_columns(box, settings)
    box2, again, _ = _table(qtbot)
    assert not again.horizontalHeader().isSectionHidden(1)
    keep_columns(box2, settings)
    header = again.horizontalHeader()
    assert header.isSectionHidden(1) and header.visualIndex(2) == 0 and header.sectionSize(2) == 150


def test_a_cut_cell_shows_its_whole_text_as_tooltip_and_numbers_are_right_aligned(qtbot):
    _box, view, model = _table(qtbot)
    assert cut_text(view, model.index(0, 2)) == LONG
    assert cut_text(view, model.index(1, 0)) == LONG
    assert cut_text(view, model.index(0, 0)) is None  # "short" is whole
    assert model.index(0, 1).data(Qt.ItemDataRole.TextAlignmentRole) == RIGHT_ALIGNED
    assert model.index(0, 1).data() == "0.500"
    assert model.index(0, 0).data(Qt.ItemDataRole.TextAlignmentRole) is None


def _click_long_cell(qtbot, view, model) -> int:
    """Click the start of a cell wider than the view: the table's sideways scroll after it."""
    view.horizontalHeader().setStretchLastSection(False)
    view.setColumnWidth(2, 900)  # wider than the view
    qtbot.waitUntil(lambda: view.horizontalScrollBar().maximum() > 0, timeout=2_000)
    rect = view.visualRect(model.index(0, 2))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 5, rect.center().y()))
    assert view.currentIndex().column() == 2
    qtbot.wait(QApplication.doubleClickInterval() + 250)  # Qt scrolls to a clicked cell after this delay
    return view.horizontalScrollBar().value()


def test_a_click_on_a_long_cell_does_not_scroll_sideways(qtbot):
    _box, view, model = _table(qtbot)
    assert _click_long_cell(qtbot, view, model) == 0
    view.selectRow(1)
    assert view.horizontalScrollBar().value() == 0


def test_a_plain_table_would_scroll_sideways(qtbot):
    """What the shared table prevents: Qt's own view scrolls to the clicked cell's start."""
    from PySide6.QtWidgets import QAbstractItemView, QTableView

    _box, shared, model = _table(qtbot)
    plain = QTableView(_box)
    plain.setModel(model)
    plain.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    plain.resize(400, 200)
    plain.setColumnWidth(0, 80)
    plain.setColumnWidth(1, 60)
    plain.show()
    assert _click_long_cell(qtbot, plain, model) > 0
