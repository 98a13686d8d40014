"""Help > About: the versions the app runs with, its embedding model and the open store's format.

Versions are read from the installed packages (`importlib.metadata`) and from Qt itself; the
model and the store are the open engine's (`store_facts`, run on the engine thread: the engine
is used there only).
"""
from __future__ import annotations

import html
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

import core

PACKAGES = ("pyqtgraph", "numpy", "onnxruntime")
"""The libraries named in About beside Python and Qt/PySide6 (their installed versions)."""
ABOUT = "memsense-gui shows why the Memsense conversational memory ranked what it ranked, and lets you tune it live."


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions() -> list[tuple[str, str]]:
    """(name, version) of the app, Python, Qt, PySide6 and the libraries of `PACKAGES`."""
    return [("memsense-gui", core.__version__), ("Python", f"{platform.python_version()} "
                                                   f"({platform.python_implementation()})"),
            ("Qt", qVersion()), ("PySide6", pyside_version), *((p, _version(p)) for p in PACKAGES)]


def store_facts(engine: Any, location: str, task: object = None) -> list[tuple[str, str]]:
    """(name, value) of the open store: its location, its format, and the model that embeds
    its queries (folder name and content identity). A job on the engine thread (`task`)."""
    store = getattr(engine, "store", None)
    kind = type(store).__module__ if store is not None else ""
    if kind.endswith("embedded.store"):
        from core.recall.embedded.store import FORMAT

        fmt = f"embedded folder store, format {FORMAT}"
    elif kind.endswith("qdrant.store"):
        from core.recall.qdrant.store import LAYOUT

        fmt = "Qdrant server, " + ("one collection per user (older layout)" if getattr(store, "legacy", False) else LAYOUT)
    elif getattr(engine, "model_text", None):
        fmt = "a live Memsense database (read-only)"
    else:
        fmt = type(engine).__name__
    facts = [("Store", location), ("Store format", fmt)]
    embedder = getattr(engine, "embedder", None)
    model_path = getattr(engine, "model_path", None)
    if model_path:
        identity = getattr(embedder, "key", "")
        runtime = getattr(embedder, "runtime", "")
        folder = Path(model_path)
        name = folder.parent.name if folder.name == "model" else folder.name  # a packaged model: its package
        facts.append(("Embedding model", f"{name} ({model_path})"))
        facts.append(("Model identity", f"{identity}" + (f"; runs with {runtime}" if runtime else "")))
    elif getattr(engine, "model_text", None):
        facts.append(("Embedding model", str(engine.model_text)))
    return facts


BREAK = "\u200b"
"""A zero-width space: where a long path may wrap (a label wraps only at spaces)."""
LONG_WORD = 32


def breakable(value: str) -> str:
    """`value` with a place to wrap after each path separator, dot, dash and underscore of any word
    longer than `LONG_WORD` characters, so a long model path wraps instead of being cut."""
    return " ".join(re.sub(r"([/\\._-])", r"\1" + BREAK, w) if len(w) > LONG_WORD else w for w in value.split(" "))


class AboutDialog(QDialog):
    """Versions, then the open store's facts once the engine thread has read them."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("about-dialog")
        self.setWindowTitle("About memsense")
        intro = QLabel(f"<b>memsense-gui {html.escape(core.__version__)}</b><br>{html.escape(ABOUT)}")
        intro.setWordWrap(True)
        self.form = QFormLayout()
        self.rows: dict[str, QLabel] = {}
        for name, value in versions():
            self._row(name, value)
        self.store_row = self._row("Store", "no store open")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(self.form)
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    def _row(self, name: str, value: str) -> QLabel:
        label = self.rows.get(name)
        if label is None:
            label = self.rows[name] = QLabel()
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(f"{name}:", label)
        label.setText(breakable(value))
        label.setToolTip(value if breakable(value) != value else "")
        return label

    def set_store(self, facts: list[tuple[str, str]]) -> None:
        for name, value in facts:
            self._row(name, value)
        self.fit_height()

    def fit_height(self) -> None:
        """As tall as the wrapped lines need at this width (a dialog does not follow its labels'
        height for width by itself: a wrapped path's last lines were cut)."""
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            self.resize(self.width(), max(self.height(), layout.totalHeightForWidth(self.width())))

    def text(self) -> str:
        """Everything shown, one `name: value` a line (for a bug report)."""
        return "\n".join(f"{name}: {label.text().replace(BREAK, '')}" for name, label in self.rows.items())
