"""Cell text from core records: rank movement."""
from __future__ import annotations


import pytest

from memsense_gui.models.format import movement_text


@pytest.mark.parametrize("previous, rank, text, delta", [
    (3, 1, "▲2", 2), (1, 4, "▼3", -3), (2, 2, "=", 0), (None, 1, "new", None)])
def test_movement_text(previous, rank, text, delta):
    assert movement_text(previous, rank, True) == (text, delta)
    assert movement_text(previous, rank, False) == ("", None)
