"""Every knob of the pipeline in one config object (`schema`), each knob declared once
(`knobs`), files in Memsense's parameter names (`files`) and named presets (`presets`).

`Config()` is Memsense's own behaviour; other presets are `dataclasses.replace` variants.
"""
from core.config.files import dumps, format_for, from_dict, load, loads, save, to_dict
from core.config.knobs import Knob
from core.config.schema import (BOUNDS, EXPORT_NAMES, IMPORT_NAMES, KNOBS, MAX_ROUTE_DEPTH, SCHEMES, TOP_K_MAX,
                                WEIGHT_BOUNDS, Config)

__all__ = ["BOUNDS", "EXPORT_NAMES", "IMPORT_NAMES", "KNOBS", "MAX_ROUTE_DEPTH", "SCHEMES", "TOP_K_MAX",
           "WEIGHT_BOUNDS", "Config", "Knob", "dumps", "format_for", "from_dict", "load", "loads", "save", "to_dict"]
