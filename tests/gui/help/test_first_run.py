"""The first-run screen: on a first start (no demo store) the window shows what is being
prepared, step by step, with measured times and the embedding's time left, and Cancel works."""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from memsense_gui.views.first_run import FirstRunDialog


def _builder(reports, delay=0.05, gate: threading.Event | None = None):
    """A build that reports as `core.recall.engine.build_store` does; it waits for `gate` after
    its first embedding report past 10 chunks."""
    def build(dataset, location, *, mode="hybrid", progress=None, cancel=None, **_):
        for done, total, what in reports:
            if cancel is not None and cancel.is_set():
                from core.errors import Cancelled

                raise Cancelled("cancelled")
            progress(done, total, what)
            time.sleep(delay)
            if gate is not None and what == "embedding" and done > 10:
                gate.wait(10)
        location.mkdir(parents=True, exist_ok=True)
        return {}
    return build


REPORTS = [(0, 1, "reading dataset"), *((d, 40, "embedding") for d in range(0, 41, 8)), (0, 2, "storing demo-ana"),
           (1, 2, "storing demo-ben"), (2, 2, "done")]


def test_the_first_start_shows_each_step_with_its_time(qtbot, make_window):
    gate = threading.Event()
    w = make_window(open_store=False, builder=_builder(REPORTS, gate=gate))
    seen: list[str] = []
    w.stores.start()  # no demo store yet: it is built, on the first-run screen
    dialog = w.stores.progress
    assert isinstance(dialog, FirstRunDialog) and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.current == "embed" and dialog.embedded[0] >= 16, timeout=10_000)
    seen.append(dialog.label.text())
    assert "done in" in dialog.step_text("model")  # the model step ended when embedding began
    eta = dialog.eta_ms()
    assert eta is not None and eta >= 0 and "left" in dialog.step_text("embed")
    assert "of 40" in dialog.step_text("embed") and dialog.step_text("store").endswith("<i>next</i>")
    gate.set()
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000):
        pass
    assert w.stores.progress is None
    assert "Embedding model" in seen[0] and "Total so far" in seen[0]


def test_cancel_on_the_first_run_screen_stops_the_build(qtbot, make_window):
    w = make_window(open_store=False, builder=_builder(REPORTS, delay=0.3))
    w.stores.start()
    dialog = w.stores.progress
    assert isinstance(dialog, FirstRunDialog)
    qtbot.waitUntil(lambda: dialog.current == "embed", timeout=10_000)
    button = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.stores.progress is None, timeout=10_000)
    assert "cancelled" in w.statusBar().currentMessage() and w.ctx.location is None
