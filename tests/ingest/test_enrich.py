"""Offline enrichment (SPEC §1): deterministic, within its limits, facets where the text has them."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ingest import Conversation, Message, Session, build_chunks, load_conversations
from core.ingest.enrich import (
    MAX_TAGS,
    MAX_TEXT,
    Enrichment,
    clip,
    enrich_session,
    facet_score,
    topic_tags,
)
from core.records import FACETS, MEMORY_KINDS

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "core" / "demo" / "demo-conversations.jsonl"
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"
SPEAKERS = ("Ann", "Bob")


def enrich(*lines: str, **kw) -> Enrichment:
    return enrich_session(list(lines), speakers=SPEAKERS, **kw)


def assert_within_limits(e: Enrichment) -> None:
    assert len(e.tags) <= MAX_TAGS and all(t == t.lower() for t in e.tags)
    assert len(e.task_tag) <= MAX_TEXT
    assert all(len(getattr(e, f)) <= MAX_TEXT for f in FACETS)
    assert e.memory_kind in MEMORY_KINDS
    assert e.memory_score == 0.5


# ---------------------------------------------------------------- facets


def test_each_facet_finds_its_sentence_with_the_speaker():
    e = enrich(
        "Ann: Hi Bob! I work as a nurse in Lisbon and my husband is a baker.",
        "Bob: Nice. I love hiking in the mountains, it's my favorite hobby.",
        "Ann: Yesterday I went to a jazz concert in Porto with a friend.",
    )
    assert e.personal_info == "Ann: I work as a nurse in Lisbon and my husband is a baker."
    assert e.preferences == "Bob: I love hiking in the mountains, it's my favorite hobby."
    assert e.events == "Ann: Yesterday I went to a jazz concert in Porto with a friend."


def test_small_talk_leaves_every_facet_empty():
    e = enrich("Ann: Hello there, how are you?", "Bob: Fine, thanks for asking.", "Ann: Great to hear.")
    assert (e.personal_info, e.preferences, e.events) == ("", "", "")
    assert e.memory_kind == "ephemeral"
    assert e.tags == ()


def test_questions_and_fragments_are_never_facts():
    assert facet_score("Do you love hiking?", "preferences") == 0
    assert facet_score("Love it!", "preferences") == 0
    assert facet_score("I love hiking.", "preferences") == 1.5  # one pattern family + first person


def test_first_person_sentences_score_higher():
    assert facet_score("I visited Rome last week.", "events") > facet_score("Tom visited Rome last week.", "events")


def test_image_lines_are_not_facet_text():
    e = enrich("Ann: Here you go.\nhttp://x/a.jpg: I went hiking yesterday\n(I love this photo so much)")
    assert (e.events, e.preferences) == ("", "")


def test_facets_stay_within_200_characters_and_keep_conversation_order():
    lines = [f"Ann: Last week I visited museum number {i} in Paris with my whole family." for i in range(12)]
    e = enrich(*lines)
    assert 0 < len(e.events) <= MAX_TEXT
    picked = [int(p.split("number ")[1].split()[0]) for p in e.events.split("Ann: ")[1:]]
    assert picked == sorted(picked) and picked[0] == 0


def test_memory_kind_follows_the_dominant_facet():
    prefs = enrich("Ann: I love jazz.", "Bob: I really enjoy cooking pasta.", "Ann: My favorite color is green.")
    assert prefs.memory_kind == "preference"
    stable = enrich("Ann: I'm a teacher in Leeds.", "Bob: My wife works as a nurse in Leeds.")
    assert stable.memory_kind == "stable"
    episodic = enrich("Ann: Yesterday we went to the beach.", "Bob: I visited Rome last month.")
    assert episodic.memory_kind == "episodic"


# ---------------------------------------------------------------- tags and task tag


def test_tags_rank_topics_by_hits_then_name():
    assert topic_tags(["My dog and my cat hate the vet.", "We cooked dinner."]) == ("pets", "food")
    assert topic_tags(["guitar", "dog"]) == ("music", "pets")  # one hit each: alphabetical
    assert topic_tags(["https://x.org/dog-painting-guitar.jpg"]) == ()


def test_tags_are_at_most_eight():
    text = "dog guitar painting school pizza travel basketball church doctor wedding novel tent"
    assert len(topic_tags([text])) == MAX_TAGS


def test_task_tag_names_speakers_tags_and_the_salient_sentence():
    e = enrich("Ann: Hi!", "Bob: Yesterday I adopted a puppy from the shelter, my first dog.")
    assert e.task_tag.startswith("Ann & Bob on pets")
    assert "Bob: Yesterday I adopted a puppy" in e.task_tag


def test_clip_cuts_at_a_word_and_marks_the_cut():
    assert clip("short text", 20) == "short text"
    cut = clip("one two three four five six seven", 20)
    assert len(cut) <= 20 and cut.endswith("…") and cut == "one two three four…"


# ---------------------------------------------------------------- invariants


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=400), max_size=12))
def test_limits_hold_for_any_text(lines):
    e = enrich_session(lines, speakers=SPEAKERS)
    assert_within_limits(e)
    assert enrich_session(lines, speakers=SPEAKERS) == e


def test_enrichment_is_deterministic_and_shared_within_a_session():
    conversations = load_conversations(DEMO)
    first, second = build_chunks(conversations), build_chunks(conversations)
    assert first == second
    by_session: dict[str, set] = {}
    for c in first:
        shared = (c.tags, c.task_tag, c.memory_kind, c.personal_info, c.preferences, c.events)
        by_session.setdefault(c.session_id, set()).add(shared)
        assert_within_limits(Enrichment(c.tags, c.task_tag, c.memory_kind, c.personal_info,
                                        c.preferences, c.events, c.memory_score))
    assert all(len(values) == 1 for values in by_session.values())


def test_enrich_false_leaves_the_defaults():
    [chunk] = build_chunks(load_conversations(DEMO), mode="session", enrich=False)[:1]
    assert (chunk.tags, chunk.task_tag, chunk.personal_info) == ((), "", "")


def test_demo_sessions_have_facets():
    chunks = [c for c in build_chunks(load_conversations(DEMO)) if c.kind == "session"]
    for facet in FACETS:
        assert sum(bool(getattr(c, facet)) for c in chunks) >= len(chunks) // 3, facet


# ---------------------------------------------------------------- LoCoMo facts as facet source


def locomo_like(observation=(), events=()) -> list[Conversation]:
    messages = (Message("Ann", "Hi Bob, long time no see.", "D1:1"),
                Message("Bob", "Yesterday I went to a pottery class with my kids.", "D1:2"))
    return [Conversation("t", SPEAKERS, (Session(1, "8 May, 2023", "", messages, observation, events),))]


def test_facet_source_locomo_uses_observations_and_event_summaries():
    observation = (("Bob", "Bob has two kids and works as a teacher."), ("Bob", "Bob loves pottery."))
    events = (("Bob", "Bob takes his kids to a pottery class."),)
    [chunk] = build_chunks(locomo_like(observation, events), mode="session", facet_source="locomo")
    assert chunk.personal_info == "Bob has two kids and works as a teacher."
    assert chunk.preferences == "Bob loves pottery."
    assert chunk.events == "Bob takes his kids to a pottery class."


def test_facet_source_locomo_falls_back_to_text():
    [from_facts] = build_chunks(locomo_like(), mode="session", facet_source="locomo")
    [from_text] = build_chunks(locomo_like(), mode="session")
    assert from_facts == from_text
    assert from_text.events == "Bob: Yesterday I went to a pottery class with my kids."


def test_locomo_events_facet_falls_back_to_facts_when_no_event_summary():
    e = enrich("Ann: hi", facts=["Ann visited Rome last month.", "Ann is a nurse."], event_facts=[])
    assert e.events == "Ann visited Rome last month."
    assert e.personal_info == "Ann is a nurse."


@pytest.mark.shared
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo dev file not found at {LOCOMO}")
@pytest.mark.parametrize("source", ["text", "locomo"])
def test_locomo_dev_enrichment_within_limits(source):
    chunks = build_chunks(load_conversations(LOCOMO), facet_source=source)
    for c in chunks:
        assert_within_limits(Enrichment(c.tags, c.task_tag, c.memory_kind, c.personal_info,
                                        c.preferences, c.events, c.memory_score))
    sessions = [c for c in chunks if c.kind == "session"]
    assert all(c.tags for c in sessions)
    assert sum(bool(c.events) for c in sessions) > 0.9 * len(sessions)
