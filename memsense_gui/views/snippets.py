"""Snippet cells: the query words, marked «so» in the model's text, drawn in bold without the marks.

The model keeps the marked plain text (`core.recall.lexical.snippet.Snippet.marked`), so copying a cell,
sorting and the CSV exports read the same words; only the painting differs.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

_MARKED = re.compile(r"«([^»]*)»")


def segments(text: str) -> list[tuple[str, bool]]:
    """`"a «b» c"` -> [("a ", False), ("b", True), (" c", False)]: (text, marked) pieces in order."""
    out, last = [], 0
    for m in _MARKED.finditer(text):
        if m.start() > last:
            out.append((text[last:m.start()], False))
        out.append((m.group(1), True))
        last = m.end()
    if last < len(text):
        out.append((text[last:], False))
    return out


class SnippetDelegate(QStyledItemDelegate):
    """Paints a marked snippet on one line: marked words bold, the rest plain, "…" where it is cut."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget).adjusted(2, 0, -2, 0)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text  # Text: the model's foreground
        painter.save()
        painter.setPen(opt.palette.color(role))
        self._draw(painter, rect, text, opt.font)
        painter.restore()

    @staticmethod
    def _draw(painter: QPainter, rect: QRect, text: str, font: QFont) -> None:
        bold = QFont(font)
        bold.setBold(True)
        x = rect.left()
        for piece, marked in segments(text):
            f = bold if marked else font
            painter.setFont(f)
            metrics = painter.fontMetrics()
            room = rect.right() - x
            width = metrics.horizontalAdvance(piece)
            if width > room:
                piece = metrics.elidedText(piece, Qt.TextElideMode.ElideRight, max(room, 0))
                painter.drawText(QRect(x, rect.top(), room, rect.height()),
                                 int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), piece)
                return
            painter.drawText(QRect(x, rect.top(), width, rect.height()),
                             int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), piece)
            x += width


def show_snippets(view: QTableView, column: int) -> SnippetDelegate:
    """Draw `column` of `view` as marked snippets."""
    delegate = SnippetDelegate(view)
    view.setItemDelegateForColumn(column, delegate)
    return delegate
