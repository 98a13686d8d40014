"""The PySide6 race behind the app's old evaluation segfault, in isolation (see memsense_gui/workers/runner.py).

    python tools/pyside_connection_race.py worker   # PySide6 6.11.3: Segmentation fault
    python tools/pyside_connection_race.py gui      # the same work, objects dropped on the GUI thread: OK

The GUI thread connects signals to bound methods of plain Python objects and keeps emitting;
a worker thread holds the objects and drops them. PySide tracks each such object with a
weakref and removes its connection from one process-wide table when the object dies, on the
thread that drops it; that edit races the GUI thread's own. In `gui` mode the worker hands the
objects back through a queue and the GUI thread drops them. Check a new PySide6 release with it
before relaxing the rule that worker threads never touch Qt. Exit code 0 and "OK <mode>" when
it survives.
"""
from __future__ import annotations

import faulthandler
import queue
import sys
import threading

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal


class Emitter(QObject):
    fired = Signal(object)


class Plain:
    def slot(self, value) -> None:
        pass


def main(mode: str, objects: int = 20_000) -> int:
    faulthandler.enable(all_threads=True)
    app = QCoreApplication(sys.argv[:1])
    emitters = [Emitter() for _ in range(16)]
    to_worker: queue.SimpleQueue = queue.SimpleQueue()
    to_gui: queue.SimpleQueue = queue.SimpleQueue()
    done = threading.Event()

    def worker() -> None:
        for _ in range(objects):
            obj = to_worker.get()
            if mode == "gui":
                to_gui.put(obj)
            del obj  # in `worker` mode the last reference dies here, on this thread
        done.set()

    def tick() -> None:
        for i in range(8):
            obj = Plain()
            emitters[i].fired.connect(obj.slot)
            to_worker.put(obj)
        for emitter in emitters:
            emitter.fired.emit(0)
        while True:
            try:
                to_gui.get_nowait()
            except queue.Empty:
                break
        if done.is_set():
            app.quit()

    threading.Thread(target=worker, daemon=True).start()
    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(0)
    app.exec()
    print("OK", mode)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("worker", "gui"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
