"""The picture model: what is drawn, apart from how (solver.pictures.svg, solver.pictures.png).

A Figure is a title, a few caption lines, panels side by side (or stacked), and a legend. A Panel is a
grid: row and column headings, and cells, each with its label, fill colour, an optional outline (a
mismatch, say) and a tooltip (the full story of the cell: element, address, chunk).

A picture is for looking at, and every command accepts sizes far past what one can look at (a read map
of 4096 x 256 elements, a 228 KiB TMA box): a panel draws at most the first rows and columns that fit the
budget below, records how many there were (rows_total, columns_total), and says so in its title
("showing rows 0-63 of 4096") and in the figure's caption. Nothing is dropped silently.

Colours: fills come from one palette (`palette`), whose hues keep clear of red; red is reserved for what a
legend marks (a misread outline), so a marked cell never reads as a chunk colour."""
from __future__ import annotations

import colorsys
from dataclasses import dataclass, field, replace
from typing import List, Optional, Tuple

# --- geometry (pixels), shared by the SVG and PNG backends --------------------------------------------------
CHAR, CELL_HEIGHT, MARGIN, LINE = 7, 20, 10, 16     # a monospace character at 11 px, a cell, a text line

# The budget of one picture: at most 128 rows of cells in a panel (two stacked panels 64 each; a recipe
# adds a 32-line map above its k-steps), 20 px a row, so under 4,000 px tall with headings; and under
# 4,000 px across (64 columns of 7-character byte addresses, 57 px each, and their row headings). Drawn,
# that is at most ~8,500 cells: under a second in either backend (issue 29: a 13,208-pixel recipe took
# 50 s and 310 MB as PNG).
MAX_ROWS = 128               # rows of cells of a figure's grids (side-by-side panels: each)
PANEL_ROWS = 64              # rows of each of two stacked panels (a grid and its shared-memory map)
MAX_COLUMNS = 64             # columns of one panel (a 128-byte line of 2-byte elements)
MAX_GRID_WIDTH = 3900        # pixels of row headings and cells across (side-by-side panels share it)


def cell_width(panel: "Panel") -> int:
    longest = max([len(c.label) for c in panel.cells] + [len(str(n)) for n in panel.column_names] + [3])
    return CHAR * longest + 8


def heading_width(panel: "Panel") -> int:
    """Room left of the cells for the row names and the corner heading ('mn\\k')."""
    corner = len(panel.row_heading) + 1 + len(panel.column_heading)
    return CHAR * max([len(str(n)) for n in panel.row_names] + [corner, 2]) + 12


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
    rows_total: int = 0                 # how many rows there are, drawn or not (0: all are drawn)
    columns_total: int = 0

    @property
    def note(self) -> str:
        """'showing rows 0-63 of 4096, columns 0-31 of 256' when part is drawn, else ''."""
        parts = [f"{what} 0-{shown - 1} of {total}"
                 for what, shown, total in (("rows", len(self.row_names), self.rows_total),
                                            ("columns", len(self.column_names), self.columns_total))
                 if total > shown]
        return "showing " + ", ".join(parts) if parts else ""

    @property
    def heading(self) -> str:
        """The title as drawn: with the note, when part of the panel is drawn."""
        return f"{self.title} ({self.note})" if self.note else self.title


@dataclass
class Figure:
    title: str
    panels: List[Panel]
    legend: List[Tuple[str, str]] = field(default_factory=list)   # (text, colour)
    caption: List[str] = field(default_factory=list)
    side_by_side: bool = False

    @property
    def summarised(self) -> bool:
        return any(p.note for p in self.panels)

    def caption_lines(self) -> List[str]:
        """The caption as drawn: one more line when any panel is drawn in part."""
        if not self.summarised:
            return list(self.caption)
        return list(self.caption) + ["summarised: too large to look at whole; each panel titled 'showing ...' "
                                     "draws its first rows and columns only"]


def window(total: int, limit: int) -> int:
    """How many of `total` rows (or columns) a panel draws under `limit`."""
    return max(0, min(total, limit))


def fit_columns(panel: Panel, width: int) -> Panel:
    """The panel with only the columns whose cells fit `width` pixels beside its row headings (at least
    one); columns_total keeps how many there were."""
    fitting = max(1, (width - heading_width(panel)) // cell_width(panel))
    if fitting >= len(panel.column_names):
        return panel
    return replace(panel, column_names=panel.column_names[:fitting],
                   cells=[c for c in panel.cells if c.column < fitting],
                   columns_total=max(panel.columns_total, len(panel.column_names)))


# --- colours ---------------------------------------------------------------------------------------------
# Marks: what a legend names besides the palette. Red outlines a misread; grey outlines a halo pixel.
# The palette below never comes near them.
MISMATCH = "#d62728"
HALO = "#555555"
EMPTY = "#f4f4f4"
MARKS = (MISMATCH, HALO, EMPTY)

# The palette's hues run from 40 to 320 degrees: 40 degrees clear of red (0) on either side.
PALETTE_HUES = (40.0, 320.0)
GOLDEN = 0.6180339887498949


def palette(index: int) -> str:
    """Fill colour number `index` (a chunk, a thread, a row): light, so black labels stay readable.
    Successive indices step by the golden ratio of the hue range (107 or 173 degrees apart) and alternate
    lightness, so neighbours never look alike; the hues never enter the red reserved for marks."""
    low, high = PALETTE_HUES
    degrees = low + (high - low) * ((index * GOLDEN) % 1.0)
    light = 0.75 if index % 2 == 0 else 0.84
    red, green, blue = colorsys.hls_to_rgb(degrees / 360, light, 0.75)
    return "#%02x%02x%02x" % (round(red * 255), round(green * 255), round(blue * 255))


# The eight 16-byte chunks of a 128-byte line: one fixed colour each, the same in every picture. In an
# element grid a cell has the colour of the chunk its bytes land in; in a shared-memory map, the colour of
# the chunk of its row it would sit in without a swizzle. So a swizzle reads as a colour pattern in both.
CHUNK_COLOURS = tuple(palette(c) for c in range(8))


def chunk_colour(address: int) -> str:
    """The colour of the 16-byte chunk of its 128-byte line that `address` falls in."""
    return CHUNK_COLOURS[(address >> 4) & 7]


def logical_chunk(position: int, element_bits: int) -> int:
    """Which 16-byte (128-bit) chunk of a 128-byte row the element at `position` along the row fills
    unswizzled (elements of 4 or 6 bits included)."""
    return (position * element_bits // 128) % 8


def chunk_legend() -> list:
    return [(f"chunk {c} (bytes {16 * c}-{16 * c + 15} of the line)", CHUNK_COLOURS[c]) for c in range(8)]


def hex_label(address: int) -> str:
    return f"{address:#x}"
