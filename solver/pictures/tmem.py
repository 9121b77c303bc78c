"""`tmem map --svg/--png`: a tcgen05.ld/st fragment map, lanes down and columns across (relative to the
instruction's address), each cell labelled thread.register (per 16-bit half with .pack/.unpack) and
filled with the colour of the thread that holds it. Up to 32 lanes and 128 columns (.x128): the columns
that fit the figure's width are drawn, and the title says how many there are."""
from __future__ import annotations

from solver.pictures.figure import MAX_COLUMNS, MAX_GRID_WIDTH, MAX_ROWS, Cell, Figure, Panel, fit_columns, palette


def fragment_map(document: dict, cells: dict, label) -> Figure:
    """document: `tmem map --json`; cells: (lane, column) -> holders (solver.cli.render's reading of
    the document); label(holders) -> the cell text, as the table prints it."""
    lanes = sorted({lane for lane, _ in cells})
    columns = sorted({column for _, column in cells})
    shown_lanes, shown_columns = lanes[:MAX_ROWS], columns[:MAX_COLUMNS]
    row_of, column_of = {lane: r for r, lane in enumerate(shown_lanes)}, {c: i for i, c in enumerate(shown_columns)}
    drawn = []
    for (lane, column), holders in sorted(cells.items()):
        if lane not in row_of or column not in column_of:
            continue
        thread = next(h[0] for h in holders if h)
        drawn.append(Cell(row_of[lane], column_of[column], label(holders), palette(thread),
                          f"lane {lane}, column {column}: thread {thread}"))
    name = (f"tcgen05.{document['op']}.{document['shape']}.x{document['num']}" + (" pack" if document["pack"] else ""))
    panel = Panel("lane x column, cell = thread.register", [f"lane {lane}" for lane in shown_lanes],
                  [f"col {c}" for c in shown_columns], drawn, "lane", "column", rows_total=len(lanes),
                  columns_total=len(columns))
    legend = [(f"thread {t}", palette(t)) for t in range(len(document["pieces"]))]
    return Figure(f"{name}: which thread's register holds each 32-bit cell", [fit_columns(panel, MAX_GRID_WIDTH)],
                  legend, ["colour = thread (t0..t31)"])
