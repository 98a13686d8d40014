"""Plots and tables as PNG or SVG files, rendered with Qt directly."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from core.errors import MemsenseError


def export_plot(widget: pg.GraphicsLayoutWidget, path: str | Path, scale: float = 2.0) -> None:
    """Write the plot (with its legend) as PNG or SVG, chosen by the file's extension.

    The scene is rendered with Qt directly (PNG at `scale` × the on-screen size, SVG through
    QSvgGenerator): with Qt 6.12, pyqtgraph 0.14's SVGExporter cannot parse the path data Qt
    writes, and its ImageExporter's parameter tree corrupts a bool refcount at exit.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise MemsenseError(f"{path}: plots are exported as .png or .svg")
    if not path.parent.is_dir():
        raise MemsenseError(f"cannot write {path}: the folder does not exist; choose another")
    if suffix == ".png":
        write_png(widget, path, scale)
    else:
        write_svg(widget, path)
    if not path.exists():
        raise MemsenseError(f"cannot write {path}; check the folder is writable")


def write_png(widget, path: Path, scale: float = 2.0) -> None:
    """A crisp bitmap of a graphics view's scene (or any widget) at `scale` × its size."""
    size = widget.size()
    image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32)
    image.fill(widget.palette().base().color() if not hasattr(widget, "backgroundBrush")
               else widget.backgroundBrush().color())
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        if hasattr(widget, "scene") and callable(widget.scene):
            source = widget.mapToScene(widget.viewport().rect()).boundingRect()
            widget.scene().render(painter, QRectF(image.rect()), source)
        else:
            painter.scale(scale, scale)
            widget.render(painter, QPoint(0, 0))
    finally:
        painter.end()
    if not image.save(str(path)):
        raise MemsenseError(f"cannot write {path}; check the folder is writable")


def write_svg(widget, path: Path) -> None:
    """Vector SVG of a graphics view's scene, or of any widget."""
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(widget.size())
    generator.setViewBox(QRect(0, 0, widget.width(), widget.height()))
    generator.setTitle(path.stem)
    painter = QPainter(generator)
    try:
        if hasattr(widget, "scene") and callable(widget.scene):
            widget.scene().render(painter)
        else:
            widget.render(painter, QPoint(0, 0))
    finally:
        painter.end()


def export_widget_image(widget: QWidget, path: Path) -> None:
    """A table or any widget as PNG (pixels) or SVG (vector)."""
    suffix = path.suffix.lower()
    if not path.parent.is_dir():
        raise MemsenseError(f"cannot write {path}: the folder does not exist; choose another")
    if suffix == ".png":
        write_png(widget, path)
    elif suffix == ".svg":
        write_svg(widget, path)
    else:
        raise MemsenseError(f"{path}: images are exported as .png or .svg")
