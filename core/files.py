"""Reading the user's text files and checking where outputs go, with one clear message each.

Everything here is cheap, so commands call it before any slow work: a bad `--out` is found
before a tuning run, not after it.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import stat
import sys
from importlib.resources import as_file, files
from pathlib import Path

from core.atomic import STDOUT, check_target
from core.errors import MemsenseError

STDIN = "-"
"""The path that means standard input, as in most command-line tools."""
_stdin: bytes | None = None
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def packaged_file(*parts: str) -> Path:
    """A data file shipped inside the `core` package (e.g. `packaged_file("demo", "x.json")`), found
    with `importlib.resources`, so it is there in a wheel install as in a clone. A package that is
    not a plain folder (a zip) has the file copied out once, for as long as the process runs."""
    resource = files("core").joinpath(*parts)
    if isinstance(resource, Path):
        return resource
    return Path(_extracted.enter_context(as_file(resource)))


def stdin_bytes() -> bytes:
    """Standard input, read once per process (a second reader gets the same bytes)."""
    global _stdin
    if _stdin is None:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise MemsenseError("standard input is closed; give a file path instead of -")
        _stdin = stream.read()
    return _stdin


PIPES_BY_DESCRIPTOR = ("/dev/fd/", "/proc/self/fd/", "/dev/stdin")
"""Paths of pipes a shell hands over with a writer already attached (`<(command)`, /dev/stdin):
read as files are."""


def special_file(path: str | Path) -> str | None:
    """What `path` is when it is no regular file to read (a "device", a "named pipe" or a
    "socket"), else None. /dev/zero never ends, a named pipe with no writer never answers: they
    are refused before a read that would hang; a shell's pipe (`PIPES_BY_DESCRIPTOR`) is read."""
    if str(path).startswith(PIPES_BY_DESCRIPTOR):
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # the read reports it
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of a file (a leading BOM dropped), or of standard input for `-`; any failure
    is one MemsenseError naming `what` (e.g. "config"), the path and the fix."""
    p = Path(path)
    if not str(path).strip():
        raise MemsenseError(f"no {what} file named (an empty path); give the path of the file")
    kind = None if str(path) == STDIN else special_file(p)
    if kind is not None:
        raise MemsenseError(f"{what} {p} is a {kind}, not a file; give the path of a file, or - to read "
                            "standard input")
    try:
        data = stdin_bytes() if str(path) == STDIN else p.read_bytes()
    except FileNotFoundError:
        raise MemsenseError(f"{what} {p} does not exist; check the path") from None
    except IsADirectoryError:
        raise MemsenseError(f"{what} {p} is a folder; give the path of a file") from None
    except OSError as exc:
        raise MemsenseError(f"cannot read {what} {p} ({exc.strerror}); check its permissions") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MemsenseError(f"{what} {p} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                            "save it as UTF-8") from None


def check_output(path: str | Path, what: str, suffixes: tuple[str, ...] = ()) -> Path:
    """Where an output file will go, checked before any work: a file name (not a folder, a link
    or a special file: `core.atomic.check_target`), with one of `suffixes` when given, in a
    folder that exists and is writable. Folders are never created: a mistyped folder is far
    likelier than a wish for a new one. `-` is standard output (`core.atomic.STDOUT`)."""
    if not str(path).strip():
        raise MemsenseError(f"the {what} path is empty; give a file name")
    if str(path) == STDOUT:
        return Path(STDOUT)
    p = Path(path).expanduser()
    if p.is_dir() and not p.is_symlink():
        raise MemsenseError(f"{what} {p} is a folder; give a file name inside it, e.g. {p / ('out' + (suffixes[0] if suffixes else ''))}")
    check_target(p, what)
    if suffixes and p.suffix.lower() not in suffixes:
        raise MemsenseError(f"{what} {p} must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise MemsenseError(f"cannot write {what} {p}: permission denied; choose a writable folder")
    return p
