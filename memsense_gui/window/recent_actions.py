"""File > Recent stores and Recent question files: the stores opened and the question files
chosen, newest first; a missing one is pruned from its menu when the menu opens, with a status
line naming it."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from memsense_gui.state import recent
from memsense_gui.state.context import AppContext
from memsense_gui.window.parts import Shell, StoreOpener


class RecentUi(Shell, Protocol):
    @property
    def stores(self) -> StoreOpener: ...


class RecentActions:
    def __init__(self, ctx: AppContext, window: RecentUi):
        self.ctx = ctx
        self.window = window
        self.stores = recent.RecentList(ctx.settings, recent.STORES, folders=True)
        self.questions = recent.RecentList(ctx.settings, recent.QUESTIONS, folders=False)
        self.store_menu: QMenu | None = None
        self.question_menu: QMenu | None = None

    def connect(self) -> None:
        self.ctx.store_opened.connect(self.stores.add)
        self.ctx.question_sets.changed.connect(lambda _label: self._question_set_chosen())

    def _question_set_chosen(self) -> None:
        sets = self.ctx.question_sets
        if sets.path is not None and not sets.app_judged:
            self.questions.add(sets.path)

    def add_menus(self, file_menu: QMenu) -> None:
        """The two submenus, filled each time they open."""
        self.store_menu = file_menu.addMenu("Recent &stores")
        self.store_menu.setObjectName("menu-recent-stores")
        self.store_menu.aboutToShow.connect(self.fill_stores)
        self.question_menu = file_menu.addMenu("Recent &question files")
        self.question_menu.setObjectName("menu-recent-questions")
        self.question_menu.aboutToShow.connect(self.fill_questions)

    def fill_stores(self) -> None:
        if self.store_menu is not None:
            self._fill(self.store_menu, self.stores, "store", self.window.stores.open_store)

    def fill_questions(self) -> None:
        if self.question_menu is not None:
            self._fill(self.question_menu, self.questions, "question file", self.choose_questions)

    def choose_questions(self, path: str) -> None:
        """A recent question file, checked as any other choice (a bad one: a dialog, nothing changes)."""
        self.ctx.attempt(lambda: self.ctx.question_sets.set_path(path), f"The questions of {path}")

    def _fill(self, menu: QMenu, entries: recent.RecentList, what: str, open_one) -> None:
        menu.clear()
        kept, missing = entries.items()
        for n, location in enumerate(kept, start=1):
            action = QAction(f"&{n % 10} {location}" if n <= 10 else location, menu)
            action.setObjectName(f"recent-{what.replace(' ', '-')}-{n}")
            action.setData(location)
            action.triggered.connect(lambda _checked=False, loc=location: open_one(loc))
            menu.addAction(action)
        if not kept:
            empty = menu.addAction(f"no recent {what}s")
            empty.setEnabled(False)
        if missing:
            names = ", ".join(Path(m).name or m for m in missing)
            self.window.statusBar().showMessage(
                f"Removed {len(missing)} missing {what}{'s' if len(missing) > 1 else ''} from the recent list: {names}",
                10000)
