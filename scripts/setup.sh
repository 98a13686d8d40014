#!/usr/bin/env bash
# Set up everything memsense-gui needs on a fresh Debian machine: Qt's runtime libraries
# (only those missing), a virtual environment in .venv and the project with its test extras.
# Idempotent: a second run only checks. Usage: scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

QT_DEBS="libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0 \
libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 \
libxcb-xinerama0 libxcb-randr0 libxcb-xfixes0 libxcb-xkb1 libx11-xcb1 fonts-dejavu-core xvfb chromium"
# chromium: the tests open `memsense report`'s HTML in a real browser engine (headless)

missing=()
for p in $QT_DEBS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.memsense-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing Python packages (torch CPU build, Qt, qdrant-client, ...)"
  .venv/bin/pip install -q --upgrade pip >/dev/null
  # The CPU build of torch first, so nothing pulls a CUDA build.
  .venv/bin/pip install -q "torch==2.13.0+cpu"
  .venv/bin/pip install -q -e ".[test]"
  touch "$stamp"
fi

# The embedding model's ONNX copy (core.recall.onnx_embed), exported once from the bundled weights
# into the cache folder (~/.cache/memsense, or $MEMSENSE_CACHE), so the app answers its first query
# without importing torch. Later runs only check it (under a second).
.venv/bin/python - <<'PY'
from core.recall.embed import Embedder

embedder = Embedder()
embedder.load()
print(f"setup: embedding model ready ({embedder.runtime}, cache {embedder.cache_dir})")
PY
