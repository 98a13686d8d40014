"""Config files: TOML or JSON under Memsense's parameter names (`alpha`, `lambda`,
`duplicateThreshold`, ...), so an exported file reads as the service's own options."""
from __future__ import annotations

import json
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Mapping

import tomli_w

from core.atomic import write_text_atomic
from core.config.schema import EXPORT_NAMES, IMPORT_NAMES, KNOBS, Config
from core.errors import MemsenseError
from core.files import read_text


def to_dict(cfg: Config) -> dict[str, Any]:
    """The config under Memsense's parameter names (plain JSON/TOML types)."""
    out: dict[str, Any] = {EXPORT_NAMES[f.name]: getattr(cfg, f.name) for f in fields(cfg) if f.name != "route_weights"}
    out["routeWeights"] = dict(cfg.route_weights)
    return out


def from_dict(data: Mapping[str, Any], base: Config | None = None) -> Config:
    """Build a config from Memsense-named (or field-named) keys; absent keys keep `base`'s."""
    if not isinstance(data, Mapping):
        raise MemsenseError(f"config must be a table/object of settings, got {type(data).__name__}")
    base = base or Config()
    changes: dict[str, Any] = {}
    problems: list[str] = []
    valid = {f.name for f in fields(Config)}
    for key, value in data.items():
        if key == "provenance":  # an exported file's header (core.config.provenance): not a setting
            continue
        name = IMPORT_NAMES.get(key, key)
        if key in ("routeWeights", "route_weights"):
            if not isinstance(value, Mapping):
                problems.append(f"{key}: must be a table of route = weight")
                continue
            changes["route_weights"] = {**base.route_weights, **value}
        elif name in valid:
            if name in KNOBS and KNOBS[name].integer and isinstance(value, float):
                problems.append(f"{name}: must be a whole number (no decimal point), got {value!r}")
                continue
            changes[name] = value
        else:
            problems.append(f"{key}: unknown setting")
    if problems:
        raise MemsenseError("invalid config: " + "; ".join(problems))
    return replace(base, **changes)


def dumps(cfg: Config, fmt: str) -> str:
    """Serialise as "toml" or "json"."""
    data = to_dict(cfg)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "toml":
        return tomli_w.dumps(data)
    raise MemsenseError(f"unknown config format {fmt!r}; use toml or json")


class DuplicateKey(ValueError):
    """A JSON object naming one key twice (TOML refuses that itself)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` of a settings file: json.loads would keep the last of two equal keys,
    so one of two settings the user wrote would be ignored without a word."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"the key {key!r} is given twice in one object; keep one of them")
        out[key] = value
    return out


def unreadable(exc: BaseException) -> str:
    """Why a parser gave up on a file that is well-formed but beyond what it reads: a number of
    thousands of digits, or nesting thousands deep."""
    if isinstance(exc, RecursionError):
        return "it is nested too deep"
    return "it holds a number of thousands of digits" if "digits" in str(exc) else str(exc)[:120]


def loads(text: str, fmt: str, source: str = "config") -> Config:
    try:
        data = json.loads(text, object_pairs_hook=unique_keys) if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemsenseError(f"{source}: not valid {fmt.upper()} ({exc}); fix the file or export it again") from None
    except DuplicateKey as exc:
        raise MemsenseError(f"{source}: {exc}") from None
    except (ValueError, RecursionError) as exc:  # a number of over 4300 digits; nesting deeper than Python recurses
        raise MemsenseError(f"{source}: not a {fmt.upper()} config memsense reads ({unreadable(exc)}); fix the file "
                            "or export it again") from None
    try:
        return from_dict(data)
    except MemsenseError as exc:
        raise MemsenseError(f"{source}: {exc}") from None


def format_for(path: Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".toml", ".json"):
        return suffix[1:]
    raise MemsenseError(f"{path}: config files end in .toml or .json")


def save(cfg: Config, path: str | Path) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a config."""
    path = Path(path)
    write_text_atomic(path, dumps(cfg, format_for(path)))


def load(path: str | Path) -> Config:
    if not str(path).strip():
        raise MemsenseError("the config path is empty; give a .toml or .json file")
    path = Path(path)
    fmt = format_for(path)
    return loads(read_text(path, "config"), fmt, source=str(path))
