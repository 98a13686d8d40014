"""Dialogs: errors that say what to do, building a store, progress, shortcuts."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QMessageBox, QProgressDialog, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from core.errors import MemsenseError
from core.evaluation.fix import FixCandidate
from core.redact import redact, split_password

MODES = {
    "hybrid": "hybrid — a chunk per session and per exchange (Memsense default)",
    "session": "session — whole sessions only",
    "turn": "turn — exchanges only",
}


def take_password(address: QLineEdit, password: QLineEdit) -> None:
    """A password typed into a database address moves to the masked field: never shown in clear on screen."""
    text, secret = split_password(address.text().strip())
    if secret is not None:
        address.setText(text)
        password.setText(secret)


def error_message(exc: BaseException, context: str = "") -> tuple[str, str, str]:
    """(title, text, details) for an error: a user's error says what to do; anything else
    says that nothing stored was changed and carries the traceback as details."""
    prefix = f"{context}: " if context else ""
    if isinstance(exc, MemsenseError):
        return "Memsense", redact(prefix + str(exc)), ""
    text = (f"{prefix}unexpected {type(exc).__name__}: {exc}\n\nNothing stored was changed. "
            "Try again; if it happens again, report it with the details below.")
    return "Memsense: unexpected error", redact(text), redact(getattr(exc, "traceback_text", ""))


def show_error(parent: QWidget | None, exc: BaseException, context: str = "") -> QMessageBox:
    """A non-blocking (window-modal) message box; the event loop keeps running."""
    title, text, details = error_message(exc, context)
    icon = QMessageBox.Icon.Warning if isinstance(exc, MemsenseError) else QMessageBox.Icon.Critical
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error-dialog")
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


class NewStoreDialog(QDialog):
    """Choose a conversation file (LoCoMo JSON or the project's JSONL), an ingest mode and a folder."""

    def __init__(self, stores_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("New store")
        self.stores_dir = stores_dir
        self.dataset = QLineEdit()
        self.dataset.setPlaceholderText("LoCoMo .json or conversation .jsonl")
        self.location = QLineEdit()
        self.mode = QComboBox()
        for key, text in MODES.items():
            self.mode.addItem(text, key)
        form = QFormLayout()
        form.addRow("Conversations", self._with_browse(self.dataset, self._browse_dataset))
        form.addRow("Ingest mode", self.mode)
        form.addRow("Store folder", self._with_browse(self.location, self._browse_location))
        note = QLabel("The format is detected from the file. Building embeds every chunk: a LoCoMo "
                      "conversation takes about a minute on a laptop CPU. You can cancel at any time.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Build")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.dataset.textChanged.connect(self._suggest_location)
        self.resize(620, self.sizeHint().height())

    @staticmethod
    def _with_browse(edit: QLineEdit, slot) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(edit, 1)
        b = QPushButton("Browse…")
        b.clicked.connect(slot)
        h.addWidget(b)
        return w

    def _browse_dataset(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Conversation file", "", "Conversations (*.json *.jsonl);;All files (*)")
        if path:
            self.dataset.setText(path)

    def _browse_location(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder for the new store", str(self.stores_dir))
        if path:
            self.location.setText(path)

    def _suggest_location(self, text: str) -> None:
        if text and not self.location.isModified():
            self.location.setText(str(self.stores_dir / Path(text).stem))

    def values(self) -> tuple[Path, Path, str]:
        return Path(self.dataset.text().strip()), Path(self.location.text().strip()), self.mode.currentData()

    def _accept(self) -> None:
        dataset, location, _ = self.values()
        if not dataset.is_file():
            QMessageBox.warning(self, "New store", f"{dataset} is not a file: choose a LoCoMo .json or a .jsonl file.")
            return
        if location.exists() and any(location.iterdir()):
            QMessageBox.warning(self, "New store", f"{location} is not empty: choose a new folder for the store.")
            return
        self.accept()


class ProgressDialog(QProgressDialog):
    """Progress of a long task with a working Cancel button."""

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(title, "Cancel", 0, 0, parent)
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumDuration(0)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.setMinimumWidth(460)

    def report(self, done: int, total: int, what: str) -> None:
        self.setMaximum(max(total, 0))
        self.setValue(min(done, total) if total > 0 else 0)
        if what:
            self.setLabelText(what)


class ProgressOwner:
    """A part that shows at most one `ProgressDialog` at a time (`progress`, None when none is
    open) and closes it when its task ends, whichever way (building a store, writing a report)."""

    progress: ProgressDialog | None = None

    def _close_progress(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress.deleteLater()
            self.progress = None


class ShortcutsDialog(QDialog):
    """Help > Keyboard shortcuts: generated from the same table that binds them. The keys column
    fits its widest entry, the actions wrap to the dialog's width: nothing is cut at 1280×720."""

    def __init__(self, shortcuts: list[tuple[str, str]], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("shortcuts-dialog")
        self.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(shortcuts), 2)
        table.setHorizontalHeaderLabels(["Keys", "Action"])
        table.verticalHeader().setVisible(False)
        for r, (keys, action) in enumerate(shortcuts):
            table.setItem(r, 0, QTableWidgetItem(keys))
            table.setItem(r, 1, QTableWidgetItem(action))
        table.setWordWrap(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(lambda *_: table.resizeRowsToContents())
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.table = table
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        height = 560 if screen is None else min(560, screen.height() - 120)
        self.resize(620, height)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        QTimer.singleShot(0, self.table.resizeRowsToContents)  # once the layout gave the columns their widths


def about_html() -> str:
    return html.escape("memsense-gui: see why a conversational memory ranked what it ranked, and tune it live.")


def ask_harmful(parent: QWidget, candidate: FixCandidate) -> bool:
    """Ask before applying a harmful candidate, naming the loss; No is the default."""
    answer = QMessageBox.warning(
        parent, "Apply a harmful candidate?",
        f"This candidate is harmful: it lowers the metric over every question {candidate.metric_before:.3f} → "
        f"{candidate.metric_after:.3f} (paired p {candidate.p_value:.3g}), breaking {len(candidate.broken)} "
        f"questions and fixing {len(candidate.fixed)}.\n\nApply it anyway?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
