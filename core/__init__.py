"""memsense-gui retrieval core: the Memsense pipeline, explained. No Qt here."""
from __future__ import annotations

__version__ = "0.1.0"
