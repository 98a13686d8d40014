"""The bad-input catalogue's tally, printed at the end of the session."""
from __future__ import annotations

import hashlib
from pathlib import Path

TALLY = {"cases": 0, "tracebacks": 0, "data_changed": 0}


def digest(folder: Path) -> str:
    """SHA-256 over every file's relative path and bytes (the lock file aside)."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != ".lock":
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def pytest_terminal_summary(terminalreporter) -> None:
    if TALLY["cases"]:
        terminalreporter.write_line(f"bad-input catalogue: {TALLY['cases']} cases, {TALLY['tracebacks']} tracebacks, "
                                    f"{TALLY['data_changed']} with data changed")
