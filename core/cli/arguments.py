"""Argument parsing shared by every command: one-line usage errors and checked `--store`."""
from __future__ import annotations

import argparse
from pathlib import Path

from core.errors import MemsenseError


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `memsense: error: ...` like every other error."""

    def error(self, message: str):
        raise MemsenseError(f"{message} (see `{self.prog} --help`)")


def store_location(text: str) -> str:
    """`--store`: a folder or an http(s):// URL; an empty path would mean the current folder."""
    from core.recall.store import is_url

    if not text.strip():
        raise argparse.ArgumentTypeError("--store is empty; give a store folder or an http(s):// Qdrant URL")
    if not is_url(text) and Path(text).expanduser().exists() and not Path(text).expanduser().is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a store folder")
    return text


SEED_LIMIT = 2**32
"""Seeds numpy's and Optuna's generators take: whole numbers from 0 to 2**32 - 1."""


def seed_number(text: str) -> int:
    """`--seed`: a whole number the random generators accept (a negative one is a traceback in numpy)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {SEED_LIMIT - 1}, got {text!r}")
    return value
