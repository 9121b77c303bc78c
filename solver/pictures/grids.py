"""The two grids every placement picture is made of:

* a logical grid: element coordinates (rows x columns), each cell the element's byte address, coloured
  by the 16-byte chunk of its 128-byte line it lands in (so a swizzle reads as a colour pattern);
* a shared-memory map: one row per 128-byte line that holds something, eight 16-byte chunks across,
  each chunk labelled with the element that starts it and coloured by the chunk of its row that element
  would fill without a swizzle (so a swizzle shows as colours moved off their column).

Both draw only a window (the first rows and columns, solver.pictures.figure's budget) and touch only the
elements inside it, whatever the size of what they are given: an element's name, colour and tooltip are
made for the cells drawn, never for all of them.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from solver.pictures.figure import EMPTY, MAX_COLUMNS, MISMATCH, Cell, Panel, chunk_colour, hex_label, window

LINE_BYTES, CHUNK_BYTES = 128, 16


def logical_panel(title: str, rows: int, columns: int, address: Callable[[int, int], int],
                  name: Callable[[int, int], str], row_heading: str, column_heading: str, max_rows: int,
                  marked: Optional[Callable[[int, int, int], bool]] = None, mark: str = MISMATCH,
                  column_name: Callable[[int], str] = str) -> Panel:
    """rows x columns elements, of which the first max_rows rows and MAX_COLUMNS columns are drawn;
    address(r, c) and name(r, c) are asked for those only, and marked(r, c, address) whether the cell is
    outlined in `mark`."""
    shown_rows, shown_columns = window(rows, max_rows), window(columns, MAX_COLUMNS)
    cells = []
    for r in range(shown_rows):
        for c in range(shown_columns):
            a = address(r, c)
            outline = mark if marked is not None and marked(r, c, a) else None
            cells.append(Cell(r, c, hex_label(a), chunk_colour(a),
                              f"{name(r, c)} at {a:#x}: line {a // LINE_BYTES:#x}, chunk {(a >> 4) & 7}", outline))
    return Panel(title, [str(r) for r in range(shown_rows)], [column_name(c) for c in range(shown_columns)], cells,
                 row_heading, column_heading, rows_total=rows, columns_total=columns)


def first_lines(addresses: Sequence[int], count: int) -> Tuple[List[int], int]:
    """The first `count` 128-byte lines (line numbers, ascending) that hold an element, and how many hold one."""
    lines = sorted({a // LINE_BYTES for a in addresses})
    return lines[:count], len(lines)


def memory_panel(title: str, addresses: Sequence[int], element_bits: int, name: Callable[[int], str],
                 fill: Callable[[int], str], max_lines: int,
                 line_tag: Optional[Callable[[int], str]] = None) -> Panel:
    """addresses[i]: the byte address of element i, for everything placed. The panel draws the first
    max_lines lines that hold something; each chunk of them is labelled name(i) of the element that starts
    it (the lowest address in the chunk) and filled with fill(i). line_tag(i) of an element in a line, when
    given, is added to the line's heading (the TMA load that wrote it, say)."""
    lines, total = first_lines(addresses, max_lines)
    row_of = {line: r for r, line in enumerate(lines)}
    end = (lines[-1] + 1) * LINE_BYTES if lines else 0
    starts: Dict[int, Tuple[int, int]] = {}       # chunk -> (lowest address, its element)
    held: Counter = Counter()                     # chunk -> how many elements start in it
    for index, a in enumerate(addresses):
        if a >= end:                 # past the lines drawn (all lines below `end` that hold something are)
            continue
        chunk = a // CHUNK_BYTES
        held[chunk] += 1
        if chunk not in starts or a < starts[chunk][0]:
            starts[chunk] = (a, index)
    cells = []
    for chunk, (a, index) in sorted(starts.items()):
        cells.append(Cell(row_of[chunk * CHUNK_BYTES // LINE_BYTES], chunk % 8, name(index), fill(index),
                          f"bytes {chunk * CHUNK_BYTES:#x}-{chunk * CHUNK_BYTES + 15:#x}: {held[chunk]} element(s) "
                          f"of {element_bits} bits, first {name(index)} at {a:#x}"))
    used = {(c.row, c.column) for c in cells}
    cells += [Cell(r, c, "", EMPTY, "nothing placed here") for r in range(len(lines)) for c in range(8)
              if (r, c) not in used]
    tags = {}
    if line_tag is not None:
        for chunk, (_, index) in sorted(starts.items()):      # a line's tag: its first element's
            tags.setdefault(chunk * CHUNK_BYTES // LINE_BYTES, line_tag(index))
    row_names = [hex_label(line * LINE_BYTES) + (f" {tags[line]}" if line in tags else "") for line in lines]
    return Panel(title, row_names, [f"+{CHUNK_BYTES * c}" for c in range(8)], cells, "line", "chunk",
                 rows_total=total)
