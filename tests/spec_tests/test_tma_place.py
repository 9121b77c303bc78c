"""Tiled TMA box placement (layoutproof tma place): expectations worked out by hand from the PTX 5.5.7
tables (16-byte chunks per 128-byte row, row chosen by the absolute address)."""
import json

import pytest

from solver.cli.main import main
from spec.tma import place as tma_place
from spec.rules import SpecError, rules_for

# PTX 5.5.7, 128-byte swizzle, 16-byte atomicity: row r of the table maps chunk c to chunk c ^ r.
ROW_128B = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4],
            [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2], [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]]


@pytest.mark.parametrize("destination", [0x400, 0x480, 0x600])
def test_128b_rows_follow_the_table_of_the_absolute_line(destination):
    """Box of 64 bf16 x 8 rows: row i is 128 bytes at destination + 128 i, in table row
    (address / 128) % 8; element e of chunk c lands in the chunk the table row puts c in."""
    offsets = tma_place.place(tma_place.make_box("128B", 2, (64, 8), destination))
    for i in range(8):
        line = destination + 128 * i
        table_row = ROW_128B[(line // 128) % 8]
        for element in range(64):
            chunk, inside = divmod(element * 2, 16)
            assert offsets[i * 64 + element] == line + 16 * table_row.index(chunk) + inside


def test_none_is_dense():
    assert tma_place.place(tma_place.make_box("NONE", 4, (8, 3), 0x100)) == [0x100 + 4 * i for i in range(24)]


def test_element_strides_count_loaded_elements():
    box = tma_place.make_box("NONE", 4, (8, 5), 0, element_strides=(1, 2))
    assert box.counts == (8, 3) and len(tma_place.place(box)) == 24


def test_flip_mode_swaps_8_byte_halves_on_odd_lines():
    offsets = tma_place.place(tma_place.make_box("128B_ATOM_32B_FLIP_8B", 8, (16, 2), 0))
    assert offsets[0] == 0                      # line 0: no flip, chunk 0 stays
    assert offsets[16] % 16 == 8                # line 1: the first 8-byte half moves to the second


BREAKERS = {
    "tma.map.box_range": tma_place.make_box("NONE", 1, (512, 2), 0),
    "tma.map.box_inner_16B": tma_place.make_box("NONE", 2, (7, 2), 0),
    "tma.map.box_swizzle_span": tma_place.make_box("32B", 2, (64, 2), 0),
    "tma.map.element_strides_range": tma_place.make_box("NONE", 4, (8, 2), 0, element_strides=(1, 9)),
    "tma.box.destination_alignment": tma_place.make_box("NONE", 4, (8, 2), 0x410),
    # a load starting 2 x 2 = 4 bytes into dimension 0 (the H100 traps)
    "tma.load.coord0_16B": tma_place.make_box("NONE", 2, (8, 2), 0, coord0=2),
}


def test_every_box_rule_has_a_breaker():
    assert set(BREAKERS) == {r.id for r in rules_for("tma_box")}


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_box_rule_is_broken(rule_id):
    assert rule_id in [v.rule.id for v in tma_place.violations(BREAKERS[rule_id])]


def test_cli_contract(capsys):
    assert main(["tma", "place", "--swizzle", "128B", "--elem-bytes", "2", "--box", "64,8",
                 "--smem-address", "0x400", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["offsets"]) == 512 and doc["offsets"][64] == 0x480 + 16   # row 1, chunk 0 -> chunk 1
    assert main(["tma", "place", "--swizzle", "32B", "--elem-bytes", "2", "--box", "64,2",
                 "--smem-address", "0", "--json"]) == 1
    capsys.readouterr()
    assert main(["tma", "place", "--swizzle", "128B", "--elem-bytes", "3", "--box", "64",
                 "--smem-address", "0"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "elem_bytes" in err


def test_bad_box_is_a_spec_error():
    with pytest.raises(SpecError):
        tma_place.make_box("128B", 2, (0, 8), 0)
