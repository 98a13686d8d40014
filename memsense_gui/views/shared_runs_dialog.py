"""Settings > Shared runs…: keep and read runs in a team's PostgreSQL database (issue 38).

The Connect dialog's rules: the password is typed in a masked field (a password pasted in the
address moves there), is kept for this session only and never saved; the address is saved
without it. An empty address keeps runs in the open store's own history file again.
"""
from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from core.errors import MemsenseError
from core.evaluation.shared_runs import who
from core.redact import redact
from memsense_gui.views.dialogs import take_password
from memsense_gui.state.shared_runs import SharedRuns


class SharedRunsDialog(QDialog):
    def __init__(self, shared: SharedRuns, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Shared runs")
        self.shared = shared
        self.address = QLineEdit(shared.address)
        self.address.setObjectName("shared-runs-address")
        self.address.setPlaceholderText("postgresql://USER@HOST:5432/DATABASE (empty: the store's own history)")
        self.password = QLineEdit(shared.password)
        self.password.setObjectName("shared-runs-password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("kept for this session only (or PGPASSWORD / ~/.pgpass)")
        self.address.editingFinished.connect(lambda: take_password(self.address, self.password))
        self.name = QLineEdit(shared.name)
        self.name.setObjectName("shared-runs-name")
        self.name.setPlaceholderText(f"your name on the runs you keep (default {who()})")
        form = QFormLayout()
        form.addRow("Database", self.address)
        form.addRow("Password", self.password)
        form.addRow("Your name", self.name)
        note = QLabel("Evaluation, tune, diagnose and fix runs are kept there, named by you, and the History view "
                      "lists the whole team's. A database user that may only read can list and compare.")
        note.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setObjectName("shared-runs-problem")
        self.problem.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(600, self.sizeHint().height())

    def _accept(self) -> None:
        take_password(self.address, self.password)
        try:
            self.shared.set(self.address.text(), self.password.text(), self.name.text())
        except MemsenseError as exc:
            self.problem.setText(redact(str(exc)))
            return
        self.accept()
