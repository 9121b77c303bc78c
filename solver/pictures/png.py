"""A Figure as PNG through matplotlib (the optional extra `pip install 'layoutproof[pictures]'`): the
same geometry as the SVG (solver.pictures.svg.geometry), drawn in pixels."""
from __future__ import annotations

from solver.pictures.figure import Figure
from solver.pictures.svg import CELL_HEIGHT, LINE, MARGIN, geometry, heading_width

INSTALL = "PNG pictures need matplotlib: pip install 'layoutproof[pictures]' (or use --svg)"
DPI = 100


def available() -> bool:
    import importlib.util
    return importlib.util.find_spec("matplotlib") is not None


def render(figure: Figure, path: str) -> None:
    """Write the PNG; ImportError(INSTALL) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(INSTALL) from None
    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.patches import Rectangle
    g = geometry(figure)
    width, height = g["width"], g["height"]
    fig = pyplot.figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)          # y down, as in the SVG
    ax.axis("off")
    text = dict(family="monospace", fontsize=8, va="center")
    ax.text(MARGIN, MARGIN + 8, figure.title, fontsize=10, fontweight="bold", family="monospace", va="center")
    for i, line in enumerate(figure.caption):
        ax.text(MARGIN, MARGIN + 8 + LINE * (i + 1), line, **text)
    for index, panel in enumerate(figure.panels):
        x0, y0, w = g["panels"][index]
        ax.text(x0 - heading_width(panel), y0 - LINE - 8, panel.title, fontweight="bold", **text)
        for c, name in enumerate(panel.column_names):
            ax.text(x0 + c * w + w / 2, y0 - 9, str(name), ha="center", **text)
        for r, name in enumerate(panel.row_names):
            ax.text(x0 - 6, y0 + r * CELL_HEIGHT + CELL_HEIGHT / 2, str(name), ha="right", **text)
        for cell in panel.cells:
            x, y = x0 + cell.column * w, y0 + cell.row * CELL_HEIGHT
            ax.add_patch(Rectangle((x, y), w, CELL_HEIGHT, facecolor=cell.fill,
                                   edgecolor=cell.outline or "#999999", linewidth=2.5 if cell.outline else 0.5))
            if cell.label:
                ax.text(x + w / 2, y + CELL_HEIGHT / 2, cell.label, ha="center", **text)
    half = width // 2
    for i, (label, fill) in enumerate(figure.legend):
        x, y = MARGIN + (i % 2) * half, g["legend_y"] + (i // 2) * LINE
        ax.add_patch(Rectangle((x, y), 12, 12, facecolor=fill, edgecolor="#999999", linewidth=0.5))
        ax.text(x + 18, y + 6, label, **text)
    try:      # format given: matplotlib would otherwise write `path`.png when `path` has no suffix (--png /dev/full)
        fig.savefig(path, format="png", dpi=DPI, facecolor="white")
    finally:
        pyplot.close(fig)
