"""Named configs: the built-in presets (SPEC §9) and the user's own, kept in one JSON file."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.config import files as config_io
from core.atomic import write_text_atomic
from core.config.schema import Config
from core.errors import MemsenseError
from core.files import read_text
from core.records import ROUTES

MEMSENSE = "memsense"


def only(**weights: float) -> dict[str, float]:
    """Route weights with the named routes as given and every other route at 0 (off)."""
    return {r: float(weights.get(r, 0.0)) for r in ROUTES}


# Baselines: one route's order over whole sessions, nothing added (no memory-score term, no
# turn support, plain relevance order: lambda 1, duplicates only when identical).
_PLAIN: dict[str, Any] = dict(alpha=0.0, mmr_lambda=1.0, duplicate_threshold=1.0, turn_support_cap=0.0)

BUILTIN: dict[str, Config] = {
    MEMSENSE: Config(),
    # Retrieval fusion note: weighted RRF k = 60, semantic (vec_full) 1.0, keyword (lexical) 0;
    # a weight of 0 removes that list, so every other route is off too.
    "fusion_note": Config(rrf_k=60.0, route_weights=only(vec_full=1.0, lexical=0.0)),
    # Memory v2 note: 0.3 · bm25_norm + 0.7 · cosine_norm, cut at 0.15, at most 10; the score
    # is the note's final score (alpha 0).
    "memory_v2": Config(scheme="linear", alpha=0.0, route_weights=only(vec_full=1.0, lexical=1.0)),
    # Phase 7 note: hybrid RRF k = 60, vector / BM25 0.5 / 0.5, then the quality score (which
    # already holds importance, so alpha 0); "as of" = the newest chunk in the pool.
    "phase7": Config(scheme="quality", rrf_k=60.0, alpha=0.0, route_weights=only(vec_full=0.5, lexical=0.5)),
    # Multi-session research note: QMD top-rank bonus on Memsense's RRF, MMR at assembly.
    "top_rank_bonus": Config(scheme="top_rank_bonus"),
    "bm25_only": Config(route_weights=only(lexical=1.0), **_PLAIN),
    "dense_only": Config(route_weights=only(vec_full=1.0), **_PLAIN),
    # Beyond Memsense (SPEC §15): whole-session BM25 (English stop words and stemming) and the
    # best turn by dense, fused with the chunk-level BM25 and dense routes that carry turn support,
    # one result per session (tools/session_routes.py measures it beside the others).
    "sessions": Config(rrf_k=10.0, route_weights=only(session_lexical=2.0, session_dense=1.0, lexical=1.0, vec_full=1.0),
                       alpha=0.0, mmr_lambda=1.0, duplicate_threshold=1.0, distinct_sessions=True),
}
"""Built-in presets by name (SPEC §9); `memsense` reproduces the service exactly. The note
presets swap in their note's scoring and keep Memsense's assembly (session-first turn support,
MMR, top_k), so a comparison isolates the scoring."""


def builtin(name: str) -> Config:
    try:
        return BUILTIN[name]
    except KeyError:
        raise MemsenseError(f"unknown preset {name!r}; built-in presets: {', '.join(BUILTIN)}") from None


class PresetStore:
    """The user's presets in one JSON file, rewritten atomically on every change."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._presets: dict[str, Config] = self._read()

    def _read(self) -> dict[str, Config]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(read_text(self.path, "presets file"), object_pairs_hook=config_io.unique_keys)
        except (json.JSONDecodeError, config_io.DuplicateKey) as exc:
            raise MemsenseError(f"presets file {self.path} is unreadable ({exc}); move it aside to start afresh") from None
        except (ValueError, RecursionError) as exc:  # a number of over 4300 digits, nesting thousands deep
            raise MemsenseError(f"presets file {self.path} is unreadable ({config_io.unreadable(exc)}); move it aside "
                                "to start afresh") from None
        if not isinstance(data, dict):
            raise MemsenseError(f"presets file {self.path} must hold an object of name: settings")
        taken = sorted(set(data) & set(BUILTIN))
        if taken:
            raise MemsenseError(f"presets file {self.path} defines {', '.join(map(repr, taken))}, the name of a built-in "
                                "preset, which cannot be replaced; rename it in the file")
        out = {}
        for name, values in data.items():
            try:
                out[name] = config_io.from_dict(values)
            except MemsenseError as exc:
                raise MemsenseError(f"presets file {self.path}, preset {name!r}: {exc}") from None
        return out

    def _write(self) -> None:
        data = {name: config_io.to_dict(cfg) for name, cfg in sorted(self._presets.items())}
        write_text_atomic(self.path, json.dumps(data, indent=2) + "\n")

    def names(self) -> list[str]:
        return sorted(self._presets)

    def all(self) -> dict[str, Config]:
        """Built-in presets first, then the user's."""
        return {**BUILTIN, **self._presets}

    def get(self, name: str) -> Config:
        if name in self._presets:
            return self._presets[name]
        return builtin(name)

    @staticmethod
    def check_name(name: str) -> str:
        """The name a preset would be saved under; empty or built-in names are refused."""
        name = name.strip()
        if not name:
            raise MemsenseError("a preset needs a name")
        if name in BUILTIN:
            raise MemsenseError(f"{name!r} is a built-in preset; choose another name")
        return name

    def save(self, name: str, cfg: Config) -> None:
        name = self.check_name(name)
        self._presets[name] = cfg
        self._write()

    def rename(self, old: str, new: str) -> None:
        new = new.strip()
        if old not in self._presets:
            raise MemsenseError(f"no user preset named {old!r}")
        if not new or new in BUILTIN or new in self._presets:
            raise MemsenseError(f"cannot rename to {new!r}: empty, built-in or already taken")
        self._presets[new] = self._presets.pop(old)
        self._write()

    def delete(self, name: str) -> None:
        if name not in self._presets:
            raise MemsenseError(f"no user preset named {name!r}" + (" (built-ins cannot be deleted)" if name in BUILTIN else ""))
        del self._presets[name]
        self._write()
