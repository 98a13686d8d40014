"""Chunking (SPEC §1): worked examples of every rule on hand-made conversations."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import MemsenseError
from core.ingest import (
    MAX_SESSION_CHARS,
    Conversation,
    Session,
    build_chunks,
    header,
    message_line,
    split_parts,
)
from tests.fixtures import (
    DATE,
    HEADER,
    conv,
    kinds,
    msg,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "core" / "demo"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"


# ---------------------------------------------------------------- message lines and headers


def test_message_line_is_speaker_colon_text():
    assert message_line(msg("Ann", "Hello there")) == "Ann: Hello there"


def test_each_image_url_gets_its_own_line_with_the_caption():
    m = msg("Ann", "Look!", img_urls=("http://a/1.jpg", "http://a/2.jpg"), caption="a cat")
    assert message_line(m) == "Ann: Look!\nhttp://a/1.jpg: a cat\nhttp://a/2.jpg: a cat"


def test_image_url_without_caption_is_the_bare_url():
    assert message_line(msg("Ann", "Look!", img_urls=("http://a/1.jpg",))) == "Ann: Look!\nhttp://a/1.jpg"


def test_caption_without_url_goes_in_parentheses():
    assert message_line(msg("Ann", "Look!", caption="a cat")) == "Ann: Look!\n(a cat)"


def test_header_keeps_the_original_date_time_text():
    session = Session(1, DATE, "2023-05-08T13:56:00", ())
    assert header(session) == HEADER


# ---------------------------------------------------------------- session chunks


def test_session_chunk_parts_joined_by_blank_lines_assistant_is_second_speaker():
    c = conv(msg("Ann", "a1", "D1:1"), msg("Bob", "b1", "D1:2"), msg("Ann", "a2", "D1:3"))
    [chunk] = build_chunks([c], mode="session", enrich=False)
    assert chunk.user_text == "\n\n".join([HEADER, "Ann: a1", "Bob: b1", "Ann: a2"])
    assert chunk.assistant_text == "Bob: b1"
    assert chunk.content == json.dumps({"user": chunk.user_text, "assistant": "Bob: b1"})
    assert (chunk.memory_id, chunk.session_id, chunk.order) == ("u:S001:P00", "u:S001", 0)
    assert (chunk.session_number, chunk.time, chunk.next_user_text) == (1, "2023-05-08T13:56:00", "")
    assert chunk.dia_ids == ("D1:1", "D1:2", "D1:3")


def test_split_parts_fills_each_chunk_up_to_the_limit():
    # sizes 10, 5, 5 with limit 22: 10 + 2 + 5 = 17, + 2 + 5 = 24 > 22, so a new chunk starts.
    assert split_parts(["x" * 10, "y" * 5, "z" * 5], limit=22) == [[0, 1], [2]]
    # exactly at the limit stays in: 10 + 2 + 10 = 22.
    assert split_parts(["x" * 10, "y" * 10], limit=22) == [[0, 1]]


def test_split_parts_never_cuts_an_oversized_part():
    assert split_parts(["x" * 50, "y", "z" * 50], limit=20) == [[0], [1], [2]]


def test_long_session_is_split_at_4000_characters():
    text = "w" * 1495  # "Ann: " + 1495 = 1500 characters per line
    messages = [msg(s, text + str(i), f"D1:{i}") for i, s in enumerate(["Ann", "Bob"] * 3)]
    chunks = kinds(build_chunks([conv(*messages)], enrich=False), "session")
    parts = [HEADER] + [message_line(m) for m in messages]
    # header + 2 lines = 37 + 2 + 1501 + 2 + 1501 = 3043; a third line would make 4546 > 4000.
    assert [c.user_text for c in chunks] == [
        "\n\n".join(parts[0:3]), "\n\n".join(parts[3:5]), "\n\n".join(parts[5:7])
    ]
    assert all(len(c.user_text) <= MAX_SESSION_CHARS for c in chunks)
    assert [c.memory_id for c in chunks] == ["u:S001:P00", "u:S001:P01", "u:S001:P02"]
    assert {c.session_id for c in chunks} == {"u:S001"}
    assert not chunks[1].user_text.startswith("[group chat")  # the header is only the first part
    assert [c.assistant_text for c in chunks] == [parts[2], parts[4], parts[6]]
    assert [c.dia_ids for c in chunks] == [("D1:0", "D1:1"), ("D1:2", "D1:3"), ("D1:4", "D1:5")]


def test_split_chunks_are_greedy():
    messages = [msg("Ann" if i % 3 else "Bob", "t" * (i * 97 % 900), f"D1:{i}") for i in range(40)]
    chunks = kinds(build_chunks([conv(*messages)], enrich=False), "session")
    texts = [c.user_text for c in chunks]
    assert "\n\n".join(texts) == "\n\n".join([HEADER, *map(message_line, messages)])
    for this, following in zip(texts, texts[1:]):
        first_part = following.split("\n\n")[0]
        assert len(this) + 2 + len(first_part) > MAX_SESSION_CHARS


# ---------------------------------------------------------------- turn chunks


def test_turns_pair_speaker_groups_and_a_lone_group_stays_alone():
    c = conv(
        msg("Ann", "a1", "D1:1"), msg("Ann", "a2", "D1:2"), msg("Bob", "b1", "D1:3"),
        msg("Ann", "a3", "D1:4"), msg("Bob", "b2", "D1:5"), msg("Bob", "b3", "D1:6"),
        msg("Ann", "a4", "D1:7"),
    )
    turns = build_chunks([c], mode="turn", enrich=False)
    assert [t.user_text for t in turns] == [
        HEADER + "\nAnn: a1\nAnn: a2", HEADER + "\nAnn: a3", HEADER + "\nAnn: a4"
    ]
    assert [t.assistant_text for t in turns] == ["Bob: b1", "Bob: b2\nBob: b3", ""]
    assert [t.next_user_text for t in turns] == [turns[1].user_text, turns[2].user_text, ""]
    assert [t.memory_id for t in turns] == ["u:S001:T000", "u:S001:T001", "u:S001:T002"]
    assert [t.order for t in turns] == [0, 1, 2]
    assert [t.dia_ids for t in turns] == [("D1:1", "D1:2", "D1:3"), ("D1:4", "D1:5", "D1:6"), ("D1:7",)]


def test_turn_pairing_follows_order_not_speaker():
    turns = build_chunks([conv(msg("Bob", "b1"), msg("Ann", "a1"))], mode="turn", enrich=False)
    assert [(t.user_text, t.assistant_text) for t in turns] == [(HEADER + "\nBob: b1", "Ann: a1")]


def test_turn_lines_keep_their_image_lines():
    m = msg("Ann", "see", img_urls=("http://a/1.jpg",), caption="a dog")
    [turn] = build_chunks([conv(m)], mode="turn", enrich=False)
    assert turn.user_text == HEADER + "\nAnn: see\nhttp://a/1.jpg: a dog"


# ---------------------------------------------------------------- modes and ids


def test_modes_choose_the_chunk_kinds():
    c = conv(msg("Ann", "a1"), msg("Bob", "b1"))
    assert [x.kind for x in build_chunks([c], enrich=False)] == ["session", "turn"]
    assert [x.kind for x in build_chunks([c], mode="session", enrich=False)] == ["session"]
    assert [x.kind for x in build_chunks([c], mode="turn", enrich=False)] == ["turn"]


def test_unknown_mode_and_facet_source_are_user_errors():
    with pytest.raises(MemsenseError, match="unknown mode 'x'; use hybrid, session or turn"):
        build_chunks([], mode="x")
    with pytest.raises(MemsenseError, match="unknown facet source 'llm'"):
        build_chunks([], facet_source="llm")


def test_empty_session_gives_no_chunks():
    assert build_chunks([Conversation("u", ("Ann",), (Session(1, DATE, "", ()),))]) == []


def test_ids_sort_in_time_order():
    line = "z" * 1900
    sessions = tuple(
        Session(n, f"2024-01-{n:02d}", f"2024-01-{n:02d}T00:00:00",
                tuple(msg("Ann" if i % 2 else "Bob", line, f"D{n}:{i}") for i in range(24)))
        for n in (1, 2, 9, 10, 11)
    )
    chunks = build_chunks([Conversation("u", ("Bob", "Ann"), sessions)], enrich=False)
    assert max(c.order for c in chunks if c.kind == "session") >= 10
    assert max(c.order for c in chunks if c.kind == "turn") >= 10
    in_time = sorted(chunks, key=lambda c: (c.time, c.kind, c.order))
    assert [c.memory_id for c in in_time] == sorted(c.memory_id for c in chunks)
    assert [c.memory_id for c in chunks] == sorted(c.memory_id for c in chunks)
