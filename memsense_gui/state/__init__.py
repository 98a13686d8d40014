"""What the app holds between events: paths and settings, the query session (recall once,
re-rank many), presets, judgments, and the `AppContext` that hands them to every view."""
