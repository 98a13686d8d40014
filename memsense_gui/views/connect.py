"""File > Connect to Memsense…: a live Memsense database, read-only, and optionally its service."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
    QWidget,
)

from core.recall.memsense.session import is_postgres
from core.redact import with_password
from core.recall.memsense.database import DEFAULT_SCOPE, DEFAULT_TENANT
from memsense_gui.views.dialogs import take_password


@dataclass(frozen=True)
class MemsenseConnection:
    database: str  # postgresql://USER:PASSWORD@HOST:PORT/DB, the password percent-encoded
    tenant: str = DEFAULT_TENANT
    scope: str = DEFAULT_SCOPE
    embedder: str = ""  # the embedding endpoint URL, or a local model folder
    service: str = ""  # the service URL ("" = no production column)


class ConnectDialog(QDialog):
    """Database address, tenant and scope, the query embedder and the service URL."""

    def __init__(self, last: MemsenseConnection | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Connect to Memsense")
        self.setObjectName("connect-dialog")
        last = last or MemsenseConnection("")
        self.database = QLineEdit(last.database)
        self.database.setPlaceholderText("postgresql://USER@HOST:5432/memsense")
        self.password = QLineEdit()
        self.password.setObjectName("connect-password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("the database user's password (never saved)")
        self.database.editingFinished.connect(lambda: take_password(self.database, self.password))
        take_password(self.database, self.password)
        self.tenant = QLineEdit(last.tenant)
        self.scope = QLineEdit(last.scope)
        self.embedder = QLineEdit(last.embedder)
        self.embedder.setPlaceholderText("http://HOST:8080/embed, …/v1/embeddings, or a model folder")
        self.service = QLineEdit(last.service)
        self.service.setPlaceholderText("http://HOST:8787 (optional: shows production beside the reproduction)")
        browse = QPushButton("Folder…")
        browse.clicked.connect(self._browse_model)
        embed_row = QHBoxLayout()
        embed_row.setContentsMargins(0, 0, 0, 0)
        embed_row.addWidget(self.embedder, 1)
        embed_row.addWidget(browse)
        embed_widget = QWidget()
        embed_widget.setLayout(embed_row)
        form = QFormLayout()
        form.addRow("Database", self.database)
        form.addRow("Password", self.password)
        form.addRow("Tenant", self.tenant)
        form.addRow("Scope", self.scope)
        form.addRow("Query embeddings", embed_widget)
        form.addRow("Service", self.service)
        note = QLabel("The database is only read (every transaction is READ ONLY). Queries must be embedded "
                      "by the model that embedded the stored chunks: give the endpoint the service calls, "
                      "or a local folder of that model.")
        note.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setObjectName("connect-problem")
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.resize(640, self.sizeHint().height())

    def _browse_model(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A sentence-transformers model folder")
        if path:
            self.embedder.setText(path)

    def _problem(self) -> str:
        if not is_postgres(self.database.text().strip()):
            return "The database address starts with postgresql:// (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)."
        if not self.tenant.text().strip() or not self.scope.text().strip():
            return "Tenant and scope are needed (Memsense's defaults: default and user)."
        if not self.embedder.text().strip():
            return "Give the embedding endpoint the service uses, or a local folder of the same model."
        service = self.service.text().strip()
        if service and not service.startswith(("http://", "https://")):
            return "The service URL starts with http:// or https://."
        return ""

    def _accept(self) -> None:
        take_password(self.database, self.password)
        problem = self._problem()
        self.problem.setText(problem)
        if not problem:
            self.accept()

    def values(self) -> MemsenseConnection:
        database = with_password(self.database.text().strip(), self.password.text())
        return MemsenseConnection(database, self.tenant.text().strip(), self.scope.text().strip(),
                                  self.embedder.text().strip(), self.service.text().strip().rstrip("/"))
