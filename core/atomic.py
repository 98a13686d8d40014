"""The one writer of every output file: checked target, temp file beside it, fsync, rename.

A crash leaves either the old file or the new one, never half of it. Every `--out`, `--export`,
`bench --out`, CSV, config, qrels, run and judged-set file, and the app's File > Export, go
through `write_text_atomic`; commands call `check_target` (through `core.files.check_output`)
before any slow work, and the writer checks again, so no path skips the rules:

- The target must be a regular file or not exist yet. A device, FIFO or socket (`/dev/stdout`,
  `/dev/null`, a named pipe) is refused: renaming a temp file over it would replace the special
  file with a regular one (`--out /dev/stdout` turned `/dev/stdout` into a file). To print,
  leave `--out` out.
- A symbolic link is refused, always (there is no `--force`). Renaming over a link replaces the
  link, not the file it points to; writing through it would write wherever the link points,
  outside the folder the user named (a link left in a shared folder could make a command
  overwrite any file the user can write). Both are surprises, and the user who wants the file
  the link points to can name that file. One rule for every command, with no flag to forget.
- The parent folder must exist: a mistyped folder is far likelier than a wish for a new one, so
  folders are never created for an output (`parents=True` is only for the app's own files in
  its data and cache folders). Nor may the folder, as named, be a symbolic link: the file would
  land in the folder the link points to, outside the one named (the message gives its real path).
- `-` is standard output, as `-` in place of an input is standard input: the content is printed,
  nothing is written to disk.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

from core.errors import MemsenseError

STDOUT = "-"
"""The output path that means standard output."""


def check_target(path: str | Path, what: str = "output") -> Path:
    """`path` if a file may be written there: not a link, not a special file, not a folder, in a
    folder that exists. Else one MemsenseError naming `what`, the path and the fix. `-` (standard
    output) passes."""
    if str(path) == STDOUT:
        return Path(STDOUT)
    p = Path(path).expanduser()
    try:
        st = p.lstat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise MemsenseError(f"cannot write {what} {p} ({exc.strerror}); choose another path") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(p)
        to_file = Path(real).is_file() and not real.startswith(("/proc/", "/dev/"))
        raise MemsenseError(f"{what} {p} is a symbolic link; links are never written through or replaced: "
                            + (f"give the path of the file itself ({real})" if to_file else
                               "give the path of a regular file" + _print_hint(p)))
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise MemsenseError(f"{what} {p} is a folder; give the name of a file inside it")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise MemsenseError(f"{what} {p} is not a regular file (a device, pipe or socket); give a file path"
                            + _print_hint(p))
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise MemsenseError(f"cannot write {what} {p}: the folder {parent} does not exist; create it first "
                            "or choose another path")
    if parent.is_symlink():
        raise MemsenseError(f"cannot write {what} {p}: the folder {parent} is a symbolic link; links are never "
                            f"written through: give the folder's own path ({os.path.realpath(parent)})")
    return p


def _print_hint(path: Path) -> str:
    return " (to print, leave the option out)" if str(path).startswith(("/dev/", "/proc/")) else ""


def write_output(path: str | Path, content: str | bytes, what: str = "output") -> Path:
    """Write a file the user named (an export; text as UTF-8): as `write_bytes_atomic`, and a disk
    or permission fault is one MemsenseError naming that file, never the temp file beside it, and the fix."""
    path = Path(path)
    try:
        write_bytes_atomic(path, content.encode("utf-8") if isinstance(content, str) else content, what=what)
    except OSError as exc:
        fix = "free disk space or pick another folder" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else \
            "pick another folder"
        raise MemsenseError(f"cannot write {path}: {exc.strerror or exc}; {fix}") from None
    return path


def write_text_atomic(path: str | Path, text: str, *, what: str = "output", parents: bool = False) -> None:
    """Replace `path` with `text` (UTF-8) so a crash leaves either the old or the new file, never half."""
    write_bytes_atomic(path, text.encode("utf-8"), what=what, parents=parents)


def write_bytes_atomic(path: str | Path, data: bytes, *, what: str = "output", parents: bool = False) -> None:
    """Replace `path` with `data` so a crash leaves either the old or the new file, never half.

    The target is checked as `check_target` does; `parents` creates missing folders (only for
    the app's own files, never for an output the user named). `-` prints `data` on standard output."""
    if str(path) == STDOUT and not parents:
        _print(data)
        return
    path = Path(path).expanduser()
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    check_target(path, what)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); keep the target's mode, or the usual 0644
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _print(data: bytes) -> None:
    """`data` (every CLI output is UTF-8 text) on standard output, through `sys.stdout`: the CLI's
    terminal-safe stream."""
    sys.stdout.write(data.decode("utf-8", "backslashreplace"))
    sys.stdout.flush()
