"""`layoutproof scales map | check` and the Python API (docs/CLI.md `scales`): the documents, exit codes and
one-line errors. The expected positions come from the cuBLAS / CUTLASS formula checked in
tests/spec_tests/test_scales_spec.py, not from the command."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import layoutproof as lp


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "layoutproof", "scales", *argv], capture_output=True, text=True)


def test_map_json_carries_the_offsets_of_every_row_and_block():
    out = _cli("map", "--sf-layout", "interleaved", "--rows", "256", "--k", "256", "--block", "32", "--json")
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["k_blocks"] == 8 and document["footprint"] == 2 * 2 * 512
    # row 130: tile row 1 (2 K tiles of 512 B each before it), 16-byte row 2, 4-byte group 0; block 5: tile 1, byte 1
    assert document["offsets"][130][5] == (1 * 2 + 1) * 512 + 2 * 16 + 0 * 4 + 1


def test_check_exits_1_with_the_element_and_the_scale_it_gets():
    out = _cli("check", "--sf-layout", "linear-mn", "--kind", "mxf8f6f4", "--rows", "128", "--k", "128", "--json")
    assert out.returncode == 1
    misread = json.loads(out.stdout)["misread"]
    assert misread["row"] == 0 and misread["k_block"] == 1 and misread["k"] == [32, 63]
    assert misread["expected_offset"] == 128                      # column-major: block 1 starts after 128 rows
    assert misread["applied_offset"] == 1 and misread["applied_scale_of"] == [1, 0]


@pytest.mark.parametrize("argv, field", [
    (["map", "--sf-layout", "interleaved", "--rows", "0", "--k", "64", "--block", "16"], "rows"),
    (["map", "--sf-layout", "interleaved", "--rows", "100000", "--k", "10000000", "--block", "16"], "rows"),
    (["check", "--sf-layout", "interleaved", "--kind", "mxf4nvf4", "--rows", "128", "--k", "128"], "scale_vec"),
    (["check", "--sf-layout", "interleaved", "--kind", "mxf4", "--scale-vec", "4X", "--rows", "128", "--k", "128"],
     "scale_vec"),
])
def test_bad_input_is_one_line_naming_the_field(argv, field):
    out = _cli(*argv)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and field in out.stderr


def test_the_python_api_returns_typed_results():
    found = lp.scales_map("linear-mn", 4, 64, 16)
    assert found.offsets == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    checked = lp.scales_check("interleaved", "mxf4nvf4", "block16", rows=128, k=256)
    assert checked.ok and checked.as_json()["scale_vec"] == "4X"


def test_a_check_too_large_to_follow_is_refused_before_work():
    out = _cli("check", "--sf-layout", "interleaved", "--kind", "mxf4", "--rows", "1024", "--k", "65536")
    assert out.returncode == 2 and "rows" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_map_draws_an_svg_and_summarises_a_large_one(tmp_path):
    picture = tmp_path / "map.svg"
    done = _cli("map", "--sf-layout", "interleaved", "--rows", "40", "--k", "128", "--block", "16",
                "--svg", str(picture))
    assert done.returncode == 0
    text = picture.read_text()
    assert text.startswith("<svg") or "<svg" in text[:200]
    assert ">0x4<" in text          # row 32, block 0: the second 4-byte group of the tile's first 16-byte row
    big = _cli("map", "--sf-layout", "interleaved", "--rows", "4096", "--k", "4096", "--block", "16",
               "--svg", str(tmp_path / "big.svg"))
    # 4096 rows x 256 blocks: the first rows and blocks are drawn, and the picture says so (issue 29)
    assert big.returncode == 0 and "showing rows 0-127 of 4096, columns 0-63 of 256" in (tmp_path / "big.svg").read_text()
