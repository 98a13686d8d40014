"""The deadlines of network requests: their defaults, and the check of a timeout a user gives."""
from __future__ import annotations

import math

from core.errors import MemsenseError

EMBED_TIMEOUT_S = 30.0
"""Default deadline of one request to an embedding endpoint (`--embed-timeout`)."""
SERVICE_TIMEOUT_S = 60.0
"""Default deadline of one search asked of a Memsense service (`--service-timeout`)."""
QDRANT_TIMEOUT_S = 30.0
"""Default deadline of one request to a Qdrant server (`$MEMSENSE_QDRANT_TIMEOUT`): a scroll page
of 1,024 points with their four vectors, or an upsert of 128 waited for, well within it on a LAN."""


def check_timeout(seconds: object, what: str) -> float:
    """A timeout in seconds: positive and finite, else one MemsenseError naming `what`."""
    try:
        value = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise MemsenseError(f"{what} must be a number of seconds, not {seconds!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise MemsenseError(f"{what} must be a positive, finite number of seconds (got {seconds}); e.g. 30")
    return value
