"""File > Export report…: A and B (by default the baseline and the current settings), the cut-off
k, and the file to write, for the window's question set."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox,
    QWidget,
)

from core.config import TOP_K_MAX
from memsense_gui.state.context import AppContext
from memsense_gui.views.config_choice import ConfigChoice

DEFAULT_K = 4
"""The metrics' cut-off by default, as `memsense report` has it."""


def with_html(path: str) -> str:
    """The path as typed, with `.html` added when it has no extension."""
    p = Path(path.strip())
    return str(p.with_name(p.name + ".html")) if path.strip() and not p.suffix else path.strip()


class ReportDialog(QDialog):
    """A, B, k and the output file; `choices()` once accepted."""

    def __init__(self, ctx: AppContext, questions: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Export report")
        self.setObjectName("report-dialog")
        self.a_choice = ConfigChoice(ctx, "baseline")
        self.a_choice.setObjectName("report-a")
        self.b_choice = ConfigChoice(ctx, "current")
        self.b_choice.setObjectName("report-b")
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, TOP_K_MAX)
        self.k_spin.setValue(DEFAULT_K)
        self.path_edit = QLineEdit(str(Path.home() / "memsense-report.html"))
        self.path_edit.setObjectName("report-path")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form = QFormLayout(self)
        note = QLabel("One self-contained HTML file (plots inline, no network): the settings that differ, every "
                      "metric with its interval and significance, failure attribution for A and B, and the "
                      "questions that changed, with their evidence.")
        note.setWordWrap(True)
        form.addRow(note)
        form.addRow("Questions", QLabel(questions.removeprefix("questions: ")))
        form.addRow("A", self.a_choice)
        form.addRow("B", self.b_choice)
        form.addRow("k", self.k_spin)
        form.addRow("File", row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(560, self.sizeHint().height())

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export report", self.path_edit.text(), "HTML (*.html *.htm)")
        if path:
            self.path_edit.setText(with_html(path))

    def path(self) -> str:
        return with_html(self.path_edit.text())
