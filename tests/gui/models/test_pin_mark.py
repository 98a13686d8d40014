"""The pin mark is a plain glyph the project's own font draws, not an emoji that needs an emoji font."""
from __future__ import annotations

import unicodedata

import pytest
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics

from memsense_gui.models.format import PIN_MARK
from memsense_gui.models.pool import PoolModel
from memsense_gui.models.results import ResultsModel
from tests.gui.fixtures import cell


def is_emoji(ch: str) -> bool:
    cp = ord(ch)
    return (0x1F000 <= cp <= 0x1FAFF or 0xFE0F == cp
            or unicodedata.category(ch) == "So" and unicodedata.east_asian_width(ch) == "W")


def test_pin_mark_is_no_emoji_and_dejavu_sans_has_it(qtbot):
    assert len(PIN_MARK) == 1 and not is_emoji(PIN_MARK)
    assert is_emoji("\U0001f4cc")  # the old mark, 📌, is caught by the same check
    if "DejaVu Sans" not in QFontDatabase.families():
        pytest.skip("DejaVu Sans is not installed (scripts/setup.sh installs fonts-dejavu-core)")
    metrics = QFontMetrics(QFont("DejaVu Sans"))
    assert metrics.inFontUcs4(ord(PIN_MARK)) and not metrics.inFontUcs4(0x1F4CC)


def test_pinned_rows_carry_the_plain_mark(ranking, pool):
    pinned = ranking.result_ids[0]
    results = ResultsModel()
    results.set_ranking(ranking, None, frozenset(), [pinned])
    label = cell(results, 0, ResultsModel.CHUNK)
    assert label.startswith(PIN_MARK + " ")
    pool_model = PoolModel()
    pool_model.set_ranking(ranking, (), [pinned])
    labels = [cell(pool_model, r, PoolModel.CHUNK) for r in range(pool_model.rowCount())]
    marked = [s for s in labels if s.startswith(PIN_MARK)]
    assert len(marked) == 1
    assert not any(is_emoji(ch) for s in labels + [label] for ch in s)
