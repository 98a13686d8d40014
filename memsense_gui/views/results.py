"""The results table above the stacked contribution bars."""
from __future__ import annotations

import html
from typing import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget

from core.rank.ranking import Ranking
from memsense_gui.models.results import ResultsModel
from memsense_gui.plots.contributions import ContributionPlot
from memsense_gui.views.quiet_label import QuietLabel
from memsense_gui.views.snippets import show_snippets
from memsense_gui.views.tables import Panel, fit_columns, make_table, select_id, selected_id, set_columns


PLOT_LEAST = 150
"""Pixels the contribution bars keep when the table takes what it needs (they scroll below it)."""


NO_RESULTS = "Run a query to see results."


class ResultsPanel(Panel):
    """The results table above the stacked contribution bars."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.view = make_table(self.model)
        self.view.setObjectName("results-table")
        self.plot = ContributionPlot()
        self.plot.setObjectName("contribution-plot")
        self.caption = QuietLabel(NO_RESULTS, rich=True)  # it changes on every slider tick: no re-layout
        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        self.updating_label = QLabel("Updating: ranking deeper route lists…")
        self.updating_label.setObjectName("updating-label")
        self.updating_label.setToolTip("The ranking shown stays until the pool holds the deeper route lists the "
                                       "settings or the pinned baseline need; movement against a baseline not yet "
                                       "ranked is not shown")
        self.updating_label.setVisible(False)
        self.caption_row = QHBoxLayout()
        self.caption_row.addWidget(self.caption, 1)
        self.caption_row.addWidget(self.updating_label)
        tv.addLayout(self.caption_row)
        tv.addWidget(self.view)
        split.addWidget(top)
        self.plot_scroll = QScrollArea()  # the bars keep their least height; a short pane scrolls
        self.plot_scroll.setObjectName("contribution-scroll")
        self.plot_scroll.setWidgetResizable(True)
        self.plot_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.plot_scroll.setWidget(self.plot)
        split.addWidget(self.plot_scroll)
        split.setCollapsible(0, False)
        split.setCollapsible(1, False)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        fit_columns(self.view, {0: 2, 1: 40, 2: 4, 3: 7, 4: 9, 5: 4, 6: 6, 7: 9, 8: 7, 9: 10, 10: 6, 11: 6, 12: 9})
        m = ResultsModel  # the key columns first: a narrow pane shows the grade given (0-3 keys), the final
        # and MMR scores (the order)
        set_columns(self.view, first=(m.RANK, m.GRADE, m.PREVIEW, m.FINAL, m.MMR, m.MOVED))
        show_snippets(self.view, ResultsModel.PREVIEW)
        self._watch(self.view)
        self.plot.result_clicked.connect(self.select_position)
        self._user_sized = False
        self._fitted_rows = -1
        self._caption: tuple[int, str, str] | None = None  # (results, query, the settings) shown above
        split.splitterMoved.connect(lambda *_: setattr(self, "_user_sized", True))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.fit_snippets()
        self.fit_table()
        self._show_caption()

    def fit_snippets(self) -> None:
        """The snippet column takes what the table's width leaves beside rank, grade, the final and
        MMR scores and movement (16 to 40 characters), so a narrow pane still shows them."""
        v, m = self.view, ResultsModel
        beside = sum(v.columnWidth(c) for c in (m.RANK, m.GRADE, m.FINAL, m.MMR, m.MOVED))
        char = v.fontMetrics().horizontalAdvance("0")
        width = max(16 * char, min(40 * char, v.viewport().width() - beside - 16))  # 16: the cell's margins
        v.setColumnWidth(m.PREVIEW, width + 16)

    def fit_table(self) -> None:
        """Give the table room for its rows (up to all but PLOT_LEAST of the panel: the bars
        scroll) unless the user resized it."""
        if self._user_sized:
            return
        v = self.view
        rows = max(self.model.rowCount(), 4)
        want = (v.horizontalHeader().height() + rows * v.verticalHeader().defaultSectionSize()
                + 2 * v.frameWidth() + v.horizontalScrollBar().sizeHint().height() + self.caption_row.sizeHint().height() + 8)
        total = sum(self.splitter.sizes()) or self.height()
        top = min(want, max(total // 2, total - PLOT_LEAST))
        sizes = [top, max(total - top, 1)]
        if sizes != self.splitter.sizes():
            self.splitter.setSizes(sizes)

    def set_ranking(self, ranking: Ranking | None, previous: list[str] | None, gold: frozenset[str],
                    pins: Iterable[str], query: str = "", *, dropped: bool = False) -> None:
        """`previous`: the baseline's result ids; `dropped`: list those not returned now."""
        keep = selected_id(self.view)
        self.view.selectionModel().blockSignals(True)
        self.model.set_ranking(ranking, previous, gold, pins, dropped=dropped)
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
            self._caption = (len(ranking.selection.order), query or ranking.pool.query,
                             f"{mode} · pool {len(ranking.candidates)} of {ranking.pool.size} recalled · "
                             f"k {cfg.rrf_k:g} · λ {cfg.mmr_lambda:g} · dup ≥ {cfg.duplicate_threshold:g} · α {cfg.alpha:g}")
        else:  # no query answered on this store: no caption of an old one
            self._caption = None
        self._show_caption()

    def _show_caption(self) -> None:
        """"N results for QUERY · settings": the query elided (…) to what the caption's width
        leaves beside the count, never cut mid-letter; the whole caption in its tooltip."""
        if self._caption is None:
            self.caption.setText(NO_RESULTS)
            self.caption.setToolTip("")
            return
        count, query, tail = self._caption
        bold = QFont(self.caption.font())
        bold.setBold(True)
        room = self.caption.width() - QFontMetrics(bold).horizontalAdvance(f"{count} ") - \
            QFontMetrics(self.caption.font()).horizontalAdvance(" results for ")
        shown = QFontMetrics(bold).elidedText(query, Qt.TextElideMode.ElideRight, max(room, 60))
        self.caption.setText(f"<b>{count}</b> results for <b>{html.escape(shown)}</b> · {html.escape(tail)}")
        self.caption.setToolTip(f"{count} results for “{query}” · {tail}")

    def set_updating(self, on: bool) -> None:
        """Mark what is shown as updating while the pool deepens for the settings or the baseline."""
        self.updating_label.setVisible(on)

    def add_to_caption(self, widget: QWidget) -> None:
        """A control beside the caption (the baseline's)."""
        self.caption_row.addWidget(widget)

    def select_position(self, position: int) -> None:
        """Select the row at `position` and show its chunk, also when that row was selected already
        (a new answer keeps the selection of its row 0: selecting it again changes nothing, and the
        chunk panels and Ctrl+P stayed on no chunk)."""
        if 0 <= position < self.model.rowCount():
            rows = self.view.selectionModel().selectedRows()
            already = len(rows) == 1 and rows[0].row() == position
            self.view.selectRow(position)
            if already:
                self._emit_selected(self.view)

    def step(self, delta: int) -> None:
        """Select the next (+1) or previous (−1) result."""
        n = self.model.rowCount()
        if not n:
            return
        rows = self.view.selectionModel().selectedRows()
        current = rows[0].row() if rows else (-1 if delta > 0 else n)
        self.view.selectRow(max(0, min(n - 1, current + delta)))
        self.view.setFocus()
