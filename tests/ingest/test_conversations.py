"""Ingest (SPEC §1, §8): worked examples of every chunking rule on hand-made conversations."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import MemsenseError
from core.ingest import (
    MAX_SESSION_CHARS,
    Conversation,
    Message,
    Session,
    build_chunks,
    header,
    load_conversations,
    load_questions,
    message_line,
    parse_date_time,
    parse_evidence,
    split_parts,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "resources" / "demo"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"

DATE = "1:56 pm on 8 May, 2023"
HEADER = f"[group chat conversation: {DATE}]"


def msg(speaker: str, text: str, dia_id: str = "", **extra) -> Message:
    return Message(speaker, text, dia_id or f"D1:{text}", **extra)


def conv(*messages: Message, speakers=("Ann", "Bob"), user="u") -> Conversation:
    return Conversation(user, speakers, (Session(1, DATE, parse_date_time(DATE), messages),))


def kinds(chunks, kind):
    return [c for c in chunks if c.kind == kind]


def write(tmp_path: Path, text: str, name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*rows: dict) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def row(speaker="Ann", text="hi", session=1, time="2024-03-14T18:20:00", user="u", **extra) -> dict:
    return {"user": user, "session": session, "time": time, "speaker": speaker, "text": text, **extra}


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


# ---------------------------------------------------------------- date-times


@pytest.mark.parametrize("text, iso", [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
    ("10:37 am on 27 June, 2023", "2023-06-27T10:37:00"),
    ("12:05 am on 1 January, 2024", "2024-01-01T00:05:00"),
    ("12:30 pm on 3 June, 2023", "2023-06-03T12:30:00"),
    ("2024-03-14T18:20:00", "2024-03-14T18:20:00"),
    ("2024-03-14T18:20", "2024-03-14T18:20:00"),
    ("2024-03-14", "2024-03-14T00:00:00"),
    ("September 5, 2024", "2024-09-05T00:00:00"),
    ("8 May 2023", "2023-05-08T00:00:00"),
    ("sometime last spring", ""),
    ("31 February, 2023", ""),
    ("13:00 pm on 8 May, 2023", ""),
    ("", ""),
])
def test_parse_date_time(text, iso):
    assert parse_date_time(text) == iso


# ---------------------------------------------------------------- JSON Lines


def test_jsonl_groups_users_sorts_sessions_and_numbers_messages(tmp_path):
    path = write(tmp_path, jsonl(
        row("Ann", "late", session=2, time="9 May, 2023"),
        row("Ann", "hello", img_url="http://a/1.jpg", caption="a cat"),
        row("Bob", "hi", id="X7"),
        row("Cy", "yo", user="v", img_url=["http://a/2.jpg", "http://a/3.jpg"]),
    ) + "\n")
    u, v = load_conversations(path)
    assert (u.user_id, u.name, u.speakers, u.second_speaker) == ("u", "u", ("Ann", "Bob"), "Bob")
    assert [s.number for s in u.sessions] == [1, 2]
    first = u.sessions[0]
    assert (first.date_time, first.time) == ("2024-03-14T18:20:00", "2024-03-14T18:20:00")
    assert first.messages == (
        Message("Ann", "hello", "D1:1", ("http://a/1.jpg",), "a cat"),
        Message("Bob", "hi", "X7"),
    )
    assert u.sessions[1].time == "2023-05-09T00:00:00"
    assert v.sessions[0].messages[0].img_urls == ("http://a/2.jpg", "http://a/3.jpg")
    assert v.second_speaker == ""


def test_jsonl_second_speaker_is_the_assistant_side(tmp_path):
    path = write(tmp_path, jsonl(row("Ann", "a"), row("Bob", "b"), row("Ann", "c")))
    [session_chunk] = build_chunks(load_conversations(path), mode="session", enrich=False)
    assert session_chunk.assistant_text == "Bob: b"
    assert session_chunk.user_text.startswith("[group chat conversation: 2024-03-14T18:20:00]")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("text, expected", [
    ("", "the file is empty"),
    ("  \n\n", "the file is empty"),
    ('[{"sample_id": "c1", "conversation": {"speaker_a": "A"', r"not valid JSON at line 1 column \d+ .*truncated file\?"),
    (jsonl(row()) + '{"user": "u", "session": 1, "ti', r"not valid JSON at line 2 column \d+"),
    (jsonl(row(), {"user": "u", "session": 1, "time": "", "text": "x"}), "line 2: missing key 'speaker'"),
    (jsonl(row(text=42)), "line 1: 'text' must be text, got a number"),
    (jsonl(row(speaker="")), "line 1: 'speaker' must be non-empty text"),
    (jsonl(row(session="two")), "line 1: 'session' must be a whole number >= 1"),
    (jsonl(row(session=0)), "'session' must be a whole number >= 1"),
    (jsonl(row(), row(time="other")), "line 2: session 1 has time 'other' here but '2024-03-14T18:20:00' on line 1"),
    (jsonl(row(img_url=3)), "'img_url' must be a URL or a list of URLs"),
    (jsonl(row(caption=["x"])), "'caption' must be text"),
    (jsonl(row(id=5)), "'id' must be non-empty text"),
    ("[1, 2]\n", "not LoCoMo samples"),
    ("[1, 2]\n[3]\n", "not valid JSON at line 2"),
    ('{\n  "user": "u"\n}\n', "is one JSON object, not JSON Lines"),
    ('{\n  "questions": []\n}\n', "is a question file, not a conversation file"),
    ('{"questions": []}', "is a question file, not a conversation file"),
    ('"just text"\n', "line 1: expected a JSON object"),
    ('[{"conversation": {}}]', "sample 1: missing key 'sample_id'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A"}}]', "sample c: missing key 'speaker_b'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B"}}]', "sample c: has no session_N lists"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": []}}]',
     "session_1: missing or non-text 'session_1_date_time'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "x",'
     ' "session_1": [{"speaker": "A"}]}}]', "sample c, session_1, message 1: missing key 'text'"),
])
def test_bad_conversation_files_raise_a_helpful_error(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(MemsenseError, match=expected) as info:
        load_conversations(path)
    assert str(path) in str(info.value)


def test_missing_folder_and_non_utf8_files_are_user_errors(tmp_path):
    with pytest.raises(MemsenseError, match="no such file"):
        load_conversations(tmp_path / "nope.jsonl")
    with pytest.raises(MemsenseError, match="is a folder"):
        load_conversations(tmp_path)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"user": "caf\xe9"}\n')
    with pytest.raises(MemsenseError, match="not UTF-8"):
        load_conversations(bad)


def test_duplicate_locomo_users_are_rejected(tmp_path):
    sample = {"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
                                                 "session_1_date_time": DATE, "session_1": []}}
    with pytest.raises(MemsenseError, match="user 'c' appears twice"):
        load_conversations(write(tmp_path, json.dumps([sample, sample]), "x.json"))


def test_every_truncation_of_a_valid_file_loads_or_raises_memsense_error(tmp_path):
    text = (DEMO / "demo-conversations.jsonl").read_text(encoding="utf-8")[:6000]
    for cut in range(0, len(text), 97):
        path = write(tmp_path, text[:cut])
        try:
            load_conversations(path)
        except MemsenseError:
            pass


# ---------------------------------------------------------------- LoCoMo-shaped input (hand-made)


def tiny_locomo() -> list[dict]:
    return [{
        "sample_id": "t-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": DATE, "session_2_date_time": "7:00 pm on 9 May, 2023",
            "session_3_date_time": "never happened",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "later"}],
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "hi", "img_url": ["http://a/1.jpg"],
                 "blip_caption": "a photo of a dog"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "hey", "blip_caption": "a photo"},
            ],
        },
        "observation": {"session_1_observation": {"Ann": [["Ann has a dog.", "D1:1"]], "Bob": []}},
        "event_summary": {"events_session_1": {"Ann": ["Ann adopts a dog."], "Bob": [], "date": "8 May, 2023"}},
        "qa": [
            {"question": "Q0?", "answer": 2022, "evidence": ["D1:1"], "category": 2},
            {"question": "Q1?", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
            {"question": "Q2?", "answer": "a", "evidence": [], "category": 4},
            {"question": "Q3?", "answer": "b", "evidence": ["D2:1", "D 1:2", "D10:3:5"], "category": 1},
            {"question": "Q4?", "answer": "c", "evidence": ["garbage", 7], "category": 4},
        ],
    }]


def test_locomo_samples_become_conversations(tmp_path):
    [c] = load_conversations(write(tmp_path, json.dumps(tiny_locomo()), "l.json"))
    assert (c.user_id, c.speakers, c.second_speaker) == ("t-1", ("Ann", "Bob"), "Bob")
    assert [(s.number, s.date_time, s.time) for s in c.sessions] == [
        (1, DATE, "2023-05-08T13:56:00"), (2, "7:00 pm on 9 May, 2023", "2023-05-09T19:00:00")
    ]
    assert c.sessions[0].messages[0] == Message("Ann", "hi", "D1:1", ("http://a/1.jpg",), "a photo of a dog")
    assert c.sessions[0].observation == (("Ann", "Ann has a dog."),)
    assert c.sessions[0].event_summary == (("Ann", "Ann adopts a dog."),)
    assert c.sessions[1].observation == ()
    assert len(c.qa) == 5
    [session_chunk] = build_chunks([c], mode="session", enrich=False)[:1]
    assert session_chunk.user_text == (
        f"{HEADER}\n\nAnn: hi\nhttp://a/1.jpg: a photo of a dog\n\nBob: hey\n(a photo)"
    )


def test_locomo_questions_keep_categories_1_to_4_with_evidence(tmp_path):
    questions = load_questions(write(tmp_path, json.dumps(tiny_locomo()), "l.json"))
    assert [q.question_id for q in questions] == ["t-1:q0", "t-1:q3"]
    q0, q3 = questions
    assert (q0.answer, q0.category, q0.gold_sessions, q0.gold_turns) == ("2022", 2, (1,), ("D1:1",))
    assert q3.gold_sessions == (1, 2, 10)
    assert q3.gold_turns == ("D2:1", "D1:2", "D10:3")


def test_parse_evidence_is_lenient():
    assert parse_evidence(["D3:7"]) == ((3,), ("D3:7",))
    assert parse_evidence(["D 4:2", "D:11:26", "D10:3:5"]) == ((4, 10, 11), ("D4:2", "D11:26", "D10:3"))
    assert parse_evidence(["D8:6; D9:17"]) == ((8, 9), ("D8:6", "D9:17"))
    assert parse_evidence(["", "x", None, 3, "D:", "D3"]) == ((), ())


def test_project_question_formats(tmp_path):
    items = [
        {"user": "u", "question": "A?", "answer": "a", "category": 1, "evidence": ["D1:1", "D2:3"]},
        {"user": "v", "question": "B?", "answer": 3, "category": "4", "evidence": ["D5:1"]},
        {"user": "u", "question": "C?", "answer": "c", "category": 4, "evidence": ["D1:2"]},
        {"user": "u", "question": "D?", "answer": "d", "category": 5, "evidence": ["D1:2"]},
    ]
    as_json = load_questions(write(tmp_path, json.dumps({"questions": items}, indent=2), "q.json"))
    as_lines = load_questions(write(tmp_path, jsonl(*items), "q.jsonl"))
    assert as_json == as_lines
    assert [(q.question_id, q.category, q.gold_sessions) for q in as_json] == [
        ("u:q0", 1, (1, 2)), ("v:q0", 4, (5,)), ("u:q1", 4, (1,))
    ]
    assert as_json[1].answer == "3"


@pytest.mark.parametrize("text, expected", [
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": 1}]}', "question 1: missing key 'evidence'"),
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": 1, "evidence": "D1:1"}]}', "'evidence' must be a list"),
    ('{"questions": [{"user": "u", "question": "A?", "answer": "a", "category": "one", "evidence": []}]}', "'category' must be a whole number"),
    ('{"questions": [{"user": "u", "question": "", "answer": "a", "category": 1, "evidence": ["D1:1"]}]}', "'question' must be non-empty text"),
    ('{"items": []}', "has no 'questions' list"),
    ('{"questions": [', "not valid JSON"),
    ("", "the file is empty"),
])
def test_bad_question_files_raise_a_helpful_error(tmp_path, text, expected):
    with pytest.raises(MemsenseError, match=expected):
        load_questions(write(tmp_path, text, "q.json"))


# ---------------------------------------------------------------- demo data


def test_demo_data_loads_and_is_shaped_as_promised():
    assert (DEMO / "demo-conversations.jsonl").stat().st_size + (DEMO / "demo-questions.json").stat().st_size < 150_000
    conversations = load_conversations(DEMO / "demo-conversations.jsonl")
    assert len(conversations) == 3
    for c in conversations:
        assert c.user_id == f"demo-{c.speakers[0].lower()}"  # the user speaks first
        assert 5 <= len(c.sessions) <= 7
        assert all(8 <= len(s.messages) <= 20 for s in c.sessions)
        assert all(s.time for s in c.sessions)
        assert [s.time for s in c.sessions] == sorted(s.time for s in c.sessions)
    chunks = build_chunks(conversations)
    assert any(c.kind == "session" and c.order > 0 for c in chunks)  # a session over 4,000 chars


def test_demo_questions_point_at_existing_messages():
    conversations = {c.user_id: c for c in load_conversations(DEMO / "demo-conversations.jsonl")}
    questions = load_questions(DEMO / "demo-questions.json")
    for user, c in conversations.items():
        mine = [q for q in questions if q.user_id == user]
        assert 8 <= len(mine) <= 12
        assert sum(len(q.gold_sessions) > 1 for q in mine) >= 2  # "how many / list all" questions
        ids = {(s.number, m.dia_id) for s in c.sessions for m in s.messages}
        for q in mine:
            assert {(int(t[1:].split(":")[0]), t) for t in q.gold_turns} <= ids, q.question_id


# ---------------------------------------------------------------- LoCoMo dev (../shared)

needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo dev file not found at {LOCOMO}")


@pytest.mark.shared
@needs_locomo
def test_locomo_dev_gives_161_session_and_1414_turn_chunks():
    chunks = build_chunks(load_conversations(LOCOMO), enrich=False)
    assert len(kinds(chunks, "session")) == 161
    assert len(kinds(chunks, "turn")) == 1414
    assert [c.memory_id for c in chunks] == sorted(c.memory_id for c in chunks)
    assert len({c.memory_id for c in chunks}) == len(chunks)
    for c in kinds(chunks, "session"):
        assert len(c.user_text) <= MAX_SESSION_CHARS or "\n\n" not in c.user_text


@pytest.mark.shared
@needs_locomo
def test_locomo_dev_questions_match_a_naive_filter():
    raw = json.loads(LOCOMO.read_text(encoding="utf-8"))
    expected = [
        f"{s['sample_id']}:q{i}" for s in raw for i, q in enumerate(s["qa"])
        if q["category"] in (1, 2, 3, 4) and q.get("evidence")
    ]
    questions = load_questions(LOCOMO)
    assert [q.question_id for q in questions] == expected
    assert all(q.gold_sessions and isinstance(q.answer, str) for q in questions)
