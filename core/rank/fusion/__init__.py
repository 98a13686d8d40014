"""Fusion schemes (SPEC §3, §9): transform each route's ranks or scores, then combine.

One module per scheme, named as in `core.config.SCHEMES` (the table: adding a scheme is one
module here plus its name there). Each module has `fuse` and may have `cut` (see `base`).
`FUSIONS` and `CUTS` map a scheme's name to them; they are built from the table, not by
registration on import.
"""
from __future__ import annotations

from importlib import import_module

from core.config import SCHEMES
from core.rank.fusion.base import (LEXICAL, VEC_FULL, Cut, Fusion, live_mask, minmax, route_sum, rrf_contributions,
                                   weights_of)

_MODULES = {name: import_module(f"{__name__}.{name}") for name in SCHEMES}
FUSIONS: dict[str, Fusion] = {name: m.fuse for name, m in _MODULES.items()}
CUTS: dict[str, Cut] = {name: m.cut for name, m in _MODULES.items() if hasattr(m, "cut")}

__all__ = ["CUTS", "FUSIONS", "LEXICAL", "VEC_FULL", "Cut", "Fusion", "cut_rows", "live_mask", "minmax",
           "route_sum", "rrf_contributions", "weights_of"]


def cut_rows(fused, ranks, live, cfg, chunks) -> dict[int, str]:
    """Rows the scheme's score cut removes, with the reason; {} when the scheme has none."""
    cut = CUTS.get(cfg.scheme)
    return cut(fused, ranks, live, cfg, chunks) if cut else {}
