"""LoCoMo JSON conversations (schema in the dataset's README; see `core.ingest.conversations`)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Sequence

from core.ingest.dates import parse_date_time
from core.ingest.files import fail, kind_of, required_str, text_field, urls_field
from core.ingest.messages import Conversation, Message, Session


_SESSION_KEY = re.compile(r"session_(\d+)")


def locomo_conversations(data: list, path: Path) -> list[Conversation]:
    conversations = [_locomo_sample(sample, i, path) for i, sample in enumerate(data)]
    _check_unique_users(conversations, path)
    return conversations


def locomo_samples(conversations: Sequence[Conversation]) -> list[dict]:
    """Conversations as LoCoMo JSON samples, what `locomo_conversations` reads back (Memsense's
    evaluation ingest takes only this shape): `sample_id` the user, speaker_a/b, each session's
    messages and date text, facts and events when the conversation has them."""
    samples = []
    for conv in conversations:
        body: dict[str, Any] = {"speaker_a": conv.speakers[0], "speaker_b": conv.second_speaker or conv.speakers[0]}
        observation: dict[str, Any] = {}
        events: dict[str, Any] = {}
        for s in conv.sessions:
            body[f"session_{s.number}_date_time"] = s.date_time
            body[f"session_{s.number}"] = [
                {"speaker": m.speaker, "text": m.text, "dia_id": m.dia_id,
                 **({"img_url": list(m.img_urls)} if m.img_urls else {}),
                 **({"blip_caption": m.caption} if m.caption else {})} for m in s.messages]
            if s.observation:
                observation[f"session_{s.number}_observation"] = _by_speaker(s.observation, lambda f: [f])
            if s.event_summary:
                events[f"events_session_{s.number}"] = _by_speaker(s.event_summary, lambda e: e)
        sample: dict[str, Any] = {"sample_id": conv.user_id, "conversation": body, "qa": list(conv.qa)}
        if observation:
            sample["observation"] = observation
        if events:
            sample["event_summary"] = events
        samples.append(sample)
    return samples


def _by_speaker(items: tuple[tuple[str, str], ...], shape: Callable[[str], Any]) -> dict[str, list]:
    out: dict[str, list] = {}
    for speaker, text in items:
        out.setdefault(speaker, []).append(shape(text))
    return out


def _check_unique_users(conversations: Sequence[Conversation], path: Path) -> None:
    seen: set[str] = set()
    for conv in conversations:
        if conv.user_id in seen:
            raise fail(path, f"user '{conv.user_id}' appears twice", "Give each conversation its own id.")
        seen.add(conv.user_id)


def _locomo_sample(sample: Any, index: int, path: Path) -> Conversation:
    where = f"sample {index + 1}"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise fail(path, f"{where}: has no 'conversation' object")
    user = required_str(sample, "sample_id", where, path)
    conv = sample["conversation"]
    where = f"sample {user}"
    speakers = (required_str(conv, "speaker_a", where, path), required_str(conv, "speaker_b", where, path))
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    if not numbers:
        raise fail(path, f"{where}: has no session_N lists")
    sessions = tuple(_locomo_session(sample, n, user, path) for n in numbers)
    qa = sample.get("qa", [])
    qa = tuple(q for q in qa if isinstance(q, dict)) if isinstance(qa, list) else ()
    return Conversation(user, speakers, sessions, name=user, qa=qa)


def _locomo_session(sample: dict, n: int, user: str, path: Path) -> Session:
    conv = sample["conversation"]
    where = f"sample {user}, session_{n}"
    messages = conv[f"session_{n}"]
    if not isinstance(messages, list):
        raise fail(path, f"{where}: expected a list of messages, got {kind_of(messages)}")
    date_time = conv.get(f"session_{n}_date_time")
    if not isinstance(date_time, str):
        raise fail(path, f"{where}: missing or non-text 'session_{n}_date_time'")
    parsed = tuple(_locomo_message(m, n, k, where, path) for k, m in enumerate(messages, start=1))
    return Session(n, date_time, parse_date_time(date_time), parsed,
                   _observation(sample, n), _event_summary(sample, n))


def _locomo_message(m: Any, n: int, k: int, where: str, path: Path) -> Message:
    where = f"{where}, message {k}"
    if not isinstance(m, dict):
        raise fail(path, f"{where}: expected an object, got {kind_of(m)}")
    speaker = required_str(m, "speaker", where, path)
    text = text_field(m, "text", where, path)
    caption = m.get("blip_caption")
    caption = caption.strip() if isinstance(caption, str) else ""
    dia_id = m.get("dia_id")
    dia_id = dia_id if isinstance(dia_id, str) else f"D{n}:{k}"
    return Message(speaker, text, dia_id, urls_field(m.get("img_url"), where, path), caption)


def _observation(sample: dict, n: int) -> tuple[tuple[str, str], ...]:
    """LoCoMo `observation` facts of session n as (speaker, fact); () when absent."""
    block = sample.get("observation")
    block = block.get(f"session_{n}_observation") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        return ()
    facts = []
    for speaker, items in block.items():
        for item in items if isinstance(items, list) else ():
            fact = item[0] if isinstance(item, list) and item else item
            if isinstance(fact, str) and fact.strip():
                facts.append((speaker, fact.strip()))
    return tuple(facts)


def _event_summary(sample: dict, n: int) -> tuple[tuple[str, str], ...]:
    """LoCoMo `event_summary` events of session n as (speaker, event); () when absent."""
    block = sample.get("event_summary")
    block = block.get(f"events_session_{n}") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        return ()
    return tuple(
        (speaker, event.strip())
        for speaker, items in block.items()
        if speaker != "date" and isinstance(items, list)
        for event in items
        if isinstance(event, str) and event.strip()
    )
