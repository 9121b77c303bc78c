"""Issue 29, friction 5: every picture a command draws stays a picture one can look at, at every size the
command accepts. For each drawing command at its largest accepted size the SVG and the PNG are written
(not refused), under 4,000 pixels each way, with at most 10,000 cells; a panel drawn in part says so in
its title ("showing rows 0-63 of 4096") with the totals the command's arguments give, and the caption
says the picture is summarised; the cells drawn are the first rows and columns, each where spec puts it.

Time and memory are measured by benchmarks/bench_pictures.py, not here."""
from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET

import pytest

from solver.cli.main import main
from solver.pictures import png

SVG = "{http://www.w3.org/2000/svg}"
MAX_PIXELS = 4000            # each way (the picture was 13,208 pixels tall)
MAX_CELLS = 10_000           # cells drawn in one picture

DESC = ["desc", "addresses", "--arch", "sm90", "0x4000004000000040", "--dtype", "bf16", "--major", "K"]

# (argv, {panel: (rows, columns) there are}, drawn in part or not). The totals come from the arguments:
# an (mn, k) grid has mn rows and k columns; a box d0 x d1 x d2 has d1 * d2 rows of d0; a shared-memory
# map has one row per 128-byte line the bytes fill (bytes / 128 for a dense tile or box).
LARGEST = {
    "desc addresses 4096 x 256": (DESC + ["--mn", "4096", "--k", "256"], {0: (4096, 256)}),
    "desc addresses 256 x 4096": (DESC + ["--mn", "256", "--k", "4096"], {0: (256, 4096)}),
    "check 4096 x 256": (["check", "0x4000004000000040", "--arch", "sm90", "--dtype", "bf16", "--major", "K",
                          "--mn", "4096", "--k", "256", "--layout", "(4096,256):(256,1)", "--start-address", "0"],
                         {0: (4096, 256), 1: (4096, 256)}),
    # 256 x 1792 4-bit elements: 229,376 bytes, 1,792 lines; k-steps read 256 rows of 64 (kind::mxf4 K)
    "recipe e2m1 256 x 1792": (["recipe", "--arch", "sm100", "--dtype", "e2m1", "--major", "K", "--mn", "256",
                                "--k-tile", "1792", "--swizzle", "128B", "--smem-address", "0x400"],
                               {0: (1792, 8), 1: (256, 64), 4: (256, 64)}),
    # K-major, no swizzle: 56 loads of 8 x 256 two-byte elements, 229,376 bytes (an MN-major box holds the
    # whole K as its rows, at most 256: rule tma.map.box_range)
    "recipe bf16 K 256 x 448": (["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "256",
                                  "--k-tile", "448", "--swizzle", "none", "--smem-address", "0x400"],
                                 {0: (1792, 8), 1: (256, 16)}),
    # 256 x 228 x 4 one-byte elements: 912 rows of 256, 233,472 bytes = 1,824 lines
    "tma place 256 x 228 x 4": (["tma", "place", "--swizzle", "NONE", "--elem-bytes", "1", "--box", "256,228,4",
                                 "--smem-address", "0"], {0: (912, 256), 1: (1824, 8)}),
    "tma place 128 x 256 x 7 128B": (["tma", "place", "--swizzle", "128B", "--elem-bytes", "1", "--box",
                                      "128,256,7", "--smem-address", "0x400"], {0: (1792, 128), 1: (1792, 8)}),
    # .im2col::w: 1024 pixels and a halo of 511 along w, each a row of 256 one-byte channels (2 lines)
    "im2col w 1535 pixels x 256 channels": (["im2col", "--arch", "sm100", "--mode", "w", "--tensor", "256,8192,1,1",
                                             "--lower=0", "--upper=0", "--channels-per-pixel", "256",
                                             "--pixels-per-column", "1024", "--coords", "0,0,0,0", "--w-halo", "511",
                                             "--elem-bytes", "1", "--swizzle", "128B", "--smem-address", "0"],
                                            {0: (1, 1535), 1: (3070, 8)}),
    # 32 lanes; .x128 of 32-bit columns, each unpacked into two 16-bit halves' columns with .pack
    "tmem map 32x32b x128 pack": (["tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x128", "--pack"],
                                  {0: (32, 256)}),
    "scales map 2^20 rows": (["scales", "map", "--sf-layout", "interleaved", "--rows", "1048576", "--k", "16",
                              "--block", "16"], {0: (1 << 20, 1)}),
    "scales map 2^20 blocks": (["scales", "map", "--sf-layout", "linear-k", "--rows", "1", "--k", str(16 << 20),
                                "--block", "16"], {0: (1, 1 << 20)}),
}


def _draw(tmp_path, capsys, argv: list):
    """Run the command with --svg and --png; (the SVG's root element, the PNG's bytes)."""
    svg_path, png_path = tmp_path / "p.svg", tmp_path / "p.png"
    code = main(argv + ["--svg", str(svg_path), "--png", str(png_path)])
    capsys.readouterr()
    assert code in (0, 1), f"exit {code}: the picture was refused"
    return ET.parse(svg_path).getroot(), png_path.read_bytes()


def _panels(root) -> dict:
    """panel -> (its title text, rows drawn, columns drawn, rows there are, columns there are)."""
    found = {}
    for e in root.iter(f"{SVG}text"):
        if e.get("class") == "panel":
            index = int(e.get("data-panel"))
            drawn = [c for c in root.iter(f"{SVG}rect")
                     if c.get("class") == "cell" and c.get("data-panel") == str(index)]
            rows = len({c.get("data-row") for c in drawn})
            columns = len({c.get("data-column") for c in drawn})
            found[index] = (e.text, rows, columns, int(e.get("data-rows-total", rows)),
                            int(e.get("data-columns-total", columns)))
    return found


@pytest.mark.parametrize("name", list(LARGEST))
def test_the_largest_picture_of_each_command_is_drawn_summarised_and_says_so(name, tmp_path, capsys):
    argv, totals = LARGEST[name]
    root, picture = _draw(tmp_path, capsys, argv)
    width, height = int(root.get("width")), int(root.get("height"))
    assert width <= MAX_PIXELS and height <= MAX_PIXELS, (width, height)
    assert picture[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", picture[16:24]) == (width, height)
    assert len([e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]) <= MAX_CELLS
    captions = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "caption")
    assert "summarised" in captions
    panels = _panels(root)
    for index, (rows, columns) in totals.items():
        title, drawn_rows, drawn_columns, rows_there, columns_there = panels[index]
        assert (rows_there, columns_there) == (rows, columns), title
        shown = [f"rows 0-{drawn_rows - 1} of {rows}"] * (drawn_rows < rows) + \
                [f"columns 0-{drawn_columns - 1} of {columns}"] * (drawn_columns < columns)
        assert shown and f"(showing {', '.join(shown)})" in title, title


def test_the_cells_of_a_summarised_read_map_are_its_first_rows_and_columns_where_spec_reads_them(tmp_path, capsys):
    from spec.mma import descriptor as spec_descriptor
    from spec.mma import readmap
    root, _ = _draw(tmp_path, capsys, LARGEST["desc addresses 4096 x 256"][0])
    op = readmap.make_operand(spec_descriptor.decode("sm90", 0x4000004000000040), "bf16", "K", 4096, 256)
    drawn = {(int(e.get("data-row")), int(e.get("data-column"))): e.text for e in root.iter(f"{SVG}text")
             if e.get("class") == "cell" and e.get("data-panel") == "0"}
    rows = 1 + max(r for r, _ in drawn)
    columns = 1 + max(c for _, c in drawn)
    assert set(drawn) == {(r, c) for r in range(rows) for c in range(columns)}
    assert all(label == hex(readmap.element_address(op, r, c)) for (r, c), label in drawn.items())


def test_a_summarised_check_counts_every_misread_element_drawn_or_not(tmp_path, capsys):
    from solver.synth import descriptor as synth
    from spec.mma import descriptor as spec_descriptor
    from spec.mma import readmap
    argv = LARGEST["check 4096 x 256"][0]
    root, _ = _draw(tmp_path, capsys, argv)
    tile = synth.make_tile("sm90", "bf16", "K", 4096, "(4096,256):(256,1)", 0, k=256)
    read = readmap.read_addresses(readmap.make_operand(spec_descriptor.decode("sm90", 0x4000004000000040), "bf16",
                                                       "K", 4096, 256))
    wrong = sum(a != b for want, got in zip(tile.targets(), read) for a, b in zip(want, got))
    captions = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "caption")
    assert re.search(rf"\b{wrong} of {4096 * 256} elements misread", captions), captions


def test_a_picture_within_the_budget_is_drawn_whole_and_says_nothing_of_summaries(tmp_path, capsys):
    root, _ = _draw(tmp_path, capsys, ["tma", "place", "--swizzle", "128B", "--elem-bytes", "2", "--box", "64,8",
                                       "--smem-address", "0x400"])
    captions = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "caption")
    assert "summarised" not in captions
    panels = _panels(root)
    assert panels[0][1:] == (8, 64, 8, 64) and "showing" not in panels[0][0]
    assert panels[1][1:] == (8, 8, 8, 8)          # 64 x 8 two-byte elements: 1,024 bytes, 8 lines


def test_png_extra_is_installed_for_these_tests():
    assert png.available(), "the test extra installs matplotlib (the `pictures` extra), which brings Pillow"
