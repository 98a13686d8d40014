"""The embedded store's chunk payloads (JSON text in `memsense.sqlite`): decoding and checking them.

A payload is decoded into its `Chunk` only when the chunk is used (`LazyChunks`); the rows of a
pool are checked first, on the thread that recalls, so a damaged payload is an error of the recall
that reads it. Each must hold its row's memory_id.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any, Callable

import simdjson

from core.errors import MemsenseError
from core.records import Chunk

_PARSER = threading.local()
PARSER_KEEP_BYTES = 4 * 2 ** 20
"""Each thread keeps one simdjson parser for checks of up to this many bytes of payloads (a
pool of 1,000 rows is about 0.5 MB): a new parser maps its buffers afresh each time."""


class BadPayload(ValueError):
    """A payload that does not decode into the chunk of its row (the message says how)."""


def _json_parser(size: int) -> simdjson.Parser:
    if size > PARSER_KEEP_BYTES:
        return simdjson.Parser()
    parser = getattr(_PARSER, "parser", None)
    if parser is None:
        parser = _PARSER.parser = simdjson.Parser()
    return parser


def decode(ids: list[str], payloads: list[str], rows: list[int]) -> list[Chunk]:
    """The chunks of `payloads` (rows `rows`), in one JSON parse; each must hold its row's memory_id."""
    try:
        chunks = [Chunk.from_payload(p) for p in json.loads("[" + ",".join(payloads) + "]")]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadPayload(f"a chunk cannot be read: {exc}") from None
    if len(chunks) != len(rows) or any(c.memory_id != ids[r] for c, r in zip(chunks, rows)):
        raise BadPayload("a chunk's payload does not match its row")
    return chunks


def check(ids: list[str], payloads: list[str], rows: list[int]) -> None:
    """Raise as `decode` does if a payload of `rows` is damaged: one simdjson parse of them
    all (no Python object per field) must give an object per row holding its memory_id;
    when it does not, `decode` reads them and names the damage (or finds none: simdjson
    refuses some JSON that Python reads, e.g. NaN)."""
    try:
        text = ("[" + ",".join(payloads) + "]").encode()
        doc: Any = _json_parser(len(text)).parse(text)
        try:
            found = [row["memory_id"] for row in doc]
        finally:
            del doc  # the parser is reused: no proxy of this document may outlive the read
        if found == [ids[r] for r in rows]:
            return
    except (ValueError, TypeError, KeyError, RuntimeError, UnicodeEncodeError):
        _PARSER.__dict__.pop("parser", None)  # whatever state it is left in, the next check gets a new one
    decode(ids, payloads, rows)


class PayloadReader:
    """One user's payloads in row order, read in one query on a second thread (`background`) or
    when first asked. Until that read is done, `rows` reads just the rows asked for (a first
    recall's pool needs a few hundred of 100,000), so no recall waits for the whole read."""

    ROWS_AT_ONCE = 2_000
    """More rows asked at once than this wait for the whole read instead (one query's parameters)."""

    def __init__(self, db: sqlite3.Connection, user_id: str, n: int, damaged: Callable[[str], MemsenseError],
                 background: bool):
        self._db, self._user_id, self._n, self._damaged = db, user_id, n, damaged
        self._got: list[list[str] | sqlite3.DatabaseError] = []
        self._worker = threading.Thread(target=self._read, name="store-payloads", daemon=True) if background else None
        if self._worker is not None:
            self._worker.start()

    def _read(self) -> None:
        try:
            rows = self._db.execute("SELECT payload FROM chunks WHERE user_id=? ORDER BY row", (self._user_id,)).fetchall()
            self._got.append([p for (p,) in rows])
        except sqlite3.DatabaseError as exc:
            self._got.append(exc)

    def wait(self) -> None:
        """Wait for the read on the second thread, if any (before the database closes)."""
        if self._worker is not None:
            self._worker.join()

    def done(self) -> bool:
        return bool(self._got)

    def every(self) -> list[str]:
        """Every payload (waits for the read); raises if they are not the `n` recorded."""
        if self._worker is None:
            if not self._got:
                self._read()
        else:
            self._worker.join()
        texts = self._got[-1]
        if isinstance(texts, sqlite3.DatabaseError):
            raise self._damaged(f"its chunks cannot be read: {texts}")
        if len(texts) != self._n:
            raise self._damaged(f"{len(texts)} readable chunks of {self._n} recorded")
        return texts

    def rows(self, rows: list[int]) -> list[str]:
        """The payloads of `rows` (ascending, distinct)."""
        if self.done() or self._worker is None or len(rows) > self.ROWS_AT_ONCE:
            texts = self.every()
            return [texts[r] for r in rows]
        marks = ",".join("?" * len(rows))
        try:
            got = self._db.execute(f"SELECT row, payload FROM chunks WHERE user_id=? AND row IN ({marks}) ORDER BY row",
                                   (self._user_id, *rows)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(f"its chunks cannot be read: {exc}") from None
        if [r for r, _ in got] != rows:
            raise self._damaged(f"{len(got)} readable chunks of the {len(rows)} asked for")
        return [p for _, p in got]
