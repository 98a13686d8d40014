"""What a view that runs one job at a time shows of it: a busy or counting progress bar, a
Cancel button enabled while it runs, and a status line (Diagnose and Find a fix share it)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton


class JobStrip:
    """Mixed into a view that has `progress`, `cancel_button` and `status` widgets."""

    progress: QProgressBar
    cancel_button: QPushButton
    status: QLabel

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
