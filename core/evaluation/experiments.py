"""Experiments: kept runs compared side by side, any number of them, question by question.

A *side* is one config of one kept run (`core.evaluation.history.Run`). For a metric, each side's
figure is its mean over the questions every side scored, with a 95 % percentile bootstrap interval
over those questions (`core.evaluation.cv.bootstrap_ci`, seeded), and, against the baseline side,
the paired randomisation test of §8 (`core.evaluation.metrics.compare`) with the questions won and
lost. The matrix holds every side's value on every common question; a question *changed* when the
sides do not all agree on it, and *passes* a recall metric when every gold session was found
(value 1). Sides of different datasets (another SHA-256 of the question file) are refused unless
asked for (`across_datasets`), and then the comparison says so: figures of other questions are
never compared silently.
"""
from __future__ import annotations

import csv
import html
import io
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core.errors import MemsenseError
from core.evaluation.cv import bootstrap_ci
from core.evaluation.history import History, Run
from core.evaluation.metrics import compare
from core.records import Question

PASS = 1.0
"""A recall metric's value when every gold session was found: the question passes."""


@dataclass(frozen=True)
class RunSide:
    """One config of one kept run, and how a comparison names it."""

    run: Run
    config: str
    label: str

    @property
    def values(self) -> Mapping[str, Mapping[str, float]]:
        return self.run.results[self.config]


def side_of(run: Run, config: str | None = None, name: str = "") -> RunSide:
    """The side `config` of `run` (its only config when it ranked one); `name`: the run's own name."""
    if config is None:
        if len(run.results) != 1:
            raise MemsenseError(f"run {run.id} scored {len(run.results)} configs ({', '.join(run.results)}); "
                                f"name one as {run.id}:CONFIG")
        config = next(iter(run.results))
    if config not in run.results:
        raise MemsenseError(f"run {run.id} scored no config {config!r}; it scored {', '.join(run.results) or 'none'}")
    label = f"run {run.id}" + (f" {name}" if name else "")
    return RunSide(run, config, f"{label}: {config}" if len(run.results) > 1 else label)


@dataclass(frozen=True)
class SideFigures:
    label: str
    run_id: int
    config: str
    mean: float
    ci: tuple[float, float]
    p_value: float | None  # against the baseline (None for the baseline itself)
    wins: int  # questions where this side is above the baseline
    losses: int

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "run": self.run_id, "config": self.config, "mean": self.mean,
                "ci95": list(self.ci), "p_value": self.p_value, "wins": self.wins, "losses": self.losses}


@dataclass(frozen=True)
class RunComparison:
    """Sides compared on one metric over the questions they all scored (module docstring)."""

    metric: str
    baseline: int  # index of the baseline side
    figures: tuple[SideFigures, ...]
    questions: tuple[str, ...]  # scored by every side, sorted
    values: np.ndarray  # (questions, sides)
    left_out: int  # questions some side did not score
    datasets: tuple[str, ...]  # distinct dataset digests (more than one only when asked for)
    categories: Mapping[str, int] = field(default_factory=dict)  # question id -> category, when known
    returned: tuple[Mapping[str, Sequence[str]], ...] = ()  # per side: question id -> the ids it returned

    @property
    def changed(self) -> tuple[str, ...]:
        """Questions on which the sides do not all agree."""
        if not len(self.questions):
            return ()
        differs = (self.values != self.values[:, :1]).any(axis=1)
        return tuple(q for q, d in zip(self.questions, differs) if d)

    def passes(self, row: int, col: int) -> bool | None:
        """Whether the question passes under that side (recall metrics only; None for others)."""
        if not self.metric.startswith("recall"):
            return None
        return bool(self.values[row, col] >= PASS)

    def rows(self, category: int | None = None, changed_only: bool = False) -> list[int]:
        """Matrix rows, filtered by category and by "changed between these runs"."""
        changed = set(self.changed) if changed_only else None
        return [i for i, q in enumerate(self.questions)
                if (category is None or self.categories.get(q) == category) and (changed is None or q in changed)]

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "baseline": self.figures[self.baseline].label,
                "questions": len(self.questions), "left_out": self.left_out, "datasets": list(self.datasets),
                "sides": [f.to_json() for f in self.figures], "changed": list(self.changed),
                "matrix": [{"question_id": q, "category": self.categories.get(q),
                            "values": [float(v) for v in self.values[i]],
                            "returned": [list(r.get(q, [])) for r in self.returned]}
                           for i, q in enumerate(self.questions)]}

    def to_csv(self) -> str:
        """The comparison as CSV: a summary row per side, then the question × side matrix."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["side", "run", "config", f"mean {self.metric}", "ci95 low", "ci95 high", "p vs baseline",
                    "wins", "losses"])
        for f in self.figures:
            w.writerow([f.label, f.run_id, f.config, f"{f.mean:.6f}", f"{f.ci[0]:.6f}", f"{f.ci[1]:.6f}",
                        "" if f.p_value is None else f"{f.p_value:.6f}", f.wins, f.losses])
        w.writerow([])
        w.writerow(["question_id", "category", *(f.label for f in self.figures)])
        for i, q in enumerate(self.questions):
            w.writerow([q, self.categories.get(q, ""), *(f"{v:.6f}" for v in self.values[i])])
        return out.getvalue()


def compare_sides(sides: Sequence[RunSide], metric: str, baseline: int = 0, across_datasets: bool = False,
                  categories: Mapping[str, int] | None = None, seed: int = 0,
                  check: Callable[[], None] | None = None) -> RunComparison:
    """Compare `sides` on `metric` against `sides[baseline]` (module docstring); `check()` is called
    before each side's figures (a cancel token's: it raises to stop)."""
    if len(sides) < 2:
        raise MemsenseError("name at least two runs to compare")
    if not 0 <= baseline < len(sides):
        raise MemsenseError(f"the baseline must be one of the {len(sides)} runs compared")
    digests = tuple(dict.fromkeys(s.run.dataset_sha256 for s in sides))
    if len(digests) > 1 and not across_datasets:
        which = ", ".join(f"run {s.run.id} ({s.run.dataset_sha256[:12]})" for s in sides)
        raise MemsenseError(f"these runs ranked different question files ({which}); compare runs of one dataset, "
                            "or say --across-datasets to compare the questions they share anyway")
    common = set.intersection(*(set(s.values) for s in sides))
    questions = tuple(sorted(q for q in common if all(metric in s.values[q] for s in sides)))
    if not questions:
        have = sorted({m for s in sides for per_q in s.values.values() for m in per_q})
        raise MemsenseError(f"the runs share no question scored on {metric}; they scored {', '.join(have) or 'none'}")
    values = np.array([[float(s.values[q][metric]) for s in sides] for q in questions])
    base = {q: values[i, baseline] for i, q in enumerate(questions)}
    figures = []
    for n, s in enumerate(sides):
        if check is not None:
            check()
        col = values[:, n]
        p = None if n == baseline else compare(base, dict(zip(questions, col)), metric).p_value
        figures.append(SideFigures(s.label, s.run.id, s.config, float(col.mean()), bootstrap_ci(col, seed), p,
                                   int((col > values[:, baseline]).sum()), int((col < values[:, baseline]).sum())))
    left_out = len(set().union(*(set(s.values) for s in sides))) - len(questions)
    kept = {q: c for s in sides for q, c in s.run.categories.items()}  # as each run kept them, else as asked
    returned = tuple(s.run.returned.get(s.config, {}) for s in sides)
    return RunComparison(metric, baseline, tuple(figures), questions, values, left_out, digests,
                         {**kept, **(categories or {})}, returned)


MAX_NAME_CHARS = 10_000
"""The longest name or note a run keeps."""
NAMES_SCHEMA = "CREATE TABLE IF NOT EXISTS run_names (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT NOT NULL)"
"""A run's name and note, beside the runs table (a history without it has no run named)."""


def run_names(history: History) -> dict[int, tuple[str, str]]:
    """Run id -> (name, note) of every run given one."""
    if hasattr(history, "names"):  # shared runs (core.evaluation.shared_runs)
        return history.names()
    try:
        rows = history.db.execute("SELECT id, name, note FROM run_names").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise MemsenseError(f"cannot read the run names of {history.path} ({exc})") from None
    return {int(i): (str(n), str(t)) for i, n, t in rows}


def set_run_name(history: History, run_id: int, name: str | None = None, note: str | None = None) -> None:
    """Name a run, or keep a note with it (what is not given stays)."""
    old_name, old_note = run_names(history).get(run_id, ("", ""))
    for text, what in ((name, "name"), (note, "note")):
        if text is not None and (len(text) > MAX_NAME_CHARS or "\x00" in text):
            raise MemsenseError(f"a run's {what} holds at most {MAX_NAME_CHARS:,} characters and no NUL")
    if hasattr(history, "set_name"):  # shared runs
        history.set_name(run_id, old_name if name is None else name.strip(), old_note if note is None else note)
        return
    with history.db:
        history.db.execute(NAMES_SCHEMA)
        history.db.execute("INSERT OR REPLACE INTO run_names (id, name, note) VALUES (?, ?, ?)",
                           (run_id, old_name if name is None else name.strip(), old_note if note is None else note))


def delete_run(history: History, run_id: int) -> None:
    """Delete a run (and its name) from the history."""
    if hasattr(history, "delete"):  # shared runs: the name goes with the run
        history.delete(run_id)
        return
    with history.db:
        history.db.execute(NAMES_SCHEMA)
        history.db.execute("DELETE FROM run_names WHERE id = ?", (run_id,))
        history.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))



def question_index(run: Run) -> dict[str, Question]:
    """Question id -> question, from the run's question file when it is still there with the same bytes
    (a run keeps the file's SHA-256); {} otherwise."""
    from core.evaluation.history import file_sha256
    from core.evaluation.judged import load_question_set

    path = Path(run.dataset)
    try:
        if not path.is_file() or file_sha256(path) != run.dataset_sha256:
            return {}
        return {q.question_id: q for q in load_question_set(path)}
    except (MemsenseError, OSError, ValueError):
        return {}


def question_categories(run: Run) -> dict[str, int]:
    """Question id -> category (`question_index`)."""
    return {q: question.category for q, question in question_index(run).items()}


def comparison_html(result: RunComparison) -> str:
    """The comparison as one self-contained HTML file: every side's mean with its interval (bars and a
    table, p against the baseline), then the questions that differ between the runs."""
    from core.evaluation.report import CSS, bars_svg

    e = lambda v: html.escape(str(v), quote=True)  # noqa: E731 - a local shorthand
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
    series = [(f.label, palette[n % len(palette)], [(f.mean, f.ci[0], f.ci[1])]) for n, f in enumerate(result.figures)]
    rows = "".join(f"<tr><td>{e(f.label)}</td><td class=n>{f.mean:.3f}</td><td class=n>{f.ci[0]:.3f} – {f.ci[1]:.3f}"
                   f"</td><td class=n>{'baseline' if n == result.baseline else f'{f.p_value:.3f}'}</td>"
                   f"<td class=n>{f.wins}</td><td class=n>{f.losses}</td></tr>" for n, f in enumerate(result.figures))
    changed = set(result.changed)
    matrix = "".join(
        f"<tr><td>{e(q)}</td><td>{e(result.categories.get(q, ''))}</td>"
        + "".join(f"<td class=n>{v:.3f}</td>" for v in result.values[i]) + "</tr>"
        for i, q in enumerate(result.questions) if q in changed)
    head = "".join(f"<th>{e(f.label)}</th>" for f in result.figures)
    warn = (f"<p><b>{len(result.datasets)} question files:</b> compared on the questions they share.</p>"
            if len(result.datasets) > 1 else "")
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{len(result.figures)} runs compared</title>"
            f"<style>{CSS}</style></head><body><h1>{len(result.figures)} runs compared on {e(result.metric)}</h1>"
            f"<p>{len(result.questions)} questions scored by every run; {result.left_out} left out.</p>{warn}"
            + bars_svg([result.metric], series, f"mean {result.metric} with 95 % intervals")
            + "<table><tr><th>run</th><th>mean</th><th>95 % CI</th><th>p vs baseline</th><th>won</th><th>lost</th>"
            f"</tr>{rows}</table><h2>{len(changed)} questions that differ</h2><table><tr><th>question</th>"
            f"<th>category</th>{head}</tr>{matrix}</table></body></html>\n")
