"""Text beside a rank: the sentence of a chunk that best matches the query, query terms marked.

The chunk's message lines (the `[group chat conversation: ...]` header left out) are split into
sentences; a sentence not at the start of its line keeps the line's speaker as a prefix. Each
sentence scores `Σ idf(t)` over the distinct query terms t it contains, with
`idf(t) = log(1 + n / df(t))` over the chunk's own n sentences (a term in every sentence counts
little), function words and the `Speaker:` prefix left out; the best sentence wins, the earliest on ties, the first
when nothing matches. Terms are the lexical route's tokens (lowercase word characters). A
sentence longer than `max_chars` is cut to a window around its first mark, with "…".
"""
from __future__ import annotations

import html
import math
import re
from functools import lru_cache
from typing import NamedTuple

from core.recall.lexical.bm25 import TOKEN, tokenize
from core.records import Chunk

HEADER_PREFIX = "[group chat conversation:"
MAX_CHARS = 160
FUNCTION_WORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in is it its "
    "me my of on or our she he so than that the their them then there they this to was we were what when "
    "where which who whom why will with would you your".split())
"""Words too common to say what a sentence is about; never scored or marked."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPEAKER = re.compile(r"^([^:\n]{1,40}):\s")


class Snippet(NamedTuple):
    text: str
    marks: tuple[tuple[int, int], ...]  # character spans of query terms in `text`

    def marked(self, before: str = "«", after: str = "»") -> str:
        """The text with each mark wrapped (plain text, e.g. for CSV or a terminal)."""
        return _wrap(self.text, self.marks, before, after, lambda s: s)

    def html(self) -> str:
        """HTML-escaped text with marks in <b> (for Qt rich text)."""
        return _wrap(self.text, self.marks, "<b>", "</b>", html.escape)


def _wrap(text: str, marks, before: str, after: str, escape) -> str:
    out, last = [], 0
    for start, end in marks:
        out += [escape(text[last:start]), before, escape(text[start:end]), after]
        last = end
    out.append(escape(text[last:]))
    return "".join(out)


def chunk_text(chunk: Chunk) -> str:
    """The chunk's message lines, header left out: session chunks hold every line on the user
    side; a turn chunk is its user side then its assistant reply."""
    parts = [chunk.user_text] if chunk.kind == "session" else [chunk.user_text, chunk.assistant_text]
    return "\n".join(ln for p in parts for ln in p.splitlines() if ln.strip() and not ln.startswith(HEADER_PREFIX))


def sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        speaker = _SPEAKER.match(line)
        for n, sentence in enumerate(s for s in _SENTENCE_END.split(line.strip()) if s):
            out.append(f"{speaker.group(1)}: {sentence}" if n and speaker else sentence)
    return out


def query_terms(query: str) -> set[str]:
    return {t for t in tokenize(query) if t not in FUNCTION_WORDS}


def best_sentence(text: str, query: str, max_chars: int = MAX_CHARS) -> Snippet:
    """The best-matching sentence of `text` with the query's terms marked (see module doc)."""
    candidates = sentences(text)
    if not candidates:
        return Snippet("", ())
    terms = query_terms(query)
    tokens = [set(tokenize(s[_body_start(s):])) for s in candidates]
    n = len(candidates)
    idf = {t: math.log(1 + n / sum(t in ts for ts in tokens)) for t in terms if any(t in ts for ts in tokens)}
    scores = [sum(idf.get(t, 0.0) for t in ts & terms) for ts in tokens]
    best = max(range(n), key=lambda i: (scores[i], -i))
    return _cut(candidates[best], _marks(candidates[best], set(idf)), max_chars)


@lru_cache(maxsize=4096)
def chunk_snippet(chunk: Chunk, query: str, max_chars: int = MAX_CHARS) -> Snippet:
    """The chunk's best sentence for the query; kept, as a slider tick asks for the same ones again."""
    return best_sentence(chunk_text(chunk), query, max_chars)


def _body_start(sentence: str) -> int:
    """Where the words start after a `Speaker: ` prefix (0 without one): a speaker's name in
    front of every line says nothing about which line matches."""
    speaker = _SPEAKER.match(sentence)
    return speaker.end() if speaker else 0


def _marks(sentence: str, terms: set[str]) -> tuple[tuple[int, int], ...]:
    start = _body_start(sentence)
    return tuple((m.start(), m.end()) for m in TOKEN.finditer(sentence, start) if m.group().lower() in terms)


def _cut(sentence: str, marks: tuple[tuple[int, int], ...], max_chars: int) -> Snippet:
    if len(sentence) <= max_chars:
        return Snippet(sentence, marks)
    start = max(0, (marks[0][0] if marks else 0) - max_chars // 3)
    if start:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    end = min(len(sentence), start + max_chars)
    if end < len(sentence):
        space = sentence.rfind(" ", start, end)
        end = space if space > start + max_chars // 2 else end
    lead, tail = ("…" if start else ""), ("…" if end < len(sentence) else "")
    shift = len(lead) - start
    kept = tuple((a + shift, b + shift) for a, b in marks if a >= start and b <= end)
    return Snippet(lead + sentence[start:end] + tail, kept)


def message_parts(chunk: Chunk) -> list[tuple[str | None, str]]:
    """A session chunk's text as (message id, message text) parts, in order; the header line
    comes first with id None. Turn chunks (and any text whose parts do not line up with the
    chunk's message ids) come back as one part with id None."""
    parts = chunk.user_text.split("\n\n") if chunk.kind == "session" else []
    header = [p for p in parts[:1] if p.startswith(HEADER_PREFIX)]
    body = parts[len(header):]
    if chunk.kind != "session" or len(body) != len(chunk.dia_ids):
        return [(None, chunk_text(chunk))]
    return [(None, h) for h in header] + list(zip(chunk.dia_ids, body))
