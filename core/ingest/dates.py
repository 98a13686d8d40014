"""Session date-times: ISO 8601 or free text ("6:05 pm on 2 April, 2024") to ISO 8601."""
from __future__ import annotations

import re
from datetime import datetime


_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        ("jan january", "feb february", "mar march", "apr april", "may", "jun june",
         "jul july", "aug august", "sep sept september", "oct october", "nov november",
         "dec december")
    )
    for m in names.split()
}
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:([ap])\.?m\b\.?)?", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?,?\s+(\d{4})\b", re.I)
_MONTH_DAY = re.compile(r"\b([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)


def parse_date_time(text: str) -> str:
    """ISO 8601 ("2023-05-08T13:56:00") of a session date-time, or "" when it cannot be read.

    Accepts ISO 8601 (a date alone means midnight) and free text with a date written
    "8 May, 2023" or "May 8, 2023", optionally with a clock time "1:56 pm" (LoCoMo's
    "1:56 pm on 8 May, 2023"); 12 am is midnight, 12 pm noon.
    """
    text = text.strip()
    if not text:
        return ""
    try:
        return datetime.fromisoformat(text).isoformat(timespec="seconds")
    except ValueError:
        pass
    try:
        return _free_text_date_time(text)
    except ValueError:
        return ""


def _free_text_date_time(text: str) -> str:
    day_month = _DAY_MONTH.search(text)
    if day_month and day_month.group(2).lower() in _MONTHS:
        day, month, year = day_month.group(1), day_month.group(2), day_month.group(3)
    else:
        month_day = _MONTH_DAY.search(text)
        if not (month_day and month_day.group(1).lower() in _MONTHS):
            raise ValueError(text)
        month, day, year = month_day.group(1), month_day.group(2), month_day.group(3)
    hour, minute, second = _clock(text)
    stamp = datetime(int(year), _MONTHS[month.lower()], int(day), hour, minute, second)
    return stamp.isoformat(timespec="seconds")


def _clock(text: str) -> tuple[int, int, int]:
    """(hour, minute, second) of the first clock time in the text; midnight when none."""
    match = _CLOCK.search(text)
    if not match:
        return 0, 0, 0
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    half = (match.group(4) or "").lower()
    if half and not 1 <= hour <= 12:
        raise ValueError(text)
    if half == "a":
        hour = 0 if hour == 12 else hour
    elif half == "p":
        hour = 12 if hour == 12 else hour + 12
    return hour, minute, second
