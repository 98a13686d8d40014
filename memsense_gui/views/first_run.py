"""The first-run screen: what is being prepared, how far it is, how long it has taken and how
long the embedding has left.

The first start has no demo store: building it loads the embedding model (its ONNX graph comes
in the package memsense-minilm-onnx; with only the [models] extra it is exported into the cache
folder first, once per model, which imports torch) and embeds every
chunk of the demo conversations. The build's own progress reports drive the steps: "reading
dataset", then nothing while the model loads or is exported, then "embedding" done/total,
"storing" each user and "done"; every time shown is measured here, and the time left is the
embedding's own rate so far.
"""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

from memsense_gui.views.dialogs import ProgressDialog

STEPS = ("model", "embed", "store")
TICK_MS = 500
"""How often the elapsed times are redrawn."""


def model_prepared(cache_dir: Path | None = None, task: object = None) -> bool | None:
    """Whether the default model's ONNX graph is ready: installed (memsense-minilm-onnx, the default
    install) or exported into the cache already (None: cannot tell, e.g. the
    model package is missing; the build then says why). Hashes the model once (memoised). A job
    of a task runner (`task`)."""
    try:
        from core.recall.embedding.embedder import default_cache_dir, default_model_path
        from core.recall.embedding.model_identity import is_packaged, model_key
        from core.recall.embedding.onnx_model import paths
    except ImportError:
        return None
    try:
        cache = Path(cache_dir) if cache_dir else default_cache_dir()
        model = default_model_path()
        return is_packaged(model) or paths(cache, model_key(model, cache))[0].exists()  # a package: nothing to export
    except Exception:  # noqa: BLE001 - a question for a label; the build reports real failures
        return None


def _clock(ms: int) -> str:
    s = ms / 1000
    if s < 10:
        return f"{s:.1f} s"
    return f"{s:.0f} s" if s < 90 else f"{int(s // 60)} min {int(s % 60):02d} s"


class FirstRunDialog(ProgressDialog):
    """The demo store's build on the first run, step by step (module docstring)."""

    def __init__(self, store: Path, cache: Path, parent: QWidget | None = None):
        super().__init__("Preparing memsense (first run)", parent)
        self.setObjectName("first-run-dialog")
        self.store, self.cache = store, cache
        self.model_ready: bool | None = None  # the ONNX copy was there before
        self.label = QLabel()
        self.label.setObjectName("first-run-steps")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setLabel(self.label)
        self.setMinimumWidth(620)
        self.clock = QElapsedTimer()
        self.clock.start()
        self.started: dict[str, int] = {}  # step -> ms since the start
        self.took: dict[str, int] = {}  # step -> ms it took
        self.current = ""
        self.note = ""
        self.embedded = (0, 0)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._draw)
        self.timer.start(TICK_MS)
        self._enter("model")

    def set_model_ready(self, ready: bool | None) -> None:
        self.model_ready = ready
        self._draw()

    def _enter(self, step: str) -> None:
        if step == self.current:
            return
        now = self.clock.elapsed()
        if self.current and self.current not in self.took:
            self.took[self.current] = now - self.started[self.current]
        if step not in self.started:
            self.started[step] = now
        self.current = step

    def report(self, done: int, total: int, what: str) -> None:
        """A progress report of the build (`core.recall.engine.build_store`)."""
        if what == "embedding":
            self._enter("embed")
            self.embedded = (done, total)
        elif what.startswith("storing"):
            self._enter("store")
        elif what == "done":
            self._enter("store")
            self.took["store"] = self.clock.elapsed() - self.started["store"]
        self.note = ""
        self.setMaximum(max(total, 0))
        self.setValue(min(done, total) if total > 0 else 0)
        self._draw()

    def setLabelText(self, text: str) -> None:  # noqa: N802 - Qt's name: a word from the caller ("Cancelling…")
        self.note = text
        self._draw()

    def eta_ms(self) -> int | None:
        """The embedding's time left at its rate so far; None before its first chunks."""
        done, total = self.embedded
        if self.current != "embed" or done <= 0 or total <= done:
            return None
        spent = self.clock.elapsed() - self.started["embed"]
        return int(spent / done * (total - done))

    def step_text(self, step: str) -> str:
        """One line: what the step does, and where it is."""
        esc = html.escape
        if step == "model":
            what = (f"Embedding model: its ONNX copy in {esc(str(self.cache))}" if self.model_ready else
                    f"Embedding model: exporting an ONNX copy to {esc(str(self.cache))} (once per model; needs torch, "
                    "so later starts load it in about a second)")
        elif step == "embed":
            done, total = self.embedded
            what = f"Demo store: embedding the demo conversations' chunks ({done} of {total})" if total else \
                "Demo store: embedding the demo conversations' chunks"
        else:
            what = f"Demo store: writing {esc(str(self.store))}, then opening it"
        if step in self.took:
            state = f"done in {_clock(self.took[step])}"
        elif step == self.current:
            eta = self.eta_ms() if step == "embed" else None
            state = f"{_clock(self.clock.elapsed() - self.started[step])} so far" + (
                f", about {_clock(eta)} left" if eta is not None else "")
        else:
            state = "next"
        mark = "✓" if step in self.took else "▶" if step == self.current else "·"
        return f"{mark} {what} — <i>{state}</i>"

    def _draw(self) -> None:
        lines = "<br>".join(self.step_text(s) for s in STEPS)
        note = self.note
        self.label.setText("<b>The first start prepares two things, once.</b> Later starts open the last store at "
                           f"once.<br><br>{lines}<br><br>Total so far: {_clock(self.clock.elapsed())}"
                           + (f"<br>{html.escape(note)}" if note else ""))

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.timer.stop()
        super().closeEvent(event)
