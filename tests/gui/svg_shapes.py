"""Shapes of an SVG written by Qt's QSvgGenerator, in file pixels, for checking exported plots.

QSvgGenerator writes flat groups, each with the full transform of what it holds
(`matrix(a,b,c,d,e,f)`: x' = a·x + c·y + e, y' = b·x + d·y + f) and its fill and stroke."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Shape:
    tag: str  # rect | polyline | path | text
    fill: str
    stroke: str
    points: tuple[tuple[float, float], ...]  # in file pixels: a rect's four corners, a polyline's points
    text: str = ""

    @property
    def xs(self) -> tuple[float, float]:
        return min(p[0] for p in self.points), max(p[0] for p in self.points)

    @property
    def ys(self) -> tuple[float, float]:
        return min(p[1] for p in self.points), max(p[1] for p in self.points)


def _matrix(text: str | None) -> tuple[float, ...]:
    m = re.match(r"matrix\(([^)]*)\)", text or "")
    return tuple(float(v) for v in m.group(1).split(",")) if m else (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _apply(m: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def shapes(path: Path) -> list[Shape]:
    out = []
    for g in ET.parse(path).getroot().iter(f"{SVG}g"):
        m = _matrix(g.get("transform"))
        fill, stroke = (g.get("fill") or "").lower(), (g.get("stroke") or "").lower()
        for child in g:
            tag = child.tag.removeprefix(SVG)
            if tag == "rect":
                x, y, w, h = (float(child.get(k)) for k in ("x", "y", "width", "height"))
                pts = [(x, y), (x + w, y), (x, y + h), (x + w, y + h)]
            elif tag == "polyline":
                pts = [tuple(float(v) for v in p.split(",")) for p in child.get("points").split()]
            elif tag == "text":
                pts = [(float(child.get("x")), float(child.get("y")))]
            else:
                continue
            out.append(Shape(tag, fill, stroke, tuple(_apply(m, x, y) for x, y in pts), "".join(child.itertext())))
    return out


def title(path: Path) -> str:
    node = ET.parse(path).getroot().find(f"{SVG}title")
    return node.text if node is not None else ""
