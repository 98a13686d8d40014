"""Portable behaviour: importing the core changes nothing in the process; the cache and data
folders follow the platform (Linux's are those used before platformdirs); threads follow the CPU
affinity."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core import machine

ROOT = Path(__file__).resolve().parents[1]

IMPORT_ALL = """
import importlib, json, os, pkgutil, sys
import core
before = dict(os.environ)
names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
for name in names:
    importlib.import_module(name)
after = dict(os.environ)
print(json.dumps({"modules": len(names), "changed": {k: [before.get(k), after.get(k)] for k in set(before) | set(after)
                                                      if before.get(k) != after.get(k)},
                  "torch": "torch" in sys.modules}))
"""


def test_importing_every_core_module_leaves_the_environment_unchanged():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "TOKENIZERS_"))}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["modules"] > 50, result
    assert result["changed"] == {}, result["changed"]
    assert not result["torch"], "importing the core imported torch"


def test_the_cache_folder_on_linux_is_the_one_caches_have_always_been_in(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMSENSE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if sys.platform.startswith("linux"):
        assert machine.cache_dir() == Path.home() / ".cache" / "memsense"
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert machine.cache_dir() == tmp_path / "xdg" / "memsense"
    monkeypatch.setenv("MEMSENSE_CACHE", str(tmp_path / "mine"))
    assert machine.cache_dir() == tmp_path / "mine"


def test_the_data_folder_is_where_qt_puts_the_apps_data(monkeypatch, tmp_path, qapp):
    from PySide6.QtCore import QStandardPaths

    monkeypatch.delenv("MEMSENSE_GUI_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    org, name = qapp.organizationName(), qapp.applicationName()
    qapp.setOrganizationName(machine.ORGANIZATION)
    qapp.setApplicationName(machine.APPLICATION)
    try:
        qt = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))
    finally:
        qapp.setOrganizationName(org)
        qapp.setApplicationName(name)
    assert machine.data_dir() == qt
    monkeypatch.setenv("MEMSENSE_GUI_HOME", str(tmp_path / "portable"))
    assert machine.data_dir() == tmp_path / "portable"


def test_threads_follow_the_cpu_affinity(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert machine.usable_cpus() == 1
    monkeypatch.delattr(os, "sched_getaffinity")
    assert machine.usable_cpus() == 64

