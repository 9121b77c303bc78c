"""Replay CUTLASS 4.2.0's tensor-memory allocations for tcgen05.mma's accumulator D and a tensor-memory A
(tests/hardware/cutlass_tmem_frg.json.gz, recorded by hardware/run_cutlass_tmem_frg.py from
cute/atom/mma_traits_sm100.hpp) with no toolkit, and compare spec/tmem/accumulator.py with them.

Each recorded case is the tensor CUTLASS makes for one named UMMA atom (MMA_Traits<Op>::FrgTypeC for D,
FrgTypeA for the TS forms' A, built as its collectives do: partition_fragment_C / partition_shape_A of
make_tiled_mma(Op{})), or, for .ws, UMMA::tmem_frg_ws itself (no atom names it). The tensor has shape
((rows, cols), tiles_m, tiles_n): per CTA, rows = M / cta_group rows of D (col = n) or of A (col = k),
and MMA tiles along M and N. For every coordinate the recording holds the (lane, column, first bit) of
the 32-bit cell the element lies in, relative to the tensor's address, and the element's bits
(sizeof_bits of the type as CUTLASS sees it). The expectations below come from that recording.

Known disagreements, stated by the tests that check them:
  * the sparse 2x1SM M=128 atoms allocate D as layout B (2x2), while spec, after the manual's table,
    places it in layout C (4x1 on half the data path);
  * the f8f6f4 TS atom with a 4-bit A type (float_e2m1_t, detail::float_e2m1_unpacksmem_t; both have
    sizeof_bits 4 in CUTLASS) packs A's elements 4 bits apart (8 to a cell), while spec puts every
    .kind::f8f6f4 element in an 8-bit container;
  * with a 6-bit A type (float_e3m2_t) CUTLASS's tensor is not coherent: tmem_ptr's OffsetShift is
    log_2(32) - log_2(6) = 3, so eight 6-bit elements are addressed per 32-bit word; the recorder's checks
    flag it and it is compared with nothing.
"""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import re
import sys
from collections import defaultdict

import pytest

from spec.tmem import accumulator

HERE = TESTS_DIR
sys.path.insert(0, os.path.join(HERE, "..", "hardware"))

import run_cutlass_tmem_frg as runner  # noqa: E402

pytestmark = pytest.mark.replay

RECORDING = os.path.join(HERE, "hardware", "cutlass_tmem_frg.json.gz")
with gzip.open(RECORDING, "rt") as _f:
    DOC = json.load(_f)
CASES = {c["id"]: c for c in DOC["cases"]}

D_CASES = sorted(i for i, c in CASES.items() if c["operand"] == "D")
A_CASES = sorted(i for i, c in CASES.items() if c["operand"] == "A")
# the sparse 2x1SM M=128 atoms: CUTLASS's layout B against spec's layout C
SPARSE_2SM_128 = sorted(i for i in D_CASES if CASES[i]["sparse"] and CASES[i]["cta_group"] == 2
                        and CASES[i]["M"] == 128)
SIX_BIT = "A.F8F6F4_TS.e3m2.M128"
A_8_TO_32 = sorted(i for i in A_CASES if CASES[i]["value_bits"] in (8, 16, 32))
A_4BIT = sorted(i for i in A_CASES if CASES[i]["value_bits"] == 4)


def tiles(case) -> dict:
    """{(tile_m, tile_n): {(row, col): (lane, column, first_bit)}} of a recorded case."""
    shp = case["shape"]
    rows, cols = shp["rows"], shp["cols"]
    out, i = {}, 0
    for tn in range(shp["tiles_n"]):
        for tm in range(shp["tiles_m"]):
            one = out[(tm, tn)] = {}
            for r in range(rows):
                for c in range(cols):
                    one[(r, c)] = (case["lane"][i], case["column"][i], case["first_bit"][i])
                    i += 1
    return out


def spec_d(case, lane_offset=0, sparse=None) -> dict:
    """spec's {(m, n): (cta, lane, column)} for the whole M x N of one MMA of the case."""
    return accumulator.d_locations(case["M"], case["N"], case["cta_group"], case["ws"], lane_offset,
                                   case["sparse"] if sparse is None else sparse)


def cutlass_d(case, tile=(0, 0)) -> dict:
    """CUTLASS's {(m, n): (cta, lane, column)} for one MMA: CTA c's row r is row c * M/cta_group + r."""
    per_cta = case["M"] // case["cta_group"]
    assert case["shape"]["rows"] == per_cta and case["shape"]["cols"] == case["N"]
    out = {}
    for (r, n), (lane, column, _) in tiles(case)[tile].items():
        for cta in range(case["cta_group"]):           # the peer CTA holds its rows at the same places
            out[(cta * per_cta + r, n)] = (cta, lane, column)
    return out


def differences(cutlass: dict, spec: dict, limit=8) -> list:
    assert cutlass.keys() == spec.keys()
    return ["D[%d][%d]: CUTLASS %s, spec %s" % (*k, cutlass[k], spec[k])
            for k in sorted(cutlass) if cutlass[k] != spec[k]][:limit]


# --- the recording itself -------------------------------------------------------------------------------
def test_recording_says_where_it_comes_from():
    header = DOC["provenance"]
    src = header["details"]
    assert src["cutlass_version"] == "4.2.0" and "CUTLASS 4.2.0" in header["source"]
    assert src["nvcc"] and src["compile"].startswith("nvcc ") and "-arch=sm_100a" in src["compile"]
    assert "hardware/cutlass_tmem_frg.cpp" in src["compile"]
    assert header["command"] == "python3 hardware/run_cutlass_tmem_frg.py"
    assert header["recorded_by"] == "hardware/run_cutlass_tmem_frg.py"
    assert src["traits_header"] == "cute/atom/mma_traits_sm100.hpp"
    assert src["tmem_frg_ws_users"] == []             # no SM100 atom names tmem_frg_ws in 4.2.0
    assert "first_bit" in src["convention"]


def test_recording_holds_the_recorders_cases():
    listed = runner.cases()
    assert [c["id"] for c in listed] == [c["id"] for c in DOC["cases"]]
    for case in listed:
        rec = CASES[case["id"]]
        assert {k: rec[k] for k in case} == case, case["id"]


def test_recording_covers_the_asked_configurations():
    d = {(c["cta_group"], c["ws"], c["sparse"], c["M"], c["value_bits"]) for c in CASES.values()
         if c["operand"] == "D"}
    for bits in (32, 16):
        for M in (64, 128):
            assert (1, False, False, M, bits) in d
        for M in (32, 64, 128):
            assert (1, True, False, M, bits) in d
        for M in (128, 256):
            assert (2, False, False, M, bits) in d
        assert (2, False, True, 128, bits) in d
    assert {c["N"] for c in CASES.values() if c["operand"] == "D"} >= {64, 128, 256}
    for mode in ("Interleaved", "NonInterleaved"):           # two MMA tiles along N for M=64
        assert any(c["mma_tiles"] == [1, 2] and c["M"] == 64 and c["allocator_args"]["alloc_mode"] == mode
                   for c in CASES.values())
    a = {(c["kind"], c["value_bits"], c["cta_group"], c["M"]) for c in CASES.values() if c["operand"] == "A"}
    for kind, bits in (("tf32", 32), ("f16", 16), ("i8", 8), ("f8f6f4", 8), ("f8f6f4", 4)):
        for cta_group, M in ((1, 64), (1, 128), (2, 128), (2, 256)):
            assert (kind, bits, cta_group, M) in a
    assert {CASES[i]["a_type"] for i in A_CASES} >= {
        "cutlass::tfloat32_t", "cutlass::half_t", "cutlass::bfloat16_t", "int8_t", "uint8_t",
        "cutlass::float_e4m3_t", "cutlass::float_e2m1_t"}


def _declared(frg_type: str) -> dict:
    """What the traits' declaration of a FrgType says: template, N_SM, storage, mode."""
    m = re.fullmatch(r"UMMA::tmem_frg_(1sm|2sm)<(\w+)(?:, (\w+))?(?:, UMMA::TmemAllocMode::(\w+))?>", frg_type)
    assert m, frg_type
    return {"n_sm": 1 if m.group(1) == "1sm" else 2, "value": m.group(2), "storage": m.group(3) or "uint32_t",
            "mode": m.group(4) or "Interleaved"}


@pytest.mark.parametrize("cid", sorted(CASES))
def test_allocator_is_the_one_its_atom_names(cid):
    case = CASES[cid]
    args = case["allocator_args"]
    assert args["value_bits"] == case["value_bits"]
    if case["ws"]:
        assert case["atom"] is None and args["template"] == "tmem_frg_ws" and args["alloc_mode"] is None
        assert args["n_sm"] == 1 and args["storage_bits"] == 32
        return
    assert case["traits"]["name"] == "SM100_MMA_" + case["family"]
    declared = _declared(case["traits"]["FrgType"])
    assert args["template"] == "tmem_frg"
    assert args["n_sm"] == declared["n_sm"] == case["cta_group"]
    assert args["alloc_mode"] == declared["mode"]
    if declared["storage"] in ("uint32_t", "int32_t"):
        assert args["storage_bits"] == 32
    else:                                               # tmem_frg<a_type, a_type, ...>: A is packed
        assert declared["storage"] == declared["value"] == "a_type"
        assert args["storage_bits"] == case["value_bits"]
    assert declared["value"] == ("c_type" if case["operand"] == "D" else "a_type")
    # CUTLASS's TS atoms keep D NonInterleaved, for "DP-address equivalence" with A
    if case["operand"] == "D" and case["cta_group"] == 1:
        assert args["alloc_mode"] == ("NonInterleaved" if case["family"].endswith("_TS") else "Interleaved")
    if case["operand"] == "A":
        assert args["alloc_mode"] == ("Duplicated" if case["cta_group"] == 2 else "NonInterleaved")


def test_only_the_six_bit_case_has_problems():
    for cid, case in CASES.items():
        assert bool(case["problems"]) == (cid == SIX_BIT) == case["expect_problems"], cid
    six = CASES[SIX_BIT]
    assert six["value_bits"] == 6 and six["offset_shift"] == 3
    reasons = {p.split()[5] for p in six["problems"]}
    assert reasons == {"dp_stride", "decodings_differ", "straddles_cell"}
    # element k = 5 of row 0 already runs past its cell (bits 30..35)
    assert "%s 0 5 0 0 straddles_cell 30 6" % SIX_BIT in six["problems"]


@pytest.mark.parametrize("cid", sorted(i for i in CASES if i != SIX_BIT))
def test_case_is_injective_and_inside_tensor_memory(cid):
    case = CASES[cid]
    bits = case["value_bits"]
    assert case["offset_shift"] == {32: 0, 16: 1, 8: 2, 4: 3}[bits]
    used = defaultdict(int)
    for lane, column, first in zip(case["lane"], case["column"], case["first_bit"]):
        assert 0 <= lane < 128 and 0 <= column < 512 and first % bits == 0 and first + bits <= 32
        mask = ((1 << bits) - 1) << first
        assert not used[(lane, column)] & mask, (lane, column, first)
        used[(lane, column)] |= mask
    if case["operand"] == "D":                          # one element per cell, in its low bits
        assert set(case["first_bit"]) == {0} and case["allocator_args"]["storage_bits"] == 32
        assert len(used) == len(case["lane"])


# --- D against spec ----------------------------------------------------------------------------------
@pytest.mark.parametrize("cid", [i for i in D_CASES if i not in SPARSE_2SM_128])
def test_spec_d_map_equals_cutlass(cid):
    case = CASES[cid]
    assert differences(cutlass_d(case), spec_d(case)) == []
    assert accumulator.d_bits(case["value_bits"]) == (0, case["value_bits"])


@pytest.mark.parametrize("cid", SPARSE_2SM_128)
def test_sparse_2sm_m128_d_is_layout_b_in_cutlass_and_layout_c_in_spec(cid):
    """The one known disagreement on D: CUTLASS's SM100_MMA_*_2x1SM_SS_SPARSE with M=128 names
    FrgTypeC = tmem_frg_2sm<c_type>, which for 64 rows per CTA is the 2x2 organization (layout B, what
    spec gives a dense A); the manual's table, which spec follows, says layout C (4x1, half the data path)."""
    case = CASES[cid]
    N = case["N"]
    assert case["traits"]["FrgType"] == "UMMA::tmem_frg_2sm<c_type>"
    cut = cutlass_d(case)
    assert differences(cut, spec_d(case, sparse=False)) == []          # CUTLASS = spec's layout B
    assert accumulator.layout_id(128, 2, sparse=True) == "C"
    spec_c = spec_d(case, sparse=True)
    # CUTLASS: D[0][N/2] in lane 64, column 0 (the second column half folds into lanes 64..127) and
    # D[16][0] in lane 16; spec's layout C keeps column n in column n and puts row 16 in lane 32
    assert cut[(0, N // 2)] == (0, 64, 0) and cut[(16, 0)] == (0, 16, 0) and cut[(64, 0)] == (1, 0, 0)
    assert spec_c[(0, N // 2)] != cut[(0, N // 2)] and spec_c[(16, 0)] != cut[(16, 0)]
    agree = [k for k in cut if cut[k] == spec_c[k]]
    # the maps meet only on rows 0..15 of each CTA in the first column half
    assert sorted(agree) == sorted((cta * 64 + m, n) for cta in (0, 1) for m in range(16) for n in range(N // 2))


@pytest.mark.parametrize("cid", sorted(i for i in D_CASES if CASES[i]["mma_tiles"] != [1, 1]))
def test_further_mma_tiles(cid):
    """Where CUTLASS puts the second MMA tile along M or N of one allocation: for M=64 Interleaved
    (the SS atoms) in lanes 16-31 of each quarter, spec's lane offset 16; otherwise (NonInterleaved, the
    TS atoms, and every full-data-path layout) in the next columns, as many as one MMA uses."""
    case = CASES[cid]
    by_tile = tiles(case)
    first = cutlass_d(case)
    width = 1 + max(column for _, _, column in first.values())
    half = case["M"] == 64 and case["cta_group"] == 1 and not case["ws"]
    for (tm, tn) in by_tile:
        if (tm, tn) == (0, 0):
            continue
        got = cutlass_d(case, (tm, tn))
        k = tm + tn
        if half and case["allocator_args"]["alloc_mode"] == "Interleaved":
            assert k == 1
            assert differences(got, spec_d(case, lane_offset=16)) == []
        else:
            shifted = {key: (cta, lane, column + k * width) for key, (cta, lane, column) in first.items()}
            assert differences(got, shifted) == []
    if half:
        assert width == case["N"]
        # NonInterleaved's second tile: columns N..2N-1; Interleaved's: lanes 16..31 of each quarter
        second = tiles(case)[(1, 0) if case["mma_tiles"][0] == 2 else (0, 1)][(0, 0)]
        expected = (16, 0, 0) if case["allocator_args"]["alloc_mode"] == "Interleaved" else (0, case["N"], 0)
        assert second == expected


# --- A against spec ----------------------------------------------------------------------------------
def cutlass_a(case) -> dict:
    """CUTLASS's {(m, k): {(cta, lane, column, first_bit, bits)}} for A of one MMA. CTA c holds rows
    c * M/cta_group .. ; a Duplicated allocation (2x1SM, M=128) has 128 rows per CTA, its row r holding
    A's row r % 64 of that CTA (cute/atom/mma_traits_sm100.hpp, TmemAllocMode::Duplicated)."""
    per_cta = case["M"] // case["cta_group"]
    rows = case["shape"]["rows"]
    assert case["shape"]["cols"] == case["K"] and rows % per_cta == 0
    assert rows == (128 if case["allocator_args"]["alloc_mode"] == "Duplicated" else per_cta)
    out = defaultdict(set)
    for (r, k), (lane, column, first) in tiles(case)[(0, 0)].items():
        for cta in range(case["cta_group"]):
            out[(cta * per_cta + r % per_cta, k)].add((cta, lane, column, first, case["value_bits"]))
    return out


def spec_a(case) -> dict:
    return {(m, k): set(accumulator.a_locations(m, k, case["M"], case["kind"], case["cta_group"]))
            for m in range(case["M"]) for k in range(case["K"])}


@pytest.mark.parametrize("cid", A_8_TO_32)
def test_spec_a_map_equals_cutlass(cid):
    case = CASES[cid]
    assert accumulator.a_k(case["kind"]) == case["K"]
    cut, spec = cutlass_a(case), spec_a(case)
    assert cut.keys() == spec.keys()
    bad = ["A[%d][%d]: CUTLASS %s, spec %s" % (*k, sorted(cut[k]), sorted(spec[k]))
           for k in sorted(cut) if cut[k] != spec[k]]
    assert bad == [], "\n".join(bad[:8])


@pytest.mark.parametrize("cid", A_4BIT)
def test_four_bit_a_is_packed_by_cutlass_and_in_8_bit_containers_in_spec(cid):
    """Known disagreement: CUTLASS's F8F6F4 TS atoms allocate A as tmem_frg<a_type, a_type, ...>, so a
    4-bit type is addressed in 4-bit units: A[m][k] at bits 4k .. 4k+3 of the row (K = 32 in 4 columns).
    spec puts every .kind::f8f6f4 element in an 8-bit container: bits 8k .. 8k+7 (8 columns)."""
    case = CASES[cid]
    assert case["kind"] == "f8f6f4" and case["K"] == 32 == accumulator.a_k("f8f6f4")
    cut, spec = cutlass_a(case), spec_a(case)
    for (m, k), places in cut.items():
        # the same lanes and CTAs ...
        assert {p[:2] for p in places} == {p[:2] for p in spec[(m, k)]}
        # ... but CUTLASS: column k // 8, first bit 4 * (k % 8), 4 bits (recorded)
        assert {p[2:] for p in places} == {(k // 8, 4 * (k % 8), 4)}
        assert {p[2:] for p in spec[(m, k)]} != {p[2:] for p in places}
    assert max(case["column"]) == 3


# --- the recorder's parts ----------------------------------------------------------------------------
def render(case) -> str:
    """The evaluator's output for a recorded case (the format hardware/cutlass_tmem_frg.cpp prints)."""
    shp, args = case["shape"], case["allocator_args"]
    modes = {name: code for code, name in runner.ALLOC_MODES.items()}
    lines = ["CASE %s %d %d %d %d %d %d %d" % (case["id"], case["value_bits"], case["storage_bits"],
                                               case["offset_shift"], shp["rows"], shp["cols"], shp["tiles_m"],
                                               shp["tiles_n"]),
             "FRG %s %d %d %d %d" % (args["template"], args["value_bits"], args["storage_bits"], args["n_sm"],
                                     modes.get(args["alloc_mode"], -1)),
             "LAYOUT " + case["layout"]]
    i = 0
    for tn in range(shp["tiles_n"]):
        for tm in range(shp["tiles_m"]):
            for r in range(shp["rows"]):
                cells = []
                for _ in range(shp["cols"]):
                    cells += [case["lane"][i], case["column"][i], case["first_bit"][i]]
                    i += 1
                lines.append("R %d %d %d %s" % (r, tm, tn, " ".join(map(str, cells))))
    lines += ["BAD " + p for p in case["problems"]] + ["END " + case["id"]]
    return "\n".join(lines) + "\n"


PARSED_KEYS = ("value_bits", "storage_bits", "offset_shift", "shape", "lane", "column", "first_bit", "problems",
               "allocator_args", "layout")


def test_recorded_cases_parse_as_recorded():
    chosen = A_CASES + [i for i in D_CASES if CASES[i]["mma_tiles"] != [1, 1] or CASES[i]["ws"]]
    text = "".join(render(CASES[i]) for i in chosen) + "DONE 0\n"
    parsed = runner.parse_output(text)
    assert list(parsed) == chosen
    for cid in chosen:
        assert parsed[cid] == {k: CASES[cid][k] for k in PARSED_KEYS}, cid


def test_parser_refuses_rows_out_of_order():
    lines = render(CASES["A.TF32_TS.tf32.M64"]).splitlines()
    rows = [i for i, l in enumerate(lines) if l.startswith("R ")]
    lines[rows[0]], lines[rows[1]] = lines[rows[1]], lines[rows[0]]
    with pytest.raises(ValueError):
        runner.parse_output("\n".join(lines))
    with pytest.raises(ValueError):
        runner.parse_output("CASE x 32 32 0 1 1 1 1\nEND x\n")          # no rows


def test_case_list_lines():
    text = runner.case_list_inc([CASES["D.WS.f32.M32.N64"], CASES["D.F16BF16_SS.f32.M64.N64.tile64x128"],
                                 CASES["A.F16BF16_2x1SM_TS.f16.M128"]]).splitlines()
    assert text[0] == 'D_WS("D.WS.f32.M32.N64", float, uint32_t, 32, 64)'
    assert text[1] == ('{ using Op = cute::SM100_MMA_F16BF16_SS<cutlass::half_t, cutlass::half_t, float, 64, 64, '
                       'cute::UMMA::Major::K, cute::UMMA::Major::K>; D_ATOM("D.F16BF16_SS.f32.M64.N64.tile64x128", '
                       'Op, 64, 128) }')
    assert text[2].endswith('A_ATOM("A.F16BF16_2x1SM_TS.f16.M128", Op, 128, 16) }')
