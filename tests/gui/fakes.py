"""Stand-ins for the engine and the store builder: synthetic pools, optional delays."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from core.errors import MemsenseError
from core.synthetic import synthetic_pool


class FakeEngine:
    """The Engine interface over seeded synthetic pools; `delay` seconds per slow call."""

    USERS = ("synth-a", "synth-b")

    def __init__(self, location: str, *, delay: float = 0.0, fail_open: str | None = None):
        if fail_open:
            raise MemsenseError(fail_open)
        self.location = location
        self.delay = delay
        self.closed = False
        self.recalls: list[tuple[str, str]] = []
        self.threads: set[int] = set()

    def _slow(self) -> None:
        self.threads.add(threading.get_ident())
        if self.delay:
            time.sleep(self.delay)

    def load_model(self) -> None:
        self._slow()

    def users(self) -> list[str]:
        return list(self.USERS)

    def pool(self, user_id: str, query: str = "q"):
        seed = sum(map(ord, user_id + query)) % 1000
        return synthetic_pool(n_sessions=10, turns_per_session=8, dim=16, seed=seed, user_id=user_id, query=query)

    def chunks(self, user_id: str):
        return list(self.pool(user_id).chunks)

    def recall(self, user_id: str, query: str):
        self._slow()
        self.recalls.append((user_id, query))
        return self.pool(user_id, query)

    def close(self) -> None:
        self.closed = True


def fake_builder(delay: float = 0.0, steps: int = 5):
    """A `build_store` stand-in: reports progress, honours cancel, writes a marker dir."""
    def build(dataset: Path, location: Path, *, mode: str = "hybrid", progress=None, cancel=None, **_):
        for i in range(steps):
            if cancel is not None and cancel.is_set():
                raise MemsenseError("cancelled")
            if progress:
                progress(i, steps, f"step {i}")
            time.sleep(delay / steps)
        Path(location).mkdir(parents=True, exist_ok=True)
        (Path(location) / "meta.json").write_text("{}")
        return {"mode": mode}
    return build
