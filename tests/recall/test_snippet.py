"""The sentence beside a rank: best match by in-chunk idf, query terms marked."""
from __future__ import annotations

from core.rank.synthetic import synthetic_pool
from core.recall.lexical.snippet import best_sentence, chunk_snippet

TEXT = ("Ana: I ran the Porto 10K in March. The weather was cold. My bees are fine.\n"
        "Rui: Did you run the half marathon too?\n"
        "Ana: Yes, the Douro half marathon in June was hard.")


def test_rarest_terms_win_and_are_marked():
    # speaker prefixes do not count: "Ana" matches no sentence's words; "run", "half", "marathon"
    # are in Rui's question, "half" and "marathon" in Ana's answer: three terms beat two
    s = best_sentence(TEXT, "Which half marathon did Ana run?")
    assert s.text == "Rui: Did you run the half marathon too?"
    assert [s.text[a:b] for a, b in s.marks] == ["run", "half", "marathon"]
    assert s.marked() == "Rui: Did you «run» the «half» «marathon» too?"
    assert best_sentence(TEXT, "Was the Douro half marathon hard?").text.startswith("Ana: Yes, the Douro")


def test_a_speaker_name_is_neither_scored_nor_marked():
    s = best_sentence("Ana: Tomas!\nTomas: Ana ran the race", "How many races has Ana run?")
    assert s.text == "Tomas: Ana ran the race" and [s.text[a:b] for a, b in s.marks] == ["Ana"]


def test_sentence_inside_a_line_keeps_its_speaker_and_function_words_do_not_count():
    s = best_sentence(TEXT, "how are the bees")
    assert s.text == "Ana: My bees are fine." and [s.text[a:b] for a, b in s.marks] == ["bees"]
    assert best_sentence(TEXT, "what is it").text == "Ana: I ran the Porto 10K in March."


def test_long_sentence_is_cut_around_the_first_mark_with_marks_shifted():
    long = "Ana: " + " ".join(f"word{i}" for i in range(80)) + " beekeeping " + " ".join(f"tail{i}" for i in range(40))
    s = best_sentence(long, "beekeeping", max_chars=60)
    assert s.text.startswith("…") and s.text.endswith("…") and len(s.text) <= 62
    (a, b), = s.marks
    assert s.text[a:b] == "beekeeping"


def test_html_escapes_and_bolds():
    s = best_sentence("Bo: <b>tags</b> & bees", "bees")
    assert s.html() == "Bo: &lt;b&gt;tags&lt;/b&gt; &amp; <b>bees</b>"


def test_chunk_snippet_leaves_the_header_out():
    chunk = synthetic_pool(n_sessions=1, turns_per_session=1).chunks[0]
    assert chunk_snippet(chunk, "session").text and "[group chat" not in chunk_snippet(chunk, "x").text
    assert best_sentence("", "x").text == ""


def test_message_parts_line_up_with_message_ids():
    from core.recall.lexical.snippet import message_parts
    from core.records import Chunk

    session = Chunk("u:S001:P00", "u", "u:S001", 1, "session", 0, "", "[group chat conversation: 1 May]\n\nA: hi\n\nB: "
                    "we went to\nhttp://x.png: a lake", "B: we went to", dia_ids=("D1:1", "D1:2"))
    assert message_parts(session) == [(None, "[group chat conversation: 1 May]"), ("D1:1", "A: hi"),
                                      ("D1:2", "B: we went to\nhttp://x.png: a lake")]
    turn = Chunk("u:S001:T000", "u", "u:S001", 1, "turn", 0, "", "[group chat conversation: 1 May]\nA: hi", "B: yo",
                 dia_ids=("D1:1", "D1:2"))
    assert message_parts(turn) == [(None, "A: hi\nB: yo")]
