"""The records of a conversation before it becomes chunks: messages, sessions, users."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Message:
    """One message: speaker, text, its id ("D3:7"), image URLs and caption."""

    speaker: str
    text: str
    dia_id: str
    img_urls: tuple[str, ...] = ()
    caption: str = ""


@dataclass(frozen=True)
class Session:
    """A dated session. `date_time` is the original text, `time` its ISO 8601 form or ""."""

    number: int
    date_time: str
    time: str
    messages: tuple[Message, ...]
    observation: tuple[tuple[str, str], ...] = ()  # LoCoMo (speaker, fact)
    event_summary: tuple[tuple[str, str], ...] = ()  # LoCoMo (speaker, event)


@dataclass(frozen=True)
class Conversation:
    """One user's conversation: its speakers in order of appearance and its sessions."""

    user_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    name: str = ""
    qa: tuple[dict, ...] = field(default=(), compare=False)

    @property
    def second_speaker(self) -> str:
        """The assistant side: LoCoMo's `speaker_b`, else the second distinct speaker."""
        return self.speakers[1] if len(self.speakers) > 1 else ""
