"""Plots and tables as PNG or SVG files, rendered with Qt directly, under a title band.

A plot is drawn as laid out on screen (so with its data-to-pixel mapping), shifted down by the
title band; `export_plot` returns that mapping (`PlotFile`). A plot that is not on screen (its
dock closed or tabbed away) is laid out first, and one smaller than MIN_SIZE is drawn at
MIN_SIZE, then put back. The SVG is written at the screen's resolution: pyqtgraph draws axes
and bars through QPictures, which Qt rescales by the ratio of the two devices' resolutions, so
at the SVG default of 72 dpi they came out at 3/4 size (the zero line at −0.1, bars beside
their ticks). The PNG is drawn as on a high-density screen (device pixel ratio `scale`), so
items that ignore transforms (the legend) scale too. Items are put in pyqtgraph's export mode
and uncached while drawn. A table is exported whole: every row, not the rows scrolled into view.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QCoreApplication, QEvent, QIODevice, QPoint, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QResizeEvent, QTransform
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QScrollArea, QTableView, QWidget

from core.atomic import check_target, write_output
from core.errors import MemsenseError

MIN_SIZE = QSize(960, 540)
"""The smallest plot exported: one never shown, or shown in a short dock, is drawn this big."""
MARGIN = 8


def _check(path: Path, kinds: str = "plots") -> str:
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise MemsenseError(f"{path}: {kinds} are exported as .png or .svg")
    check_target(path, "the plot file")
    return suffix


@dataclass(frozen=True)
class PlotFile:
    """An exported plot: where its data area is and how data maps to the file's pixels."""

    path: Path
    band: float  # the title band's height: the plot starts this far down
    size: QSize  # the file's size in pixels (before a PNG's scale)
    data_to_file: QTransform  # data (view) coordinates of the main plot -> file pixels
    data_area: QRectF  # the main plot's data area in file pixels

    def point(self, x: float, y: float) -> QPointF:
        return self.data_to_file.map(QPointF(x, y))


def export_plot(widget: pg.GraphicsLayoutWidget, path: str | Path, title: Sequence[str] = (),
                scale: float = 2.0, size: QSize | None = None) -> PlotFile:
    """Write the plot (with its legend) under `title` as PNG or SVG, chosen by the file's
    extension; returns where its data landed in the file. `size`: draw it this size (in
    screen pixels, below the title), whether it is on screen or not, and whatever its size there."""
    path = Path(path)
    suffix = _check(path)
    restore = lay_out(widget, size)
    try:
        band = TitleBand(title, widget.font(), widget.width())
        source = widget.mapToScene(widget.viewport().rect()).boundingRect()
        to_file = QTransform.fromTranslate(-source.left(), band.height - source.top())
        item = _plot_item(widget)
        vb = item.vb if item is not None else None
        placed = PlotFile(path, band.height, QSize(widget.width(), widget.height() + int(band.height)),
                          vb.childGroup.sceneTransform() * to_file if vb is not None else to_file,
                          to_file.mapRect(vb.sceneBoundingRect()) if vb is not None else QRectF())
        draw = _scene_drawer(widget, band.height)
        background = _background(widget)
        if suffix == ".png":
            write_png(draw, placed.size, path, background, band, scale, widget.logicalDpiX())
        else:
            write_svg(draw, placed.size, path, background, band, widget.logicalDpiX())
    finally:
        put_back(widget, restore)
    if not path.exists():
        raise MemsenseError(f"cannot write {path}; check the folder is writable")
    return placed


def _plot_item(widget: pg.GraphicsView) -> pg.PlotItem | None:
    """The main plot of a GraphicsLayoutWidget holding one (`.plot`) or of a PlotWidget."""
    item = getattr(widget, "plot", None)
    if isinstance(item, pg.PlotItem):
        return item
    return widget.getPlotItem() if hasattr(widget, "getPlotItem") else None


def lay_out(widget: pg.GraphicsView, size: QSize | None = None) -> QSize | None:
    """Lay the plot out for export; returns the size to go back to, if it changed.

    The plot is drawn at `size` when given; else a plot is laid out at its last size, or at
    least MIN_SIZE (one never shown, or shown in a short dock), and put back afterwards. The
    resize is sent as an event, so the view's viewport follows it even when the plot is not on
    screen (a hidden widget's viewport is otherwise laid out only when shown: a plot in a short
    hidden tab was drawn at MIN_SIZE through its old, shorter viewport, and came out clipped).
    Then the layout is settled: pyqtgraph widens an axis for its tick labels only once
    it has drawn them (labels that do not fit are left out), so draw, relayout, repeat."""
    old, shown = widget.size(), widget.isVisible()
    size = size or old.expandedTo(MIN_SIZE)
    restore = old if size != old else None
    if size != old:
        _hold_in_scroll_area(widget, True)
    if size != old or not shown:
        _resize(widget, size, old)
    scratch = QImage(max(widget.width(), 1), max(widget.height(), 1), QImage.Format.Format_ARGB32)
    for _ in range(3):
        before = [item.geometry() for item in widget.scene().items() if isinstance(item, pg.AxisItem)]
        painter = QPainter(scratch)
        try:
            widget.scene().render(painter)
        finally:
            painter.end()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        if before == [item.geometry() for item in widget.scene().items() if isinstance(item, pg.AxisItem)]:
            break
    return restore


def _resize(widget: pg.GraphicsView, size: QSize, old: QSize) -> None:
    widget.resize(size)
    QCoreApplication.sendEvent(widget, QResizeEvent(size, old))  # the scroll area lays its viewport out
    widget.resizeEvent(QResizeEvent(size, old))  # pyqtgraph lays its scene out (not reached by the event when hidden)


_HELD = "memsense-export-held"
"""The scroll area's own `widgetResizable`, kept on the plot while `_hold_in_scroll_area` holds it."""


def _hold_in_scroll_area(widget: QWidget, hold: bool) -> None:
    """A plot inside a scroll area that sizes it to its viewport (the contribution bars) keeps
    the export's size while it is drawn (`hold`), and follows the viewport again after: the
    scroll area's next layout had put it back to the on-screen width, and the file came out at
    half of MIN_SIZE with its title cut."""
    viewport = widget.parentWidget()
    area = viewport.parentWidget() if viewport is not None else None
    if isinstance(area, QScrollArea) and area.widget() is widget:
        if hold:
            widget.setProperty(_HELD, area.widgetResizable())
            area.setWidgetResizable(False)
        elif widget.property(_HELD) is not None:
            area.setWidgetResizable(bool(widget.property(_HELD)))
            widget.setProperty(_HELD, None)


def put_back(widget: pg.GraphicsView, size: QSize | None) -> None:
    if size is not None:
        _resize(widget, size, widget.size())
        _hold_in_scroll_area(widget, False)


class TitleBand:
    """Lines of text above the plot: the first bold, the rest in the widget's font."""

    def __init__(self, lines: Sequence[str], font: QFont, width: float):
        self.bold = QFont(font)
        self.bold.setBold(True)
        self.font = QFont(font)
        fonts = [self.bold if i == 0 else self.font for i in range(len(lines))]
        self.lines = [QFontMetricsF(f).elidedText(line, Qt.TextElideMode.ElideMiddle, width - 2 * MARGIN)
                      for f, line in zip(fonts, lines) if line]
        heights = [QFontMetricsF(self.bold if i == 0 else self.font).lineSpacing() for i in range(len(self.lines))]
        self.height = float(round(sum(heights) + 2 * MARGIN)) if self.lines else 0.0
        self._heights = heights

    def paint(self, painter: QPainter, width: float, color: QColor) -> None:
        y: float = MARGIN
        painter.setPen(color)
        for i, (line, h) in enumerate(zip(self.lines, self._heights)):
            painter.setFont(self.bold if i == 0 else self.font)
            painter.drawText(QRectF(MARGIN, y, width - 2 * MARGIN, h),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), line)
            y += h


def _background(widget: QWidget) -> QColor:
    if hasattr(widget, "backgroundBrush"):
        return widget.backgroundBrush().color()
    return widget.palette().base().color()


def _text_color(background: QColor) -> QColor:
    return QColor("#f0f0f0") if background.lightnessF() < 0.5 else QColor("#1d1d1f")


def _scene_drawer(widget: pg.GraphicsView, band: float):
    """Draw the visible part of the scene at its on-screen size, `band` pixels down."""
    source = widget.mapToScene(widget.viewport().rect()).boundingRect()

    def draw(painter: QPainter, resolution_scale: float) -> None:
        scene = widget.scene()
        items = [i for i in scene.items() if hasattr(i, "setExportMode")]
        cached = {i: i.cacheMode() for i in scene.items() if i.cacheMode() != QGraphicsItem.CacheMode.NoCache}
        opts = {"antialias": True, "background": _background(widget), "painter": painter,
                "resolutionScale": resolution_scale}
        for item in items:
            item.setExportMode(True, opts)
        for item in cached:  # a cached pixmap is screen-sized: it would not scale with a PNG's 2×
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            scene.render(painter, QRectF(0, band, source.width(), source.height()), source)
        finally:
            for item in items:
                item.setExportMode(False, opts)
            for item, mode in cached.items():
                item.setCacheMode(mode)

    return draw


def _widget_drawer(widget: QWidget, band: float):
    def draw(painter: QPainter, _scale: float) -> None:
        widget.render(painter, QPoint(0, int(band)))

    return draw


def write_png(draw, size: QSize, path: Path, background: QColor, band: TitleBand, scale: float = 2.0,
              dpi: float = 96.0) -> None:
    """A crisp bitmap at `scale` × `size`, at the screen's resolution (so fonts match)."""
    image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32)
    image.setDotsPerMeterX(int(round(dpi / 0.0254)))
    image.setDotsPerMeterY(int(round(dpi / 0.0254)))
    image.setDevicePixelRatio(scale)  # as on a high-density screen: items that ignore transforms scale too
    image.fill(background)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        band.paint(painter, size.width(), _text_color(background))
        draw(painter, 1.0)  # the device pixel ratio scales
    finally:
        painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # the stubs omit (QIODevice, str), which Qt takes
        raise MemsenseError(f"cannot draw the image for {path}")
    write_output(path, bytes(buffer.data().data()), what="the plot file")


def write_svg(draw, size: QSize, path: Path, background: QColor, band: TitleBand, dpi: float = 96.0) -> None:
    """Vector SVG, one user unit per screen pixel, at the screen's resolution."""
    generator = QSvgGenerator()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator.setOutputDevice(buffer)
    generator.setResolution(int(round(dpi)))
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    generator.setTitle(band.lines[0] if band.lines else path.stem)
    if len(band.lines) > 1:
        generator.setDescription(" · ".join(band.lines[1:]))
    painter = QPainter(generator)
    try:
        painter.fillRect(QRectF(0, 0, size.width(), size.height()), background)
        band.paint(painter, size.width(), _text_color(background))
        draw(painter, 1.0)
    finally:
        painter.end()
    write_output(path, bytes(buffer.data().data()), what="the plot file")


def export_table_image(view: QTableView, path: Path, title: Sequence[str] = ()) -> None:
    """Every row and column of a table as PNG or SVG (not the rows scrolled into view): the
    view's model drawn by an unshown table as tall and wide as its contents."""
    suffix = _check(path, "tables")
    full = QTableView()
    full.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    try:
        full.setModel(view.model())
        full.setFont(view.font())
        full.setItemDelegate(view.itemDelegate())
        full.setWordWrap(view.wordWrap())
        full.setAlternatingRowColors(view.alternatingRowColors())
        full.verticalHeader().setVisible(False)
        full.verticalHeader().setDefaultSectionSize(view.verticalHeader().defaultSectionSize())
        full.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        full.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = view.horizontalHeader() if isinstance(view, QTableView) else None
        for c in range(full.model().columnCount()):
            if view.itemDelegateForColumn(c) is not None:  # e.g. the snippet column's bold query words
                full.setItemDelegateForColumn(c, view.itemDelegateForColumn(c))
            full.setColumnWidth(c, max(header.sectionSize(c) if header else 0, full.sizeHintForColumn(c)))
        width = sum(full.columnWidth(c) for c in range(full.model().columnCount())) + 2 * full.frameWidth()
        height = (full.horizontalHeader().sizeHint().height() + 2 * full.frameWidth()
                  + sum(full.rowHeight(r) for r in range(full.model().rowCount())))
        full.resize(width, height)
        band = TitleBand(title, view.font(), width)
        size = QSize(width, height + int(band.height))
        background = view.palette().base().color()
        draw = _widget_drawer(full, band.height)
        if suffix == ".png":
            write_png(draw, size, path, background, band, 2.0, view.logicalDpiX())
        else:
            write_svg(draw, size, path, background, band, view.logicalDpiX())
    finally:
        full.setModel(None)
        full.deleteLater()
