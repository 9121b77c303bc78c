"""`layoutproof tmem check | alloc | map`: the documents follow docs/CLI.md, agree with spec/tmem, and bad
input exits 2 with one line. Expectations come from the manual's counts and from spec/tmem (the
executable specification), which tests/spec_tests/test_tmem_spec.py, the ptxas recording and CUTLASS check."""
from __future__ import annotations

import json

import pytest

from solver.cli.main import main
from spec.tmem import ld_st


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("shape", ld_st.SHAPES)
@pytest.mark.parametrize("pack", (False, True))
def test_map_json_is_the_fragment_map(capsys, shape, pack):
    num = 2
    split = ["--half-splitoff", str(num * (2 if pack else 1))] if shape == "16x32bx2" else []
    code, out, _ = run(capsys, "tmem", "map", "--op", "ld", "--shape", shape, "--num", f"x{num}",
                       *(["--pack"] if pack else []), *split, "--json")
    document = json.loads(out)
    assert code == 0 and len(document["pieces"]) == 32
    expected = ld_st.fragment_map(shape, num, pack, int(split[1]) if split else None)
    assert document["pieces"] == [[list(piece) for piece in thread] for thread in expected]
    # PTX 9.7.16.2.3: a warp moves lanes x (bits x num) of data (16x32bx2: two 16x32b accesses), which is
    # 32 threads x registers x 32 bits
    accesses = 2 if shape == "16x32bx2" else 1
    assert document["registers_per_thread"] * 32 * 32 == \
        accesses * ld_st.SHAPE_LANES[shape] * ld_st.SHAPE_BITS[shape] * num


def test_map_text_names_every_register_once(capsys):
    code, out, _ = run(capsys, "tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x4")
    cells = [cell for line in out.splitlines()[3:] for cell in line.split()[1:]]
    assert code == 0 and len(cells) == 32 * 4 and len(set(cells)) == len(cells)


def test_check_exit_statuses(capsys):
    ok = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0]"
    assert run(capsys, "tmem", "check", "--arch", "sm100", "--ptx", ok)[0] == 0
    short = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1}, [%r0]"        # Table 49: x2 is two registers
    code, out, _ = run(capsys, "tmem", "check", "--arch", "sm_100a", "--ptx", short, "--json")
    document = json.loads(out)
    assert code == 1 and not document["ptxas_accepts"] and document["violations"]
    code, out, err = run(capsys, "tmem", "check", "--arch", "sm_100a", "--ptx", "mov.b32 %r1, 0")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "tmem", "check", "--arch", "sm_75", "--ptx", ok)
    assert code == 2 and "arch" in err


def test_alloc_sequence(capsys, tmp_path):
    good = [{"op": "alloc", "warp": 0, "columns": 128}, {"op": "relinquish_alloc_permit", "warp": 0},
            {"op": "dealloc", "warp": 0, "columns": 128}]
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good))
    assert run(capsys, "tmem", "alloc", "--ops", str(path), "--json")[:2] == (0, '{"violations": []}\n')
    bad = good[:1] + [{"op": "alloc", "warp": 0, "columns": 48}] + good[1:]     # 48: not a power of two
    path.write_text(json.dumps({"ops": bad}))
    code, out, _ = run(capsys, "tmem", "alloc", "--ops", str(path), "--json")
    indices = {v["index"] for v in json.loads(out)["violations"]}
    assert code == 1 and 1 in indices
    path.write_text("[{]")
    code, out, err = run(capsys, "tmem", "alloc", "--ops", str(path))
    assert code == 2 and out == "" and "not JSON" in err


def test_ld_cells_and_the_lane_quarter(capsys):
    # 32x32b.x4: 32 lanes x 4 columns (PTX 9.7.16.2.3: 32 * num bits per lane); warp 1's quarter is 32..63
    code, out, _ = run(capsys, "tmem", "ld", "--shape", "32x32b", "--num", "x4", "--lane", "32", "--column", "8",
                       "--warp", "1", "--arch", "sm_100a", "--json")
    document = json.loads(out)
    assert code == 0 and document["count"] == 32 * 4 and document["violations"] == []
    assert document["extent"] == {"lanes": [32, 63], "columns": [8, 11]}
    code, out, _ = run(capsys, "tmem", "st", "--shape", "32x32b", "--num", "x4", "--lane", "32", "--column", "8",
                       "--warp", "2", "--arch", "sm_100a", "--json")                # warp 2 may touch lanes 64..95 only
    assert code == 1 and [v["rule"] for v in json.loads(out)["violations"]] == ["tmem.access.lane_quarter"]


def test_cp_multicast_writes_each_row_to_its_lanes(capsys):
    code, out, _ = run(capsys, "tmem", "cp", "--shape", "32x128b", "--multicast", "warpx4", "--cta-group", "2",
                       "--json")
    document = json.loads(out)
    # .32x128b.warpx4: 32 rows of 128 bits, each copied to the four warps' quarters (PTX 9.7.16.9)
    assert code == 0 and len(document["row_lanes"]) == 32
    assert all(sorted(lane % 32 for lane in lanes) == [r] * 4 for r, lanes in enumerate(document["row_lanes"]))
    assert document["self"]["count"] == 128 * 4 and document["peer"] == document["self"]


def test_shift_moves_31_lanes_down(capsys):
    code, out, _ = run(capsys, "tmem", "shift", "--lane", "32", "--json")
    document = json.loads(out)
    assert code == 0 and len(document["moves"]) == 31 * 8       # 31x256b: 31 lanes of 8 32-bit columns
    assert all(source[0] == destination[0] + 1 and source[1] == destination[1]
               for source, destination in document["moves"])


@pytest.mark.parametrize("shape, num", [("16x256b", 1), ("32x32b", 2), ("16x64b", 4)])
def test_map_picture_shows_every_register_once_where_the_map_says(capsys, tmp_path, shape, num):
    import xml.etree.ElementTree as ElementTree
    picture = tmp_path / "map.svg"
    code, _, _ = run(capsys, "tmem", "map", "--op", "ld", "--shape", shape, "--num", f"x{num}", "--svg", str(picture))
    root = ElementTree.parse(picture).getroot()
    texts = [e for e in root.iter("{http://www.w3.org/2000/svg}text") if e.get("class") == "cell"]
    placed = {e.text: (int(e.get("data-row")), int(e.get("data-column"))) for e in texts}
    assert code == 0 and len(placed) == len(texts)                    # every label once
    pieces = ld_st.fragment_map(shape, num)
    lanes = sorted({lane for thread in pieces for lane, _, _ in thread})
    columns = sorted({column for thread in pieces for _, column, _ in thread})
    for t, thread in enumerate(pieces):
        for j in range(0, len(thread), 2):                            # a register: pieces j and j + 1
            lane, column, _ = thread[j]
            assert placed[f"{t}.{j // 2}"] == (lanes.index(lane), columns.index(column))
    assert len(placed) == 32 * ld_st.registers_per_thread(shape, num)


def test_map_picture_to_an_unwritable_path_is_one_line(capsys):
    code, out, err = run(capsys, "tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x1",
                         "--svg", "/proc/no/such/dir.svg")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "svg" in err


def test_a_long_bad_value_is_cut_in_the_one_line_error(capsys):
    code, out, err = run(capsys, "tmem", "check", "--arch", "sm100", "--ptx", "x" * 100000)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert len(err) < 300 and "100000 characters" in err
