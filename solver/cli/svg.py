"""Pictures as SVG text, with no dependency: a grid of labelled, coloured cells.

`grid(...)` draws rows x columns of cells, each with a label and a colour, row and column headings, a
title and a legend; `layoutproof tmem map --svg FILE` uses it for lanes x columns coloured by thread.
Every cell's label appears once, as the text of one <text> element at the cell's centre, so tests (and
users) can read the picture back."""
from __future__ import annotations

import colorsys
from html import escape

CELL_WIDTH, CELL_HEIGHT, MARGIN, HEADING = 64, 22, 8, 64


def thread_colour(thread: int, threads: int = 32) -> str:
    """A distinct hue per thread (golden-angle steps), light enough for black text, as #rrggbb (every SVG
    reader knows it)."""
    red, green, blue = colorsys.hls_to_rgb((thread * 137.508) % 360 / 360, 0.78, 0.70)
    return "#%02x%02x%02x" % (round(red * 255), round(green * 255), round(blue * 255))


def grid(title: str, row_names: list, column_names: list, cells: dict, legend: list) -> str:
    """cells[(row index, column index)] = (label, fill colour); legend = [(text, colour)]."""
    width = HEADING + CELL_WIDTH * len(column_names) + 2 * MARGIN
    legend_rows = (len(legend) + 7) // 8
    height = HEADING + CELL_HEIGHT * (len(row_names) + 1 + legend_rows) + 2 * MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="13">{escape(title)}</text>']
    top = HEADING
    for c, name in enumerate(column_names):
        x = HEADING + MARGIN + c * CELL_WIDTH + CELL_WIDTH / 2
        out.append(f'<text class="column" x="{x:.0f}" y="{top - 6}" text-anchor="middle">{escape(str(name))}</text>')
    for r, name in enumerate(row_names):
        y = top + r * CELL_HEIGHT
        out.append(f'<text class="row" x="{HEADING + MARGIN - 6}" y="{y + 15}" text-anchor="end">{escape(str(name))}</text>')
        for c in range(len(column_names)):
            x = HEADING + MARGIN + c * CELL_WIDTH
            label, fill = cells.get((r, c), ("", "white"))
            out.append(f'<rect x="{x}" y="{y}" width="{CELL_WIDTH}" height="{CELL_HEIGHT}" fill="{fill}" '
                       f'stroke="#888" stroke-width="0.5"/>')
            if label:
                out.append(f'<text class="cell" data-row="{r}" data-column="{c}" x="{x + CELL_WIDTH / 2:.0f}" '
                           f'y="{y + 15}" text-anchor="middle">{escape(label)}</text>')
    y = top + (len(row_names) + 1) * CELL_HEIGHT
    for i, (text, fill) in enumerate(legend):
        x = HEADING + MARGIN + (i % 8) * CELL_WIDTH
        row_y = y + (i // 8) * CELL_HEIGHT
        out.append(f'<rect x="{x}" y="{row_y}" width="{CELL_WIDTH - 4}" height="{CELL_HEIGHT - 4}" fill="{fill}"/>')
        out.append(f'<text class="legend" x="{x + 4}" y="{row_y + 13}">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
