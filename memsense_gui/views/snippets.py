"""Snippet cells: the query words, marked «so» in the model's text, drawn in bold without the marks.

The model keeps the marked plain text (`core.recall.lexical.snippet.Snippet.marked`), so copying a cell,
sorting and the CSV exports read the same words; only the painting differs.
"""
from __future__ import annotations

import re
from functools import lru_cache

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
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
        flags = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
        for x, width, piece, marked in _placed(text, rect.right() - rect.left(), font.toString()):
            painter.setFont(bold if marked else font)
            painter.drawText(QRect(rect.left() + x, rect.top(), width, rect.height()), flags, piece)


@lru_cache(maxsize=4096)
def _placed(text: str, room: int, font: str) -> tuple[tuple[int, int, str, bool], ...]:
    """Where each piece of a marked snippet goes in a cell `room` px wide: (x, width, piece,
    marked), the last piece that does not fit cut with "…" and nothing after it. A slider tick
    repaints the same snippets in the same columns, so their measuring is done once."""
    plain = QFont()
    plain.fromString(font)
    bold = QFont(plain)
    bold.setBold(True)
    metrics = {False: QFontMetrics(plain), True: QFontMetrics(bold)}
    out, x = [], 0
    for piece, marked in segments(text):
        m = metrics[marked]
        left = room - x
        width = m.horizontalAdvance(piece)
        if width > left:
            out.append((x, left, m.elidedText(piece, Qt.TextElideMode.ElideRight, max(left, 0)), marked))
            break
        out.append((x, width, piece, marked))
        x += width
    return tuple(out)


def show_snippets(view: QTableView, column: int) -> SnippetDelegate:
    """Draw `column` of `view` as marked snippets."""
    delegate = SnippetDelegate(view)
    view.setItemDelegateForColumn(column, delegate)
    return delegate
