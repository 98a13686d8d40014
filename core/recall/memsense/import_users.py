"""`memsense import postgresql://…`: copy users of a live Memsense, with their stored vectors,
into an embedded store for offline work. Nothing is re-embedded; the store records the model
folder that embeds its queries, which must be the model named in the database.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from core.errors import MemsenseError
from core.recall.memsense.database import DEFAULT_SCOPE, DEFAULT_TENANT, PostgresStore, stored_route_vectors
from core.recall.embedding.endpoint import model_tail


@dataclass
class ImportStats:
    users: list[str] = field(default_factory=list)
    chunks: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # user -> why
    model: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"users": self.users, "chunks": self.chunks, "skipped": self.skipped, "model": self.model,
                "seconds": round(self.seconds, 3)}


def _model_folder(model: str | None, stored: str) -> Path:
    from core.recall.embedding.embedder import check_model_folder, default_model_path

    folder = check_model_folder(Path(model).expanduser()) if model else default_model_path()
    readme = folder / "README.md"
    text = str(folder).lower() + (readme.read_text("utf-8", "replace").lower() if readme.is_file() else "")
    if model_tail(stored) not in text:
        raise MemsenseError(f"the stored vectors were made by {stored} and {folder} is not that model; pass "
                            f"--model FOLDER of {stored} so the copy can embed its queries")
    return folder


def import_users(dsn: str, location: str | Path, *, tenant: str = DEFAULT_TENANT, scope: str = DEFAULT_SCOPE,
                 users: list[str] | None = None, model: str | None = None,
                 progress: Callable[[int, int, str], None] | None = None) -> ImportStats:
    """Copy `users` (default: every user of the tenant and scope) into the store at `location`."""
    from core.recall.embedding.model_identity import model_key
    from core.recall.backends import open_store

    start = time.perf_counter()
    stats = ImportStats()
    source = PostgresStore(dsn, tenant, scope)
    try:
        wanted = users or source.users()
        plan = []
        for user in wanted:
            try:
                summary = source.check_user(user)
            except MemsenseError as exc:
                if users:  # asked for by name: say why it cannot be copied
                    raise
                stats.skipped[user] = str(exc)
                continue
            if len(summary.models) != 1:
                raise MemsenseError(f"user {user!r} has vectors from several models {list(summary.models)}; "
                                    "an embedded store holds one model")
            plan.append((user, summary.models[0], summary.dims[0]))
        if not plan:
            raise MemsenseError(f"nothing to import from tenant {tenant!r}, scope {scope!r}: "
                                + ("; ".join(f"{u}: {why}" for u, why in stats.skipped.items()) or "no users"))
        models = {m for _, m, _ in plan}
        if len(models) > 1:
            raise MemsenseError(f"these users were embedded by different models {sorted(models)}; "
                                "import them into separate stores with --user")
        stats.model = plan[0][1]
        key = model_key(_model_folder(model, stats.model))
        target = open_store(location, create=True)
        try:
            for n, (user, _, dim) in enumerate(plan):
                if progress:
                    progress(n, len(plan), f"copying {user}")
                chunks = source.chunks(user)
                vectors = stored_route_vectors(source, user, chunks, dim)
                target.write_user(user, list(chunks), vectors, key, dim)
                stats.users.append(user)
                stats.chunks += len(chunks)
            if progress:
                progress(len(plan), len(plan), "done")
        finally:
            target.close()
    finally:
        source.close()
    stats.seconds = time.perf_counter() - start
    return stats
