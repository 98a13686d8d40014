"""File dialogs that remember their folder and give a saved file its format's extension.

Every open or save dialog names a kind of file ("export", "settings", "questions", "store",
"qrels"…); it opens in the folder of the last file of that kind, remembered in the app's
settings (`dialogs/<kind>`, so across restarts), else in a given start folder. A name typed
without an extension gets the extension of the format chosen in the dialog's filter
("PNG image (*.png)" → ".png"), so the file is written in the format picked and named so; a
file of that name already there is replaced only when the user says so.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

_PATTERN = re.compile(r"\*(\.[A-Za-z0-9_.-]+)")


def setting(kind: str) -> str:
    return f"dialogs/{kind}"


def folder(settings: QSettings, kind: str, fallback: Path) -> Path:
    """The folder of the last file of `kind` (if it still exists), else `fallback`."""
    saved = str(settings.value(setting(kind), "") or "")
    return Path(saved) if saved and Path(saved).is_dir() else fallback


def remember(settings: QSettings, kind: str, path: str | Path) -> None:
    """`path` is the last file (or folder) of `kind`: the next dialog of that kind opens beside it."""
    p = Path(path)
    settings.setValue(setting(kind), str(p if p.is_dir() else p.parent))


def extension_of(filter_text: str) -> str:
    """The first extension a filter names ("TOML (*.toml)" → ".toml"); "" for "All files (*)"."""
    match = _PATTERN.search(filter_text)
    return match.group(1) if match else ""


def with_extension(path: str, chosen_filter: str, filters: str) -> str:
    """`path` with the chosen format's extension (the first filter's when the dialog reports none
    chosen) when the typed name has none and names nothing that exists: an existing folder,
    device or file is left as named (the writer refuses the first two), never turned into
    another file beside it (`folder` into `folder.json`, `/dev/null` into `/dev/null.toml`)."""
    if Path(path).suffix or path.endswith(("/", os.sep)) or os.path.lexists(path):
        return path
    ext = extension_of(chosen_filter) or extension_of(filters.split(";;")[0])
    return path + ext


def replace_ok(parent: QWidget | None, path: str) -> bool:
    """Whether to write `path`, a name the dialog did not show (its extension was added): yes
    when nothing is there, else as the user answers (the dialog only asked about the name typed)."""
    if not os.path.lexists(path):
        return True
    answer = QMessageBox.question(parent, "Replace the file?", f"{path} already exists. Replace it?",
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def ask_save(parent: QWidget | None, settings: QSettings, kind: str, title: str, filters: str,
             default_name: str, fallback: Path | None = None) -> tuple[str, str] | None:
    """A save dialog in the last folder of `kind`: (path with its extension, chosen filter), or None."""
    start = folder(settings, kind, fallback or Path.home()) / default_name
    path, chosen = QFileDialog.getSaveFileName(parent, title, str(start), filters)
    if not path:
        return None
    named = with_extension(path, chosen, filters)
    if named != path and not replace_ok(parent, named):
        return None
    remember(settings, kind, named)
    return named, chosen


def ask_open(parent: QWidget | None, settings: QSettings, kind: str, title: str, filters: str,
             fallback: Path | None = None) -> str | None:
    """An open dialog in the last folder of `kind`: the file chosen, or None."""
    path, _ = QFileDialog.getOpenFileName(parent, title, str(folder(settings, kind, fallback or Path.home())),
                                          filters)
    if not path:
        return None
    remember(settings, kind, path)
    return path


def ask_folder(parent: QWidget | None, settings: QSettings, kind: str, title: str,
               fallback: Path | None = None) -> str | None:
    """A folder dialog opening in the parent of the last folder of `kind`: the folder chosen, or None."""
    saved = str(settings.value(setting(kind), "") or "")
    start = Path(saved).parent if saved and Path(saved).parent.is_dir() else fallback or Path.home()
    path = QFileDialog.getExistingDirectory(parent, title, str(start))
    if not path:
        return None
    settings.setValue(setting(kind), str(Path(path)))
    return path


QUESTION_FILTERS = "Question files (*.json *.jsonl);;All files (*)"


def ask_questions(parent: QWidget | None, settings: QSettings, current: Path | None) -> str | None:
    """A question file, from the folder of the last one chosen (else that of the current set)."""
    return ask_open(parent, settings, "questions", "Judged questions", QUESTION_FILTERS,
                    current.parent if current is not None else None)
