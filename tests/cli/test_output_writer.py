"""`core.atomic`, the one writer of every output: what it replaces, keeps and refuses."""
from __future__ import annotations

import os

import pytest

from core.atomic import write_text_atomic
from core.errors import MemsenseError


def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_text_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓" and target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temp file left


def test_a_new_file_is_0644_and_its_folder_must_exist(tmp_path):
    write_text_atomic(tmp_path / "new.json", "x")
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o644
    with pytest.raises(MemsenseError, match=r"the folder .* does not exist"):
        write_text_atomic(tmp_path / "made" / "up.json", "x")
    assert not (tmp_path / "made").exists()
    write_text_atomic(tmp_path / "own" / "state.json", "x", parents=True)  # the app's own files only
    assert (tmp_path / "own" / "state.json").read_text() == "x"


@pytest.mark.parametrize("make", ["link-to-file", "link-to-folder", "dangling-link", "fifo", "folder"])
def test_links_special_files_and_folders_are_refused_and_left_alone(tmp_path, make):
    target, other = tmp_path / "out.json", tmp_path / "elsewhere"
    if make == "link-to-file":
        other.write_text("precious")
        target.symlink_to(other)
    elif make == "link-to-folder":
        other.mkdir()
        target.symlink_to(other)
    elif make == "dangling-link":
        target.symlink_to(other)
    elif make == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(MemsenseError, match=r"symbolic link|not a regular file|is a folder"):
        write_text_atomic(target, "x", what="--out")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not other.exists() or other.is_dir() or other.read_text() == "precious"
    assert target.is_symlink() == ("link" in make)
