"""The main window and what it delegates to: one module per group of actions (store, query,
judging, export, compare), the inspector that keeps the panels on one ranking, the menus,
and the Evaluation dock. Only `memsense_gui.app` imports this package."""
