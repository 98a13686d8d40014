"""What each part of the window may use of the rest, as small Protocols.

A part (store, query, judging, cases, export, Memsense, compare, what-if, applying, inspector,
menus) takes the app context and one of these: the window's services it needs (`Shell`: the
status line, docks by `DockId`, a parent for dialogs), the views it drives, and the few
abilities of other parts it calls (`UserPicker`, `Focus`, ...), never a whole part or the
whole window. `MainWindow` satisfies all of them; mypy checks it where it hands itself over.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QStatusBar, QWidget

from memsense_gui.views.dock import DockId, ViewDock

if TYPE_CHECKING:
    from core.config import Config
    from core.records import Chunk
    from memsense_gui.views.cases import CasesPanel
    from memsense_gui.views.chunk import ChunkPanel
    from memsense_gui.views.compare import ComparePanel
    from memsense_gui.views.explain import ExplainPanel
    from memsense_gui.views.mmr import MMRPanel
    from memsense_gui.views.pool import PoolPanel
    from memsense_gui.views.results import ResultsPanel
    from memsense_gui.views.route_matrix import MatrixPanel
    from memsense_gui.views.tuning import TuningPanel
    from memsense_gui.views.turn_support import TurnSupportPanel
    from memsense_gui.views.why_not import WhyNotPanel
    from memsense_gui.workers.runner import Task
    from memsense_gui.state.context import EngineFactory
    from memsense_gui.window.layout_notes import LayoutNotes

BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea


# ---- the window's services -----------------------------------------------------------------------
class Shell(Protocol):
    """The status line, the docks by id, and the window as the parent of dialogs."""

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name

    def window(self) -> QWidget: ...

    def dock(self, which: DockId) -> ViewDock | None: ...

    def raise_dock(self, which: DockId) -> None: ...

    def showing(self, which: DockId) -> bool: ...

    def add_view(self, which: DockId, widget: QWidget, area: Qt.DockWidgetArea = BOTTOM) -> ViewDock: ...


# ---- abilities of one part that another calls ------------------------------------------------------
class UserPicker(Protocol):
    def show_users(self, users: Sequence[str], preferred: str = "") -> None: ...

    def run_query(self) -> Task | None: ...


class QuestionOpener(Protocol):
    def open_question(self, user_id: str, query: str, gold_session_ids: Iterable[str] = (),
                      evidence: Iterable[str] | None = None) -> Task | None: ...


class Evidence(Protocol):
    def evidence_for(self, user_id: str, text: str) -> tuple[str, ...]: ...


class Focus(Protocol):
    """The inspector as others use it: the focused chunk, and panels brought up to date."""

    @property
    def focused_id(self) -> str | None: ...

    def focus_chunk(self, memory_id: str) -> None: ...

    def clear_focus(self) -> None: ...

    def set_user_chunks(self, chunks: Iterable[Chunk]) -> None: ...

    def update_panel(self, which: DockId, force: bool = False) -> None: ...


class StoreOpener(Protocol):
    def open_store(self, location: str, factory: EngineFactory | None = None) -> Task: ...


class SettingsApplier(Protocol):
    """Settings applied whole as one undoable step: at once, or after their diff is shown."""

    def apply_now(self, cfg: Config, what: str, preset: str | None = None) -> None: ...

    def offer(self, cfg: Config, what: str, preset: str | None = None) -> QWidget: ...


class Refreshable(Protocol):
    def update(self) -> None: ...


# ---- what each part reads of the window ------------------------------------------------------------
class FirstQuestion(Protocol):
    def run_first(self) -> bool: ...


class StoreUi(Shell, Protocol):
    @property
    def store_label(self) -> QLabel: ...
    @property
    def picker(self) -> FirstQuestion: ...
    @property
    def model_label(self) -> QLabel: ...
    @property
    def query_edit(self) -> QLineEdit: ...
    @property
    def queries(self) -> UserPicker: ...

    def setWindowTitle(self, title: str) -> None: ...  # noqa: N802 - Qt's name


class QueryUi(Shell, Protocol):
    @property
    def user_combo(self) -> QComboBox: ...
    @property
    def query_edit(self) -> QLineEdit: ...
    @property
    def results(self) -> ResultsPanel: ...
    @property
    def whynot_panel(self) -> WhyNotPanel: ...
    @property
    def inspector(self) -> Focus: ...
    @property
    def cases(self) -> Evidence: ...


class InspectorUi(Shell, Protocol):
    @property
    def results(self) -> ResultsPanel: ...
    @property
    def tuning(self) -> TuningPanel: ...
    @property
    def chunk_panel(self) -> ChunkPanel: ...
    @property
    def explain_panel(self) -> ExplainPanel: ...
    @property
    def turns_panel(self) -> TurnSupportPanel: ...
    @property
    def whynot_panel(self) -> WhyNotPanel: ...
    @property
    def pool_panel(self) -> PoolPanel: ...
    @property
    def matrix_panel(self) -> MatrixPanel: ...
    @property
    def mmr_panel(self) -> MMRPanel: ...
    @property
    def comparisons(self) -> Refreshable: ...


class JudgingUi(Shell, Protocol):
    @property
    def results(self) -> ResultsPanel: ...
    @property
    def pool_panel(self) -> PoolPanel: ...
    @property
    def tuning(self) -> TuningPanel: ...
    @property
    def inspector(self) -> Focus: ...


class ExportUi(Shell, Protocol):
    @property
    def tuning(self) -> TuningPanel: ...
    @property
    def applying(self) -> SettingsApplier: ...
    @property
    def query_edit(self) -> QLineEdit: ...
    @property
    def results(self) -> ResultsPanel: ...
    @property
    def mmr_panel(self) -> MMRPanel: ...
    @property
    def matrix_panel(self) -> MatrixPanel: ...
    @property
    def inspector(self) -> Focus: ...


class CompareUi(Shell, Protocol):
    @property
    def compare_panel(self) -> ComparePanel: ...
    @property
    def inspector(self) -> Focus: ...


class MemsenseUi(Shell, Protocol):
    @property
    def model_label(self) -> QLabel: ...
    @property
    def tuning(self) -> TuningPanel: ...
    @property
    def inspector(self) -> Focus: ...
    @property
    def stores(self) -> StoreOpener: ...
    @property
    def layout_notes(self) -> LayoutNotes: ...


class CasesUi(Shell, Protocol):
    @property
    def cases_panel(self) -> CasesPanel: ...
    @property
    def queries(self) -> QuestionOpener: ...
