"""The tensor-memory model (solver/model/tmem.py) and properties (solver/prove/tmem.py): the model's CuTe
layout templates are CUTLASS's recorded layouts at every .num; the Z3 model, evaluated on concrete
pieces, is spec.tmem.ld_st.fragment_map (and CUTLASS's recorded maps); the address layout is spec's;
every property comes out as expected, fast, over a non-empty range; and a deliberately wrong model
makes the injectivity or footprint property fail."""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import re

import pytest
import z3

from solver.model import tmem as model
from solver.model.bitvec import bv, narrow
from solver.prove.catalogue import all_properties
from solver.prove.prover import prove
from spec.tmem import address as spec_address
from spec.tmem import ld_st

RECORDING = os.path.join(TESTS_DIR, "hardware", "cutlass_tmem_atoms.json.gz")
PROPERTIES = {p.id: p for p in all_properties()}
TMEM_IDS = sorted(pid for pid in PROPERTIES if pid.startswith("tmem."))
VARIANTS = [(shape, pack) for shape in model.SHAPES for pack in (False, True)]


def _atoms() -> list:
    with gzip.open(RECORDING, "rt") as f:
        return json.load(f)["atoms"]


def _log2(num: int) -> int:
    return num.bit_length() - 1


def _splitoff(shape: str, num: int, pack: bool, extra: int = 0):
    return model.columns(shape, _log2(num), pack) + extra if shape == "16x32bx2" else None


# --- The model's sources -------------------------------------------------------------------------------
def _normalized(text: str, num: int) -> list:
    """A layout's top-level modes as concrete (extent, stride) leaves, size-1 leaves dropped."""
    e = _log2(num)
    return [[(a + e * n, b + e * m) for (a, n), (b, m) in mode if a + e * n] for mode in model.parse_layout(text)]


def test_the_templates_are_cutlass_recorded_layouts_at_every_num():
    atoms = _atoms()
    assert len(atoms) == 148
    for atom in atoms:
        ptx, layouts = atom["ptx"], atom["layouts"]
        shape, num, pack = ptx["shape"], ptx["num"], ptx["pack"]
        registers = layouts["DstLayout"] if atom["op"] == "LOAD" else layouts["SrcLayout"]
        assert _normalized(registers, num) == _normalized(model.DST_LAYOUT[shape], num), atom["name"]
        val_id = (model.VAL_ID_16B if pack else model.VAL_ID)[shape]
        assert _normalized(layouts["ValID"], num) == _normalized(val_id, num), atom["name"]
        assert model.format_layout(val_id, num) == layouts["ValID"], atom["name"]
        if shape == "16x32bx2":                       # CUTLASS's atoms: the halves side by side
            assert ptx["half_splitoff"] == model.columns(shape, _log2(num), pack)


def test_the_model_evaluates_cutlass_recorded_maps():
    for atom in _atoms():
        ptx = atom["ptx"]
        shape, num, pack = ptx["shape"], ptx["num"], ptx["pack"]
        e = _log2(num)
        for t, pieces in enumerate(atom["threads"]):
            assert len(pieces) == 2 * model.registers(shape, e)
            for p, cell in enumerate(pieces):
                assert list(model.piece(shape, pack, t, p // 2, p % 2, e, ptx["half_splitoff"])) == cell


# --- The Z3 model against spec/ -------------------------------------------------------------------------
def _symbolic(shape: str, pack: bool):
    """The model's (lane, column, half) as one Z3 term over thread, register, half, e and split offset."""
    t, r, h, e = narrow("t", 5), narrow("r", 7), narrow("h", 1), model.num_log2("e")
    s = narrow("s", 16) if shape == "16x32bx2" else None
    lane, column, half = model.piece(shape, pack, t, r, h, e, s)
    return z3.Concat(z3.Extract(15, 0, lane), z3.Extract(15, 0, column), z3.Extract(0, 0, half)), (t, r, h, e, s)


def _evaluate(term, names, values) -> tuple:
    pairs = [(name, bv(value)) for name, value in zip(names, values) if name is not None]
    packed = z3.simplify(z3.substitute(term, *pairs)).as_long()
    return packed >> 17, (packed >> 1) & 0xFFFF, packed & 1


@pytest.mark.parametrize("shape,pack", VARIANTS)
def test_z3_model_equals_spec_fragment_map(shape, pack):
    """Every piece for .num 1, 2, 4 and the largest .num (exhaustively, .16x32bx2 also with a split offset
    past the halves), sampled threads for the .num in between."""
    term, names = _symbolic(shape, pack)
    nums = ld_st.legal_nums(shape)
    for num in nums:
        e = _log2(num)
        exhaustive = num <= 4 or num == nums[-1]
        threads = range(32) if exhaustive else (0, 5, 16, 31)
        for extra in ((0, 7) if shape == "16x32bx2" else (0,)):
            splitoff = _splitoff(shape, num, pack, extra)
            expected = ld_st.fragment_map(shape, num, pack, half_splitoff=splitoff)
            for t in threads:
                registers = range(model.registers(shape, e))
                for r in (registers if exhaustive else (registers[0], registers[-1])):
                    for h in (0, 1):
                        got = _evaluate(term, names, (t, r, h, e, splitoff))
                        assert got == expected[t][2 * r + h], (shape, pack, num, t, r, h, splitoff)


@pytest.mark.parametrize("shape,pack", VARIANTS)
def test_inverse_names_each_piece(shape, pack):
    num = ld_st.legal_nums(shape)[2]
    e = _log2(num)
    splitoff = _splitoff(shape, num, pack, 5)
    for t, pieces in enumerate(ld_st.fragment_map(shape, num, pack, half_splitoff=splitoff)):
        for p, cell in enumerate(pieces):
            assert model.inverse(shape, pack, *cell, e, splitoff) == (t, p // 2, p % 2)


def test_counts_match_spec():
    for shape in model.SHAPES:
        assert model.LANES[shape] == ld_st.SHAPE_LANES[shape]
        assert 1 << model.max_num_log2(shape) == ld_st.legal_nums(shape)[-1]
        for num in ld_st.legal_nums(shape):
            assert model.registers(shape, _log2(num)) == ld_st.registers_per_thread(shape, num)
            for pack in (False, True):
                assert model.columns(shape, _log2(num), pack) == ld_st.columns_per_access(shape, num, pack)


def test_address_layout_equals_spec():
    lane, column = narrow("lane", 16), narrow("column", 16)
    encoded = model.address(lane, column)
    a = z3.BitVec("a", 32)
    for l, c in ((0, 0), (1, 0), (0, 1), (127, 511), (65535, 65535), (32, 17)):
        value = z3.simplify(z3.substitute(encoded, (lane, bv(l)), (column, bv(c)))).as_long()
        assert value == spec_address.encode(l, c)
        decoded = [z3.simplify(z3.substitute(f(a), (a, bv(value)))).as_long()
                   for f in (model.address_lane, model.address_column)]
        assert tuple(decoded) == spec_address.decode(value) == (l, c)


# --- The catalogue ---------------------------------------------------------------------------------------
def test_every_shape_has_its_properties():
    for shape, pack in VARIANTS:
        suffix = ".pack" if pack else ""
        for family in ("fragment.injective", "fragment.footprint", "alloc.inside"):
            assert f"tmem.{family}.{shape}{suffix}" in PROPERTIES
    for shape in model.SHAPES:
        assert PROPERTIES[f"tmem.lane_quarter.{shape}"].expected == "proved"
        assert PROPERTIES[f"tmem.lane_quarter.{shape}.lane_in_quarter"].expected == "refuted"
        assert PROPERTIES[f"tmem.alloc.inside.{shape}.start_inside"].expected == "refuted"
    assert PROPERTIES["tmem.fragment.injective.16x32bx2.overlapping"].expected == "refuted"


def test_rules_are_spec_rules():
    import spec.rules as spec_rules
    known = {r.id for r in spec_rules.all_rules()}
    for pid in TMEM_IDS:
        assert PROPERTIES[pid].rules and set(PROPERTIES[pid].rules) <= known, pid


@pytest.mark.parametrize("pid", TMEM_IDS)
def test_status_is_expected(pid, proved_catalogue):
    """(How long the catalogue takes is benchmarks/bench_prove.py's and BENCHMARKS.md's, not a test's.)"""
    result = proved_catalogue[pid]
    assert result.status == result.property.expected, (result.reason, result.counterexample)
    if result.status == "refuted":
        assert result.property.replay(result.counterexample)


@pytest.mark.parametrize("pid", [pid for pid in TMEM_IDS if PROPERTIES[pid].expected == "proved"])
def test_ranges_are_not_empty(pid):
    """Each query's (each lemma's) assumptions have a model: no property is proved vacuously."""
    built = PROPERTIES[pid].build()
    for query in (built if isinstance(built, list) else [built]):
        solver = z3.Solver()
        solver.add(*query.assumptions)
        assert solver.check() == z3.sat, pid


# --- A wrong model is caught -----------------------------------------------------------------------------
def _mutated(monkeypatch, change):
    original = model.piece

    def wrong(shape, pack, t, r, h, e, splitoff=None):
        return change(*original(shape, pack, t, r, h, e, splitoff))
    monkeypatch.setattr(model, "piece", wrong)


@pytest.mark.parametrize("shape,pack", [("32x32b", False), ("16x256b", True), ("16x32bx2", False)])
def test_lane_off_by_one_breaks_the_footprint(monkeypatch, shape, pack):
    suffix = ".pack" if pack else ""
    assert prove(PROPERTIES[f"tmem.fragment.footprint.{shape}{suffix}"]).status == "proved"
    _mutated(monkeypatch, lambda lane, column, half: (lane + 1, column, half))
    assert prove(PROPERTIES[f"tmem.fragment.footprint.{shape}{suffix}"]).status != "proved"
    assert prove(PROPERTIES[f"tmem.alloc.inside.{shape}{suffix}"]).status == "proved"   # columns unchanged


@pytest.mark.parametrize("shape", ["32x32b", "16x64b", "16x128b"])
def test_merged_halves_break_injectivity(monkeypatch, shape):
    assert prove(PROPERTIES[f"tmem.fragment.injective.{shape}"]).status == "proved"
    _mutated(monkeypatch, lambda lane, column, half: (lane, column, half & 0))
    result = prove(PROPERTIES[f"tmem.fragment.injective.{shape}"])
    assert result.status != "proved"
    # the replay (spec/) does not confirm the wrong model's collision: it is not reported as refuted
    assert result.status == "unknown" and "spec/ does not confirm" in result.reason


def test_a_wrong_column_breaks_lane_quarter_nothing_but_the_allocation(monkeypatch):
    _mutated(monkeypatch, lambda lane, column, half: (lane, column + 1, half))
    assert prove(PROPERTIES["tmem.lane_quarter.32x32b"]).status == "proved"
    assert prove(PROPERTIES["tmem.alloc.inside.32x32b"]).status != "proved"


# === tcgen05.cp and the accumulator ============================================================================
from spec.mma import descriptor as mma_descriptor  # noqa: E402
from spec.tmem import accumulator, cp  # noqa: E402

CP_IDS = {f"tmem.cp.multicast.{s}" + (f".{m.replace('::', '_')}" if m else ""): (s, m) for s, m in model.CP_ATOMS}
NEW_PROVED = (list(CP_IDS) + [f"tmem.cp.decompression.{f}" for f in model.CP_FORMATS]
              + [f"tmem.accumulator.{k}.{layout}" for layout in "ABCDEFG" for k in ("injective", "read_once")])
NEW_REFUTED = ["tmem.cp.multicast.64x128b.warpx2_02_13.as_01_23", "tmem.accumulator.read_once.D.warp3_at_lane64"]


def _z3_value(term, **values) -> int:
    """A model term (or a Python int) at concrete values of its narrow variables, by name."""
    if not isinstance(term, z3.ExprRef):
        return term
    from solver.model.bitvec import evaluate
    return evaluate(term, values)


def test_cp_and_accumulator_properties_exist_with_their_statuses(proved_catalogue):
    assert {(s, m) for s, m in CP_IDS.values()} == {(s, m) for s in cp.SHAPES for m in cp.SHAPE_MULTICASTS[s]}
    for pid in NEW_PROVED:
        assert PROPERTIES[pid].expected == "proved" and proved_catalogue[pid].status == "proved", pid
    for pid in NEW_REFUTED:
        assert PROPERTIES[pid].expected == "refuted" and proved_catalogue[pid].status == "refuted", pid
    assert PROPERTIES["tmem.accumulator.injective.C"].rules[1] == "tmem.mma.d_map.sparse"


@pytest.mark.parametrize("pid", sorted(CP_IDS))
def test_cp_model_equals_spec_cell_rows(pid):
    """Every (row, 32-bit word, copy) of the model lands where spec.tmem.cp says the row lands; the named
    lanes are spec's row_lanes; the Z3 term agrees with the Python evaluation on sample points."""
    shape, multicast = CP_IDS[pid]
    cells = {}
    for r in range(model.CP_ROWS[shape]):
        named = [model.cp_named_lanes(shape, multicast, r)]
        assert sorted(named[0]) == sorted(cp.row_lanes(shape, multicast)[r])
        for b in range(model.CP_BITS[shape]):
            for c in range(model.cp_copies(shape, multicast)):
                lane, column, cell_bit = model.cp_cell(shape, multicast, r, b, c)
                assert (column, cell_bit) == (b // 32, b % 32)
                assert cells.setdefault((lane, column), r) == r
    assert cells == cp.cell_rows(shape, multicast)
    r, b, c = narrow("row", 7), narrow("bit", 8), narrow("copy", 2)
    terms = model.cp_cell(shape, multicast, r, b, c)
    for point in ((0, 0, 0), (model.CP_ROWS[shape] - 1, model.CP_BITS[shape] - 1, model.cp_copies(shape, multicast) - 1)):
        got = tuple(_z3_value(t, row=point[0], bit=point[1], copy=point[2]) for t in terms)
        assert got == model.cp_cell(shape, multicast, *point)


@pytest.mark.parametrize("fmt", sorted(model.CP_FORMATS))
def test_cp_decompression_model_equals_spec_byte_source(fmt):
    desc = mma_descriptor.encode("sm100", 0, 128, 256, "none")       # LBO 128 B: chunk c at 128c bytes
    chunk, index = narrow("chunk", 1), narrow("element", 4)
    first_term, _, byte_term = model.cp_element(fmt, chunk, index)
    for shape in cp.SHAPES:
        for byte in range(cp.SHAPE_BITS[shape] // 8):
            address, first, bits = cp.byte_source(shape, desc, 0, byte, fmt)
            c, i = byte // 16, byte % 16
            want_first, want_bits, want_byte = model.cp_element(fmt, c, i)
            assert (address // 128, first, bits) == (c, want_first - 128 * c, want_bits)
            assert want_byte == byte and want_byte // 4 < cp.columns(shape)
            assert _z3_value(first_term, chunk=c, element=i) == want_first
            assert _z3_value(byte_term, chunk=c, element=i) == byte


@pytest.mark.parametrize("layout", "ABCDEFG")
def test_accumulator_model_equals_spec_d_location(layout):
    M, ctas = model.ACCUMULATOR_ROWS[layout], model.ACCUMULATOR_CTAS[layout]
    ws, sparse = layout in "EG", layout == "C"
    m_var, n_var, N_var = narrow("m", 8), narrow("n", 9), narrow("N", 9)
    terms = model.accumulator_cell(layout, m_var, n_var, N_var, 0)
    for N in (8, 24, 64, 256):
        for offset in model.HALF_DATAPATH_OFFSETS.get(layout, (0,)):
            for m in range(M):
                for n in range(N):
                    cell = model.accumulator_cell(layout, m, n, N, offset)
                    assert cell == accumulator.d_location(m, n, M, N, ctas, ws, offset, sparse)
                    assert model.accumulator_element(layout, *cell, N, offset) == (m, n)
        for m, n in ((0, 0), (M - 1, N - 1), (M // 2 + 1, N // 2 + 3 if N > 8 else 5)):
            got = tuple(_z3_value(t, m=m, n=n, N=N) for t in terms)
            assert got == model.accumulator_cell(layout, m, n, N, 0)


@pytest.mark.parametrize("layout,shape", [("D", "32x32b"), ("B", "32x32b"), ("G", "32x32b"),
                                          ("F", "16x64b"), ("F", "16x256b"), ("F", "16x32bx2"), ("C", "16x128b")])
def test_the_read_sequence_is_spec_footprints_covering_d_once(layout, shape):
    """The model's ld sequence at N = 64, num = 2: spec's TmemAccess footprints, each cell once, and the
    cells are exactly spec's D cells (per CTA)."""
    N, num = 64, 2
    e = _log2(num)
    M, ctas, ws = model.ACCUMULATOR_ROWS[layout], model.ACCUMULATOR_CTAS[layout], layout in "EG"
    offset = 16 if layout in "FC" else 0
    span = model.access_span(shape, e)
    columns = model.accumulator_columns(layout, N)
    read = []
    for w in range(4):
        for j in range(columns // span):
            lane0, column0 = 32 * w + offset, j * span
            access = ld_st.TmemAccess("ld", shape, num, lane=lane0, column=column0, warp=w,
                                      half_splitoff=model.columns(shape, e) if shape == "16x32bx2" else None)
            cells = [model.sequence_read(shape, w, j, t, r, e, offset)
                     for t in range(32) for r in range(model.registers(shape, e))]
            assert set(cells) == access.footprint()
            read += cells
    assert len(read) == len(set(read))
    d_cells = {accumulator.d_location(m, n, M, N, ctas, ws, offset, layout == "C") for m in range(M) for n in range(N)}
    for cta in range(ctas):
        assert sorted(read) == sorted((lane, column) for c, lane, column in d_cells if c == cta)


# --- a wrong model is caught --------------------------------------------------------------------------------
def test_a_wrong_warpx2_broadcast_breaks_the_multicast(monkeypatch):
    pid = "tmem.cp.multicast.64x128b.warpx2_02_13"
    original = model.cp_cell

    def wrong(shape, multicast, row, bit, copy):           # broadcast 32 lanes apart, as 01_23 does
        lane, column, cell_bit = original(shape, multicast, row, bit, copy)
        return (lane - copy * 32 if multicast == "warpx2::02_13" else lane), column, cell_bit
    assert prove(PROPERTIES[pid]).status == "proved"
    monkeypatch.setattr(model, "cp_cell", wrong)
    assert prove(PROPERTIES[pid]).status != "proved"
    assert prove(PROPERTIES["tmem.cp.multicast.32x128b.warpx4"]).status == "proved"


def test_a_lost_column_split_breaks_accumulator_injectivity(monkeypatch):
    original = model.accumulator_cell

    def wrong(layout, m, n, N, offset=0):                   # B without the 64-lane half for n >= N/2
        cta, lane, column = original(layout, m, n, N, offset)
        return (cta, lane if layout != "B" else m & 63, column)
    monkeypatch.setattr(model, "accumulator_cell", wrong)
    assert prove(PROPERTIES["tmem.accumulator.injective.B"]).status != "proved"
    assert prove(PROPERTIES["tmem.accumulator.injective.E"]).status == "proved"


def test_a_warp_off_by_32_lanes_breaks_read_once(monkeypatch):
    original = model.sequence_read

    def wrong(shape, warp, load, t, r, e, lane_base=0):
        lane, column = original(shape, warp, load, t, r, e, lane_base)
        return z3.If(warp == 3, lane - 32, lane), column
    monkeypatch.setattr(model, "sequence_read", wrong)
    assert prove(PROPERTIES["tmem.accumulator.read_once.D"]).status != "proved"


def test_layout_c_without_its_cta_split_breaks_injectivity_and_reading_once(monkeypatch):
    """Layout C's properties can fail: drop the peer CTA (every row in CTA 0, rows 64.. on top of 0..). The
    collision Z3 finds is the model's, which spec does not replay, so the verdict is not "proved" (unknown,
    with the two rows 64 apart named), never a false "refuted"."""
    original = model.accumulator_cell

    def wrong(layout, m, n, N, offset=0):
        cta, lane, column = original(layout, m, n, N, offset)
        return (0, lane, column) if layout == "C" else (cta, lane, column)
    monkeypatch.setattr(model, "accumulator_cell", wrong)
    result = prove(PROPERTIES["tmem.accumulator.injective.C"])
    assert result.status != "proved"
    rows = [int(x) for x in re.findall(r'"m_[12]": (\d+)', result.reason or "")]
    assert len(rows) == 2 and abs(rows[0] - rows[1]) == 64
    assert prove(PROPERTIES["tmem.accumulator.read_once.C"]).status != "proved"
    assert prove(PROPERTIES["tmem.accumulator.injective.F"]).status == "proved"
