"""The window's panels: each one a view over a model from `models` (or a plot from `plots`).

Panels emit `chunk_selected(memory_id)` when the user picks a row; the window keeps every
panel on the same chunk.
"""
from __future__ import annotations

import html
from typing import Any, Iterable

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QSizePolicy, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QSplitter,
    QTableView, QTextBrowser, QTreeView, QVBoxLayout, QWidget,
)

from core.rerank import Ranking
from core.types import ROUTES, Chunk
from memsense_gui import theme
from memsense_gui.models import (
    ID_ROLE, RAW_ROLE, ChunkSearchModel, CompareModel, DictTreeModel, MMRTraceModel, PinsModel, PoolModel,
    ResultsModel, RouteMatrixModel, TurnSupportModel,
)
from memsense_gui.plots import ContributionPlot, MMRPlot


def make_table(model, *, sortable: bool = False, stretch: int | None = None) -> QTableView:
    """A row-selecting, compact table view; sortable tables sort on the raw-value role."""
    view = QTableView()
    if sortable:
        proxy = QSortFilterProxyModel(view)
        proxy.setSourceModel(model)
        proxy.setSortRole(RAW_ROLE)
        view.setModel(proxy)
        view.setSortingEnabled(True)
        view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    else:
        view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setHighlightSections(False)
    if stretch is not None:
        header.setStretchLastSection(False)
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


def selected_id(view: QTableView) -> str | None:
    rows = view.selectionModel().selectedRows() if view.selectionModel() else []
    return rows[0].data(ID_ROLE) if rows else None


def select_id(view: QTableView, memory_id: str | None) -> bool:
    """Select the row holding `memory_id` (no signal loops: callers block as needed)."""
    model = view.model()
    for r in range(model.rowCount()):
        index = model.index(r, 0)
        if index.data(ID_ROLE) == memory_id:
            view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                         | QItemSelectionModel.SelectionFlag.Rows)
            view.scrollTo(index)
            return True
    view.clearSelection()
    return False


def fit_columns(view: QTableView, widths: dict[int, int]) -> None:
    for col, chars in widths.items():
        view.setColumnWidth(col, view.fontMetrics().horizontalAdvance("0") * chars + 16)


class _Panel(QWidget):
    chunk_selected = Signal(str)

    def _watch(self, view: QTableView) -> None:
        view.selectionModel().selectionChanged.connect(lambda *_: self._emit_selected(view))

    def _emit_selected(self, view: QTableView) -> None:
        mid = selected_id(view)
        if mid:
            self.chunk_selected.emit(mid)


class ResultsPanel(_Panel):
    """The results table above the stacked contribution bars."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.view = make_table(self.model, stretch=ResultsModel.PREVIEW)
        self.view.setObjectName("results-table")
        self.plot = ContributionPlot()
        self.plot.setObjectName("contribution-plot")
        self.caption = QLabel("Run a query to see results.")
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        # a changing caption must not re-layout the window on every slider tick
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.caption)
        tv.addWidget(self.view)
        split.addWidget(top)
        split.addWidget(self.plot)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        fit_columns(self.view, {0: 2, 1: 4, 2: 7, 3: 9, 4: 5, 5: 6, 6: 6, 7: 6, 8: 7, 9: 6, 10: 6, 11: 16})
        self._watch(self.view)
        self.plot.result_clicked.connect(self.select_position)
        self._user_sized = False
        self._fitted_rows = -1
        split.splitterMoved.connect(lambda *_: setattr(self, "_user_sized", True))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.fit_table()

    def fit_table(self) -> None:
        """Give the table room for its rows (up to half the panel) unless the user resized it."""
        if self._user_sized:
            return
        v = self.view
        rows = max(self.model.rowCount(), 4)
        want = (v.horizontalHeader().height() + rows * v.verticalHeader().defaultSectionSize()
                + 2 * v.frameWidth() + v.horizontalScrollBar().sizeHint().height() + self.caption.sizeHint().height() + 6)
        total = sum(self.splitter.sizes()) or self.height()
        top = min(want, total // 2)
        sizes = [top, max(total - top, 1)]
        if sizes != self.splitter.sizes():
            self.splitter.setSizes(sizes)

    def set_ranking(self, ranking: Ranking | None, previous: list[str] | None, gold: frozenset[str],
                    pins: Iterable[str], query: str = "") -> None:
        keep = selected_id(self.view)
        self.view.selectionModel().blockSignals(True)
        self.model.set_ranking(ranking, previous, gold, pins)
        self.plot.set_ranking(ranking, gold)
        if keep and not select_id(self.view, keep):
            self.view.clearSelection()
        self.view.selectionModel().blockSignals(False)
        if self.model.rowCount() != self._fitted_rows:
            self._fitted_rows = self.model.rowCount()
            self.fit_table()
        if ranking is not None:
            cfg = ranking.config
            mode = "session-first" if ranking.session_first else "all candidates"
            self.caption.setText(
                f"<b>{len(ranking.selection.order)}</b> results for <b>{html.escape(query or ranking.pool.query)}</b> · "
                f"{mode} · pool {len(ranking.candidates)} of {ranking.pool.size} recalled · "
                f"k {cfg.rrf_k:g} · λ {cfg.mmr_lambda:g} · dup ≥ {cfg.duplicate_threshold:g} · α {cfg.alpha:g}")

    def select_position(self, position: int) -> None:
        if 0 <= position < self.model.rowCount():
            self.view.selectRow(position)

    def step(self, delta: int) -> None:
        """Select the next (+1) or previous (−1) result."""
        n = self.model.rowCount()
        if not n:
            return
        rows = self.view.selectionModel().selectedRows()
        current = rows[0].row() if rows else (-1 if delta > 0 else n)
        self.view.selectRow(max(0, min(n - 1, current + delta)))
        self.view.setFocus()


class PoolPanel(_Panel):
    """The whole candidate pool with each candidate's fate (sortable on raw values)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = PoolModel(self)
        self.view = make_table(self.model, sortable=True, stretch=PoolModel.REASON)
        self.caption = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 6, 1: 12, 2: 5, 3: 7, 4: 7, 5: 7, 6: 18, 7: 18})
        self._watch(self.view)

    def set_ranking(self, ranking: Ranking | None, gold: frozenset[str], pins: Iterable[str]) -> None:
        keep = selected_id(self.view)
        self.view.selectionModel().blockSignals(True)
        self.model.set_ranking(ranking, gold, pins)
        if keep:
            select_id(self.view, keep)
        self.view.selectionModel().blockSignals(False)
        if ranking is not None:
            self.caption.setText(
                f"{len(ranking.candidates)} candidates in the pool (limit {ranking.config.candidate_limit}), "
                f"{len(ranking.rows)} re-ranked rows, {len(ranking.selection.order)} returned")


class MatrixPanel(_Panel):
    """Candidates × routes: the rank each route gave, coloured by strength."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = RouteMatrixModel(self)
        self.view = make_table(self.model)
        self.view.setObjectName("route-matrix")
        self.view.setAlternatingRowColors(False)
        # no selection highlight (it would hide the cell colours): the model marks the focused row
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.view.horizontalHeader().setStretchLastSection(False)
        for j in range(1, len(ROUTES) + 1):
            self.view.horizontalHeader().setSectionResizeMode(j, QHeaderView.ResizeMode.Stretch)
        fit_columns(self.view, {0: 13})
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.legend)
        layout.addWidget(self.view)
        self.view.clicked.connect(lambda index: self.chunk_selected.emit(index.data(ID_ROLE)))
        self.apply_theme()

    def apply_theme(self) -> None:
        t = theme.current()
        strong = theme.blend(t.base, t.accent, 1.0).name()
        weak = theme.blend(t.base, t.accent, 0.2).name()
        muted = theme.blend(t.base, t.muted, 0.25).name()
        self.legend.setText(
            f"Rank of each candidate in each route: <span style='background:{strong};color:white'>&nbsp;1&nbsp;</span> "
            f"strong → <span style='background:{weak}'>&nbsp;deep&nbsp;</span> weak · "
            f"<span style='background:{muted}'>&nbsp;grey&nbsp;</span> found but not counted · empty = missed")
        self.model.refresh()

    def set_ranking(self, ranking: Ranking | None, gold: frozenset[str], pins: Iterable[str]) -> None:
        self.model.set_ranking(ranking, gold, pins)

    def set_focus(self, memory_id: str | None) -> None:
        self.model.set_focus(memory_id)
        row = self.model.row_of(memory_id) if memory_id else None
        if row is not None:
            self.view.scrollTo(self.model.index(row, 0))


class MMRPanel(_Panel):
    """The MMR trace as a table of events beside a plot of the two terms of each pick."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = MMRTraceModel(self)
        self.view = make_table(self.model, stretch=MMRTraceModel.NOTE)
        self.plot = MMRPlot()
        self.plot.setObjectName("mmr-plot")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(self.plot)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)
        fit_columns(self.view, {0: 4, 1: 5, 2: 11, 3: 7, 4: 7, 5: 8, 6: 11})
        self._watch(self.view)

    def set_ranking(self, ranking: Ranking | None) -> None:
        self.model.set_ranking(ranking)
        self.plot.set_ranking(ranking)


class TurnSupportPanel(_Panel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = TurnSupportModel(self)
        self.view = make_table(self.model)
        self.summary = QLabel(self.model.summary())
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 12, 1: 6, 2: 7, 3: 16})
        self._watch(self.view)

    def show_row(self, ranking: Ranking | None, memory_id: str | None) -> None:
        row = None
        if ranking is not None and memory_id is not None:
            i = ranking.pool.index_of(memory_id)
            pos = row_position(ranking, i)
            row = ranking.rows[pos] if pos is not None else None
            if row is not None and not ranking.session_first:
                row = None
        self.model.set_row(ranking, row)
        self.summary.setText(self.model.summary())


class ExplainPanel(QWidget):
    """The result record (Memsense's fields + explain) as a tree; for others, fate and hits."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = DictTreeModel(self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(True)
        self.view.setUniformRowHeights(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.view)

    def show_record(self, record: dict[str, Any] | None) -> None:
        self.model.set_data(record)
        self.view.expandAll()
        self.view.resizeColumnToContents(0)


def row_position(ranking: Ranking, pool_index: int | None) -> int | None:
    """Where a pool row sits among the re-ranked rows (None: it was not re-ranked)."""
    if pool_index is None:
        return None
    return next((k for k, r in enumerate(ranking.rows) if r.index == pool_index), None)


def explain_record(ranking: Ranking, memory_id: str) -> dict[str, Any]:
    """The Memsense result dict when returned; otherwise the chunk's fate, row and route hits."""
    for pos, rid in enumerate(ranking.result_ids):
        if rid == memory_id:
            return {"fate": _fate_dict(ranking, memory_id), **ranking.results[pos]}
    out: dict[str, Any] = {"memory_id": memory_id, "fate": _fate_dict(ranking, memory_id)}
    i = ranking.pool.index_of(memory_id)
    if i is not None:
        pos = row_position(ranking, i)
        if pos is not None:
            r = ranking.rows[pos]
            out["row"] = {"rrf_score": r.rrf_score, "final_score": r.final_score, "routes": list(r.routes),
                          "session_rrf_score": r.session_rrf_score, "turn_support": r.turn_support,
                          "supporting_turn_count": r.supporting_turn_count,
                          "max_redundancy": float(ranking.selection.max_redundancy[pos])}
        out["fused_score"] = float(ranking.fused[i])
        out["route_hits"] = ranking.route_hits(i)
    return out


def _fate_dict(ranking: Ranking, memory_id: str) -> dict[str, Any]:
    f = ranking.fate(memory_id)
    return {k: v for k, v in (("status", f.status), ("reason", f.reason), ("rank", f.rank),
                              ("duplicate_of", f.duplicate_of), ("supports_session", f.supports_session)) if v is not None}


class ChunkPanel(QWidget):
    """The chunk itself: content, tags, facets, neighbors, next user text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.browser)
        self.memory_id: str | None = None

    def show_chunk(self, chunk: Chunk | None, neighbors: tuple[str | None, str | None] = (None, None),
                   fate: str = "") -> None:
        self.memory_id = chunk.memory_id if chunk else None
        self.browser.setHtml(chunk_html(chunk, neighbors, fate) if chunk else "<i>Select a result or a candidate.</i>")


def chunk_html(c: Chunk, neighbors: tuple[str | None, str | None], fate: str = "") -> str:
    t = theme.current()
    esc = html.escape

    def block(title: str, text: str) -> str:
        if not text:
            return ""
        body = esc(text).replace("\n", "<br>")
        return f"<h4 style='margin-bottom:2px'>{esc(title)}</h4><div>{body}</div>"

    meta = [
        ("kind", f"{c.kind} chunk #{c.order}"), ("session", c.session_id), ("time", c.time or "—"),
        ("memory kind", c.memory_kind), ("memory score", f"{c.memory_score:g}"),
        ("tags", ", ".join(c.tags) or "—"), ("task tag", c.task_tag or "—"),
        ("previous", neighbors[0] or "—"), ("next", neighbors[1] or "—"),
        ("dialogue ids", ", ".join(c.dia_ids) or "—"),
    ]
    if fate:
        meta.insert(0, ("fate", fate))
    rows = "".join(f"<tr><td style='color:{t.muted};padding-right:8px'>{esc(k)}</td><td>{esc(v)}</td></tr>"
                   for k, v in meta)
    facets = "".join(block(name, getattr(c, attr)) for name, attr in
                     (("personal info", "personal_info"), ("preferences", "preferences"), ("events", "events")))
    return (f"<h3 style='margin:0'>{esc(c.memory_id)}</h3><table>{rows}</table>{facets}"
            f"{block('user', c.user_text)}{block('assistant', c.assistant_text)}"
            f"{block('next user text', c.next_user_text)}")


class WhyNotPanel(_Panel):
    """Search the store's chunks by text, pin one, and see its fate as settings change."""

    pin_requested = Signal(str)
    unpin_requested = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search this user's chunks by words (id, text, tags)…")
        self.search.setClearButtonEnabled(True)
        self.search_model = ChunkSearchModel(self)
        self.search_view = make_table(self.search_model, stretch=ChunkSearchModel.PREVIEW)
        self.pins_model = PinsModel(self)
        self.pins_view = make_table(self.pins_model, stretch=PinsModel.REASON)
        self.count = QLabel()
        self.pin_button = QPushButton("Pin")
        self.pin_button.setToolTip("Pin the chunk to follow its fate as you tune (Ctrl+P)")
        self.unpin_button = QPushButton("Unpin")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addWidget(self.count)
        layout.addWidget(self.search_view, 3)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Pinned</b> — fate under the current settings"))
        row.addStretch(1)
        row.addWidget(self.pin_button)
        row.addWidget(self.unpin_button)
        layout.addLayout(row)
        layout.addWidget(self.pins_view, 2)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.reason)
        fit_columns(self.search_view, {0: 11, 1: 6, 2: 16})
        fit_columns(self.pins_view, {0: 11, 1: 16, 2: 4})
        self.search.textChanged.connect(self._search)
        self.search.returnPressed.connect(lambda: self.search_view.selectRow(0))
        self.pin_button.clicked.connect(self._pin_selected)
        self.unpin_button.clicked.connect(self._unpin_selected)
        self._watch(self.search_view)
        self._watch(self.pins_view)
        self.pins_view.selectionModel().selectionChanged.connect(lambda *_: self._show_reason())

    def _show_reason(self) -> None:
        """The selected pin's fate in full (the first pin's when none is selected)."""
        m = self.pins_model
        rows = self.pins_view.selectionModel().selectedRows()
        row = rows[0].row() if rows else 0
        fate = m.fate(row) if row < m.rowCount() else None
        if fate is None:
            self.reason.setText("")
            return
        label = m.index(row, PinsModel.CHUNK).data()
        self.reason.setText(f"<b>{html.escape(label)}</b>: {html.escape(fate.reason)}")

    def set_chunks(self, chunks: Iterable[Chunk]) -> None:
        self.search_model.set_chunks(tuple(chunks))
        self._update_count()

    def _search(self, text: str) -> None:
        self.search_model.set_filter(text)
        self._update_count()

    def _update_count(self) -> None:
        m = self.search_model
        if not self.search.text().strip():
            self.count.setText(f"{m.chunk_count} chunks in this conversation; type to search")
        else:
            more = f" (first {m.LIMIT} shown)" if m.total_matches > m.LIMIT else ""
            self.count.setText(f"{m.total_matches} matching chunks{more}")

    def set_ranking(self, ranking: Ranking | None, pins: Iterable[str]) -> None:
        self.search_model.set_ranking(ranking)
        self.pins_model.set_pins(tuple(pins), ranking)
        self._show_reason()

    def _pin_selected(self) -> None:
        mid = selected_id(self.search_view)
        if mid:
            self.pin_requested.emit(mid)

    def _unpin_selected(self) -> None:
        mid = selected_id(self.pins_view)
        if mid:
            self.unpin_requested.emit(mid)


class ComparePanel(_Panel):
    """Two presets (or the current settings) side by side on the current query."""

    CURRENT = "(current settings)"
    selection_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        for combo, tip in ((self.a_combo, "Ranking A"), (self.b_combo, "Ranking B")):
            combo.setToolTip(f"{tip}: a preset or the current settings")
            combo.currentTextChanged.connect(lambda _t: self.selection_changed.emit())
        self.model = CompareModel(self)
        self.view = make_table(self.model)
        self.summary = QLabel()
        top = QHBoxLayout()
        top.addWidget(QLabel("A"))
        top.addWidget(self.a_combo, 1)
        top.addWidget(QLabel("B"))
        top.addWidget(self.b_combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 3, 1: 12, 2: 7, 3: 7, 4: 12, 5: 7, 6: 7})
        self._watch(self.view)

    def set_names(self, names: list[str]) -> None:
        for combo, default in ((self.a_combo, names[0] if names else self.CURRENT), (self.b_combo, self.CURRENT)):
            keep = combo.currentText() or default
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([self.CURRENT, *names])
            combo.setCurrentText(keep if keep in [self.CURRENT, *names] else default)
            combo.blockSignals(False)

    def choose(self, a: str, b: str) -> None:
        self.a_combo.blockSignals(True)
        self.a_combo.setCurrentText(a)
        self.a_combo.blockSignals(False)
        self.b_combo.setCurrentText(b)
        self.selection_changed.emit()

    def set_rankings(self, a: Ranking | None, b: Ranking | None, gold: frozenset[str]) -> None:
        self.model.set_rankings(a, b, gold)
        if a is None or b is None:
            self.summary.setText("Run a query to compare.")
            return
        common = len(set(a.result_ids) & set(b.result_ids))
        moved = sum(1 for i, mid in enumerate(b.result_ids) if mid in a.result_ids and a.result_ids.index(mid) != i)
        self.summary.setText(f"{common} of {max(len(a.result_ids), len(b.result_ids))} results in common, "
                             f"{moved} at another rank")
