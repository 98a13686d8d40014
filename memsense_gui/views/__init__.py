"""The widgets: one panel per module (results, pool, route matrix, MMR, turn support, explain,
chunk, why not, compare), the tuning dock, the Evaluation and Auto-tune views, and dialogs.
Views get the models and plots they show and, where they need the app, its `AppContext`;
none of them knows the window."""
