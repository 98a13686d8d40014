"""One line saying what the current task layout is for and how to start there, at the right of the
menu bar (the room its menus leave: no height taken from the views at 1280×720), elided to that
room with the whole line in its tooltip.

Each layout's line shows until its × is clicked; the dismissal is kept in the settings
(`layout/<name>/note-dismissed`), per layout, and View → Show the layouts' notes brings every line
back. The line says the layout's purpose (`layouts.PLANS`) and its first step (`FIRST_STEPS`).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QPalette, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMainWindow, QMenuBar, QSizePolicy, QToolButton, QWidget

from memsense_gui.window.layouts import PLANS, Layout, Layouts

FIRST_STEPS: dict[Layout, str] = {
    Layout.INSPECT: "Pick one of the store's questions (the Questions list beside the query box) or type a query; "
                    "select a result to see why it is there (Explain), press 0-3 to grade it.",
    Layout.EVALUATE: "Choose a question set in Evaluation and run it: every preset scored, two compared question "
                     "by question; each run is kept in History.",
    Layout.TUNE: "Select failing cases in Cases (or Diagnose) and Find a fix searches settings that win them back.",
    Layout.DIAGNOSE: "Diagnose the question set: the stage where each missed gold session was lost, then Why not? "
                     "on any of them.",
    Layout.PRODUCTION: "Start with File > Connect to Memsense…; the Production view then joins this layout.",
}
"""How to start in each layout, after its purpose."""
CONNECTED_STEP = ("Connected to a live Memsense: run a query, and its results sit beside the app's reproduction, "
                  "with why they differ.")
"""The Production layout's next step once a live Memsense is connected (its first step is done)."""


REFIT = frozenset({QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.ActionAdded, QEvent.Type.ActionRemoved,
                   QEvent.Type.ActionChanged})
"""The menu bar's events after which the line takes the room its menus leave again (a menu added
later, as Diagnose is, must not go behind the bar's » for it)."""


def note_text(layout: Layout, step: str | None = None) -> str:
    return f"{layout.label}: {PLANS[layout].purpose}. {step or FIRST_STEPS[layout]}"


def dismissed_key(layout: Layout) -> str:
    return f"{layout.key}/note-dismissed"


class NoteLine(QWidget):
    """The line and its ×, as wide as the menu bar leaves beside its menus."""

    def __init__(self, bar: QMenuBar):
        super().__init__(bar)
        self.bar = bar
        self.full = ""
        self._width = 0
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)  # the width `_fit` gives it
        self.label = QLabel()
        self.label.setObjectName("layout-note")
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.close_button = QToolButton()
        self.close_button.setObjectName("layout-note-close")
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Hide this note for this layout (View > Show the layouts' notes brings it back)")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 0, 2, 0)
        row.setSpacing(2)
        row.addWidget(self.label, 1)
        row.addWidget(self.close_button)
        bar.installEventFilter(self)

    def set_text(self, text: str) -> None:
        self.full = text
        self.setToolTip(text)
        self._elide()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self._width, super().sizeHint().height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.bar and event.type() in REFIT:
            QTimer.singleShot(0, self._fit)  # after the bar's own layout: its menus' places are read
        return False

    def _fit(self) -> None:
        """Take the menu bar's width beside its menus: what it wants for them is its own width hint
        less this corner's (read here, not in `sizeHint`, which the bar calls while it places them)."""
        menus = self.bar.sizeHint().width() - (self._width if self.isVisible() else 0)
        width = max(self.bar.width() - menus - 8, 0)
        if width != self._width:
            self._width = width
            self.bar.setCornerWidget(self, Qt.Corner.TopRightCorner)  # placed again at its new width

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.label.setText(self.label.fontMetrics().elidedText(self.full, Qt.TextElideMode.ElideRight,
                                                                max(self.label.width(), 0)))


class LayoutNotes(QObject):
    """The current layout's line (the menu bar's corner) and the action that brings every
    dismissed line back."""

    def __init__(self, window: QMainWindow, layouts: Layouts, settings: QSettings):
        super().__init__(window)
        self.layouts, self.settings = layouts, settings
        self.line = NoteLine(window.menuBar())
        self.line.close_button.clicked.connect(self.dismiss)
        window.menuBar().setCornerWidget(self.line, Qt.Corner.TopRightCorner)
        self.show_action = QAction("Show the layouts' &notes", window)
        self.show_action.setObjectName("action-layout-notes")
        self.show_action.setToolTip("The line beside the menus that says what each layout is for, back in every layout")
        self.show_action.triggered.connect(lambda _checked=False: self.bring_back())
        self.steps: dict[Layout, str] = {}  # a layout's step now, when its first one is done
        layouts.switched.connect(self.follow)
        self.follow(layouts.current)

    @property
    def shown(self) -> bool:
        return not self.line.isHidden()

    def dismissed(self, layout: Layout) -> bool:
        return str(self.settings.value(dismissed_key(layout), "false")).lower() == "true"

    def follow(self, layout: Layout) -> None:
        """Show `layout`'s line unless it was dismissed."""
        self.line.set_text(note_text(layout, self.steps.get(layout)))
        self.line.setVisible(not self.dismissed(layout))

    def set_step(self, layout: Layout, step: str | None) -> None:
        """`layout`'s line says `step` as its next step (None: its first step again)."""
        if step is None:
            self.steps.pop(layout, None)
        else:
            self.steps[layout] = step
        if layout is self.layouts.current:
            self.follow(layout)

    def dismiss(self) -> None:
        self.settings.setValue(dismissed_key(self.layouts.current), True)
        self.line.hide()

    def bring_back(self) -> None:
        for layout in Layout:
            self.settings.remove(dismissed_key(layout))
        self.follow(self.layouts.current)
