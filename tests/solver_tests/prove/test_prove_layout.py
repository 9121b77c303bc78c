"""`prove --layout` / lp.prove_layout and the GF(2) engine (issue 16).

Expectations come from NVIDIA's pycute (the oracle), from spec's enumeration, from bit matrices built
by hand from the layout's strides and the Swizzle<B,M,S> formula, and from the PTX text (the 48-byte K
slice of PTX ISA 9.7.16.3.1.2); never from this code's own output. Every GF(2) verdict on random layouts
is checked against Z3 and against spec's enumeration.
"""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR, TESTS_DIR  # noqa: E402  (tests/repo_paths.py)

import pycute
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import layoutproof as lp
from solver.cli.main import main
from solver.gf2 import matrix
from solver.gf2.layout import Affine
from solver.prove import user_layout as ul
from solver.prove import mixed_radix


def run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# --- the GF(2) matrix ----------------------------------------------------------------------------------------

def test_rank_and_kernel_on_hand_built_matrices():
    assert matrix.rank([1, 2, 4]) == 3
    assert matrix.rank([1, 2, 3]) == 2                  # 3 = 1 ^ 2
    assert matrix.kernel_vector([1, 2, 3]) == 0b111     # columns 0, 1, 2 XOR to 0
    assert matrix.kernel_vector([1, 2, 4]) is None
    assert matrix.rank([0, 5]) == 1 and matrix.kernel_vector([0, 5]) == 0b01
    b = matrix.Basis([0b110, 0b011])                    # span {0, 6, 3, 5}
    assert b.extreme(0b000, largest=True)[0] == 6 and b.extreme(0b000, largest=False)[0] == 0
    assert b.extreme(0b001, largest=True)[0] == 7 and b.extreme(0b001, largest=False)[0] == 1
    assert b.contains(0b101) == 0b11 and b.contains(0b001) is None


def test_rank_of_a_24_by_24_matrix_is_the_rank_over_gf2():
    """Against an independent elimination over lists of bits (the speed is benchmarks/bench_gf2.py's)."""
    import random
    rng = random.Random(0)
    for _ in range(50):
        columns = [rng.getrandbits(24) & rng.getrandbits(24) for _ in range(24)]
        rows = [[(c >> bit) & 1 for c in columns] for bit in range(24)]
        rank = 0
        for col in range(24):
            pivot = next((r for r in range(rank, 24) if rows[r][col]), None)
            if pivot is None:
                continue
            rows[rank], rows[pivot] = rows[pivot], rows[rank]
            for r in range(24):
                if r != rank and rows[r][col]:
                    rows[r] = [a ^ b for a, b in zip(rows[r], rows[rank])]
            rank += 1
        assert matrix.rank(columns) == rank


# --- layouts as bit matrices ---------------------------------------------------------------------------------

def _affine(text, dtype=None, start=0):
    return ul.make_subject(text, dtype, start).linear


def test_two_two_one_one_is_not_linear_and_not_injective():
    """The tensor-layouts pitfall: (2,2):(1,1) sends (1,0) and (0,1) to 1 and (1,1) to 2 = 1 + 1, not
    1 XOR 1 = 0: no GF(2) matrix describes it."""
    assert isinstance(_affine("(2,2):(1,1)"), str)
    oracle = pycute.Layout((2, 2), (1, 1))
    assert [oracle(i) for i in range(4)] == [0, 1, 1, 2]
    r = lp.prove_layout("(2,2):(1,1)", "injective")
    assert r.status == "refuted" and r.engine == "z3"
    i, j = r.counterexample["indices"]
    assert oracle(i) == oracle(j) and i != j
    assert lp.prove_layout("(2,2):(1,1)", "injective", engine="gf2").status == "unknown"


def test_hand_built_matrix_of_a_plain_layout():
    # (8,8):(8,1): index bits 0-2 (mode 0) add 8,16,32; bits 3-5 (mode 1) add 1,2,4.
    a = _affine("(8,8):(8,1)")
    assert a.columns == (8, 16, 32, 1, 2, 4) and a.offset == 0 and a.mode_bits == (3, 3)


def test_hand_built_matrix_of_a_swizzled_bf16_tile():
    # bf16 (2 B): mode 0 (stride 64 elements) adds 128 << t bytes, mode 1 adds 2 << t. Sw<3,4,3> XORs
    # bits 7-9 into bits 4-6: 128 -> 128|16, 256 -> 256|32, 512 -> 512|64; the rest are untouched.
    a = _affine("Sw<3,4,3> o (64,64):(64,1)", "bf16")
    assert a.columns == (144, 288, 576, 1024, 2048, 4096, 2, 4, 8, 16, 32, 64)
    assert matrix.rank(list(a.columns)) == 12


def _pycute_bytes(shape, stride, swizzle, element_bytes, start=0, offset=0):
    layout, sw = pycute.Layout(shape, stride), pycute.Swizzle(*swizzle)
    return lambda i: sw(start + element_bytes * (offset + layout(i)))


@pytest.mark.parametrize("text,shape,stride,swizzle,dtype,start", [
    ("Sw<3,4,3> o ((8,8),(8,8)):((64,512),(1,8))", ((8, 8), (8, 8)), ((64, 512), (1, 8)), (3, 4, 3), "bf16", 0),
    ("Sw<2,4,3> o ((8,4),(16,2)):((32,256),(1,16))", ((8, 4), (16, 2)), ((32, 256), (1, 16)), (2, 4, 3), "e4m3", 0x2000),
    ("Sw<3,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128)), (3, 4, 3), "f16", 0x800),
    ("Sw<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512)), (2, 4, 3), "bf16", 0x1000),
])
def test_swizzled_round_trip_against_pycute(text, shape, stride, swizzle, dtype, start):
    """Round trip: the matrix gives pycute's byte address for every index, and the inverse (solving the
    matrix for an address) gives back the index."""
    subject = ul.make_subject(text, dtype, start)
    a = subject.linear
    assert isinstance(a, Affine), a
    oracle = _pycute_bytes(shape, stride, swizzle, subject.element_bytes, start)
    basis = matrix.Basis(list(a.columns))
    assert not basis.kernel
    for i in range(subject.size):
        address = oracle(i)
        assert a(i) == address
        assert basis.contains(address ^ a.offset) == i


def test_a_layout_whose_leaves_overlap_is_refuted_as_pycute_counts():
    """The K-major 32B tf32 'exact layout' as the PTX text writes it (PTX ISA 9.7.16.3, Figure 189):
    k = (4,4):(1,4) spans 16 elements while rows are 8 apart, so rows overlap: pycute finds 136 distinct
    offsets among 256 coordinates."""
    oracle = pycute.Layout(((8, 2), (4, 4)), ((8, 64), (1, 4)))
    assert len({oracle(i) for i in range(256)}) == 136
    text = "Sw<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))"
    assert isinstance(_affine(text, "tf32"), str)
    r = lp.prove_layout(text, "injective", dtype="tf32")
    assert r.status == "refuted" and r.cross_checked_by == ["enumeration"]
    i, j = r.counterexample["indices"]
    assert oracle(i) == oracle(j)


def test_overlapping_start_is_not_linear_but_injective_by_the_unswizzled_rank():
    """Start 0x400 carries into the offsets of an 8 KiB tile: no longer affine over GF(2); injectivity
    still follows (the swizzle is a bijection), and pycute's enumeration agrees."""
    text = "Sw<3,4,3> o (64,64):(64,1)"
    assert isinstance(_affine(text, "bf16", 0x400), str)
    r = lp.prove_layout(text, "injective", dtype="bf16", start_address=0x400)
    oracle = _pycute_bytes((64, 64), (64, 1), (3, 4, 3), 2, 0x400)
    assert len({oracle(i) for i in range(4096)}) == 4096
    assert r.status == "proved" and r.engine == "gf2" and r.cross_checked_by == ["enumeration"]


# --- every engine agrees on random layouts ----------------------------------------------------------------

@st.composite
def layouts(draw, linear_only=False):
    rank = draw(st.integers(1, 3))
    extents = [draw(st.sampled_from([1, 2, 4, 8] if linear_only else [1, 2, 3, 4, 8])) for _ in range(rank)]
    strides = [draw(st.sampled_from([0, 1, 2, 4, 8, 16, 32] if linear_only else [0, 1, 2, 3, 4, 8, 16, 32, 6]))
               for _ in range(rank)]
    text = f"({','.join(map(str, extents))}):({','.join(map(str, strides))})"
    if draw(st.booleans()):
        b, m = draw(st.integers(0, 3)), draw(st.integers(0, 4))
        s = draw(st.sampled_from([-3, -2, 1, 2, 3, 4]))
        text = f"Sw<{b},{m},{s}> o {text}"
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts(), st.sampled_from([None, "e4m3", "bf16", "f32"]), st.sampled_from([0, 0x40, 0x400, 0x30]))
def test_gf2_z3_and_enumeration_agree_on_injective_and_bijective(text, dtype, start):
    s = ul.make_subject(text, dtype, start)
    for prop in ("injective", "bijective"):
        q = ul.resolve(s, prop)
        z3_verdict = ul.decide_z3(s, q)
        enumerated = ul.decide_enumeration(s, q)
        assert z3_verdict[0] == enumerated[0], (text, prop)
        gf2 = ul.decide_gf2(s, q)
        if gf2 is not None:
            assert gf2[0] == z3_verdict[0], (text, prop, s.linear)
            if gf2[0] == "refuted":
                assert ul.replay(s, q, gf2[1])[1]
        if z3_verdict[0] == "refuted":
            assert ul.replay(s, q, z3_verdict[1])[1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts(linear_only=True), layouts(linear_only=True), st.sampled_from([None, "bf16"]))
def test_gf2_and_z3_agree_on_equality(first, second, dtype):
    s, o = ul.make_subject(first, dtype), ul.make_subject(second, dtype)
    q = ul.resolve(s, "equals")
    gf2, z3_verdict, enumerated = ul.decide_gf2(s, q, o), ul.decide_z3(s, q, o), ul.decide_enumeration(s, q, o)
    assert z3_verdict[0] == enumerated[0]
    if gf2 is not None:
        assert gf2[0] == z3_verdict[0]
    assert ul.decide_z3(s, q, s)[0] == "proved"


def test_equal_layouts_written_differently():
    # pycute: coalesce((4,2):(1,4)) is 8:1, and the two agree on every index.
    assert pycute.coalesce(pycute.Layout((4, 2), (1, 4))) == pycute.Layout(8, 1)
    assert lp.prove_layout("(4,2):(1,4)", "equals", other="8:1").status == "proved"
    r = lp.prove_layout("(8,8):(8,1)", "equals", other="(8,8):(1,8)")
    assert r.status == "refuted" and r.engine == "gf2"
    i = r.counterexample["index"]
    assert pycute.Layout((8, 8), (8, 1))(i) != pycute.Layout((8, 8), (1, 8))(i)


# --- bijective, inside, parameters -------------------------------------------------------------------------

def test_bijective_onto_ranges():
    # Sw<3,4,3> o (64,64):(64,1) in bf16 fills [0, 8192) exactly (pycute enumeration).
    oracle = _pycute_bytes((64, 64), (64, 1), (3, 4, 3), 2)
    assert sorted(oracle(i) for i in range(4096)) == list(range(0, 8192, 2))
    assert lp.prove_layout("Sw<3,4,3> o (64,64):(64,1)", "bijective", dtype="bf16").status == "proved"
    r = lp.prove_layout("(8,8):(8,1)", "bijective", range=(0, 128))
    assert r.status == "refuted" and r.counterexample["slots"] == 128 and r.counterexample["elements"] == 64
    r = lp.prove_layout("(8,8):(16,1)", "bijective", range=(0, 64))
    assert r.status == "refuted" and not 0 <= r.counterexample["address"] < 64


def test_inside_the_48_byte_k_slice_of_the_ptx_text():
    """PTX ISA 9.7.16.3.1.2: a 48-byte K slice packed contiguously "would overflow the 128B shared memory
    boundary"; split into two chunks "laid out within the aligned 128-byte address boundary" it does not.
    Rows of 96 e4m3 bytes: row 1's first slice is bytes 96..143, across the line at 128."""
    packed = lp.prove_layout("(8,96):(96,1)", "inside", dtype="e4m3", k_slice=48)
    assert packed.status == "refuted" and packed.engine == "z3"
    lines = packed.counterexample["lines"]
    assert lines[0] != lines[1]
    split = "(8,(48,2)):(128,(1,1024))"      # slice 0 of row r at 128 r, slice 1 at 1024 + 128 r
    assert lp.prove_layout(split, "inside", dtype="e4m3", k_slice=48).status == "proved"
    assert lp.prove_layout(split, "inside", dtype="e4m3", k_slice=96).status == "refuted"
    # A power-of-two slice of a linear layout is decided by GF(2): 64 bf16 = 128 bytes per row.
    r = lp.prove_layout("Sw<3,4,3> o (64,64):(64,1)", "inside", dtype="bf16")
    assert r.status == "proved" and r.engine == "gf2"
    r = lp.prove_layout("(8,128):(128,1)", "inside", dtype="bf16")
    assert r.status == "refuted" and r.engine == "gf2"


def test_symbolic_stride_over_a_range():
    # Rows of 64 bf16 never overlap when the row stride is at least 64 elements; at 32 they do.
    r = lp.prove_layout("(64,64):(S,1)", "injective", dtype="bf16", params={"S": range(64, 4097, 64)})
    assert r.status == "proved" and "64 instances" in r.domain
    r = lp.prove_layout("(64,64):(S,1)", "injective", dtype="bf16", params={"S": range(32, 97, 32)})
    assert r.status == "refuted" and r.counterexample["params"] == {"S": 32}
    a, b = r.counterexample["addresses"]
    assert a == b


# --- the command line ---------------------------------------------------------------------------------------

def test_cli_json_follows_the_prove_contract(capsys):
    rc, out, _ = run(capsys, "prove", "--layout", "(2,2):(1,1)", "injective", "--json")
    assert rc == 1
    (result,) = json.loads(out)["results"]
    assert {"id", "statement", "domain", "source", "rules", "status", "expected", "seconds",
            "counterexample", "engine", "cross_checked_by"} <= set(result)
    assert result["status"] == "refuted" and result["counterexample"]["addresses"] == [1, 1]
    rc, out, _ = run(capsys, "prove", "--layout", "Sw<3,4,3> o (64,64):(64,1)", "--dtype", "bf16",
                     "injective", "--json")
    (result,) = json.loads(out)["results"]
    assert rc == 0 and result["engine"] == "gf2"
    assert result["bases"]["in_dims"]["dim0"][0] == [144]


def test_cli_text_and_usage(capsys):
    rc, out, _ = run(capsys, "prove", "--layout", "(8,8):(8,1)", "equals", "(8,8):(1,8)")
    assert rc == 1 and out.startswith("refuted: layout.equals") and "  by gf2" in out and "replayed by spec" in out
    rc, _, err = run(capsys, "prove", "--layout", "(8,8):(8,1)")
    assert rc == 2 and "needs a property" in err
    rc, _, err = run(capsys, "prove", "--layout", "(8,8):(8,1)", "surjective")
    assert rc == 2
    rc, _, err = run(capsys, "prove", "--layout", "(8,8):(8,1)", "equals")
    assert rc == 2
    rc, out, _ = run(capsys, "prove", "--layout", "(64,64):(S,1)", "--param", "S=64..256:64", "--dtype",
                     "bf16", "injective")
    assert rc == 0 and "S in 64..256:64" in out


# --- read-by / written-by (solver.prove.layout_io) -------------------------------------------------------------

import gzip
import os

from spec.mma import descriptor as spec_desc
from spec.rule import SpecError

HARDWARE = os.path.join(TESTS_DIR, "hardware")
TILE128 = "Sw<3,4,3> o (64,64):(64,1)"      # bf16 K-major rows of 128 B, 8-row groups 1024 B apart


def _canonical_128b(start=0, **changes):
    """PTX 9.7.16.3.3: K-major 128B swizzle: SBO = 8 rows x 128 B = 1024, LBO unused (16 by convention)."""
    desc = spec_desc.encode("sm90", start, 16, 1024, "128B")
    return spec_desc.with_fields(desc, **changes).raw if changes else desc.raw


@pytest.mark.parametrize("engine", ["auto", "gf2", "enumeration"])
def test_read_by_the_canonical_descriptor_is_proved_for_every_k_step(engine):
    r = lp.prove_layout(TILE128, "read-by", dtype="bf16", descriptor=_canonical_128b(), arch="sm90",
                        major="K", engine=engine)
    assert r.status == "proved" and r.engine == ("enumeration" if engine == "enumeration" else "gf2")
    assert "4 k-steps" in r.domain
    if engine == "auto":
        assert r.cross_checked_by == ["enumeration"]


def test_read_by_sbo_off_by_128_is_refuted_at_the_ninth_row():
    r = lp.prove_layout(TILE128, "read-by", dtype="bf16", descriptor=_canonical_128b(stride_byte_offset=1152),
                        arch="sm90", major="K")
    assert r.status == "refuted"
    cex = r.counterexample
    # row 8 is read from SBO = 1152 (its 128B-swizzle phase 1 moves chunk 0 to 0x490); the layout holds it at 1024
    assert cex["element"] == {"mn": 8, "k": 0} and cex["read_from"] == 0x490 and cex["held_at"] == 0x400
    assert any(rule.startswith("desc.tile.stride_byte_offset") for rule in cex["rules_broken"])


def test_read_by_the_wrong_swizzle_is_refuted_by_gf2():
    r = lp.prove_layout(TILE128, "read-by", dtype="bf16", descriptor=_canonical_128b(swizzle="64B"),
                        arch="sm90", major="K")
    assert r.status == "refuted" and r.engine == "gf2" and r.cross_checked_by == ["enumeration"]
    # row 1: 64B rows 64 bytes apart are read at 64 bytes; the layout's row 1 is 128 B on, chunk 1 (0x90)
    assert r.counterexample["element"] == {"mn": 1, "k": 0}
    assert (r.counterexample["read_from"], r.counterexample["held_at"]) == (64, 0x90)
    assert any(rule.startswith("desc.tile.swizzle") for rule in r.counterexample["rules_broken"])


def test_read_by_a_later_k_step_misread_is_found():
    """A 64-wide K tile with K-steps advanced by the layout's own offset (32 B per step): proved; a layout
    whose second K atom lives elsewhere is read wrong from some later step on."""
    ok = lp.prove_layout("Sw<3,4,3> o (64,(64,2)):(64,(1,4096))", "read-by", dtype="bf16",
                         descriptor=_canonical_128b(), arch="sm90", major="K")
    assert ok.status == "proved" and "8 k-steps" in ok.domain
    one = lp.prove_layout(TILE128, "read-by", dtype="bf16", descriptor=_canonical_128b(), arch="sm90",
                          major="K", k_steps=1)
    assert one.status == "proved" and "1 k-steps" in one.domain


def test_read_by_refuses_what_it_cannot_ask():
    with pytest.raises(SpecError):      # larger than ELEMENT_LIMIT
        lp.prove_layout("(1024,512):(512,1)", "read-by", dtype="bf16", descriptor=_canonical_128b(),
                        arch="sm90", major="K")
    with pytest.raises(SpecError):      # rank 1
        lp.prove_layout("64:1", "read-by", dtype="bf16", descriptor=_canonical_128b(), arch="sm90", major="K")
    with pytest.raises(SpecError):      # no dtype
        lp.prove_layout(TILE128, "read-by", descriptor=_canonical_128b(), arch="sm90", major="K")


def _wgmma_records():
    with gzip.open(os.path.join(HARDWARE, "wgmma_sm90_reads.json.gz"), "rt") as f:
        cases = json.load(f)["cases"]
    return [c for c in cases if c["dtype"] == "bf16" and c["major"] == "K" and c["swizzle"] == "128B"
            and c["base_offset"] == 0 and c["strides"] in ("canonical", "gapped-sbo") and c["clean"]]


def test_read_by_agrees_with_what_the_h100_read():
    records = _wgmma_records()
    assert records
    for c in records:
        group = c["sbo"] // 2                          # elements between 8-row groups
        layout = f"Sw<3,4,3> o ((8,{c['mn'] // 8}),16):((64,{group}),1)"
        s = ul.make_subject(layout, "bf16", c["start_address"])
        held = [[s.address((mn, k)) for k in range(c["k"])] for mn in range(c["mn"])]
        assert held == c["addresses"], c["id"]         # the H100 read exactly this layout
        r = lp.prove_layout(layout, "read-by", dtype="bf16", start_address=c["start_address"],
                            descriptor=c["descriptor"], arch="sm90", major="K")
        assert r.status == "proved", (c["id"], r.reason)
        wrong = spec_desc.with_fields(spec_desc.decode("sm90", int(c["descriptor"], 16)),
                                      stride_byte_offset=c["sbo"] + 128).raw
        bad = lp.prove_layout(layout, "read-by", dtype="bf16", start_address=c["start_address"],
                              descriptor=wrong, arch="sm90", major="K")
        assert bad.status == "refuted" and bad.counterexample["element"]["mn"] == 8


TMA_DOC = {"encode": "tiled", "dataType": "BFLOAT16", "rank": 2, "globalAddress": "0x7f0000000000",
           "globalDim": [4096, 4096], "globalStrides": [8192], "boxDim": [64, 64], "elementStrides": [1, 1],
           "interleave": "NONE", "swizzle": "128B", "l2Promotion": "L2_256B", "oobFill": "NONE",
           "smemAddress": "0x0"}


@pytest.mark.parametrize("engine", ["auto", "gf2", "enumeration"])
def test_written_by_a_128b_box_is_the_swizzled_row_major_tile(engine):
    """PTX 5.5.7: a 128B-swizzled box of 64 bf16 per row: rows 128 B apart, 16-byte chunks XORed with the
    row's line index: CuTe Sw<3,4,3> o (64,64):(1,64) on byte addresses."""
    r = lp.prove_layout("Sw<3,4,3> o (64,64):(1,64)", "written-by", arch="sm90", dtype="bf16", tma=TMA_DOC, coords=[0, 0],
                        engine=engine)
    assert r.status == "proved" and r.engine == ("enumeration" if engine == "enumeration" else "gf2")


def test_written_by_the_wrong_swizzle_or_pitch_is_refuted_with_the_element():
    r = lp.prove_layout("Sw<2,4,3> o (64,64):(1,64)", "written-by", arch="sm90", dtype="bf16", tma=TMA_DOC)
    assert r.status == "refuted"
    cex = r.counterexample
    i, j = cex["element"]
    # the first element that differs: 128B XORs address bit 6 with bit 9 (row 4), 64B does not
    assert (i, j) == (0, 4) and cex["written_at"] == 4 * 128 ^ 0x40 and cex["held_at"] == 4 * 128
    pitch = lp.prove_layout("Sw<3,4,3> o (64,64):(1,72)", "written-by", arch="sm90", dtype="bf16", tma=TMA_DOC)
    assert pitch.status == "refuted" and pitch.counterexample["element"][1] >= 1


def test_written_by_refuses_a_load_tma_check_refuses_and_a_shape_mismatch():
    with pytest.raises(SpecError):
        lp.prove_layout("Sw<3,4,3> o (128,64):(1,128)", "written-by", dtype="bf16",
                        tma={**TMA_DOC, "boxDim": [128, 64]})       # 256-byte rows > the 128B span
    with pytest.raises(SpecError):
        lp.prove_layout("Sw<3,4,3> o (64,32):(1,64)", "written-by", arch="sm90", dtype="bf16", tma=TMA_DOC)


def _tma_records():
    with gzip.open(os.path.join(HARDWARE, "tma_loads_sm90.json.gz"), "rt") as f:
        cases = json.load(f)["cases"]
    return [c for c in cases if c["mode"] == "tiled" and c.get("run") == "ok" and c["where"] == "inside"
            and len(c["box"]) == 2 and c["element_strides"] == [1, 1] and c["swizzle"] != "NONE"]


def test_written_by_agrees_with_where_the_h100_wrote():
    """Records whose box rows fill the swizzle span: the H100's written slots are the layout's addresses."""
    from spec.tma import swizzle as tma_swizzle
    checked = 0
    for c in _tma_records():
        eb, (d0, d1) = c["element_bytes"], c["box"]
        span = tma_swizzle.mode_info(c["swizzle"]).span
        if d0 * eb != span or d0 & (d0 - 1) or d1 & (d1 - 1):
            continue
        bits = {32: 1, 64: 2, 128: 3}[span]
        start = c["smem_base"] + c["smem_offset"]
        layout = f"Sw<{bits},4,3> o ({d0},{d1}):(1,{d0})"
        s = ul.make_subject(layout, None, start, eb)
        observed = {c["written_from"] + n * eb for n, code in enumerate(c["codes"]) if code != -1}
        assert observed == {s.address((i, j)) for i in range(d0) for j in range(d1)}, c["id"]
        doc = {"encode": "tiled", "dataType": c["data_type"], "rank": 2, "globalAddress": "0x7f0000000000",
               "globalDim": [4096, 64], "globalStrides": [4096 * eb], "boxDim": [d0, d1], "elementStrides": [1, 1],
               "interleave": "NONE", "swizzle": c["swizzle"], "l2Promotion": "NONE", "oobFill": "NONE",
               "smemAddress": start}
        r = lp.prove_layout(layout, "written-by", arch="sm90", start_address=start, tma=doc, coords=c["coord"])
        assert r.status == "proved", (c["id"], r.reason)
        checked += 1
    assert checked


def test_cli_read_by_and_written_by(capsys, tmp_path):
    word = "%#x" % _canonical_128b()
    rc, out, _ = run(capsys, "prove", "--layout", TILE128, "--dtype", "bf16", "read-by", word, "--arch", "sm90",
                     "--major", "K", "--json")
    doc = json.loads(out)["results"][0]
    assert rc == 0 and doc["status"] == "proved" and doc["id"] == "layout.read-by" and doc["engine"] == "gf2"
    rc, out, _ = run(capsys, "prove", "--layout", TILE128, "--dtype", "bf16", "read-by",
                     "%#x" % _canonical_128b(stride_byte_offset=1152), "--arch", "sm90", "--major", "K")
    assert rc == 1 and "mn=8" in out and "desc.tile.stride_byte_offset" in out
    params = tmp_path / "p.json"
    params.write_text(json.dumps(TMA_DOC))
    rc, out, _ = run(capsys, "prove", "--layout", "Sw<2,4,3> o (64,64):(1,64)", "written-by", "--arch", "sm90", "--tma", params,
                     "--coords", "0,0")
    assert rc == 1 and "box element (0,4)" in out
    rc, _, err = run(capsys, "prove", "--layout", TILE128, "--dtype", "bf16", "read-by", "--arch", "sm90",
                     "--major", "K")
    assert rc == 2


# --- layouts given as GF(2) bases (Triton's LinearLayout) ------------------------------------------------------

from solver.gf2 import bases as bases_io

TRITON_TEXT = """ - register=1 -> (0, 1)
   register=2 -> (0, 2)
 - lane=1 -> (1, 0)
   lane=2 -> (2, 0)
 - warp is a size 1 dimension
where out dims are: [dim0 (size 4), dim1 (size 4)]"""


def test_bases_from_json_and_from_triton_printout_are_the_hand_built_matrix():
    # out dims flattened first-most-minor: (d0, d1) -> d0 + 4 * d1, so (0, 1) is 4 and (1, 0) is 1.
    from_text = bases_io.load(TRITON_TEXT)
    assert from_text.columns == (4, 8, 1, 2) and from_text.mode_bits == (2, 2, 0)
    from_json = bases_io.load({"in_dims": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0]], "warp": []},
                               "out_dims": {"dim0": 4, "dim1": 4}})
    assert from_json == from_text and from_text.out_size == 16
    assert [from_text(i) for i in range(16)] == [(i >> 2) | (i & 3) << 2 for i in range(16)]
    r = lp.prove_layout(from_text, "bijective")
    assert r.status == "proved" and r.engine == "gf2" and r.bases["in_dims"]["register"] == [[0, 1], [0, 2]]
    assert r.bases["out_dims"] == {"dim0": 4, "dim1": 4} and r.bases["triton"] == "\n" + TRITON_TEXT
    r = lp.prove_layout(TRITON_TEXT.replace("lane=2 -> (2, 0)", "lane=2 -> (1, 0)"), "injective")
    assert r.status == "refuted" and r.engine == "gf2"
    (a, b), (i, j) = r.counterexample["addresses"], r.counterexample["indices"]
    assert a == b and i != j and r.counterexample["coordinates"][1] == [0, 3, 0]   # lane 1 ^ lane 2 = 0
    with pytest.raises(SpecError):
        bases_io.load({"in_dims": {"register": [[0, 1]]}})                   # two outputs, no sizes
    with pytest.raises(SpecError):
        lp.prove_layout({"in_dims": {"d": [[1]]}}, "inside")


@pytest.mark.parametrize("text, shape, stride, dtype", [
    ("(8,8):(8,1)", (8, 8), (8, 1), None),
    ("((2,4),(4,2)):((1,32),(2,8))", ((2, 4), (4, 2)), ((1, 32), (2, 8)), "bf16"),
    ("(16,4):(4,1)", (16, 4), (4, 1), "f32"),
])
def test_bases_round_trip_against_pycute(capsys, tmp_path, text, shape, stride, dtype):
    oracle = pycute.Layout(shape, stride)
    bytes_ = {None: 1, "bf16": 2, "f32": 4}[dtype]
    args = ["prove", "--layout", text, "injective", "--json"] + (["--dtype", dtype] if dtype else [])
    rc, out, _ = run(capsys, *args)
    printed = json.loads(out)["results"][0]["bases"]
    path = tmp_path / "bases.json"
    path.write_text(json.dumps(printed))
    read = bases_io.load(str(path))
    assert [read(i) for i in range(oracle.size())] == [bytes_ * oracle(i) for i in range(oracle.size())]
    args = ["prove", "--layout-bases", str(path), "equals", text] + (["--dtype", dtype] if dtype else [])
    rc, out, _ = run(capsys, *args)
    assert rc == 0 and out.startswith("proved: ") and "  by gf2" in out
    r = lp.prove_layout(text, "equals", other=printed, dtype=dtype)
    assert r.status == "proved"


def test_swizzled_bases_round_trip_and_a_wrong_basis_is_refuted():
    printed = lp.prove_layout(TILE128, "injective", dtype="bf16").bases
    assert lp.prove_layout(printed, "equals", other=TILE128, dtype="bf16").status == "proved"
    wrong = json.loads(json.dumps(printed))
    wrong["in_dims"]["dim1"][2] = [16 ^ 128]
    r = lp.prove_layout(wrong, "equals", other=TILE128, dtype="bf16")
    assert r.status == "refuted" and r.counterexample["index"] == 64 * 4     # k = 4: the third k bit


def test_bases_equal_to_a_non_linear_cute_layout_go_to_z3():
    # (2,2):(1,1) sends index 3 to 2, bases [1],[1] send it to 1 ^ 1 = 0.
    r = lp.prove_layout("(2,2):(1,1)", "equals", other={"in_dims": {"dim0": [[1]], "dim1": [[1]]}})
    assert r.status == "refuted" and r.engine == "z3" and r.counterexample["addresses"] == [2, 0]
    r = lp.prove_layout("(4,2):(3,1)", "equals", other={"in_dims": {"dim0": [[3], [6]], "dim1": [[1]]}},
                        engine="z3")
    oracle = pycute.Layout((4, 2), (3, 1))
    assert r.status == "refuted" and oracle(r.counterexample["index"]) == r.counterexample["addresses"][0]
    r = lp.prove_layout("(2,2):(1,2)", "equals", other={"in_dims": {"dim0": [[1]], "dim1": [[2]]}}, engine="z3")
    assert r.status == "proved" and r.engine == "z3"


# --- symbolic parameters: one query for the whole range ---------------------------------------------------------

def _every_instance(text, prop, values, **kw):
    """The verdict instance by instance, by spec's enumeration (the oracle)."""
    failing = [v for v in values
               if lp.prove_layout(text.replace("S", str(v)), prop, engine="enumeration", **kw).status != "proved"]
    return failing


@pytest.mark.parametrize("text, values", [
    ("(8,8):(S,1)", range(1, 17)),
    ("(8,8):(S,1)", range(8, 33, 8)),
    ("(4,(2,4)):(S,(1,8))", range(1, 12)),
    ("(4,(2,4)):(S,(1,8))", range(2, 12, 3)),
])
def test_symbolic_stride_agrees_with_every_instance(text, values):
    failing = _every_instance(text, "injective", values, dtype="bf16")
    r = lp.prove_layout(text, "injective", dtype="bf16", params={"S": values})
    assert r.status == ("refuted" if failing else "proved")
    if failing:
        assert r.counterexample["params"]["S"] in failing
    elif r.engine == "z3":
        assert "one Z3 query" in r.reason


def test_symbolic_stride_on_a_128_tile_is_one_z3_query_and_linear_ranges_stay_gf2():
    r = lp.prove_layout("(128,128):(S,1)", "injective", dtype="bf16", params={"S": range(128, 4097, 128)})
    assert r.status == "proved" and r.engine == "radix" and "S in 128..4096:128" in r.domain
    r = lp.prove_layout("(128,128):(S,1)", "injective", dtype="bf16", params={"S": range(128, 4097, 128)},
                        engine="z3")
    assert r.status == "proved" and r.engine == "z3" and "one Z3 query" in r.reason
    r = lp.prove_layout("(128,128):(S,1)", "injective", dtype="bf16", params={"S": range(64, 4097, 64)})
    assert r.status == "refuted" and r.counterexample["params"] == {"S": 64}
    r = lp.prove_layout("Sw<3,4,3> o (64,64):(S,1)", "injective", dtype="bf16", params={"S": [64, 128, 256]})
    assert r.status == "proved" and r.engine == "gf2" and "3 distinct bit matrices" in r.reason
    r = lp.prove_layout("(64,64):(S,1)", "equals", other="(64,64):(64,1)", params={"S": range(32, 97, 32)})
    assert r.status == "refuted" and r.counterexample["params"]["S"] in (32, 96)
    r = lp.prove_layout("(64,64):(S,1)", "injective", params={"S": range(64, 4097, 64)}, timeout=0.001)
    assert r.status in ("proved", "unknown")                          # a timeout is never "proved" by itself


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts(), st.sampled_from([None, "bf16"]))
def test_the_mixed_radix_criterion_never_proves_a_layout_that_enumeration_refutes(text, dtype):
    """The criterion is sufficient only: whenever it proves, spec's enumeration finds no collision; when
    it does not, the answer comes from Z3 (and still agrees with enumeration)."""
    s = ul.make_subject(text, dtype)
    q = ul.resolve(s, "injective")
    enumerated = ul.decide_enumeration(s, q)[0]
    if mixed_radix.proves_injective(s.amap):
        assert enumerated == "proved", text
    try:
        ul.refuse_non_cute_swizzle(text)
    except SpecError as refused:             # a swizzle C++ CuTe refuses: the user's entry refuses it too
        assert refused.rule_id == "swizzle.cute.domain"
        with pytest.raises(SpecError):
            lp.prove_layout(text, "injective", dtype=dtype)
        return
    r = lp.prove_layout(text, "injective", dtype=dtype)
    assert r.status == enumerated, text
    if r.engine != "gf2":                     # GF(2) decides linear layouts before the criterion is tried
        assert (r.engine == "radix") == mixed_radix.proves_injective(s.amap), text


def test_the_mixed_radix_criterion_on_hand_checked_layouts():
    # Offsets listed by hand: (3,2):(2,3) gives 0,2,4,3,5,7 (injective, but its strides interleave: the
    # criterion does not decide and Z3 proves it); (128,128):(136,1) is a padded tile (rows 136 apart,
    # 128 wide); Sw<3,4,0> clears bits, so the criterion does not apply to it.
    assert mixed_radix.offsets_apart([(128, 136), (128, 1)])
    assert not mixed_radix.offsets_apart([(3, 2), (2, 3)])
    assert not mixed_radix.offsets_apart([(2, 0)]) and mixed_radix.offsets_apart([(1, 0), (4, -1)])
    r = lp.prove_layout("(3,2):(2,3)", "injective")
    assert r.status == "proved" and r.engine == "z3"
    assert lp.prove_layout("(128,128):(136,1)", "injective", dtype="bf16").engine == "radix"
    s = ul.make_subject("Sw<3,4,0> o (8,8):(8,1)")
    assert not mixed_radix.proves_injective(s.amap)
    r = lp.prove_layout("(3,2):(2,S)", "injective", params={"S": [3, 5, 7]})
    assert r.status == "proved" and r.engine == "z3"              # S = 3 interleaves: one Z3 query


def test_the_gf2_path_does_not_import_z3():
    import subprocess
    import sys
    code = ("import sys; from solver.cli.main import main; "
            "rc = main(['prove', '--layout', 'Sw<3,4,3> o (64,64):(64,1)', '--dtype', 'bf16', 'injective']); "
            "assert rc == 0 and 'z3' not in sys.modules, sorted(m for m in sys.modules if 'z3' in m)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT_DIR)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("text, dtype, start", [
    ("Sw<3,4,3> o (64,64):(64,1)", "bf16", 0),
    ("Sw<2,4,3> o (32,32):(32,1)", "f32", 0),
    ("Sw<3,3,3> o (8,(8,8)):(8,(1,64))", None, 0),
    ("Sw<1,4,3> o (16,8):(1,16)", "bf16", 0x400),
    ("Sw<3,4,3> o ((8,2),(8,4)):((64,512),(1,8))", "bf16", 0),
])
def test_swizzled_layouts_round_trip_through_bases(text, dtype, start):
    """The tensor-layouts pitfall the issue names: the bases printed for a swizzled layout, read back,
    give spec's address at every index, and `equals` proves it."""
    r = lp.prove_layout(text, "injective", dtype=dtype, start_address=start)
    assert r.bases is not None
    back = bases_io.load(r.bases)
    subject = ul.make_subject(text, dtype, start)
    assert [back(i) for i in range(subject.size)] == [subject.address(i) for i in range(subject.size)]
    r = lp.prove_layout(r.bases, "equals", other=text, dtype=dtype, start_address=start)
    assert r.status == "proved" and r.engine == "gf2" and r.cross_checked_by == ["enumeration"]


def test_parameter_errors_are_one_line_before_any_work(capsys):
    """A huge range is refused by its length (nothing is enumerated), an unused name is named."""
    for argv, field in ((["--param", "S=1..99999999999"], "S"), (["--param", "T=1..2"], "T")):
        code = main(["prove", "--layout", "(8,8):(S,1)", *argv, "injective"]) if field == "S" else \
            main(["prove", "--layout", "(8,8):(8,1)", *argv, "injective"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and f"param='{field}'" in err


def test_a_refuted_proof_says_so_on_its_first_line():
    """Issue 29, item 8: the first line is the verdict, not the claim the proof refutes."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "layoutproof", "prove", "--layout", "((8,25),(16,2)):((16,128),(1,32))",
                           "--dtype", "bf16", "injective"], capture_output=True, text=True)
    first = done.stdout.splitlines()[0]
    assert done.returncode == 1 and first.startswith("refuted: layout.injective: "), done.stdout


def test_a_swizzle_cute_refuses_is_refused_naming_the_rule():
    """Issue 29, item 8: Sw<1,0,0> (|S| < B) is what C++ CuTe's static_assert and pycute refuse."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "layoutproof", "prove", "--layout", "Sw<1,0,0> o (8,8):(8,1)",
                           "injective"], capture_output=True, text=True)
    assert done.returncode == 2 and "swizzle.cute.domain" in done.stderr and done.stderr.count("\n") == 1
    assert lp.prove_layout("Sw<3,4,3> o (8,8):(8,1)", "injective").status == "proved"
