"""Apply a suggestion in one step: an auto-tune winner, a "what would it take" change, a preset.

Each is offered through `views.apply_diff.offer_settings` (the settings that change and the rank
movement they cause on the current query) and, on Apply, applied whole as one step of the
undo stack of the current settings (`CurrentSettings.apply`), so Ctrl+Z takes it back and Ctrl+Shift+Z redoes it.
Other parts (the Evaluation view's Auto-tune tab, Find a fix's candidates, History's re-opened
settings) call `offer`; Impact's B settings go through `apply_now` (no dialog: it opens a query).
"""
from __future__ import annotations

from core.config import Config
from core.rank.whatif import Change, apply_change
from memsense_gui.state.context import AppContext
from memsense_gui.views.apply_diff import ApplyDiffDialog, offer_settings
from memsense_gui.views.tuning import TuningPanel
from memsense_gui.views.why_not import WhyNotPanel
from memsense_gui.window.parts import Shell

STATUS_MS = 10_000


class ApplyActions:
    """Offer settings with their diff; apply them as one undoable step."""

    def __init__(self, ctx: AppContext, shell: Shell, tuning: TuningPanel, why_not: WhyNotPanel):
        self.ctx, self.shell, self.tuning, self.why_not = ctx, shell, tuning, why_not
        self.dialog: ApplyDiffDialog | None = None  # the last one offered

    def connect(self) -> None:
        self.why_not.whatif_apply_wanted.connect(self.offer_change)
        self.tuning.offer_preset = self.offer_preset

    def offer(self, cfg: Config, what: str, preset: str | None = None) -> ApplyDiffDialog:
        """Show what `cfg` changes (settings, rank movement); Apply applies it in one undoable step."""
        pool = self.ctx.session.pool
        self.ctx.current.flush()
        self.dialog = offer_settings(self.shell.window(), self.ctx.session, self.ctx.current.config, cfg, what,
                                     lambda c, w: self.apply_now(c, w, preset), pool.user_id if pool else "")
        return self.dialog

    def apply_now(self, cfg: Config, what: str, preset: str | None = None) -> None:
        """Apply `cfg` whole (one undo step); `preset` is selected in the tuning panel."""
        if preset is not None:
            self.tuning.select_preset(preset)
        self.ctx.current.apply(cfg, what)
        self.shell.statusBar().showMessage(f"Applied {what} (Ctrl+Z undoes it)", STATUS_MS)

    def offer_change(self, change: Change) -> ApplyDiffDialog | None:
        """A "what would it take" change, on the settings on screen."""
        try:
            cfg = apply_change(self.ctx.current.config, change.knob, change.value)
        except Exception as exc:  # noqa: BLE001 - a value the config refuses is reported, not fatal
            self.ctx.report_error(exc, "What would it take")
            return None
        return self.offer(cfg, f"{change.knob} {change.value:g} (what it would take)")

    def offer_preset(self, name: str) -> ApplyDiffDialog | None:
        """A preset; Cancel puts the preset chosen before back in the list."""
        previous = self.tuning.shown_preset
        try:
            cfg = self.ctx.presets.get(name)
        except Exception as exc:  # noqa: BLE001 - a preset that cannot be read is reported
            self.ctx.report_error(exc, "Presets")
            return None
        dialog = self.offer(cfg, f"preset “{name}”", preset=name)
        dialog.rejected.connect(lambda: self.tuning.select_preset(previous))
        return dialog
