"""Builders shared by the test modules (pytest fixtures live in conftest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def shared_file(*parts: str) -> Path:
    """A file under ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared folder beside the repository)")
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run `memsense ARGV…` in-process: (exit code, stdout, stderr)."""
    from core.cli.main import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
