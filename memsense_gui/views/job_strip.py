"""What a view that runs one job at a time shows of it: a busy or counting progress bar, a
Cancel button enabled while it runs, and a status line (Diagnose and Find a fix share it)."""
from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget


class JobStrip:
    """Mixed into a view: `job_row` makes its `progress`, `cancel_button` and `status` widgets,
    `job_layout` lays the view out around them."""

    progress: QProgressBar
    cancel_button: QPushButton
    status: QLabel

    def job_row(self, *starts: QWidget, status: str = "", cancel_tip: str = "") -> None:
        """The row of `starts` (what starts the job), Cancel (off until it runs) and the progress bar
        (hidden until it runs), and the status line; `job_layout` places them."""
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip(cancel_tip)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel(status)
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        for widget in (*starts, self.cancel_button):
            row.addWidget(widget)
        row.addWidget(self.progress, 1)
        row.addStretch(1)
        self._job_row = row

    def job_layout(self, body: QWidget, *above: QWidget) -> None:
        """The view's layout: `above` (a heading), the `job_row`, the status line, then `body`."""
        assert isinstance(self, QWidget), "JobStrip is mixed into a QWidget"
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        for widget in above:
            layout.addWidget(widget)
        layout.addLayout(self._job_row)
        layout.addWidget(self.status)
        layout.addWidget(body, 1)

    def set_running(self, running: bool, text: str = "") -> None:
        self.progress.setVisible(running)
        self.progress.setRange(0, 0)  # busy until the first count arrives
        self.cancel_button.setEnabled(running)
        if text:
            self.status.setText(text)

    def set_progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what} %v/%m")
