"""A model's identity: the key stores and embedding caches are bound to (SHA-256 over the model's files,
or the one a packaged ONNX model's metadata names), the older folder-name key kept as a hint, and
whether a folder is a packaged ONNX model."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.errors import MemsenseError
from core.recall.embedding.onnx_model import PACKAGED_META


def is_packaged(path: Path) -> bool:
    """A packaged ONNX model's folder (memsense-minilm-onnx), not a sentence-transformers one."""
    return (Path(path) / PACKAGED_META).is_file()


def legacy_model_key(path: Path) -> str:
    """The key stores and caches used before models were identified by content: the folder
    name and the sizes of the weight files. Two different models can share it (a fine-tuned
    copy saved as `.../model`), so it is only ever a hint, never proof (see `core.recall.engine`).
    A packaged ONNX model gives the key of the folder it was exported from, which its metadata keeps."""
    if is_packaged(path):
        try:
            legacy = json.loads((path / PACKAGED_META).read_text(encoding="utf-8")).get("legacy_key")
        except (OSError, ValueError, AttributeError):
            legacy = None
        return legacy if isinstance(legacy, str) else f"{path.name}-packaged"
    sizes = sorted((p.name, p.stat().st_size) for p in path.glob("*") if p.suffix in (".safetensors", ".bin"))
    return f"{path.name}-{hashlib.sha1(repr(sizes).encode()).hexdigest()[:10]}"


KEY_PREFIX = "sha256-"
IGNORED_MODEL_FILES = frozenset({"README.md", ".gitattributes"})
HASH_MEMO = "model-ids.json"


def _model_files(path: Path) -> list[Path]:
    """Every file that makes up the model (weights, configs, tokenizer), not docs or VCS files."""
    return sorted(p for p in path.rglob("*") if p.is_file() and p.name not in IGNORED_MODEL_FILES
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def model_key(path: Path, memo_dir: Path | None = None) -> str:
    """The model's identity: SHA-256 over its files' relative paths and contents.

    The same model in any folder has the same key; a fine-tuned copy under the same name does
    not. Hashing ~90 MB takes a fraction of a second, so the hash is remembered in
    `memo_dir/model-ids.json` keyed by each file's path, size and mtime, and recomputed only
    when one of them changes.
    """
    if is_packaged(path):
        return _packaged_key(path)
    files = _model_files(path)
    stamp = [[str(f.relative_to(path)), f.stat().st_size, f.stat().st_mtime_ns] for f in files]
    memo = _read_memo(memo_dir)
    entry = memo.get(str(path))
    if isinstance(entry, dict) and entry.get("files") == stamp and isinstance(entry.get("key"), str):
        return entry["key"]
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(path)).encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    key = KEY_PREFIX + digest.hexdigest()[:20]
    _write_memo(memo_dir, {**memo, str(path): {"files": stamp, "key": key}})
    return key


def _packaged_key(path: Path) -> str:
    """A packaged ONNX model's key: the one its metadata names (that of the model it was exported from)."""
    try:
        key = json.loads((path / PACKAGED_META).read_text(encoding="utf-8"))["model_key"]
    except (OSError, ValueError, KeyError, TypeError):
        key = None
    if not isinstance(key, str) or not is_content_key(key):
        raise MemsenseError(f"{path / PACKAGED_META} is damaged (no model key); reinstall the model package: "
                            "pip install --force-reinstall memsense-minilm-onnx (scripts/setup.sh in a clone)")
    return key


def is_content_key(key: str) -> bool:
    return key.startswith(KEY_PREFIX)


def _read_memo(memo_dir: Path | None) -> dict:
    if memo_dir is None:
        return {}
    try:
        data = json.loads((memo_dir / HASH_MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: the hash is recomputed and the memo rewritten
    return data if isinstance(data, dict) else {}


def _write_memo(memo_dir: Path | None, memo: dict) -> None:
    """Best effort: a read-only cache folder only costs recomputing the hash next time."""
    if memo_dir is None:
        return
    from core.atomic import write_text_atomic

    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(memo_dir / HASH_MEMO, json.dumps(memo) + "\n")
    except OSError:
        pass
