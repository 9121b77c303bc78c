"""A Figure as PNG: the same geometry as the SVG (solver.pictures.svg.geometry), drawn in pixels by Pillow
with matplotlib's DejaVu Sans Mono. Both come with the optional extra `pip install 'layoutproof[pictures]'`
(matplotlib installs Pillow and ships the font); matplotlib itself is never imported: its import alone is
~30 MB and 0.3 s, and drawing thousands of cells as matplotlib artists took tens of seconds (issue 29).

The picture is drawn a band of BAND pixel rows at a time and each band compressed into the file before the
next is drawn, so memory holds one band (width x BAND x 3 bytes), not the whole image: what is drawn is a
list of shapes (rectangles, text) known in advance, and each band draws those that reach into it."""
from __future__ import annotations

import bisect
import importlib.util
import math
import os
import struct
import zlib

from solver.pictures.figure import CELL_HEIGHT, LINE, MARGIN, Figure, heading_width
from solver.pictures.svg import geometry

INSTALL = "PNG pictures need matplotlib: pip install 'layoutproof[pictures]' (or use --svg)"
FONT_SIZE, TITLE_SIZE = 11, 13          # pixels, as the SVG's font-size
GRID, TEXT, CORNER = "#999999", "black", "#555555"
BAND = 256                              # pixel rows drawn at a time
REACH = 32                              # no shape reaches further than this above or below its y


def _font_folder() -> str:
    """matplotlib's bundled TrueType folder, found without importing matplotlib ('' when not installed)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return os.path.join(list(spec.submodule_search_locations)[0], "mpl-data", "fonts", "ttf")


def available() -> bool:
    return importlib.util.find_spec("PIL") is not None and os.path.isfile(
        os.path.join(_font_folder(), "DejaVuSansMono.ttf"))


def shapes(figure: Figure) -> list:
    """What the picture is made of, in drawing order: ("rect", y, (x0, y0, x1, y1), fill, outline, width)
    and ("text", y, (x, y), text, font name, anchor, colour), y being where the shape sits (its top, or
    the text's baseline). Text is placed by its baseline ("s" anchors), where the SVG puts its <text>."""
    g = geometry(figure)
    out = [("text", MARGIN + 12, (MARGIN, MARGIN + 12), figure.title, "title", "ls", TEXT)]
    for i, line in enumerate(figure.caption_lines()):
        y = MARGIN + 12 + LINE * (i + 1)
        out.append(("text", y, (MARGIN, y), line, "regular", "ls", TEXT))
    for index, panel in enumerate(figure.panels):
        x0, y0, w = g["panels"][index]
        out.append(("text", y0 - LINE - 4, (x0 - heading_width(panel), y0 - LINE - 4), panel.heading, "bold", "ls",
                    TEXT))
        if panel.row_heading or panel.column_heading:
            out.append(("text", y0 - 5, (x0 - 6, y0 - 5), panel.row_heading + "\\" + panel.column_heading, "regular",
                        "rs", CORNER))
        for c, name in enumerate(panel.column_names):
            out.append(("text", y0 - 5, (x0 + c * w + w / 2, y0 - 5), str(name), "regular", "ms", TEXT))
        for r, name in enumerate(panel.row_names):
            y = y0 + r * CELL_HEIGHT + 14
            out.append(("text", y, (x0 - 6, y), str(name), "regular", "rs", TEXT))
        for cell in panel.cells:
            x, y = x0 + cell.column * w, y0 + cell.row * CELL_HEIGHT
            out.append(("rect", y, (x, y, x + w, y + CELL_HEIGHT), cell.fill, GRID, 1))
            if cell.outline:             # a mark, inside the cell so its neighbours' edges do not cover it
                out.append(("rect", y, (x + 1, y + 1, x + w - 1, y + CELL_HEIGHT - 1), None, cell.outline, 2))
            if cell.label:
                out.append(("text", y + 14, (x + w / 2, y + 14), cell.label, "regular", "ms", TEXT))
    half = g["width"] // 2
    for i, (label, fill) in enumerate(figure.legend):
        x, y = MARGIN + (i % 2) * half, g["legend_y"] + (i // 2) * LINE
        out.append(("rect", y, (x, y, x + 12, y + 12), fill, GRID, 1))
        out.append(("text", y + 10, (x + 18, y + 10), label, "regular", "ls", TEXT))
    return out


class Lettering:
    """Text in one monospaced font, each character rendered once as a mask and pasted wherever a text needs
    it: Pillow's draw.text renders its whole string anew on each call (60-100 microseconds a cell label),
    pasting cached characters takes about a third of that. Anchors as Pillow's: l/m/r, at the baseline."""
    PAD = 2                              # pixels around a character's cell: a glyph may overhang its advance

    def __init__(self, font):
        self.font = font
        self.advance = font.getlength("0")          # every character's, in a monospaced font
        self.ascent, self.descent = font.getmetrics()
        self.masks: dict = {}

    def mask(self, character: str):
        found = self.masks.get(character)
        if found is None:
            from PIL import Image, ImageDraw
            found = Image.new("L", (math.ceil(self.advance) + 2 * self.PAD, self.ascent + self.descent))
            ImageDraw.Draw(found).text((self.PAD, self.ascent), character, fill=255, font=self.font, anchor="ls")
            self.masks[character] = found
        return found

    def draw(self, image, x: float, baseline: int, text: str, anchor: str, colour: tuple) -> None:
        start = x - {"l": 0.0, "m": 0.5, "r": 1.0}[anchor[0]] * self.advance * len(text)
        for i, character in enumerate(text):
            if not character.isspace():
                image.paste(colour, (round(start + i * self.advance) - self.PAD, baseline - self.ascent),
                            self.mask(character))


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC of type and data (PNG specification, 5.3)."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def render(figure: Figure, path: str) -> None:
    """Write the PNG to exactly `path`; ImportError(INSTALL) without the extra, OSError when unwritable."""
    if not available():
        raise ImportError(INSTALL)
    from PIL import Image, ImageColor, ImageDraw, ImageFont
    folder = _font_folder()
    fonts = {"regular": Lettering(ImageFont.truetype(os.path.join(folder, "DejaVuSansMono.ttf"), FONT_SIZE)),
             "bold": Lettering(ImageFont.truetype(os.path.join(folder, "DejaVuSansMono-Bold.ttf"), FONT_SIZE)),
             "title": Lettering(ImageFont.truetype(os.path.join(folder, "DejaVuSansMono-Bold.ttf"), TITLE_SIZE))}
    g = geometry(figure)
    width, height = int(g["width"]), int(g["height"])
    drawn = sorted(shapes(figure), key=lambda s: s[1])      # stable: shapes at one y keep their order
    ys = [s[1] for s in drawn]
    with open(path, "wb") as handle:       # exactly this path, whatever its suffix
        # 8-bit RGB, no interlace (IHDR), then the image as zlib-compressed scanlines, each led by filter 0
        handle.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        packer = zlib.compressobj(1)       # flat colours compress well at the fastest level
        for top in range(0, height, BAND):
            rows = min(BAND, height - top)
            band = Image.new("RGB", (width, rows), "white")
            draw = ImageDraw.Draw(band)
            for shape in drawn[bisect.bisect_left(ys, top - REACH):bisect.bisect_left(ys, top + rows + REACH)]:
                if shape[0] == "rect":
                    _, _, (x0, y0, x1, y1), fill, outline, line = shape
                    draw.rectangle((x0, y0 - top, x1, y1 - top), fill=fill, outline=outline, width=line)
                else:
                    _, _, (x, y), text, font, anchor, colour = shape
                    fonts[font].draw(band, x, y - top, text, anchor, ImageColor.getrgb(colour))
            pixels, stride = band.tobytes(), 3 * width
            compressed = packer.compress(b"".join(b"\x00" + pixels[r * stride:(r + 1) * stride] for r in range(rows)))
            if compressed:
                handle.write(_chunk(b"IDAT", compressed))
        handle.write(_chunk(b"IDAT", packer.flush()) + _chunk(b"IEND", b""))
