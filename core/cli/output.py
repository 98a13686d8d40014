"""What the CLI writes besides results: a progress bar on stderr, and terminal-safe text.

Dataset text, user ids and file names reach the terminal in results and messages; an escape
sequence in them must show as text, never act on the terminal. `SafeStream` wraps stdout and
stderr for the whole command, so every print is safe without each one remembering to be.
"""
from __future__ import annotations

import io
import re
import sys
import time
from typing import Any, Callable, TextIO


def progress_bar(stream: TextIO | None = None) -> Callable[[int, int, str], None]:
    """A `(done, total, stage)` callback drawing one bar per stage; a total of 0 is a step of
    unknown length, shown by its name. Off a terminal (a log) a line at each stage's start and end,
    and every `LOG_EVERY_S` in between, so a long stage never looks stuck; a stage running for
    longer than `ETA_AFTER_S` says how long it has left."""
    stream = stream or sys.stderr  # looked up now: the command's (safe) stderr
    state: dict[str, Any] = {"stage": None, "since": 0.0, "done_then": 0, "shown": 0.0, "drawn": 0}

    def show(done: int, total: int, stage: str) -> None:
        now = time.monotonic()
        if stage != state["stage"]:
            state.update(since=now, done_then=done)
        elif not stream.isatty() and done not in (0, total) and now - state["shown"] < LOG_EVERY_S:
            return
        if not total:  # a step of unknown length (or nothing to count): its name alone
            line = f"\r{stage}\n"
        else:
            width = 30
            filled = int(width * done / total)
            end = "\n" if done >= total or not stream.isatty() else ""
            left = _time_left(done, total, now - state["since"], done - state["done_then"])
            body = f"{stage:<22} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{left}"
            if stream.isatty():  # redrawn in place: spaces cover the end of a longer line before it
                body, state["drawn"] = body.ljust(state["drawn"]), 0 if end else max(state["drawn"], len(body))
            line = f"\r{body}{end}"
        stream.write(line)
        stream.flush()
        state.update(stage=stage, shown=now)

    return show


def _time_left(done: int, total: int, elapsed: float, progressed: int) -> str:
    """" (about 1 min 20 s left)" at the pace of the stage so far; nothing before it has run
    `ETA_AFTER_S` (too early to tell) or once it is done."""
    if progressed < 1 or elapsed < ETA_AFTER_S or done >= total:
        return ""
    left = elapsed / progressed * (total - done)
    figure = f"{left:.0f} s" if left < 90 else f"{left // 60:.0f} min {left % 60:02.0f} s" if left < 5400 else \
        f"{left / 3600:.1f} h"
    return f"  (about {figure} left)"


ETA_AFTER_S = 2.0
"""Seconds of a stage before its time left is shown."""
LOG_EVERY_S = 30.0
"""Off a terminal, the most seconds between two lines of one stage."""

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters but newline, carriage return and tab (the progress bar redraws with \\r)."""


def printable(text: str) -> str:
    """`text` safe for a terminal: control characters (ESC starts every escape sequence) and
    lone surrogates (bytes of a command line that were not UTF-8) shown as `\\x1b`-style escapes."""
    text = CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class SafeStream(io.TextIOBase):
    """A text stream that writes `printable(text)` to the stream it wraps."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property  # typeshed declares TextIOBase.encoding a plain attribute; io.TextIOBase has a read-only property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")
