"""The focused chunk's result record (Memsense's fields + explain) as a tree; for others, fate and hits."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QTreeView, QVBoxLayout, QWidget

from core.rank.explain import Fate
from core.rank.ranking import Ranking
from memsense_gui.models.explain_tree import DictTreeModel
from memsense_gui.models.format import row_position


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


def explain_record(ranking: Ranking, memory_id: str,
                   fate_of: Callable[[Ranking, str], Fate] = Ranking.fate) -> dict[str, Any]:
    """The Memsense result dict when returned; otherwise the chunk's fate (read by `fate_of`),
    row and route hits."""
    fate = _fate_dict(fate_of(ranking, memory_id))
    for pos, rid in enumerate(ranking.result_ids):
        if rid == memory_id:
            return {"fate": fate, **ranking.results[pos]}
    out: dict[str, Any] = {"memory_id": memory_id, "fate": fate}
    i = ranking.pool.index_of(memory_id)
    if i is not None:
        row_pos = row_position(ranking, i)
        if row_pos is not None:
            r = ranking.rows[row_pos]
            out["row"] = {"rrf_score": r.rrf_score, "final_score": r.final_score, "routes": list(r.routes),
                          "session_rrf_score": r.session_rrf_score, "turn_support": r.turn_support,
                          "supporting_turn_count": r.supporting_turn_count,
                          "max_redundancy": float(ranking.selection.max_redundancy[row_pos])}
        out["fused_score"] = float(ranking.fused[i])
        out["route_hits"] = ranking.route_hits(i)
    return out


def _fate_dict(f: Fate) -> dict[str, Any]:
    return {k: v for k, v in (("status", f.status), ("reason", f.reason), ("rank", f.rank),
                              ("duplicate_of", f.duplicate_of), ("supports_session", f.supports_session)) if v is not None}
