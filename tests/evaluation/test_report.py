"""The HTML report: self-contained, and rendered by a real browser engine (headless Chromium,
installed by scripts/setup.sh) with every plot visible."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from core.evaluation.report import A_COLOUR, B_COLOUR, STAGE_COLOURS
from core.recall.engine import DEMO_QUESTIONS
from tests.fixtures import run_cli


def colour_pixels(png, colours: list[str]) -> dict[str, int]:
    """How many pixels of the screenshot have each colour (exactly)."""
    from PySide6.QtGui import QColor, QImage

    image = QImage(str(png))
    assert not image.isNull()
    wanted = {QColor(c).rgb() & 0xFFFFFF: c for c in colours}
    counts = dict.fromkeys(colours, 0)
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            rgb = image.pixel(x, y) & 0xFFFFFF
            if rgb in wanted:
                counts[wanted[rgb]] += 1
    return counts


@pytest.mark.slow
def test_report_renders_in_chromium_with_every_plot(capsys, tmp_path, demo_store, model_cache, qapp):
    out = tmp_path / "report.html"
    code, _, err = run_cli(capsys, "report", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                           "--a", "memsense", "--b", "bm25_only", "--out", out, "--quiet")
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the report must load nothing from elsewhere"
    assert "<script" not in page and page.count("<svg") == 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is installed by scripts/setup.sh"
    shot = tmp_path / "report.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2200",
                    f"--screenshot={shot}", out.as_uri()], check=True, timeout=120, capture_output=True)
    stage_colours = [STAGE_COLOURS["selected"], STAGE_COLOURS["outranked"]]
    counts = colour_pixels(shot, [A_COLOUR, B_COLOUR, *stage_colours])
    assert all(n > 200 for n in counts.values()), counts  # both series' bars and the stacked stages are drawn


def test_bars_svg_escapes_and_scales():
    from core.evaluation.report import bars_svg

    svg = bars_svg(["<cat>"], [("a&b", "#000000", [(0.5, 0.4, 0.6)])], "t <1>")
    assert "<cat>" not in svg and "&lt;cat&gt;" in svg and "a&amp;b" in svg
    heights = [float(h) for h in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"', svg)]
    assert heights and heights[0] == pytest.approx((260 - 40 - 24) * 0.5, abs=0.2)
