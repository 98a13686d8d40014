"""What the CLI writes besides results: a progress bar on stderr."""
from __future__ import annotations

import sys
from typing import Callable


def progress_bar(stream=sys.stderr) -> Callable[[int, int, str], None]:
    """A `(done, total, stage)` callback drawing one bar per stage (a line per update off a tty)."""
    state = {"stage": None}

    def show(done: int, total: int, stage: str) -> None:
        if not stream.isatty() and stage == state["stage"] and done not in (0, total):
            return
        width = 30
        filled = int(width * done / total) if total else width
        end = "\n" if done >= total or not stream.isatty() else ""
        stream.write(f"\r{stage:<22} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
        stream.flush()
        state["stage"] = stage

    return show
