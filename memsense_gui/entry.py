"""The installed commands, `memsense` and `memsense-gui`, started so that the `core` they import is
this install's own.

The retrieval library is the top-level package `core` (the design's folder layout: a pure `core/`
beside the Qt shell `memsense_gui/`). `core` is a common name: a user's project, a current folder
or a PYTHONPATH entry may hold another, and Python takes the first it finds on `sys.path`, so
`PYTHONPATH=proj memsense --version` failed with `No module named 'core.cli'`. Renaming the
package would rewrite every import of the code base and of every script and notebook written
against it; instead the entry points bind the name `core` to the folder installed beside this
package before anything imports it. Only `core` is pinned, every other import is left to the
path as the user set it. `import core` in a user's own Python session still follows the path:
the commands, not the library, are what this guards.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def own_core() -> None:
    """Import `core` from the folder beside `memsense_gui` (site-packages, or a clone in an editable
    install), whatever else is earlier on `sys.path`."""
    folder = Path(__file__).resolve().parent.parent / "core"
    loaded = sys.modules.get("core")
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "") or "").resolve().parent == folder:
            return
        for name in [n for n in sys.modules if n == "core" or n.startswith("core.")]:
            del sys.modules[name]  # another `core`, imported before this ran
    if not (folder / "__init__.py").is_file():
        return  # not installed beside it (never so in a wheel or a clone): leave `core` to the path
    spec = importlib.util.spec_from_file_location("core", folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["core"] = module
    spec.loader.exec_module(module)


def cli() -> int:
    """`memsense`: the command line (core.cli.main)."""
    own_core()
    from core.cli.main import main

    return main()


def gui() -> int:
    """`memsense-gui`: the desktop app (memsense_gui.app)."""
    own_core()
    from memsense_gui.app import main

    return main()
