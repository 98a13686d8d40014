"""Builders shared by the test modules (pytest fixtures live in conftest.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.ingest import Conversation, Message, Session, parse_date_time

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def shared_file(*parts: str) -> Path:
    """A file under ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared folder beside the repository)")
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run `memsense ARGV…` in-process: (exit code, stdout, stderr)."""
    from core.cli.main import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- conversations, hand-made -------------------------------------------------------------

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


# -- engines ------------------------------------------------------------------------------

def assert_recall_engine(engine: type) -> None:
    """`engine` takes every call of the `RecallEngine` protocol (by parameter name), declares
    every attribute of it (a capability it lacks as False or None, never by leaving it out), and
    recall without a depth (the app asks at the default depth)."""
    import inspect

    from core.recall.protocol import RecallEngine

    methods = dict(inspect.getmembers(RecallEngine, inspect.isfunction))
    init = inspect.getsource(engine.__init__)
    for name in RecallEngine.__annotations__:
        assert hasattr(engine, name) or f"self.{name} =" in init, f"{engine.__name__} does not declare {name}"
    for name, spec in methods.items():
        if name.startswith("_"):
            continue
        wanted = list(inspect.signature(spec).parameters)
        got = list(inspect.signature(getattr(engine, name)).parameters)
        assert got[: len(wanted)] == wanted, f"{engine.__name__}.{name}{tuple(got)} does not take {tuple(wanted)}"
    depth = inspect.signature(engine.recall).parameters["depth"]
    assert depth.default is not inspect.Parameter.empty, f"{engine.__name__}.recall: the app recalls without a depth"
