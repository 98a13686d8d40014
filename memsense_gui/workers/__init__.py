"""Background work: one task runner (`runner`), the newest-task-wins slot (`slot`), the app's
jobs as plain functions (`jobs`) and the bridge that lets a worker use the engine thread
(`bridge`). No widgets here."""
