"""Open a store by its location: a folder (the embedded store) or a Qdrant server URL."""
from __future__ import annotations

from pathlib import Path

from core.recall.embedded.store import EmbeddedStore, is_embedded_store
from core.errors import MemsenseError
from core.recall.qdrant.store import QdrantStore
from core.recall.store import Store, is_url


def is_local_mode_store(path: Path) -> bool:
    """A folder written by qdrant-client's local mode (memsense before the embedded store)."""
    return (path / "collection").is_dir() or (path / "meta.json").exists()


def open_store(location: str | Path, *, create: bool = False, write: bool = False) -> Store:
    """The store at `location`; `create` makes an empty one (and implies `write`)."""
    if not str(location).strip():
        raise MemsenseError("--store is empty; give a folder or an http(s):// URL of a Qdrant server")
    if is_url(location):
        return QdrantStore(location, create=create)
    path = Path(location).expanduser()
    if not is_embedded_store(path) and is_local_mode_store(path):
        raise MemsenseError(f"{path} is a store of an older memsense (Qdrant local mode); convert it once with "
                            f"`memsense migrate {path} --store NEW_FOLDER`, then use NEW_FOLDER")
    if create and path.exists() and not is_embedded_store(path) and any(path.iterdir()):
        raise MemsenseError(f"{path} is not empty and holds no memsense store; choose a new or empty folder")
    return EmbeddedStore(path, create=create, write=write or create)
