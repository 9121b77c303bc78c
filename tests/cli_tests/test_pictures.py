"""Pictures (solver/pictures): the SVG is parsed back and every element appears once, at the position spec
says: in the logical grid, the cell at (row, column) is labelled with the byte spec computes for that
element (spec.mma.readmap.element_address, spec.tma.place, spec.tma.im2col); in the shared-memory map,
the chunk at (line row, byte / 16 mod 8) is labelled with the element spec puts at its first byte. The
PNG backend (matplotlib, the `pictures` extra) writes a real PNG of the same size."""
from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import pytest

from solver.pictures import places, png, svg
from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap
from spec.tma import place as tma_place

SVG = "{http://www.w3.org/2000/svg}"


def cells(text: str) -> dict:
    """(panel, row, column) -> label of every labelled cell; fails on a cell drawn twice."""
    root = ET.fromstring(text)
    found = {}
    for element in root.iter(f"{SVG}text"):
        if element.get("class") != "cell":
            continue
        key = (int(element.get("data-panel")), int(element.get("data-row")), int(element.get("data-column")))
        assert key not in found, f"cell {key} drawn twice"
        found[key] = element.text
    return found


def rects(text: str) -> dict:
    root = ET.fromstring(text)
    return {(int(e.get("data-panel")), int(e.get("data-row")), int(e.get("data-column"))): e
            for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"}


def row_headings(text: str, panel: int) -> list:
    root = ET.fromstring(text)
    return [e.text for e in root.iter(f"{SVG}text") if e.get("class") == "row" and e.get("data-panel") == str(panel)]


def memory_cells_from_spec(named: dict) -> dict:
    """(line row, chunk column) -> name of the element at each chunk's first byte, from spec's addresses
    alone: {name: byte address}."""
    by_address = {a: n for n, a in named.items()}
    lines = sorted({a // 128 for a in named.values()})
    return {(lines.index(a // 128), (a >> 4) & 7): by_address[a] for a in by_address if a % 16 == 0}


@pytest.mark.parametrize("word, dtype, major, mn", [
    (0x4000004000000040, "bf16", "K", 8),
    (0x4000004000000040, "bf16", "K", 64),
    (0x8000002000800080, "f16", "MN", 64),
    (0x4000004000010040, "e4m3", "K", 16),
])
def test_desc_addresses_picture_puts_every_element_where_spec_reads_it(word, dtype, major, mn):
    desc = spec_descriptor.decode("sm90", word)
    op = readmap.make_operand(desc, dtype, major, mn)
    figure = places.desc_addresses("t", [], readmap.read_addresses(op), op.dtype.bits // 8)
    text = svg.render(figure)
    drawn = cells(text)
    for m in range(op.mn):
        for k in range(op.k):
            assert drawn[(0, m, k)] == hex(readmap.element_address(op, m, k)), (m, k)
    named = {f"({m},{k})": readmap.element_address(op, m, k) for m in range(op.mn) for k in range(op.k)}
    expected = memory_cells_from_spec(named)
    assert {key[1:]: label for key, label in drawn.items() if key[0] == 1} == expected
    lines = sorted({a // 128 for a in named.values()})
    assert row_headings(text, 1) == [hex(line * 128) for line in lines]


@pytest.mark.parametrize("swizzle, elem, box", [("32B", 4, (8, 2)), ("128B", 2, (64, 8)), ("NONE", 2, (8, 4, 2)),
                                               ("64B", 1, (64, 4))])
def test_tma_place_picture_is_the_box_as_written(swizzle, elem, box):
    b = tma_place.make_box(swizzle, elem, box, 0x400)
    offsets = tma_place.place(b)
    text = svg.render(places.tma_place("t", [], box, offsets, elem))
    drawn = cells(text)
    inner = box[0]
    for n, a in enumerate(offsets):
        assert drawn[(0, n // inner, n % inner)] == hex(a)
    names = {}
    for n, a in enumerate(offsets):
        rest, coordinate = n // inner, [n % inner]
        for d in box[1:]:
            coordinate.append(rest % d)
            rest //= d
        names["(" + ",".join(map(str, coordinate)) + ")"] = a
    assert {key[1:]: label for key, label in drawn.items() if key[0] == 1} == memory_cells_from_spec(names)


def test_im2col_picture_labels_each_pixel_with_its_row_and_each_chunk_with_its_element():
    from solver.cli.main import main
    import io
    import json
    from contextlib import redirect_stdout
    out = io.StringIO()
    with redirect_stdout(out):
        main(["im2col", "--mode", "im2col", "--tensor", "16,4,4,1", "--lower=0,0", "--upper=-1,-1",
              "--channels-per-pixel", "16", "--pixels-per-column", "4", "--coords", "0,0,0,0", "--elem-bytes", "2",
              "--swizzle", "NONE", "--smem-address", "0x400", "--json"])
    doc = json.loads(out.getvalue())
    text = svg.render(places.im2col("t", [], doc["pixels"], doc["placement"], 2))
    drawn = cells(text)
    ws = sorted({p["w"] for p in doc["pixels"]})
    hs = sorted({(p["n"], p["d"], p["h"]) for p in doc["pixels"]})
    for p in doc["pixels"]:
        assert drawn[(0, hs.index((p["n"], p["d"], p["h"])), ws.index(p["w"]))] == f"row {p['row']}"
    names = {f"r{e['row']} c{e['channel']}": e["smem_address"] for e in doc["placement"]}
    assert {key[1:]: label for key, label in drawn.items() if key[0] == 1} == memory_cells_from_spec(names)


def test_check_picture_marks_exactly_the_mismatches_on_both_sides():
    expected = [[0x400 + 2 * (8 * m + k) for k in range(8)] for m in range(4)]
    read = [row[:] for row in expected]
    read[2][5] = 0x999
    read[3][0] = 0x123
    text = svg.render(places.check("t", [], expected, read, k_offset=16))
    boxes = rects(text)
    marked = {key for key, e in boxes.items() if e.get("stroke") == "#d62728"}
    assert marked == {(p, 2, 5) for p in (0, 1)} | {(p, 3, 0) for p in (0, 1)}
    drawn = cells(text)
    assert drawn[(1, 2, 5)] == "0x999" and drawn[(0, 2, 5)] == hex(expected[2][5])
    columns = [e.text for e in ET.fromstring(text).iter(f"{SVG}text") if e.get("class") == "column"]
    assert columns[:8] == [str(16 + k) for k in range(8)]


def test_pictures_too_large_to_look_at_are_drawn_in_part_and_say_so():
    """A 256 x 256 read (65,536 elements) was refused; it is drawn: its first rows and columns, titled with
    what part is shown, and the caption says the picture is summarised."""
    big = [[0x400 + 2 * (256 * m + k) for k in range(256)] for m in range(256)]
    figure = places.desc_addresses("t", [], big, 2)
    text = svg.render(figure)
    drawn = cells(text)
    rows = 1 + max(r for p, r, _ in drawn if p == 0)
    columns = 1 + max(c for p, _, c in drawn if p == 0)
    assert rows < 256 and columns < 256
    assert all(drawn[(0, m, k)] == hex(big[m][k]) for m in range(rows) for k in range(columns))
    titles = [e.text for e in ET.fromstring(text).iter(f"{SVG}text") if e.get("class") == "panel"]
    assert f"showing rows 0-{rows - 1} of 256, columns 0-{columns - 1} of 256" in titles[0]
    captions = [e.text for e in ET.fromstring(text).iter(f"{SVG}text") if e.get("class") == "caption"]
    assert any("summarised" in line for line in captions)


def test_png_is_a_png_of_the_svg_geometry(tmp_path):
    """The PNG has the SVG's size, and each cell's pixels (inside its edge, off its label) are its fill, in
    every band of rows the PNG is drawn in."""
    assert png.available(), "the test extra installs matplotlib (the `pictures` extra)"
    from PIL import Image
    desc = spec_descriptor.decode("sm90", 0x4000004000000040)
    op = readmap.make_operand(desc, "bf16", "K", 64)
    figure = places.desc_addresses("t", ["c"], readmap.read_addresses(op), 2)
    path = tmp_path / "p.png"
    png.render(figure, str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    g = svg.geometry(figure)
    assert (width, height) == (round(g["width"]), round(g["height"]))
    image = Image.open(path).convert("RGB")
    assert height > 2 * png.BAND
    for index, panel in enumerate(figure.panels):
        x0, y0, w = g["panels"][index]
        for cell in panel.cells:
            x, y = x0 + cell.column * w + 2, y0 + cell.row * svg.CELL_HEIGHT + 2
            assert "#%02x%02x%02x" % image.getpixel((x, y)) == cell.fill, (index, cell.row, cell.column)


# --- the commands (--svg / --png) ----------------------------------------------------------------------------

def _cli(capsys, *argv):
    from solver.cli.main import main
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_desc_addresses_svg_from_the_command_line_is_spec_read_map(capsys, tmp_path):
    picture = tmp_path / "d.svg"
    code, out, _ = _cli(capsys, "desc", "addresses", "--arch", "sm90", "0x4000004000000040", "--dtype", "bf16",
                        "--major", "K", "--mn", "64", "--svg", str(picture), "--png", str(tmp_path / "d.png"))
    assert code == 0 and out.startswith("sm90 K-major bf16")
    op = readmap.make_operand(spec_descriptor.decode("sm90", 0x4000004000000040), "bf16", "K", 64)
    drawn = cells(picture.read_text())
    assert all(drawn[(0, m, k)] == hex(readmap.element_address(op, m, k)) for m in range(64) for k in range(op.k))
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"


def test_check_picture_of_a_wrong_descriptor_outlines_what_it_misreads(capsys, tmp_path):
    """SBO 512 instead of 1024 (the tile's 8-row groups are 1024 bytes apart): rows 8.. are misread."""
    picture = tmp_path / "c.svg"
    layout = "Sw<3,4,3> o ((8,8),64):((64,512),1)"
    code, _, _ = _cli(capsys, "check", "0x4000002000010040", "--arch", "sm90", "--dtype", "bf16", "--major", "K",
                      "--mn", "64", "--layout", layout, "--start-address", "0x400", "--svg", str(picture))
    assert code == 1
    from solver.synth import descriptor as synth
    tile = synth.make_tile("sm90", "bf16", "K", 64, layout, 0x400)
    op = readmap.make_operand(spec_descriptor.decode("sm90", 0x4000002000010040), "bf16", "K", 64)
    expected, read = tile.targets(), readmap.read_addresses(op)
    wrong = {(m, k) for m in range(64) for k in range(op.k) if expected[m][k] != read[m][k]}
    assert wrong and all(m >= 8 for m, _ in wrong)
    marked = {key[1:] for key, e in rects(picture.read_text()).items() if e.get("stroke") == "#d62728" and key[0] == 1}
    assert marked == wrong


def test_recipe_picture_shows_each_k_step_read_where_the_tma_wrote(capsys, tmp_path):
    picture = tmp_path / "r.svg"
    code, _, _ = _cli(capsys, "recipe", "--arch", "sm90", "--dtype", "f16", "--major", "MN", "--mn", "64", "--k-tile",
                      "32", "--swizzle", "64B", "--smem-address", "0x800", "--svg", str(picture))
    assert code == 0
    text = picture.read_text()
    assert not [e for e in rects(text).values() if e.get("stroke") == "#d62728"]      # proved: nothing misread
    drawn = cells(text)
    from solver.synth import recipe
    r = recipe.build("sm90", "f16", "MN", 64, 32, "64B", 0x800)
    for step, instruction in enumerate(r.instructions):
        op = readmap.make_operand(spec_descriptor.decode("sm90", int(instruction["descriptor"], 16)), "f16", "MN", 64)
        assert all(drawn[(1 + step, m, k)] == hex(readmap.element_address(op, m, k))
                   for m in range(64) for k in range(op.k))


def test_pictures_of_nothing_and_to_nowhere_are_one_line_exit_2(capsys, tmp_path):
    code, out, err = _cli(capsys, "tma", "place", "--swizzle", "NONE", "--elem-bytes", "2", "--box", "256,256,4",
                          "--smem-address", "0", "--svg", str(tmp_path / "p.svg"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "svg" in err
    code, out, err = _cli(capsys, "tma", "place", "--swizzle", "128B", "--elem-bytes", "2", "--box", "64,8",
                          "--smem-address", "0x400", "--png", "/proc/no/such/dir/p.png")
    assert code == 2 and out == "" and err.count("\n") == 1 and "png" in err


def test_tmem_map_png(capsys, tmp_path):
    code, _, _ = _cli(capsys, "tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x2", "--png",
                      str(tmp_path / "m.png"))
    assert code == 0 and (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


# --- colours ---------------------------------------------------------------------------------------------------

def _lab(colour: str) -> tuple:
    """CIE L*a*b* (D65) of an sRGB '#rrggbb' (CIE 15; sRGB, IEC 61966-2-1)."""
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b,
           0.0193 * r + 0.1192 * g + 0.9505 * b)
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29
         for t in (xyz[0] / 0.95047, xyz[1], xyz[2] / 1.08883)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _difference(one: str, other: str) -> float:
    """CIE76 colour difference: about 2.3 is just noticeable; above 20 reads as another colour."""
    return sum((p - q) ** 2 for p, q in zip(_lab(one), _lab(other))) ** 0.5


def _hue_degrees(colour: str) -> float:
    import colorsys
    return 360 * colorsys.rgb_to_hls(*[int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])[0]


def test_the_palette_keeps_clear_of_red_which_marks_misreads():
    from solver.pictures.figure import HALO, MISMATCH, palette
    assert min(_hue_degrees(MISMATCH), 360 - _hue_degrees(MISMATCH)) < 10        # the mark is red
    for index in range(256):
        hue = _hue_degrees(palette(index))
        assert min(hue, 360 - hue) >= 30, (index, palette(index))
        assert _difference(palette(index), MISMATCH) > 40 and _difference(palette(index), HALO) > 40


def test_adjacent_palette_colours_are_distinguishable():
    from solver.pictures.figure import CHUNK_COLOURS, EMPTY, palette
    assert all(_difference(palette(i), palette(i + 1)) > 25 for i in range(256))
    assert all(_difference(a, b) > 10 for i, a in enumerate(CHUNK_COLOURS) for b in CHUNK_COLOURS[i + 1:])
    assert all(_difference(c, EMPTY) > 10 for c in CHUNK_COLOURS)           # an empty chunk reads as empty
    assert all(_lab(palette(i))[0] > 55 for i in range(256))                 # black labels stay readable


def test_legend_marks_are_never_a_cell_fill(capsys, tmp_path):
    """The legend's mark (red: misread) appears only as an outline, and no cell is filled with it or with a
    colour of the legend that is not a palette colour."""
    from solver.pictures.figure import MISMATCH, palette
    picture = tmp_path / "c.svg"
    _cli(capsys, "check", "0x4000002000010040", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64",
         "--layout", "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400", "--svg", str(picture))
    root = ET.fromstring(picture.read_text())
    legend = {e.get("fill") for e in root.iter(f"{SVG}rect") if e.get("class") == "legend"}
    fills = {e.get("fill") for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"}
    strokes = {e.get("stroke") for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"}
    palette_colours = {palette(i) for i in range(256)}
    assert MISMATCH in legend and MISMATCH in strokes and MISMATCH not in fills
    assert fills <= palette_colours and not (legend - palette_colours) & fills


def _memory_fills(swizzle: str) -> dict:
    """(line row, chunk column) -> fill of the recipe's shared-memory map, sm90 K-major bf16 64 x 64 at 0x400."""
    from solver.synth import recipe
    text = svg.render(places.recipe_figure(recipe.build("sm90", "bf16", "K", 64, 64, swizzle, 0x400)))
    return {key[1:]: e.get("fill") for key, e in rects(text).items() if key[0] == 0}


def test_the_recipe_map_shows_the_swizzle_even_with_one_load():
    """A chunk of the map is coloured by the chunk its element would fill without the swizzle. With 128B,
    one TMA load writes the whole 64 x 64 tile, and chunk c of line r holds what would be chunk
    c XOR (r mod 8) (the 128B swizzle, PTX 5.5.7, the tile at a 1024-byte boundary): each line shows all
    eight colours, in another order on each of 8 lines. Without a swizzle every chunk keeps its own colour."""
    from solver.pictures.figure import CHUNK_COLOURS
    from solver.synth import recipe
    assert len(recipe.build("sm90", "bf16", "K", 64, 64, "128B", 0x400).tma["loads"]) == 1
    swizzled, plain = _memory_fills("128B"), _memory_fills("none")
    assert swizzled != plain
    assert all(fill == CHUNK_COLOURS[c ^ (r % 8)] for (r, c), fill in swizzled.items())
    assert all(fill == CHUNK_COLOURS[c] for (r, c), fill in plain.items())
    assert len(swizzled) == len(plain) == 32 * 8          # the first 32 lines, every chunk full
