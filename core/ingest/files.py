"""Reading dataset files: text, JSON, JSON Lines, with one clear error per bad input."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core import files
from core.errors import MemsenseError


FORMAT_HINT = (
    "A conversation file is LoCoMo JSON or JSON Lines with one message per line "
    '(keys user, session, time, speaker, text; see the "Data" section of README.md).'
)
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a UTF-16 surrogate: fine in a pair (an emoji), not a character alone."""
QUESTION_HINT = (
    'A question file is LoCoMo JSON or {"questions": [{"user", "question", "answer", '
    '"category", "evidence"}, ...]} (see the "Data" section of README.md).'
)


def fail(path: Path, what: str, fix: str = FORMAT_HINT) -> MemsenseError:
    return MemsenseError(f"{path}: {what}. {fix}")


def read_text(path: str | Path) -> tuple[Path, str]:
    """The dataset file's text (`core.files.read_text`); a blank file is an error too."""
    text = files.read_text(path, "dataset file")
    if not text.strip():
        raise MemsenseError(f"{path}: the file is empty. Choose another file, or export it again.")
    return Path(path), text


def loads_json(text: str, path: Path, line: int | None = None) -> Any:
    """json.loads with errors as MemsenseError naming the line and column."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {line}" if line is not None else f"line {e.lineno} column {e.colno}"
        if line is not None and e.colno > 1:
            where += f" column {e.colno}"
        raise MemsenseError(
            f"{path}: not valid JSON at {where} ({e.msg.split(' starting at')[0]}; truncated file?). "
            "Re-export or re-download the file, or fix that line."
        ) from None
    except (ValueError, RecursionError) as e:  # a number of over 4300 digits, nesting deeper than Python recurses
        from core.config.files import unreadable

        where = f" line {line}" if line is not None else ""
        raise MemsenseError(f"{path}:{where} not JSON memsense reads ({unreadable(e)}); fix the file, or "
                            "re-export it") from None
    try:
        lone = bool(SURROGATE_ESCAPE.search(text)) and _lone_surrogate(data)
    except RecursionError:
        raise MemsenseError(f"{path}: not JSON memsense reads (it is nested too deep); fix the file, or "
                            "re-export it") from None
    if lone:
        pos, escape = _first_lone_escape(text)
        where = f"line {line if line is not None else text.count(chr(10), 0, pos) + 1}"
        raise MemsenseError(f"{path}: {where} holds {escape}, half of a UTF-16 surrogate pair, which is not "
                            "a character (the file was cut or converted badly); re-export the file, or remove it")
    return data


def _first_lone_escape(text: str) -> tuple[int, str]:
    """Where the first surrogate escape without its other half is, and the escape."""
    def backslashes_before(pos: int) -> int:
        n = 0
        while pos > n and text[pos - n - 1] == "\\":
            n += 1
        return n

    found = [m for m in SURROGATE_ESCAPE.finditer(text) if backslashes_before(m.start()) % 2 == 0]  # not "\\ud800"
    paired: set[int] = set()
    for a, b in zip(found, found[1:]):
        if a.end() == b.start() and a.group()[2].lower() == "d" and a.group()[3].lower() in "89ab" \
                and b.group()[3].lower() in "cdef":
            paired |= {a.start(), b.start()}
    lone = next((m for m in found if m.start() not in paired), None)
    return (lone.start(), lone.group()) if lone else (0, "a lone surrogate")


def _lone_surrogate(value: Any) -> bool:
    """Whether any text in a parsed JSON value (keys included) holds a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


def json_lines(text: str, path: Path) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line; each line must be a JSON object."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        obj = loads_json(line, path, line=number)
        if not isinstance(obj, dict):
            raise fail(path, f"line {number}: expected a JSON object {{...}}, got {kind_of(obj)}")
        rows.append((number, obj))
    return rows


def kind_of(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


def is_locomo(data: Any) -> bool:
    return isinstance(data, list) and any(isinstance(s, dict) and "conversation" in s for s in data)


def required_str(obj: dict, key: str, where: str, path: Path) -> str:
    if key not in obj:
        raise fail(path, f"{where}: missing key '{key}'")
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise fail(path, f"{where}: '{key}' must be non-empty text, got {kind_of(value)}")
    return value


def text_field(obj: dict, key: str, where: str, path: Path) -> str:
    if key not in obj:
        raise fail(path, f"{where}: missing key '{key}'")
    if not isinstance(obj[key], str):
        raise fail(path, f"{where}: '{key}' must be text, got {kind_of(obj[key])}")
    return obj[key]


def urls_field(value: Any, where: str, path: Path) -> tuple[str, ...]:
    """Image URLs from a string or a list of strings (None or "" mean none)."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(u, str) for u in value):
        return tuple(u for u in value if u.strip())
    raise fail(path, f"{where}: 'img_url' must be a URL or a list of URLs, got {kind_of(value)}")
