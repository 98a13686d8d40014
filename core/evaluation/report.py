"""A report anyone can open: configs A and B on a question set, as one self-contained HTML file.

No script, no stylesheet or font from elsewhere, no network: the plots are inline SVG drawn
here from the figures (bars with their 95 % intervals; failure attribution as stacked bars).
It holds the settings that differ, every metric overall with the paired difference, its 95 %
percentile bootstrap interval and the paired randomisation test's p, recall_all@k per category
with intervals, failure attribution (SPEC §13) for A and B, and the questions whose metric
changed, each with its evidence turns' text from the store.
"""
from __future__ import annotations

import html
import time
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from core.config import Config, to_dict
from core.evaluation.cv import bootstrap_ci
from core.evaluation.diagnose import STAGES, Diagnosis, diagnose
from core.evaluation.evaluate import PresetEvaluation, category_name, evaluate_config
from core.evaluation.metrics import compare, metric_names
from core.recall.pool import RecallPool
from core.records import Chunk, Question

STAGE_COLOURS: dict[str, str] = {
    "absent": "#7f7f7f", "zero_weight": "#bcbd22", "beyond_route_limit": "#8c564b", "cut_from_pool": "#d62728",
    "dropped": "#9467bd", "supporting_turn": "#e377c2", "outranked": "#ff7f0e", "same_session": "#f7b6d2",
    "duplicate": "#17becf", "fallback_fill": "#aec7e8", "selected": "#2ca02c",
}
"""Each stage's colour, by name (the app's Diagnose bars use them too)."""
A_COLOUR, B_COLOUR = "#1f77b4", "#ff7f0e"
CSS = """body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:anywhere}td.q{min-width:24em}.ev{color:#555;font-size:.9em}.win{color:#2ca02c}.loss{color:#d62728}svg text{font-size:12px;font-family:sans-serif}"""


@dataclass(frozen=True)
class Side:
    """One config of the report: its name, settings, evaluation and failure attribution."""

    name: str
    config: Config
    evaluation: PresetEvaluation
    diagnosis: Diagnosis


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _interval(values: Sequence[float]) -> tuple[float, float, float]:
    arr = np.asarray(values, dtype=float)
    lo, hi = bootstrap_ci(arr)
    return float(arr.mean()) if len(arr) else float("nan"), lo, hi


def bars_svg(groups: Sequence[str], series: Sequence[tuple[str, str, Sequence[tuple[float, float, float]]]],
             title: str, width: int = 640, height: int = 260) -> str:
    """Grouped bars in [0, 1] with interval whiskers: series = (label, colour, (mean, lo, hi) per group)."""
    left, bottom, top = 40, 40, 24
    plot_h = height - bottom - top
    slot = (width - left - 10) / max(len(groups), 1)
    bar = slot * 0.8 / max(len(series), 1)
    y = lambda v: top + plot_h * (1 - min(max(v, 0.0), 1.0))  # noqa: E731 - a local scale
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
           f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
           f'<text x="{left}" y="14">{_e(title)}</text>']
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="4" y="{y(t) + 4:.1f}">{t:.2f}</text>')
    for g, group in enumerate(groups):
        x0 = left + g * slot + slot * 0.1
        for s, (label, colour, values) in enumerate(series):
            mean, lo, hi = values[g]
            x = x0 + s * bar
            out.append(f'<rect x="{x:.1f}" y="{y(mean):.1f}" width="{bar * 0.9:.1f}" height="{y(0) - y(mean):.1f}" '
                       f'fill="{colour}"><title>{_e(label)} {_e(group)}: {mean:.3f} [{lo:.3f}, {hi:.3f}]</title></rect>')
            cx = x + bar * 0.45
            out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="#000"/>')
        out.append(f'<text x="{x0:.1f}" y="{height - bottom + 16}">{_e(group[:18])}</text>')
    for s, (label, colour, _) in enumerate(series):
        out.append(f'<rect x="{left + s * 110}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{left + s * 110 + 14}" y="{height - 5}">{_e(label[:14])}</text>')
    return "".join(out) + "</svg>"


def stages_svg(rows: Sequence[tuple[str, Mapping[str, int]]], title: str, width: int = 640) -> str:
    """One horizontal stacked bar per row (a config): gold sessions per stage, in `STAGES` order."""
    left, row_h = 110, 28
    per_line = 4
    height = 40 + row_h * len(rows) + 20 * ((len(STAGES) + per_line - 1) // per_line)
    total = max((sum(c.values()) for _, c in rows), default=1) or 1
    scale = (width - left - 10) / total
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
           f'aria-label="{_e(title)}"><title>{_e(title)}</title><text x="4" y="14">{_e(title)}</text>']
    for r, (label, counts) in enumerate(rows):
        y, x = 24 + r * row_h, float(left)
        out.append(f'<text x="4" y="{y + 16}">{_e(label[:16])}</text>')
        for stage in STAGES:
            n = counts.get(stage, 0)
            if n:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{n * scale:.1f}" height="{row_h - 6}" '
                           f'fill="{STAGE_COLOURS[stage]}"><title>{stage}: {n}</title></rect>')
                x += n * scale
    y0 = 30 + row_h * len(rows)
    for i, stage in enumerate(STAGES):
        x, y = 4 + (i % per_line) * 155, y0 + (i // per_line) * 20
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{STAGE_COLOURS[stage]}"/>'
                   f'<text x="{x + 14}" y="{y + 9}">{stage}</text>')
    return "".join(out) + "</svg>"


def evidence_texts(question: Question, chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """(turn id, message text) of each of the question's evidence turns found in the store."""
    from core.recall.lexical.snippet import message_parts

    wanted = set(question.gold_turns)
    found: dict[str, str] = {}
    for chunk in chunks:
        if chunk.kind == "session" and wanted & set(chunk.dia_ids):
            for dia_id, text in message_parts(chunk):
                if dia_id in wanted:
                    found.setdefault(dia_id, text)
    return [(t, found[t]) for t in question.gold_turns if t in found]


def _settings_diff(a: Side, b: Side) -> str:
    da, db = to_dict(a.config), to_dict(b.config)
    rows = []
    for key in sorted(set(da) | set(db)):
        va, vb = da.get(key), db.get(key)
        if isinstance(va, dict) and isinstance(vb, dict):
            rows += [(f"{key}.{r}", va.get(r), vb.get(r)) for r in sorted(set(va) | set(vb)) if va.get(r) != vb.get(r)]
        elif va != vb:
            rows.append((key, va, vb))
    if not rows:
        return "<p>The two configs have the same settings.</p>"
    body = "".join(f"<tr><td>{_e(k)}</td><td class=n>{_e(x)}</td><td class=n>{_e(y)}</td></tr>" for k, x, y in rows)
    return f"<table><tr><th>setting</th><th>{_e(a.name)}</th><th>{_e(b.name)}</th></tr>{body}</table>"


def _metrics_table(a: Side, b: Side) -> str:
    rows = []
    for m in metric_names(a.evaluation.k):
        sa, sb = a.evaluation.scores(m), b.evaluation.scores(m)
        c = compare(sa, sb, m)
        diffs = [sb[q] - sa[q] for q in sa]
        _, lo, hi = _interval(diffs)
        rows.append(f"<tr><td>{m}</td><td class=n>{c.mean_a:.3f}</td><td class=n>{c.mean_b:.3f}</td>"
                    f"<td class=n>{c.delta:+.3f}</td><td class=n>[{lo:+.3f}, {hi:+.3f}]</td>"
                    f"<td class=n>{c.wins} / {c.losses}</td><td class=n>{c.p_value:.4f}</td></tr>")
    return ("<table><tr><th>metric</th><th>A</th><th>B</th><th>B − A</th><th>95 % CI of B − A</th>"
            "<th>B higher / lower</th><th>p (paired randomisation)</th></tr>" + "".join(rows) + "</table>")


def _category_plot(a: Side, b: Side) -> str:
    metric = f"recall_all@{a.evaluation.k}"
    cats = sorted({o.category for o in a.evaluation.outcomes})
    series = []
    for side, colour in ((a, A_COLOUR), (b, B_COLOUR)):
        values = [_interval([o.metrics[metric] for o in side.evaluation.outcomes if o.category == c]) for c in cats]
        series.append((side.name, colour, values))
    return bars_svg([category_name(c) for c in cats], series, f"{metric} per category, with 95 % bootstrap intervals")


def _changed_questions(a: Side, b: Side, questions: Sequence[Question], chunks_of: Mapping[str, Sequence[Chunk]]) -> str:
    metric = f"recall_all@{a.evaluation.k}"
    by_id = {q.question_id: q for q in questions}
    pairs = [(oa, ob) for oa, ob in zip(a.evaluation.outcomes, b.evaluation.outcomes)
             if oa.metrics[metric] != ob.metrics[metric]]
    pairs.sort(key=lambda p: (p[0].metrics[metric] - p[1].metrics[metric], p[0].question_id))
    rows = []
    for oa, ob in pairs:
        q = by_id[oa.question_id]
        diff = ob.metrics[metric] - oa.metrics[metric]
        ev = "".join(f"<div class=ev><b>{_e(t)}</b> {_e(text[:300])}</div>"
                     for t, text in evidence_texts(q, chunks_of.get(q.user_id, ())))
        rows.append(f"<tr><td>{_e(q.question_id)}</td><td class=q>{_e(q.text)}{ev}</td><td>{_e(list(oa.gold_sessions))}</td>"
                    f"<td>{_e(list(oa.sessions))}</td><td>{_e(list(ob.sessions))}</td>"
                    f"<td class='n {'win' if diff > 0 else 'loss'}'>{diff:+.0f}</td></tr>")
    if not rows:
        return f"<p>No question's {metric} differs between A and B.</p>"
    higher = sum(ob.metrics[metric] > oa.metrics[metric] for oa, ob in pairs)
    return (f"<p>{len(rows)} questions whose {metric} differs: B higher on {higher}, lower on {len(rows) - higher}.</p>"
            "<table><tr><th>id</th><th>question and evidence</th><th>gold sessions</th><th>A's sessions</th>"
            "<th>B's sessions</th><th>B − A</th></tr>" + "".join(rows) + "</table>")


def render(a: Side, b: Side, questions: Sequence[Question], chunks_of: Mapping[str, Sequence[Chunk]],
           store: str, dataset: str, model: str) -> str:
    """The whole report as one HTML document (module docstring)."""
    stages = stages_svg([(a.name, a.diagnosis.stages), (b.name, b.diagnosis.stages)],
                        f"where the gold sessions went, each config ranked with top_k = {a.diagnosis.k} (SPEC §13)")
    stage_rows = "".join(f"<tr><td>{s}</td><td class=n>{a.diagnosis.stages[s]}</td><td class=n>{b.diagnosis.stages[s]}</td></tr>"
                         for s in STAGES)
    return "".join([
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>memsense report: {_e(a.name)} against {_e(b.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(a.name)} (A) against {_e(b.name)} (B)</h1>",
        f"<p>{len(questions)} judged questions of {_e(dataset)}; store {_e(store)}; model {_e(model)}; "
        f"k = {a.evaluation.k}; written {_e(time.strftime('%Y-%m-%d %H:%M'))}.</p>",
        "<h2>Settings that differ</h2>", _settings_diff(a, b),
        "<h2>Metrics</h2>", _metrics_table(a, b),
        "<h2>Per category</h2>", _category_plot(a, b),
        "<h2>Failure attribution</h2>", stages,
        f"<table><tr><th>stage</th><th>{_e(a.name)}</th><th>{_e(b.name)}</th></tr>{stage_rows}</table>",
        "<h2>Questions that changed</h2>", _changed_questions(a, b, questions, chunks_of),
        "</body></html>\n"])


def report_configs(cfg_a: Config, cfg_b: Config, k: int) -> tuple[Config, ...]:
    """The configs a report ranks (each as set, and at top_k = k for failure attribution): the
    question set's recall must serve them all."""
    return cfg_a, cfg_b, replace(cfg_a, top_k=k), replace(cfg_b, top_k=k)


def report(pools: Mapping[str, RecallPool], questions: Sequence[Question], a: tuple[str, Config],
           b: tuple[str, Config], k: int, chunks_of: Mapping[str, Sequence[Chunk]], store: str, dataset: str,
           model: str) -> str:
    """The report of named configs a and b on the questions' cached pools: each evaluated at k
    and its failures attributed at top_k = k, then `render`ed."""
    name_a, name_b = a[0], b[0] if b[0] != a[0] else f"{b[0]} (b)"
    sides = [Side(n, c, evaluate_config(pools, questions, c, k, n),
                  diagnose(pools, questions, replace(c, top_k=k), chunks_of))
             for n, c in ((name_a, a[1]), (name_b, b[1]))]
    return render(sides[0], sides[1], questions, chunks_of, store, dataset, model)
