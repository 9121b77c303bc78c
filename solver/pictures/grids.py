"""The two grids every placement picture is made of:

* a logical grid: element coordinates (rows x columns), each cell the element's byte address, coloured
  by the 16-byte chunk of its 128-byte line it lands in (so a swizzle reads as a colour pattern);
* a shared-memory map: one row per 128-byte line that holds something, eight 16-byte chunks across,
  each chunk labelled with the element that starts it (what a bank-conflict or misread hunt asks).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from solver.pictures.figure import EMPTY, Cell, Panel, chunk_colour, hex_label

LINE_BYTES, CHUNK_BYTES = 128, 16
MAX_CELLS = 1 << 15          # a picture is for looking at: larger grids are refused by the caller


def logical_panel(title: str, rows: int, columns: int, address: Callable[[int, int], int],
                  name: Callable[[int, int], str], row_heading: str, column_heading: str,
                  marked: Optional[Callable[[int, int], bool]] = None, mark: str = "#d62728") -> Panel:
    cells = []
    for r in range(rows):
        for c in range(columns):
            a = address(r, c)
            outline = mark if marked is not None and marked(r, c) else None
            cells.append(Cell(r, c, hex_label(a), chunk_colour(a),
                              f"{name(r, c)} at {a:#x}: line {a // LINE_BYTES:#x}, chunk {(a >> 4) & 7}", outline))
    return Panel(title, [str(r) for r in range(rows)], [str(c) for c in range(columns)], cells,
                 row_heading, column_heading)


def memory_panel(title: str, elements: List[Tuple[str, int]], element_bytes: int,
                 fill_of: Optional[Callable[[int], str]] = None) -> Panel:
    """elements: (name, byte address) of everything placed; fill_of(element index) colours a chunk by the
    element that starts it (default: the chunk's own colour)."""
    starts: Dict[int, Tuple[int, str]] = {}
    for index, (name, a) in enumerate(elements):
        chunk = a // CHUNK_BYTES
        first = starts.get(chunk)
        if first is None or a < elements[first[0]][1]:
            starts[chunk] = (index, name)
    lines = sorted({chunk * CHUNK_BYTES // LINE_BYTES for chunk in starts})
    row_of = {line: r for r, line in enumerate(lines)}
    cells = []
    for chunk, (index, name) in sorted(starts.items()):
        line = chunk * CHUNK_BYTES // LINE_BYTES
        a = elements[index][1]
        fill = fill_of(index) if fill_of is not None else chunk_colour(a)
        held = sum(1 for _, b in elements if b // CHUNK_BYTES == chunk)
        cells.append(Cell(row_of[line], chunk % 8, name, fill,
                          f"bytes {chunk * CHUNK_BYTES:#x}-{chunk * CHUNK_BYTES + 15:#x}: {held} element(s) of "
                          f"{element_bytes} B, first {name} at {a:#x}"))
    for r, line in enumerate(lines):           # chunks of a used line that hold nothing
        used = {c.column for c in cells if c.row == r}
        cells += [Cell(r, c, "", EMPTY, "nothing placed here") for c in range(8) if c not in used]
    return Panel(title, [hex_label(line * LINE_BYTES) for line in lines],
                 [f"+{CHUNK_BYTES * c}" for c in range(8)], cells, "line", "chunk")
