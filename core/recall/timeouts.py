"""The deadlines of network requests: their defaults, and the check of a timeout a user gives."""
from __future__ import annotations

import math

from core.errors import MemsenseError

EMBED_TIMEOUT_S = 30.0
"""Default deadline of one request to an embedding endpoint (`--embed-timeout`)."""
SERVICE_TIMEOUT_S = 60.0
"""Default deadline of one search asked of a Memsense service (`--service-timeout`)."""


def check_timeout(seconds: object, what: str) -> float:
    """A timeout in seconds: positive and finite, else one MemsenseError naming `what`."""
    try:
        value = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise MemsenseError(f"{what} must be a number of seconds, not {seconds!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise MemsenseError(f"{what} must be a positive, finite number of seconds (got {seconds}); e.g. 30")
    return value
