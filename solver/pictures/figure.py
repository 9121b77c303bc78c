"""The picture model: what is drawn, apart from how (solver.pictures.svg, solver.pictures.png).

A Figure is a title, a few caption lines, panels side by side (or stacked), and a legend. A Panel is a
grid: row and column headings, and cells, each with its label, fill colour, an optional outline (a
mismatch, say) and a tooltip (the full story of the cell: element, address, chunk)."""
from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from typing import List, Optional, Tuple


@dataclass(frozen=True)
class Cell:
    row: int
    column: int
    label: str
    fill: str = "white"
    tooltip: str = ""
    outline: Optional[str] = None       # a colour: the cell is marked (e.g. a mismatch)


@dataclass
class Panel:
    title: str
    row_names: List[str]
    column_names: List[str]
    cells: List[Cell]
    row_heading: str = ""
    column_heading: str = ""


@dataclass
class Figure:
    title: str
    panels: List[Panel]
    legend: List[Tuple[str, str]] = field(default_factory=list)   # (text, colour)
    caption: List[str] = field(default_factory=list)
    side_by_side: bool = False


# --- colours ---------------------------------------------------------------------------------------------

def hue(index: int, light: float = 0.80) -> str:
    """A distinct light colour per index (golden-angle steps in hue), dark text stays readable on it."""
    red, green, blue = colorsys.hls_to_rgb((index * 137.508) % 360 / 360, light, 0.70)
    return "#%02x%02x%02x" % (round(red * 255), round(green * 255), round(blue * 255))


# The eight 16-byte chunks of a 128-byte line: one fixed colour each, the same in every picture, so the
# chunk an element's bytes land in reads at a glance (and matches the shared-memory map beside it).
CHUNK_COLOURS = tuple(hue(c) for c in range(8))
MISMATCH = "#d62728"
EMPTY = "#f4f4f4"


def chunk_colour(address: int) -> str:
    """The colour of the 16-byte chunk of its 128-byte line that `address` falls in."""
    return CHUNK_COLOURS[(address >> 4) & 7]


def chunk_legend() -> list:
    return [(f"chunk {c} (bytes {16 * c}-{16 * c + 15} of the line)", CHUNK_COLOURS[c]) for c in range(8)]


def hex_label(address: int) -> str:
    return f"{address:#x}"
