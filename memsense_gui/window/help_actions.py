"""Help: the glossary (F1, at the term of the column under the mouse or of the focused table
cell), About (versions, model, the open store's format) and the shortcuts list."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QWidget

from core.rank.glossary import find
from memsense_gui.state.context import AppContext
from memsense_gui.views.about import AboutDialog, store_facts
from memsense_gui.views.glossary import GlossaryDialog
from memsense_gui.window.parts import Shell

DISPLAY, TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole


def column_name(header: QHeaderView, section: int) -> str:
    """The name a column's header gives its term: its label when the glossary knows it, else the
    name its tooltip starts with (`vec_full: weight …` on a route column), else the label."""
    model = header.model()
    if model is None or section < 0:
        return ""
    label = str(model.headerData(section, header.orientation(), DISPLAY) or "")
    if find(label) is not None:
        return label
    tip = str(model.headerData(section, header.orientation(), TOOLTIP) or "")
    lead = tip.split(":", 1)[0].strip()
    return lead if lead and find(lead) is not None else label


def header_under_mouse() -> tuple[QHeaderView, int] | None:
    """The horizontal header and section under the mouse pointer, if any."""
    pos = QCursor.pos()
    widget = QApplication.widgetAt(pos)
    while widget is not None and not isinstance(widget, QHeaderView):
        widget = widget.parentWidget() if not isinstance(widget, QAbstractItemView) else None
    if not isinstance(widget, QHeaderView) or widget.orientation() != Qt.Orientation.Horizontal:
        return None
    return widget, widget.logicalIndexAt(widget.mapFromGlobal(pos))


def focused_column() -> tuple[QHeaderView, int] | None:
    """The horizontal header and column of the focused table's current cell, if a table has focus."""
    widget: QWidget | None = QApplication.focusWidget()
    while widget is not None and not isinstance(widget, QAbstractItemView):
        widget = widget.parentWidget()
    header = getattr(widget, "horizontalHeader", None)
    if widget is None or header is None:
        return None
    index = widget.currentIndex()
    return header(), index.column() if index.isValid() else 0


class HelpActions:
    """Help > Glossary (F1), About, Shortcuts."""

    def __init__(self, ctx: AppContext, window: Shell):
        self.ctx = ctx
        self.window = window
        self.glossary: GlossaryDialog | None = None
        self.about: AboutDialog | None = None

    def context_help(self) -> GlossaryDialog:
        """F1: the glossary at the term of the column under the mouse, else of the focused cell."""
        at = header_under_mouse() or focused_column()
        return self.show_glossary(column_name(*at) if at is not None else "")

    def show_glossary(self, name: str = "") -> GlossaryDialog:
        if self.glossary is None:
            self.glossary = GlossaryDialog(self.window.window())
        self.glossary.show_term(name)
        self.glossary.show()
        self.glossary.raise_()
        self.glossary.activateWindow()
        return self.glossary

    def show_about(self) -> AboutDialog:
        if self.about is None:
            self.about = AboutDialog(self.window.window())
        dialog = self.about
        engine, location = self.ctx.engine, self.ctx.location
        if engine is None or location is None:
            dialog.set_store([("Store", "no store open"), ("Store format", "—")])
        else:
            dialog.set_store([("Store", location), ("Store format", "reading…")])
            self.ctx.engine_runner.submit("about the store", store_facts, engine, location,
                                          succeeded=dialog.set_store,
                                          failed=lambda e: dialog.set_store([("Store format", f"unknown ({e})")]))
        dialog.show()
        dialog.raise_()
        return dialog
