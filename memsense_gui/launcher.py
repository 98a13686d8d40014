"""`memsense-gui --install-desktop`: the Linux desktop launcher of this install.

The packaged `desktop/memsense-gui.desktop` says `Exec=memsense-gui`, which a desktop's menu finds
only when the virtual environment's `bin` is on the session's PATH (it seldom is). This writes a
copy whose `Exec` is the absolute path of this environment's `memsense-gui`, plus the icon, into
the user's XDG data folder, where freedesktop menus look. No Qt: it runs without a display.
"""
from __future__ import annotations

import os
import sys
from importlib.resources import files
from pathlib import Path

from core.errors import MemsenseError

DESKTOP_ID = "memsense-gui"


def applications_home() -> Path:
    """`$XDG_DATA_HOME`, else ~/.local/share (the freedesktop base directory for a user's data)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def exec_line(script_dir: Path | None = None) -> str:
    """The launcher's `Exec`: this environment's `memsense-gui` script by absolute path, quoted as
    the Desktop Entry spec asks when it holds a space, or this Python running the app's module."""
    folder = Path(script_dir) if script_dir is not None else Path(sys.executable).parent
    script = folder / "memsense-gui"
    argv = [str(script.absolute())] if script.is_file() else [str(Path(sys.executable).absolute()), "-m", "memsense_gui.app"]
    return " ".join(_quoted(a) for a in argv)


def _quoted(arg: str) -> str:
    if not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`'):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return f'"{escaped}"'


def install_desktop(data_home: Path | None = None, script_dir: Path | None = None) -> list[Path]:
    """Write the launcher and its icon under `data_home` (default `applications_home()`); the files written."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        raise MemsenseError(f"--install-desktop writes a freedesktop launcher (Linux and BSD desktops), not one for "
                            f"{sys.platform}; start the app with memsense-gui")
    base = Path(data_home) if data_home is not None else applications_home()
    package = files("memsense_gui")
    lines = []
    for line in (package / "desktop" / f"{DESKTOP_ID}.desktop").read_text(encoding="utf-8").splitlines():
        lines.append(f"Exec={exec_line(script_dir)}" if line.startswith("Exec=") else line)
    entry = base / "applications" / f"{DESKTOP_ID}.desktop"
    icon = base / "icons" / "hicolor" / "scalable" / "apps" / f"{DESKTOP_ID}.svg"
    try:
        for target, data in ((entry, ("\n".join(lines) + "\n").encode("utf-8")),
                             (icon, (package / "icons" / "memsense.svg").read_bytes())):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    except OSError as exc:
        raise MemsenseError(f"cannot write {exc.filename or base} ({exc.strerror or exc}); check that folder's "
                            "permissions, or set XDG_DATA_HOME to a writable folder") from None
    return [entry, icon]
