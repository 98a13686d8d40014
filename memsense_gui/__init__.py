"""The desktop app: a thin Qt shell over `core` that shows why a query ranked what it ranked
and lets you tune the ranking live (issue 3). Only this package imports Qt."""
