"""A Figure as SVG text, with no dependency. Panels are laid out side by side or stacked; each cell is a
<rect> and, when labelled, a <text> at its centre, both carrying data-panel, data-row and data-column,
the <rect> a <title> tooltip; headings and legend are <text class="row|column|legend">. A panel drawn in
part carries data-rows-total / data-columns-total (how many there are) and says so in its title."""
from __future__ import annotations

from html import escape

from solver.pictures.figure import (CELL_HEIGHT, CHAR, LINE, MARGIN, Figure, Panel, cell_width,  # noqa: F401
                                    heading_width)


def panel_size(panel: Panel) -> tuple:
    width = max(heading_width(panel) + cell_width(panel) * len(panel.column_names), CHAR * len(panel.heading) + 8)
    height = 2 * LINE + CELL_HEIGHT * len(panel.row_names)
    return width, height


def geometry(figure: Figure) -> dict:
    """Where each panel's grid starts: {panel index: (x of column 0, y of row 0, cell width)}, and the
    whole size. Shared by the SVG and PNG backends, and by tests that read positions back."""
    caption = figure.caption_lines()
    top = MARGIN + LINE * (1 + len(caption)) + 6
    x, y, width, height, at = MARGIN, top, 0, top, {}
    for index, panel in enumerate(figure.panels):
        w, h = panel_size(panel)
        at[index] = (x + heading_width(panel), y + 2 * LINE, cell_width(panel))
        if figure.side_by_side:
            x += w + 3 * MARGIN
            width, height = max(width, x), max(height, y + h)
        else:
            y += h + 2 * MARGIN
            width, height = max(width, x + w + MARGIN), y
    legend_rows = -(-len(figure.legend) // 2) if figure.legend else 0
    legend_width = 2 * (CHAR * max([len(t) for t, _ in figure.legend] + [10]) + 30)
    width = max(width, legend_width + 2 * MARGIN, CHAR * max([len(figure.title) + 2] + [len(c) for c in
                                                                 caption]) + 2 * MARGIN)
    return {"panels": at, "legend_y": height + MARGIN, "width": width,
            "height": height + MARGIN + legend_rows * LINE + MARGIN}


def _totals(panel: Panel) -> str:
    """data-rows-total / data-columns-total of a panel drawn in part."""
    out = ""
    if panel.rows_total > len(panel.row_names):
        out += f' data-rows-total="{panel.rows_total}"'
    if panel.columns_total > len(panel.column_names):
        out += f' data-columns-total="{panel.columns_total}"'
    return out


def render(figure: Figure) -> str:
    g = geometry(figure)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{g["width"]}" height="{g["height"]}" '
           f'font-family="monospace" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text class="title" x="{MARGIN}" y="{MARGIN + 12}" font-size="13" font-weight="bold">'
           f'{escape(figure.title)}</text>']
    for i, line in enumerate(figure.caption_lines()):
        out.append(f'<text class="caption" x="{MARGIN}" y="{MARGIN + 12 + LINE * (i + 1)}">{escape(line)}</text>')
    for index, panel in enumerate(figure.panels):
        x0, y0, w = g["panels"][index]
        hw = heading_width(panel)
        out.append(f'<text class="panel" data-panel="{index}"{_totals(panel)} x="{x0 - hw}" y="{y0 - LINE - 4}" '
                   f'font-weight="bold">{escape(panel.heading)}</text>')
        if panel.row_heading or panel.column_heading:
            out.append(f'<text class="corner" x="{x0 - 6}" y="{y0 - 5}" text-anchor="end" fill="#555">'
                       f'{escape(panel.row_heading + chr(92) + panel.column_heading)}</text>')
        for c, name in enumerate(panel.column_names):
            out.append(f'<text class="column" data-panel="{index}" x="{x0 + c * w + w / 2:.0f}" y="{y0 - 5}" '
                       f'text-anchor="middle">{escape(str(name))}</text>')
        for r, name in enumerate(panel.row_names):
            out.append(f'<text class="row" data-panel="{index}" x="{x0 - 6}" y="{y0 + r * CELL_HEIGHT + 14}" '
                       f'text-anchor="end">{escape(str(name))}</text>')
        for cell in panel.cells:
            x, y = x0 + cell.column * w, y0 + cell.row * CELL_HEIGHT
            where = f'data-panel="{index}" data-row="{cell.row}" data-column="{cell.column}"'
            stroke = (f'stroke="{cell.outline}" stroke-width="2.5"' if cell.outline
                      else 'stroke="#999" stroke-width="0.5"')
            tip = f"<title>{escape(cell.tooltip)}</title>" if cell.tooltip else ""
            out.append(f'<rect class="cell" {where} x="{x}" y="{y}" width="{w}" height="{CELL_HEIGHT}" '
                       f'fill="{cell.fill}" {stroke}>{tip}</rect>')
            if cell.label:
                out.append(f'<text class="cell" {where} x="{x + w / 2:.0f}" y="{y + 14}" '
                           f'text-anchor="middle">{escape(cell.label)}</text>')
    y = g["legend_y"]
    half = g["width"] // 2
    for i, (text, fill) in enumerate(figure.legend):
        x, row_y = MARGIN + (i % 2) * half, y + (i // 2) * LINE
        out.append(f'<rect class="legend" x="{x}" y="{row_y}" width="12" height="12" fill="{fill}" stroke="#999" '
                   f'stroke-width="0.5"/>')
        out.append(f'<text class="legend" x="{x + 18}" y="{row_y + 10}">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
