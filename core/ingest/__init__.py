"""Ingest (SPEC §1): dataset files become conversations (`conversations`, `locomo`, `jsonl`),
LongMemEval files (`longmemeval`), conversations become enriched chunks (`chunking`, `enrich`), question files become judged
questions (`questions`)."""
from core.ingest.chunking import (FACET_SOURCES, MAX_SESSION_CHARS, MODES, build_chunks, header, message_line,
                                  session_chunks, speaker_groups, split_parts, turn_chunks)
from core.ingest.conversations import load_conversations
from core.ingest.dates import parse_date_time
from core.ingest.messages import Conversation, Message, Session
from core.ingest.questions import KEPT_CATEGORIES, load_questions, parse_evidence

__all__ = ["FACET_SOURCES", "KEPT_CATEGORIES", "MAX_SESSION_CHARS", "MODES", "Conversation", "Message", "Session",
           "build_chunks", "header", "load_conversations", "load_questions", "message_line", "parse_date_time",
           "parse_evidence", "session_chunks", "speaker_groups", "split_parts", "turn_chunks"]
