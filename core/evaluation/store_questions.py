"""Question sets belong to stores: the question files used with a store, remembered beside it.

A store folder keeps them in `<store>.questions.json` in its parent (a store URL in the user's data
folder, one file per URL, as its run history), newest first: ingesting a dataset that carries judged
questions (LoCoMo JSON, LongMemEval) attaches it, and so does choosing a question file in the app.
The file is written atomically and never touches the store itself. A question file none of whose
users the store holds is refused with one line, before anything is attached.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Sequence

from core.atomic import write_text_atomic
from core.errors import MemsenseError

MAX_ATTACHED = 50
"""The question files a store remembers (the oldest forgotten first)."""


def attachments_path(store: str | Path, data_dir: Path | None = None) -> Path:
    """Where the question files of `store` are listed (module docstring)."""
    text = str(store)
    if "://" in text:
        from core.machine import data_dir as app_data

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return (data_dir or app_data()) / "questions" / f"{digest}.json"
    path = Path(store).expanduser().resolve()
    return path.parent / f"{path.name}.questions.json"


def attached(store: str | Path, data_dir: Path | None = None) -> list[Path]:
    """The question files attached to `store` that still exist, newest first ([] when none or unreadable:
    a damaged list loses no data, it is only a memory of choices)."""
    path = attachments_path(store, data_dir)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(entries, list):
        return []
    return [Path(e) for e in entries if isinstance(e, str) and Path(e).is_file()]


def attach(store: str | Path, question_file: str | Path, data_dir: Path | None = None) -> Path:
    """Remember `question_file` as used with `store` (first in its list); the list's path."""
    path = attachments_path(store, data_dir)
    entry = str(Path(question_file).expanduser().resolve())
    kept = [str(p) for p in attached(store, data_dir) if str(p) != entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps([entry, *kept][:MAX_ATTACHED], indent=1) + "\n")
    return path


def judged_users(question_file: str | Path) -> set[str]:
    """The users of a question file's judged questions (MemsenseError for a file that is no question set);
    read once per version of the file (its path, size and modification time), however often a store open
    or a choice asks."""
    path = Path(question_file)
    try:
        st = path.stat()
    except OSError:
        return set(_judged_users(str(path), -1, -1))  # missing: the reader's own one line
    return set(_judged_users(str(path.resolve()), st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=32)
def _judged_users(path: str, size: int, mtime_ns: int) -> frozenset[str]:
    from core.evaluation.evaluate import judged_only
    from core.evaluation.judged import load_question_set

    return frozenset(q.user_id for q in judged_only(load_question_set(path)))


def check_belongs(question_file: str | Path, users: Sequence[str]) -> set[str]:
    """Refuse, with one line, a question file none of whose judged questions is about a user of the store;
    the users it shares with the store."""
    asked = judged_users(question_file)
    shared = asked & set(users)
    if not asked:
        raise MemsenseError(f"{Path(question_file).name} holds no judged question (a question with gold sessions)")
    if not shared:
        some = ", ".join(sorted(asked)[:3])
        raise MemsenseError(f"the questions of {Path(question_file).name} are about users this store does not hold "
                            f"({some}{', …' if len(asked) > 3 else ''}); open the store built from that dataset, "
                            "or choose its own questions")
    return shared


def attach_dataset(store: str | Path, dataset: str | Path) -> int:
    """After ingesting `dataset` into `store`: attach it when it carries judged questions (the demo
    conversations: the demo questions); how many (0: none, nothing attached)."""
    from core.evaluation.evaluate import judged_only
    from core.evaluation.judged import load_question_set
    from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS

    if Path(dataset).resolve() == DEMO_DATASET.resolve():
        dataset = DEMO_QUESTIONS

    try:
        questions = judged_only(load_question_set(dataset))
    except MemsenseError:
        return 0
    if questions:
        attach(store, dataset)
    return len(questions)
