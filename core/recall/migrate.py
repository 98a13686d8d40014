"""`memsense migrate OLD --store NEW`: copy a store of an older memsense (Qdrant local mode, one
collection per user) or a Qdrant server store into an embedded store or a Qdrant server, user by
user; with NEW the same server as OLD, convert a server store of one collection per user in place
to one collection for all users (`QdrantStore.upgrade`); with NEW the same embedded store as OLD,
add the columns files its users lack (`EmbeddedStore.add_columns`: they open faster).

Chunks and every route vector are copied as stored, so every search on NEW returns what it
returned on OLD; OLD is only read (in place: its old collections are deleted once converted).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from core.recall.backends import is_local_mode_store, open_store
from core.recall.embedded.store import EmbeddedStore, is_embedded_store
from core.errors import MemsenseError
from core.recall.qdrant.store import QdrantStore
from core.recall.store import is_url


def migrate(old: str | Path, new: str | Path, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Copy every user of `old` into the store `new` (created), or convert a server in place; returns counts."""
    if is_url(old) and is_url(new) and str(old).rstrip("/") == str(new).rstrip("/"):
        server = QdrantStore(old)
        try:
            return server.upgrade(progress)
        finally:
            server.close()
    if not is_url(old):
        path = Path(old).expanduser()
        if is_embedded_store(path):
            if is_url(new) or Path(new).expanduser().resolve() != path.resolve():
                raise MemsenseError(f"{path} is already an embedded store; to bring it up to date in place, "
                                    f"run `memsense migrate {path} --store {path}`")
            return _add_columns(path, progress)
        if not is_local_mode_store(path):
            raise MemsenseError(f"no Qdrant local-mode store at {path}; give the folder of an older memsense store")
    if not is_url(new) and not is_url(old) and Path(new).expanduser().resolve() == Path(old).expanduser().resolve():
        raise MemsenseError("--store must be a new folder, not the store being migrated")
    if is_url(new) or is_embedded_store(Path(new).expanduser()):
        existing = open_store(new)
        try:
            if existing.users():
                raise MemsenseError(f"{new} already holds users; migrate into a new folder or a server without memsense users")
        finally:
            existing.close()
    source = QdrantStore(old)
    try:
        meta = source.meta()
        if meta is None or not meta.users:
            raise MemsenseError(f"the store {old} holds no users; nothing to migrate")
        target = open_store(new, create=True)
        try:
            users = sorted(meta.users)
            chunks = 0
            for n, user in enumerate(users):
                if progress:
                    progress(n, len(users), f"copying {user}")
                rows, vectors = source.read_user_routes(user)
                target.write_user(user, rows, vectors, meta.model_key, meta.dim)
                chunks += len(rows)
            if progress:
                progress(len(users), len(users), "done")
        finally:
            target.close()
    finally:
        source.close()
    return {"users": len(users), "chunks": chunks, "model_key": meta.model_key, "store": str(new)}


def _add_columns(path: Path, progress: Callable[[int, int, str], None] | None) -> dict:
    store = EmbeddedStore(path, write=True)
    try:
        written = store.add_columns((lambda k, n: progress(k, n, "indexing users")) if progress else None)
        return {"users": len(store.users()), "indexed": written, "store": str(path)}
    finally:
        store.close()
