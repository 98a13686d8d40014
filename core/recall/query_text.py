"""A query as Memsense takes it: checked, trimmed like JavaScript's `trim`, and cut for the
embedder like JavaScript's `slice` (SPEC §10).

Memsense's search trims the query (`String(q).trim()`) and embeds at most
`MEMSENSE_EMBEDDING_MAX_CHARS` (6,000) of it with `text.slice(0, maxChars)`. JavaScript strings
are UTF-16: `slice` counts UTF-16 code units, so a character outside the Basic Multilingual Plane
(most emoji) counts 2, and a cut that falls inside one keeps its first half, a lone high
surrogate, which `JSON.stringify` sends as `\\ud83d`. `memsense_cut` does the same; `json.dumps`
writes that half the same way, so an embedding endpoint receives the very string Memsense sends.
A local model cannot read half a character (its tokenizer needs UTF-8; the Python endpoint
Memsense ships fails such a request), so `for_local_model` drops the half.
"""
from __future__ import annotations

import os

from core.errors import MemsenseError

MAX_CHARS = int(os.environ.get("MEMSENSE_EMBEDDING_MAX_CHARS", "6000"))
"""Memsense embeds at most this many UTF-16 code units of a query (its default, and its variable)."""
MAX_QUERY_CHARS = 100_000
"""A query longer than this is a mistake (a file pasted whole), refused before any work."""

JS_WHITESPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                 "\u2028\u2029\u202f\u205f\u3000\ufeff")
"""What JavaScript's `String.prototype.trim` removes (WhiteSpace and LineTerminator)."""


def js_trim(text: str) -> str:
    """`text.trim()` in JavaScript (Python's `strip` differs: it keeps U+FEFF, removes U+001C-U+001F)."""
    return text.strip(JS_WHITESPACE)


def memsense_cut(text: str, limit: int = MAX_CHARS) -> str:
    """`text.slice(0, limit)` in JavaScript: the first `limit` UTF-16 code units, a character
    cut in two leaving its high surrogate."""
    if len(text) <= limit // 2:  # every character is at most 2 units: nothing to cut
        return text
    units = text.encode("utf-16-le", "surrogatepass")
    return units[: 2 * limit].decode("utf-16-le", "surrogatepass")


def for_local_model(text: str) -> str:
    """The cut query a local model can read: a trailing half character dropped."""
    cut = memsense_cut(text)
    return cut[:-1] if cut and "\ud800" <= cut[-1] <= "\udbff" else cut


def check_query(query: object) -> str:
    """The query, or one MemsenseError naming what is wrong with it and the fix."""
    if not isinstance(query, str) or not js_trim(query):
        raise MemsenseError("the query is empty; type a question to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise MemsenseError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}. "
                            "Shorten it (the model reads only its first 256 tokens anyway)")
    bad = next((i for i, ch in enumerate(query) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:  # a command line's bytes that were not UTF-8 arrive as lone surrogates
        raise MemsenseError(f"the query is not valid UTF-8 text (a stray byte at character {bad + 1}); "
                            "type it again or set the terminal to UTF-8")
    nul = query.find("\0")
    if nul >= 0:
        raise MemsenseError(f"the query holds a NUL byte at character {nul + 1}, which no database text can hold; "
                            "remove it from the query")
    control = next((ch for ch in query if ord(ch) < 32 and ch not in "\t\n\r" or 127 <= ord(ch) < 160), None)
    if control is not None:
        raise MemsenseError(f"the query holds a control character ({control!r}); type plain text")
    return query
