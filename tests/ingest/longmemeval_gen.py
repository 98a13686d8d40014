"""A generator of LongMemEval files shaped like the published ones (SPEC §11), for tests.

Every question gets its own haystack: filler chat sessions (ShareGPT/UltraChat-like ids) around
the answer sessions (`answer_<hash>_<n>` ids) that hold a made-up fact no filler session
mentions, marked `has_answer` on the turn that states it. Covered: all six question types,
abstention questions (`_abs` ids, which in the published files still list the sessions they
are about), a multi-session question with two answer sessions, a knowledge update (old and new
fact), an assistant-side answer, dates in the files' "2023/05/20 (Sat) 02:21" form, an empty
session, and odd text: emoji, non-breaking and zero-width spaces, right-to-left script, CRLF,
tabs, U+2028 and a 5 000-character turn. Seeded: the same seed gives the same file.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

FILLER_TOPICS = (
    ("Can you help me plan a weekly budget?", "Sure: list fixed costs first, then variable ones."),
    ("What is a good stretch after running?", "A standing quad stretch, held for thirty seconds."),
    ("Explain how compound interest works.", "Interest is added to the principal, so it earns interest too."),
    ("Any tips for growing basil indoors?", "Give it six hours of light and pinch the flower buds."),
    ("How do I fix a squeaky door hinge?", "A few drops of oil on the pin usually does it."),
    ("Recommend a podcast about history.", "Try one that tells a single story over several episodes."),
    ("What should I pack for a rainy hike?", "A shell jacket, spare socks and a dry bag."),
    ("How long should I steep green tea?", "Two to three minutes, below boiling."),
)
ODD_TEXT = ("Odd bytes 😀 here:\u00a0no-break,\u200bzero-width, שלום עולם, a\r\nCRLF, a\ttab,"
            " a line\u2028separator and “curly quotes”.")


@dataclass(frozen=True)
class Fact:
    """A statement only the answer sessions make: `words` must be found in them by any recall."""

    user: str
    assistant: str
    words: str


@dataclass(frozen=True)
class Spec:
    question_id: str
    question_type: str
    question: str
    answer: str
    facts: tuple[Fact, ...]  # one answer session each, in haystack order
    answer_side: str = "user"  # the role whose turn carries has_answer


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


SPECS: tuple[Spec, ...] = (
    Spec(_hash("ssu"), "single-session-user", "What is the name of my cat?", "Quibblewort",
         (Fact("My cat is called Quibblewort, she is a grey tabby.", "Quibblewort is a lovely name!", "Quibblewort"),)),
    Spec(_hash("ssa"), "single-session-assistant", "Which harbour did you recommend for sunset photos?",
         "Vardenholm harbour",
         (Fact("Where should I take sunset photos?", "Go to Vardenholm harbour, the light is best at dusk.",
               "Vardenholm"),), answer_side="assistant"),
    Spec(_hash("ssp"), "single-session-preference", "Can you suggest a snack for my study session?",
         "Something with pistachios and dark chocolate, which the user prefers.",
         (Fact("I love pistachios and dark chocolate together when I study.", "A great pairing.", "pistachios"),)),
    Spec(_hash("ms"), "multi-session", "How many marathons did I run in total?", "2",
         (Fact("I ran the Zelkova marathon in April.", "Congratulations on Zelkova!", "Zelkova marathon"),
          Fact("Finished the Brindlemoor marathon today.", "Two marathons this year, well done.",
               "Brindlemoor marathon"))),
    Spec(_hash("tr"), "temporal-reasoning", "How many days before the Oslo trip did I buy the ukulele?", "12 days",
         (Fact("I bought a ukulele from Tremoloft today.", "Enjoy the new ukulele.", "Tremoloft"),)),
    Spec(_hash("ku"), "knowledge-update", "Where do I work now?", "Cobaltine Labs",
         (Fact("I work at Fenwright Analytics as a data engineer.", "Sounds interesting.", "Fenwright Analytics"),
          Fact("I moved jobs, I am at Cobaltine Labs now.", "Good luck at Cobaltine Labs.", "Cobaltine Labs"))),
    Spec("gpt4_" + _hash("abs1") + "_abs", "single-session-user", "What is the name of my hamster?",
         "The user never mentioned a hamster.",
         (Fact("My cat is called Pellinore.", "Pellinore the cat, noted.", "Pellinore"),)),
    Spec(_hash("abs2") + "_abs", "multi-session", "How many violin concerts did I attend?",
         "The user only mentioned cello concerts.",
         (Fact("The cello concert at Orsolya hall was moving.", "Cello suits that hall.", "Orsolya hall"),)),
)


def _filler(rng: random.Random, n_turns: int) -> list[dict]:
    turns = []
    for _ in range(n_turns):
        user, assistant = FILLER_TOPICS[rng.randrange(len(FILLER_TOPICS))]
        turns += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return turns


def _answer_session(rng: random.Random, fact: Fact, side: str) -> list[dict]:
    turns = _filler(rng, rng.randint(0, 2))
    turns += [{"role": "user", "content": fact.user, "has_answer": side == "user"},
              {"role": "assistant", "content": fact.assistant, "has_answer": side == "assistant"}]
    return turns + _filler(rng, rng.randint(0, 1))


def _date(when: datetime) -> str:
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def item(spec: Spec, rng: random.Random, n_filler: int = 6) -> dict:
    """One question with its haystack; `answer_session_ids` in haystack order."""
    sessions: list[tuple[str, list[dict]]] = [
        (f"sharegpt_{_hash(spec.question_id + str(i))}_{i}" if i % 2 else f"ultrachat_{rng.randrange(10**6)}",
         _filler(rng, rng.randint(1, 3))) for i in range(n_filler)]
    sessions[1] = (sessions[1][0], [])  # an empty session, as some published haystacks have
    sessions[2] = (sessions[2][0], sessions[2][1] + [{"role": "user", "content": ODD_TEXT},
                                                   {"role": "assistant", "content": "long " * 1000}])
    slots = sorted(rng.sample(range(2, n_filler + len(spec.facts)), len(spec.facts)))
    answer_ids = []
    for k, (slot, fact) in enumerate(zip(slots, spec.facts), start=1):
        sid = f"answer_{_hash(spec.question_id)}_{k}"
        answer_ids.append(sid)
        sessions.insert(slot, (sid, _answer_session(rng, fact, spec.answer_side)))
    start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(200), minutes=rng.randrange(1440))
    dates = [start + timedelta(days=3 * i, minutes=rng.randrange(600)) for i in range(len(sessions))]
    return {"question_id": spec.question_id, "question_type": spec.question_type, "question": spec.question,
            "answer": spec.answer, "question_date": _date(dates[-1] + timedelta(days=2)),
            "haystack_session_ids": [sid for sid, _ in sessions], "haystack_dates": [_date(d) for d in dates],
            "haystack_sessions": [turns for _, turns in sessions], "answer_session_ids": answer_ids}


def longmemeval_items(seed: int = 0, specs: tuple[Spec, ...] = SPECS) -> list[dict]:
    rng = random.Random(seed)
    return [item(spec, rng) for spec in specs]


def write_longmemeval(path: Path, seed: int = 0, specs: tuple[Spec, ...] = SPECS) -> Path:
    """The file as the published ones are written: UTF-8 JSON with non-ASCII characters kept."""
    path.write_text(json.dumps(longmemeval_items(seed, specs), ensure_ascii=False, indent=1), encoding="utf-8")
    return path
