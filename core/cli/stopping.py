"""Ctrl+C during a long recall stage (`eval`, `impact`): the stage stops after the question it is
on, and the command reports what was done, labelled as a part, never as the whole.

This is what `fix` and `tune` do on Ctrl+C (`core.cli.arguments.ctrl_c_sets`): the work done is
kept, one warning line says where it stopped, and the exit status is 0. A second Ctrl+C stops at
once (exit 130). Stopped before anything was done, there is nothing to show: exit 130 with one
line. A partial run is not kept in the history: compared with whole runs, its figures would mislead.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Mapping, Sequence, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Stopped:
    """How far a stage got before Ctrl+C: `done` of `total` items (questions or queries)."""

    done: int
    total: int
    noun: str = "questions"

    @property
    def line(self) -> str:
        """The one line saying so (stdout's first line too: the figures are a part even when stderr is hidden)."""
        return (f"stopped by Ctrl+C after {self.done:,} of {self.total:,} {self.noun}: every figure below is over "
                f"those {self.done:,} only")

    def to_json(self) -> dict:
        return {"stopped_by_ctrl_c": True, f"{self.noun}_done": self.done, f"{self.noun}_total": self.total}


def kept_part(items: Sequence[T], done: Mapping[str, object] | Sequence[object], key=None,
              noun: str = "questions") -> tuple[list[T], Stopped | None]:
    """The items the stage finished (`done`: their results by `key(item)`, or the results in
    order) and, when that is not all of them, a `Stopped` (after one warning line on stderr).
    Nothing finished: KeyboardInterrupt (the CLI's "interrupted", exit 130)."""
    if isinstance(done, Mapping):
        kept = [i for i in items if key(i) in done]
    else:
        kept = list(items[:len(done)])
    if len(kept) == len(items):
        return kept, None
    if not kept:
        raise KeyboardInterrupt
    stopped = Stopped(len(kept), len(items), noun)
    if sys.stderr.isatty():
        print(file=sys.stderr)  # end the progress bar's line
    print(f"memsense: warning: {stopped.line}; this run was not kept in the history", file=sys.stderr)
    return kept, stopped
