"""`tmem map --svg/--png`: a tcgen05.ld/st fragment map, lanes down and columns across (relative to the
instruction's address), each cell labelled thread.register (per 16-bit half with .pack/.unpack) and
filled with the colour of the thread that holds it."""
from __future__ import annotations

from solver.pictures.figure import Cell, Figure, Panel, hue


def fragment_map(document: dict, cells: dict, label) -> Figure:
    """document: `tmem map --json`; cells: (lane, column) -> holders (solver.cli.render's reading of
    the document); label(holders) -> the cell text, as the table prints it."""
    lanes = sorted({lane for lane, _ in cells})
    columns = sorted({column for _, column in cells})
    drawn = []
    for (lane, column), holders in sorted(cells.items()):
        thread = next(h[0] for h in holders if h)
        drawn.append(Cell(lanes.index(lane), columns.index(column), label(holders), hue(thread),
                          f"lane {lane}, column {column}: thread {thread}"))
    name = (f"tcgen05.{document['op']}.{document['shape']}.x{document['num']}" + (" pack" if document["pack"] else ""))
    panel = Panel("lane x column, cell = thread.register", [f"lane {lane}" for lane in lanes],
                  [f"col {c}" for c in columns], drawn, "lane", "column")
    legend = [(f"thread {t}", hue(t)) for t in range(len(document["pieces"]))]
    return Figure(f"{name}: which thread's register holds each 32-bit cell", [panel], legend,
                  ["colour = thread (t0..t31)"])
