"""Session date-times: ISO 8601 and LoCoMo's free text."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest import (
    parse_date_time,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "core" / "demo"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"


# ---------------------------------------------------------------- date-times


@pytest.mark.parametrize("text, iso", [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
    ("10:37 am on 27 June, 2023", "2023-06-27T10:37:00"),
    ("12:05 am on 1 January, 2024", "2024-01-01T00:05:00"),
    ("12:30 pm on 3 June, 2023", "2023-06-03T12:30:00"),
    ("2024-03-14T18:20:00", "2024-03-14T18:20:00"),
    ("2024-03-14T18:20", "2024-03-14T18:20:00"),
    ("2024-03-14", "2024-03-14T00:00:00"),
    ("September 5, 2024", "2024-09-05T00:00:00"),
    ("8 May 2023", "2023-05-08T00:00:00"),
    ("sometime last spring", ""),
    ("31 February, 2023", ""),
    ("13:00 pm on 8 May, 2023", ""),
    ("", ""),
])
def test_parse_date_time(text, iso):
    assert parse_date_time(text) == iso
