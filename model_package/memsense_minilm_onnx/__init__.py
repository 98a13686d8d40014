"""all-MiniLM-L6-v2 as memsense-gui runs it: `model.onnx` (fused fp32), `tokenizer.json` and
`memsense-onnx.json` (its key and probe vectors), in this package's folder."""
from __future__ import annotations

from pathlib import Path


def folder() -> Path:
    """The folder holding model.onnx, tokenizer.json and memsense-onnx.json."""
    return Path(__file__).resolve().parent
