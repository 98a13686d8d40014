"""Offline enrichment: tags, task tag, memory kind and the three facets of a session (SPEC §1).

Memsense asks an LLM once per session and copies its answer onto every chunk of the session.
This module does the same job with no LLM and no network, deterministically, in a few
milliseconds per session, so that the three facet routes have text to search:

* The session's messages are split into sentences (image URL and caption lines are left out;
  a "Speaker: " prefix names who said it). Questions and sentences of fewer than three words
  are never facts.
* Each sentence is scored per facet by counting the pattern families it matches
  (`PERSONAL_INFO`: "I'm a", "my job/kids/partner", "I work/live", "years old", identity
  words...; `PREFERENCES`: "I love/like/enjoy/prefer/hate", "favorite", "passionate about",
  "fan of"...; `EVENTS`: "went", "visited", "attended", "signed up", "just got back",
  "yesterday", "last week", dates, weekdays, months, plans...). A first-person sentence ("I",
  "my", "we"...) gets half a point more, so the speaker's own facts come first.
* A facet is the best-scoring sentences (ties: earlier first), each cut to 120 characters and
  prefixed with its speaker, added while the facet stays within 200 characters, then put back
  in conversation order. A session with no matching sentence leaves that facet empty.
* `memory_kind` follows the facet with the most matching sentences: personal_info -> stable,
  preferences -> preference, events -> episodic (ties in that order); none -> ephemeral.
* `tags`: a topic lexicon (family, pets, travel, music, ...) is matched against the words and
  word pairs of the whole session, captions included; the (at most 8) topics with the most
  hits are kept, most hits first, ties alphabetical.
* `task_tag` (at most 200 characters): the speakers, the first three tags and the session's
  best-scoring sentence.
* With LoCoMo's `observation` facts and `event_summary` events given (facet_source="locomo"),
  the facets are built from those instead: facts are scored with the same patterns after their
  third-person subject is read as first person ("Ana's kids" -> "my kids"); the events
  facet is the event summary itself, or the facts that read as events when it is empty.
* `memory_score` is 0.5, as Memsense stores.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from core.records import DEFAULT_MEMORY_SCORE, FACETS

MAX_TAGS = 8
MAX_TEXT = 200
MAX_SENTENCE = 120
MEMORY_SCORE = DEFAULT_MEMORY_SCORE
KIND_OF_FACET = {"personal_info": "stable", "preferences": "preference", "events": "episodic"}


@dataclass(frozen=True)
class Enrichment:
    """What one session's chunks share: tags, task tag, memory kind, facets, memory score."""

    tags: tuple[str, ...] = ()
    task_tag: str = ""
    memory_kind: str = "ephemeral"
    personal_info: str = ""
    preferences: str = ""
    events: str = ""
    memory_score: float = MEMORY_SCORE


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(s, re.I) for s in sources)


_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTHS = (r"(?:january|february|march|april|may|june|july|august|september|october|"
           r"november|december)")
_KIN = (r"(?:husband|wife|partner|spouse|kids?|children|son|daughter|mom|mother|dad|father|"
        r"parents|family|brother|sister|siblings?|boyfriend|girlfriend|fianc[eé]e?|"
        r"grand(?:ma|pa|mother|father|parents|kids|children))")

PERSONAL_INFO = _patterns(
    r"\b(?:i am|i'm) (?:a|an)\b(?! (?:bit|little|lot|big fan|fan|huge fan)\b)",
    rf"\b(?:my|our) (?:name|job|work|career|profession|{_KIN}|home|house|apartment|hometown|"
    r"birthday|age|background|roots|heritage|identity|degree|major|edu|education|studies|"
    r"dog|cat|pets?)\b",
    rf"\b(?:i|i'm|i've|we|we're)\b.*\b(?:the|my|our) {_KIN}\b",
    r"\b(?:i|we) (?:work|worked|live|lived|grew up|was born|studied|study|teach|taught)\b",
    r"\b(?:works?|worked|lives?|lived|living|moved|grew up|born) (?:in|at|as|for|near|to)\b",
    r"\b\d{1,3}[- ]years?[- ]old\b",
    r"\b(?:i'm|i am|i've been|i was) (?:from|originally|married|single|divorced|engaged|"
    r"pregnant|allergic|vegan|vegetarian|retired|transgender|trans)\b",
    r"\bi have (?:a|an|one|two|three|four|five|\d+) (?:kids?|children|sons?|daughters?|dogs?|"
    r"cats?|pets?|brothers?|sisters?|siblings|grandchildren)\b",
    r"\b(?:i|i'm|my|me)\b.*\b(?:transgender|trans (?:woman|man|person)|nonbinary|non-binary|"
    r"gay|lesbian|bisexual|queer|identity|religion|religious|heritage|nationality|"
    r"allerg(?:y|ic))\b",
    r"\b(?:as a|being a) (?:[a-z]+ )?(?:mom|mother|dad|father|parent|teacher|nurse|doctor|"
    r"engineer|artist|student|woman|man|person|counselor|pharmacist)\b",
)
PREFERENCES = _patterns(
    r"\b(?:i|we)(?: really| also| just| totally| absolutely| still| always| do| truly)? "
    r"(?:love|like|enjoy|adore|prefer|hate|dislike|can't stand|don't like|can't get enough)\b",
    r"\b(?:loves|likes|enjoys|prefers|hates|adores|dislikes)\b",
    r"\b(?:favorite|favourite|fave|faves)\b",
    r"\b(?:passionate about|(?:a |big |huge )+fan of|obsessed with|keen on|fond of|"
    r"crazy about|addicted to|(?:i'm|i am|really|been|totally|so) into)\b",
    r"\bmy (?:go-to|passion|hobby|hobbies|thing)\b",
    r"\b(?:a (?:fun|great|good|nice) way to|helps me (?:relax|unwind|de-?stress))\b",
    r"\b(?:brings? (?:me|her|him|them) (?:so much )?(?:joy|peace)|makes? me (?:so )?happy|"
    r"happy place)\b",
)
EVENTS = _patterns(
    r"\b(?:went|visited|attended|joined|started|finished|took|traveled|travelled|moved|bought|"
    r"adopted|met|won|graduated|celebrated|hosted|ran|volunteered|performed|launched|opened|"
    r"received|gave|painted|played|watched|saw|flew|drove|hiked|camped|competed|organi[sz]ed|"
    r"completed|lost|broke|signed up|came back|got back)\b",
    r"\b(?:yesterday|today|tonight|last (?:night|week|weekend|month|year|summer|winter|spring|"
    rf"fall|time|{_WEEKDAYS}|fri|sat|sun)|this (?:morning|afternoon|evening|week|weekend|month|"
    r"year|summer)|next (?:week|weekend|month|year)|(?:a|one|two|three|few|couple of|couple) "
    r"(?:days?|weeks?|months?|years?) ago|recently|the other day|just (?:got|finished|started|"
    r"had|came|went|signed|bought|moved))\b",
    rf"\b(?:{_WEEKDAYS}|{_MONTHS}|(?:19|20)\d\d)\b",
    r"\b(?:going to|gonna|planning to|plan to|will be|about to|can't wait to|looking forward to)\b",
    r"\b(?:birthday|wedding|trip|vacation|holiday|concert|party|festival|conference|race|"
    r"marathon|competition|tournament|graduation|funeral|appointment|interview|exam|ceremony|"
    r"event|show|workshop|reunion|game)\b",
)
FACET_PATTERNS = {"personal_info": PERSONAL_INFO, "preferences": PREFERENCES, "events": EVENTS}
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|we|we're|we've|our|us)\b", re.I)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_URL = re.compile(r"(?:https?://|data:)\S+")
_IMAGE_LINE = re.compile(r"^(?:(?:https?://|data:)\S+(?:: .*)?|\(.*\))$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

TOPICS: dict[str, frozenset[str]] = {
    name: frozenset(words.split(","))
    for name, words in {
        "art": "art,artist,painting,paint,painted,paints,drawing,draw,sketch,sculpture,pottery,"
               "ceramics,museum,gallery,canvas,mural,watercolor,crafts,stained glass",
        "books": "book,books,novel,novels,reading,read,author,library,poetry,poem,poems,"
                 "bookshelf,memoir,fantasy",
        "camping": "camping,camp,campfire,tent,hike,hiking,hiked,trail,trails,mountain,"
                   "mountains,forest,outdoors,kayak,kayaking,national park,fishing",
        "career": "career,job,jobs,promotion,interview,resume,hired,laid off,boss,colleague,"
                  "colleagues,coworker,coworkers,office,shift,shifts",
        "business": "business,startup,store,shop,company,customers,clients,client,launch,"
                    "brand,marketing,sales,entrepreneur,investor,investors",
        "dance": "dance,dancing,dancer,dancers,ballet,choreography,salsa,tango",
        "education": "school,college,university,class,classes,course,courses,study,studying,"
                     "exam,exams,degree,teacher,student,students,homework,graduation,lecture,"
                     "semester,learning",
        "family": "family,fam,kids,kid,children,child,son,sons,daughter,daughters,husband,wife,"
                  "mom,mother,dad,father,parents,brother,sister,siblings,grandma,grandmother,"
                  "grandpa,grandfather,baby,cousin,aunt,uncle,niece,nephew",
        "fashion": "fashion,clothes,clothing,dress,dresses,outfit,outfits,shoes,sneakers,style,"
                   "jewelry,necklace",
        "fitness": "gym,workout,workouts,exercise,yoga,running,run,runs,marathon,jog,jogging,"
                   "fitness,training,cycling,swimming,swim,pilates",
        "food": "food,cook,cooking,cooked,recipe,recipes,dinner,lunch,breakfast,restaurant,bake,"
                "baking,baked,cake,pizza,meal,meals,dish,coffee,tea,chocolate,soup,bread,"
                "kitchen,honey",
        "friends": "friend,friends,friendship,buddy,buddies,hang out,party,parties,gathering",
        "gaming": "game,games,gaming,gamer,video game,video games,console,nintendo,xbox,"
                  "playstation,controller,esports",
        "health": "health,doctor,hospital,sick,illness,injury,injured,therapy,therapist,"
                  "medication,surgery,pain,mental health,anxiety,stress,allergy,allergic,"
                  "recovery,clinic,nurse,pharmacy",
        "home": "house,home,apartment,garden,gardening,plants,renovation,renovating,furniture,"
                "neighborhood,neighbors,backyard",
        "lgbtq": "lgbtq,lgbt,transgender,trans,gay,lesbian,queer,pride,bisexual,nonbinary,"
                 "transition,coming out",
        "movies": "movie,movies,film,films,cinema,tv,series,netflix,actor,actress,screenplay,"
                  "script,ghibli",
        "music": "music,song,songs,concert,concerts,band,guitar,piano,violin,cello,clarinet,"
                 "sing,singing,singer,album,playlist,choir,drums,musician",
        "nature": "nature,beach,ocean,sea,lake,river,sunset,sunrise,birds,flowers,park,"
                  "garden,wildlife,stars",
        "pets": "pet,pets,dog,dogs,puppy,puppies,cat,cats,kitten,kittens,turtle,turtles,"
                "hamster,bird,parrot,rabbit,horse,vet,bees,beekeeping,hive",
        "relationships": "dating,date,boyfriend,girlfriend,wedding,engaged,engagement,married,"
                         "marriage,partner,anniversary,romance,fiance,fiancee,proposal",
        "sports": "sport,sports,basketball,football,soccer,tennis,baseball,hockey,team,match,"
                  "tournament,coach,league,season,championship,volleyball,golf",
        "spirituality": "church,faith,pray,prayer,meditation,meditate,spiritual,temple,god",
        "travel": "travel,traveling,travelling,trip,trips,vacation,flight,flew,abroad,passport,"
                  "hotel,road trip,tour,tourist,journey,visit,visited,country,countries",
        "volunteering": "volunteer,volunteering,volunteered,charity,fundraiser,donate,donation,"
                        "shelter,nonprofit,community,activism,advocacy",
        "writing": "write,writing,wrote,writer,blog,journal,story,stories,screenwriting,essay",
    }.items()
}

_TOPICS_OF: dict[str, tuple[str, ...]] = {
    word: tuple(t for t in sorted(TOPICS) if word in TOPICS[t])
    for word in sorted(set().union(*TOPICS.values()))
}


@dataclass(frozen=True)
class _Sentence:
    position: int
    speaker: str
    text: str


def enrich_session(
    texts: Sequence[str],
    speakers: Sequence[str] = (),
    facts: Sequence[str] | None = None,
    event_facts: Sequence[str] | None = None,
) -> Enrichment:
    """Enrich one session from its message texts (`Speaker: text` lines, image lines allowed).

    speakers: the conversation's speakers (to recognise "Speaker: " prefixes, and named in the
    task tag). facts / event_facts: LoCoMo observation facts and event summaries; when either
    is non-empty the facets come from them instead of the texts (see the module docstring).
    """
    sentences = _sentences(texts, speakers)
    tags = topic_tags(texts)
    if facts or event_facts:
        facets, counts = _facets_from_facts(facts or (), event_facts or (), speakers)
    else:
        facets, counts = _facets_from_sentences(sentences)
    return Enrichment(
        tags=tags,
        task_tag=_task_tag(speakers, tags, sentences),
        memory_kind=_memory_kind(counts),
        memory_score=MEMORY_SCORE,
        **facets,
    )


# ---------------------------------------------------------------- sentences and scores


def _sentences(texts: Sequence[str], speakers: Sequence[str]) -> list[_Sentence]:
    """The sentences of the messages, image lines removed, each with its speaker."""
    found: list[_Sentence] = []
    for text in texts:
        speaker, body = _split_speaker(text, speakers)
        body = "\n".join(ln for ln in body.splitlines() if not _IMAGE_LINE.match(ln.strip()))
        for piece in _SENTENCE_END.split(body):
            if piece.strip():
                found.append(_Sentence(len(found), speaker, " ".join(piece.split())))
    return found


def _split_speaker(text: str, speakers: Sequence[str]) -> tuple[str, str]:
    for speaker in speakers:
        if speaker and text.startswith(f"{speaker}: "):
            return speaker, text[len(speaker) + 2:]
    return "", text


@lru_cache(maxsize=65536)
def facet_score(sentence: str, facet: str) -> float:
    """Pattern families of `facet` the sentence matches, +0.5 if first person; 0 for
    questions, sentences under three words, or no match."""
    text = sentence.strip()
    if text.endswith("?") or len(text.split()) < 3:
        return 0.0
    hits = sum(1 for p in FACET_PATTERNS[facet] if p.search(text))
    if not hits:
        return 0.0
    return hits + (0.5 if _FIRST_PERSON.search(text) else 0.0)


def _facets_from_sentences(sentences: list[_Sentence]) -> tuple[dict[str, str], dict[str, int]]:
    facets, counts = {}, {}
    for facet in FACETS:
        scored = [(facet_score(s.text, facet), s) for s in sentences]
        scored = [(score, s) for score, s in scored if score > 0]
        counts[facet] = len(scored)
        facets[facet] = _compose(scored)
    return facets, counts


def _compose(scored: list[tuple[float, _Sentence]]) -> str:
    """Best sentences first (ties: earlier), each ≤ 120 chars, while the text stays ≤ 200;
    the chosen ones are then joined in conversation order."""
    chosen: list[tuple[int, str]] = []
    size = -1
    for _, s in sorted(scored, key=lambda pair: (-pair[0], pair[1].position)):
        piece = clip(s.text, MAX_SENTENCE)
        piece = clip(f"{s.speaker}: {piece}" if s.speaker else piece, MAX_TEXT)
        if size + 1 + len(piece) <= MAX_TEXT:
            chosen.append((s.position, piece))
            size += 1 + len(piece)
    return " ".join(piece for _, piece in sorted(chosen))


def clip(text: str, limit: int) -> str:
    """The text cut at a word boundary to at most `limit` characters, "…" marking the cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "…"


def _memory_kind(counts: dict[str, int]) -> str:
    """The kind of the facet with the most matching sentences; "ephemeral" when none."""
    best = max(FACETS, key=lambda f: (counts.get(f, 0), -FACETS.index(f)))
    return KIND_OF_FACET[best] if counts.get(best, 0) > 0 else "ephemeral"


# ---------------------------------------------------------------- LoCoMo facts


def _first_person(fact: str, speakers: Sequence[str]) -> str:
    """The fact with its third-person subject read as first person, for scoring only."""
    text = fact
    for name in (s for s in speakers if s):
        n = re.escape(name)
        text = re.sub(rf"\b{n}'s\b", "my", text)
        text = re.sub(rf"\b{n} (?:is)\b", "I am", text)
        text = re.sub(rf"\b{n} (?:has)\b", "I have", text)
        text = re.sub(rf"\b{n}\b", "I", text)
    text = re.sub(r"\b(?:her|his|their)\b", "my", text, flags=re.I)
    return re.sub(r"\b(?:she|he|they)\b", "I", text, flags=re.I)


def _facets_from_facts(
    facts: Sequence[str], event_facts: Sequence[str], speakers: Sequence[str]
) -> tuple[dict[str, str], dict[str, int]]:
    sentences = [_Sentence(i, "", " ".join(f.split())) for i, f in enumerate(facts)]
    facets, counts = {}, {}
    for facet in FACETS:
        scored = [(facet_score(_first_person(s.text, speakers), facet), s) for s in sentences]
        scored = [(score, s) for score, s in scored if score > 0]
        counts[facet], facets[facet] = len(scored), _compose(scored)
    if event_facts:
        events = [_Sentence(i, "", " ".join(e.split())) for i, e in enumerate(event_facts)]
        counts["events"] = max(counts["events"], len(events))
        facets["events"] = _compose([(1.0, e) for e in events])
    return facets, counts


# ---------------------------------------------------------------- tags and task tag


def topic_tags(texts: Sequence[str]) -> tuple[str, ...]:
    """At most 8 topics of the lexicon by hits on words and word pairs (most hits first,
    ties alphabetical); URLs are ignored, a trailing "s" is forgiven."""
    words = _WORD.findall(_URL.sub(" ", "\n".join(texts)).lower())
    terms = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
    hits: dict[str, int] = {}
    for term in terms:
        topics = _TOPICS_OF.get(term) or (_TOPICS_OF.get(term[:-1], ()) if term.endswith("s") else ())
        for topic in topics:
            hits[topic] = hits.get(topic, 0) + 1
    ranked = sorted(hits, key=lambda t: (-hits[t], t))
    return tuple(ranked[:MAX_TAGS])


def _task_tag(speakers: Sequence[str], tags: Sequence[str], sentences: list[_Sentence]) -> str:
    """`A & B on tag1, tag2, tag3 - Speaker: best sentence`, at most 200 characters."""
    head = " & ".join(s for s in speakers if s) or "conversation"
    if tags:
        head += " on " + ", ".join(tags[:3])
    best = _salient(sentences)
    if best is None:
        return clip(head, MAX_TEXT)
    said = f"{best.speaker}: {best.text}" if best.speaker else best.text
    return clip(f"{head} - {said}", MAX_TEXT)


def _salient(sentences: list[_Sentence]) -> _Sentence | None:
    """The sentence with the highest total facet score (ties: earlier); None if none scores."""
    best, best_score = None, 0.0
    for s in sentences:
        score = sum(facet_score(s.text, f) for f in FACETS)
        if score > best_score:
            best, best_score = s, score
    return best
