"""Replay CUTLASS 4.2.0's SM100 tensor-memory copy atoms (tests/hardware/cutlass_tmem_atoms.json.gz,
recorded by hardware/run_cutlass_tmem_atoms.py from cute/atom/copy_traits_sm100.hpp) with no toolkit.

Each atom is one tcgen05.ld / tcgen05.st as CUTLASS issues it (shape, .num, .pack::16b /
.unpack::16b, and for .16x32bx2 the immediate half-split offset CUTLASS passes), and the recording
says, for every thread and every 16-bit piece j of its registers (register j // 2, its low half when
j is even), the TMEM (lane, column, half) CuTe's layouts assign to it, relative to the instruction's
address. The checks below need only the recording; the last one compares it with the executable
specification's fragment map.
"""
import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import sys

import pytest

HERE = TESTS_DIR
sys.path.insert(0, os.path.join(HERE, "..", "hardware"))

import run_cutlass_tmem_atoms as runner  # noqa: E402
RECORDING = os.path.join(HERE, "hardware", "cutlass_tmem_atoms.json.gz")

with gzip.open(RECORDING, "rt") as _f:
    DOC = json.load(_f)
ATOMS = {a["name"]: a for a in DOC["atoms"]}

# CUTLASS's name (lanes "dp", bits) -> the PTX shape it issues, and the largest .num it offers.
SHAPES = {(16, 256): ("16x256b", 32), (16, 128): ("16x128b", 64), (16, 64): ("16x64b", 128),
          (16, 32): ("16x32bx2", 128), (32, 32): ("32x32b", 128)}


def expected_names():
    names = set()
    for op in ("LOAD", "STORE"):
        for (dp, bits), (_, top) in SHAPES.items():
            num = 1
            while num <= top:
                for suffix in ("", "_16b"):
                    names.add("SM100_TMEM_%s_%ddp%db%dx%s" % (op, dp, bits, num, suffix))
                num *= 2
    return names


def footprint(atom):
    """(lanes, columns, halves) the atom's name and instruction imply, relative to its address.

    One access of shape LxBb.xN covers L lanes and B*N/32 columns; .16x32bx2 makes two 16-lane
    accesses, the second half_splitoff columns further on; .pack::16b takes only the low 16 bits of
    each cell, so the same registers span twice the columns.
    """
    f, ptx = atom["name_fields"], atom["ptx"]
    cols = f["bits"] * f["repeat"] // 32 * (2 if f["pack16b"] else 1)
    if ptx["shape"] == "16x32bx2":
        cols *= 2
    halves = (0,) if f["pack16b"] else (0, 1)
    return f["dp"], cols, halves


def test_recording_says_where_it_comes_from():
    header = DOC["provenance"]
    src = header["details"]
    assert src["cutlass_version"] == "4.2.0" and "CUTLASS 4.2.0" in header["source"]
    assert src["nvcc"] and "nvcc" in src["compile"] and header["command"].startswith("python3 hardware/")
    assert header["recorded_by"] == "hardware/run_cutlass_tmem_atoms.py"
    assert src["traits_header"] == "cute/atom/copy_traits_sm100.hpp"


def test_every_tmem_atom_is_recorded():
    assert set(ATOMS) == expected_names()
    assert len(ATOMS) == 148


@pytest.mark.parametrize("name", sorted(ATOMS))
def test_atom_issues_the_instruction_its_name_says(name):
    atom = ATOMS[name]
    f, ptx = atom["name_fields"], atom["ptx"]
    shape, _ = SHAPES[(f["dp"], f["bits"])]
    assert ptx["op"] == ("ld" if atom["op"] == "LOAD" else "st")
    assert ptx["shape"] == shape and ptx["num"] == f["repeat"] and ptx["pack"] == f["pack16b"]
    qualifier = (".pack::16b" if atom["op"] == "LOAD" else ".unpack::16b") if f["pack16b"] else ""
    assert ptx["instruction"] == "tcgen05.%s.sync.aligned.%s.x%d%s.b32" % (ptx["op"], shape, f["repeat"], qualifier)
    # the warp's 32 threads share the bits the instruction moves: lanes x columns x 32 (16 when packed)
    lanes, cols, halves = footprint(atom)
    assert ptx["registers"] * 32 == atom["register_bits"] == lanes * cols * 16 * len(halves) // 32
    if shape == "16x32bx2":
        # CUTLASS passes the columns of one half as the offset: .num, or 2 x .num with .pack::16b
        assert ptx["half_splitoff"] == f["repeat"] * (2 if f["pack16b"] else 1)
    else:
        assert ptx["half_splitoff"] is None


def test_recorded_instructions_parse_as_recorded():
    for atom in ATOMS.values():
        assert runner.parse_ptx(atom["ptx"]["template"]) == atom["ptx"], atom["name"]


def test_recording_matches_the_installed_headers():
    """Where CUTLASS 4.2.0's headers are installed, the recording lists exactly their atoms and PTX."""
    pytest.importorskip("cutlass_library")
    include = runner.default_include()
    if not os.path.isdir(include) or runner.cutlass_version(include) != DOC["provenance"]["details"]["cutlass_version"]:
        pytest.skip("CUTLASS %s headers not installed" % DOC["provenance"]["details"]["cutlass_version"])
    assert [name for name, _ in runner.traits_atoms(include)] == [a["name"] for a in DOC["atoms"]]
    ops = runner.arch_ops(include)
    for atom in DOC["atoms"]:
        assert runner.parse_ptx(ops[atom["name"]]) == atom["ptx"], atom["name"]


@pytest.mark.parametrize("name", sorted(ATOMS))
def test_atom_map_is_injective_and_covers_its_footprint(name):
    atom = ATOMS[name]
    assert atom["problems"] == [], "pieces that are not one 16-bit half of a cell"
    assert atom["threads_in_atom"] == 32 and len(atom["threads"]) == 32
    assert atom["thread_index"] == list(range(32))
    pieces = atom["register_bits"] // 16
    seen = set()
    for t, thread in enumerate(atom["threads"]):
        assert len(thread) == pieces, t
        seen.update(tuple(p) for p in thread)
    assert len(seen) == 32 * pieces, "two pieces land on the same half-cell"
    lanes, cols, halves = footprint(atom)
    assert seen == {(l, c, h) for l in range(lanes) for c in range(cols) for h in halves}


@pytest.mark.parametrize("name", sorted(n for n in ATOMS if "_STORE_" in n))
def test_store_map_is_the_load_map(name):
    assert ATOMS[name]["threads"] == ATOMS[name.replace("_STORE_", "_LOAD_")]["threads"]


def test_spec_fragment_map_equals_cutlass():
    from spec.tmem import ld_st
    disagreements = []
    for name, atom in sorted(ATOMS.items()):
        ptx = atom["ptx"]
        spec_map = ld_st.fragment_map(ptx["shape"], ptx["num"], pack=ptx["pack"],
                                      half_splitoff=ptx["half_splitoff"])
        assert len(spec_map) == 32, name
        for t in range(32):
            cut, got = atom["threads"][t], [tuple(p) for p in spec_map[t]]
            if len(got) != len(cut):
                disagreements.append("%s thread %d: %d pieces in CUTLASS, %d in spec" % (name, t, len(cut), len(got)))
                continue
            for j, (c, s) in enumerate(zip(cut, got)):
                if tuple(c) != s:
                    disagreements.append("%s thread %d piece %d: CUTLASS %s, spec %s" % (name, t, j, tuple(c), s))
    assert not disagreements, "\n".join(disagreements[:50] + ["... %d in all" % len(disagreements)])
