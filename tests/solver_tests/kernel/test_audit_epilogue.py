"""The audit's epilogue (issue 27, item 4): each accumulator element reaches global memory where its m and n
say. Expectations come from the manual's sentences (the fragments, cvt's packing, prmt's selector), from
counting (a fragment covers its tile once), and from bugs put into real kernels by hand.
"""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os

import pytest

import layoutproof as lp
from spec.mma import fragment
from solver.kernel.concrete import tags
from solver.kernel.concrete.values import Unknown
from solver.kernel.frontend.instruction import parse_instruction, parse_integer

ROOT = ROOT_DIR
EXAMPLE = os.path.join(ROOT, "examples", "audit")


# --- spec/mma/fragment.py ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [8, 16, 64, 136, 256])
def test_the_accumulator_fragment_covers_its_tile_once(n):
    seen = {fragment.accumulator_position(w, lane, e)
            for w in range(4) for lane in range(32) for e in range(fragment.accumulator_elements(n))}
    assert len(seen) == 64 * n == 128 * fragment.accumulator_elements(n)
    assert seen == {(r, c) for r in range(64) for c in range(n)}


def test_the_accumulator_fragment_reads_as_the_manual_draws_it():
    # PTX ISA 9.0 9.7.15.5.1: lane 0 holds d0, d1 at row 0, columns 0, 1; d2, d3 at row 8; lane 5 (group 1,
    # thread 1 of it) d0 at row 1, column 2; d4 at column 8 + 2; warp 2 starts at row 32
    assert [fragment.accumulator_position(0, 0, e) for e in range(4)] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert fragment.accumulator_position(0, 5, 0) == (1, 2)
    assert fragment.accumulator_position(0, 5, 4) == (1, 10)
    assert fragment.accumulator_position(2, 0, 0) == (32, 0)


@pytest.mark.parametrize("transposed", [False, True])
def test_stmatrix_stores_each_element_of_its_matrices_once(transposed):
    rows = [0x1000 + 16 * lane for lane in range(32)]          # matrix j row i at 0x1000 + 128 j + 16 i
    cells = fragment.stmatrix_cells(4, transposed, rows)
    addresses = [address for _, _, _, address in cells]
    assert len(set(addresses)) == 4 * 64 == len(addresses)
    assert set(addresses) == {0x1000 + 2 * k for k in range(256)}


def test_stmatrix_places_a_lane_s_halves_as_the_manual_says():
    rows = [0x1000 + 16 * lane for lane in range(32)]
    plain = {(lane, r, h): a for lane, r, h, a in fragment.stmatrix_cells(4, False, rows)}
    # lane 5: row 1 of each matrix, columns 2 (low half) and 3 (high half)
    assert plain[(5, 0, 0)] == 0x1000 + 16 * 1 + 2 * 2 and plain[(5, 0, 1)] == 0x1000 + 16 * 1 + 2 * 3
    assert plain[(5, 2, 0)] == 0x1000 + 16 * (16 + 1) + 2 * 2           # matrix 2's rows: lanes 16-23
    trans = {(lane, r, h): a for lane, r, h, a in fragment.stmatrix_cells(4, True, rows)}
    # transposed: the element at row 1, column 2 goes to row 2, column 1
    assert trans[(5, 0, 0)] == 0x1000 + 16 * 2 + 2 * 1 and trans[(5, 0, 1)] == 0x1000 + 16 * 3 + 2 * 1


# --- solver/kernel/concrete/tags.py ---------------------------------------------------------------------------

def _run(text: str, registers: dict, widths: dict = None):
    ins = parse_instruction(1, text)

    def read(operand, bits):
        operand = operand.strip()
        if operand in registers:
            return registers[operand]
        number = parse_integer(operand)
        if number is None and operand.startswith("0f"):
            number = int(operand[2:], 16)
        return number if number is not None else Unknown(operand)
    return tags.execute(ins, read, lambda name: (widths or {}).get(name, 32), None)


def _element(e, width=4):
    return tags.Tagged("acc", tags.element_parts(7, e, width))


def test_a_packed_cvt_puts_a_in_the_upper_half():
    # PTX ISA 9.0 cvt: "the value converted from input a is stored in the upper half of d and ... b in the
    # lower half"
    out = _run("cvt.rn.f16x2.f32 %r1, %r2, %r3", {"%r2": _element(1), "%r3": _element(0)})
    assert out["%r1"].parts == tags.element_parts(7, 0, 2) + tags.element_parts(7, 1, 2)


def test_mov_packs_lowest_first_and_unpacks():
    packed = _run("mov.b32 %r1, {%rs1, %rs2}", {"%rs1": tags.Tagged("x", tags.element_parts(7, 4, 2)),
                                                "%rs2": tags.Tagged("x", tags.element_parts(7, 5, 2))},
                  {"%rs1": 16, "%rs2": 16})["%r1"]
    assert packed.parts == tags.element_parts(7, 4, 2) + tags.element_parts(7, 5, 2)
    halves = _run("mov.b32 {%rs3, %rs4}, %r1", {"%r1": packed}, {"%rs3": 16, "%rs4": 16})
    assert halves["%rs3"].parts == tags.element_parts(7, 4, 2) and halves["%rs4"].parts == tags.element_parts(7, 5, 2)


def test_prmt_picks_bytes_by_its_selector():
    # PTX ISA 9.0 prmt: selector nibble i picks byte i of d from {b, a} (a: 0-3, b: 4-7)
    a, b = tags.Tagged("x", tuple(tags.Piece(7, 0, k, 4) for k in range(4))), \
        tags.Tagged("x", tuple(tags.Piece(7, 1, k, 4) for k in range(4)))
    out = _run("prmt.b32 %r1, %r2, %r3, 0x5140", {"%r2": a, "%r3": b})["%r1"]
    assert out.parts == (a.parts[0], b.parts[0], a.parts[1], b.parts[1])


def test_one_element_survives_scaling_and_two_do_not():
    kept = _run("mul.f32 %r1, %r2, 0f3F000000", {"%r2": _element(3)})["%r1"]
    assert kept.parts == tags.element_parts(7, 3, 4)
    mixed = _run("add.f32 %r1, %r2, %r3", {"%r2": _element(3), "%r3": _element(4)})["%r1"]
    assert isinstance(mixed, Unknown) and not tags.is_tagged(mixed)


def test_byte_shifts_and_masks_move_pieces_and_others_lose_them():
    value = _run("cvt.rn.f16x2.f32 %r1, %r2, %r3", {"%r2": _element(1), "%r3": _element(0)})["%r1"]
    shifted = _run("shr.u32 %r4, %r1, 16", {"%r1": value})["%r4"]
    assert shifted.parts == tags.element_parts(7, 1, 2) + (0, 0)
    masked = _run("and.b32 %r5, %r1, 0xFFFF", {"%r1": value})["%r5"]
    assert masked.parts == tags.element_parts(7, 0, 2) + (0, 0)
    odd = _run("shl.b32 %r6, %r1, 3", {"%r1": value})["%r6"]
    assert not tags.is_tagged(odd)


# --- whole kernels: the original proved, bugs put in by hand refuted --------------------------------------------

def _example(text: str):
    sidecar = json.load(open(os.path.join(EXAMPLE, "triton_tma_gemm_sm90.audit.json")))
    return lp.audit(text, sidecar["tensormaps"], sidecar["params"], kernel=sidecar.get("kernel"),
                    grid=sidecar.get("grid"))


@pytest.fixture(scope="module")
def example_text():
    return open(os.path.join(EXAMPLE, "triton_tma_gemm_sm90.ptx")).read()


def _status(report, pid: str):
    return next(p for p in report.kernels[0].properties if p.id == pid)


def test_the_example_s_epilogue_is_proved_row_major(example_text):
    report = _example(example_text)
    lands = _status(report, "audit.epilogue.lands")
    assert lands.status == "proved" and lands.checked == 128 * 256
    assert "(n[0], m[0])" in lands.reason
    assert _status(report, "audit.epilogue.fenced").status == "proved"


@pytest.mark.parametrize("name, old, new, broken", [
    ("stmatrix columns moved by 8", "xor.b32 \t%r171, %r169, 32;", "xor.b32 \t%r171, %r169, 48;",
     "audit.epilogue.lands"),
    ("cvt's halves swapped", "cvt.rn.f16x2.f32 \t%r96, %r187, %r186;", "cvt.rn.f16x2.f32 \t%r96, %r186, %r187;",
     "audit.epilogue.lands"),
    ("the store's column shifted", "or.b32 \t%r90, %r181, %r12;", "add.s32 \t%r90, %r181, 8;",
     "audit.epilogue.lands"),
    ("no proxy fence", "\tfence.proxy.async.shared::cta;\n", "\n", "audit.epilogue.fenced"),
])
def test_a_broken_epilogue_is_refuted_with_its_element(example_text, name, old, new, broken):
    assert example_text.count(old) == 1, name
    report = _example(example_text.replace(old, new))
    found = _status(report, broken)
    assert found.status == "refuted", (name, found)
    assert found.witness.get("store_line") or found.witness.get("mma_line")
    others = [p for p in report.kernels[0].properties if p.status == "refuted" and p.id != broken]
    assert not others, (name, others)


def _corpus(stem: str) -> tuple:
    """(the corpus entry, its PTX text) of the kernel whose file is STEM.ptx.xz."""
    corpus = os.path.join(ROOT, "tests", "fixtures", "ptx", "corpus")
    entry = next(e for e in json.load(open(os.path.join(corpus, "audit.json")))["kernels"]
                 if e["file"].endswith(stem + ".ptx.xz"))
    return entry, lzma.open(os.path.join(corpus, entry["file"]), "rt").read()


def _audit(entry: dict, text: str):
    return lp.audit(text, entry["tensormaps"], entry["params"], grid=entry["grid"], kernel=entry["kernel"])


def test_a_direct_global_store_is_proved_with_its_strides_and_a_moved_one_refuted():
    entry, text = _corpus("tl_sm90_gemm_f16_64x128x32_s4_kA_nB")
    report = _audit(entry, text)
    lands = _status(report, "audit.epilogue.lands")
    assert lands.status == "proved" and lands.checked == 64 * 128
    assert "2048*m[0] + 2*n[0]" in lands.reason        # C row-major, 1024 f16 a row
    first = "st.global.u32 \t[%rd28+16], %r93;"           # the third store: columns 8, 9 of its rows
    assert text.count(first) == 1
    report = _audit(entry, text.replace(first, "st.global.u32 \t[%rd28+20], %r93;"))
    assert _status(report, "audit.epilogue.lands").status == "refuted"


def test_a_register_a_operand_reads_the_rows_of_its_accumulator():
    report = _audit(*_corpus("tut06_attn_fwd_causal_f16_d128_128x128_s3_w8_sm_90a"))
    lands = _status(report, "audit.epilogue.lands")
    assert lands.status == "proved", lands       # O's rows are Q's, through P = softmax(S) in registers


def test_following_the_accumulators_changes_nothing_the_run_records(example_text):
    """The tracer makes the run execute more (the epilogue's data); every visit it records stays the same."""
    from solver.kernel import analysis
    from solver.kernel.audit import operations, trace
    from solver.kernel.concrete.executor import Launch
    sidecar = json.load(open(os.path.join(EXAMPLE, "triton_tma_gemm_sm90.audit.json")))
    launch = Launch(params=dict(sidecar["params"]))

    def visits(tracer):
        result = analysis.analyse(example_text, params=sidecar["params"], launch=launch, any_launch="never",
                                  record=operations.is_recorded, tracer=tracer)
        run = result.runs["matmul_kernel_tma"]
        return [(v.statement, v.warp, v.iteration, v.values, v.lanes) for v in run.visits], run
    plain, _ = visits(None)
    traced, run = visits(lambda function: trace.Trace(function.statements))
    assert plain == traced and len(plain) > 100
    assert not any(w.stopped for w in run.warps)


@pytest.mark.parametrize("dimension, broken", [(1, "audit.attention.pairs"), (0, "audit.gemm.same_tile")])
def test_attention_with_v_moved_is_refuted(dimension, broken):
    """V's box moved along its keys (dimension 1): P's keys no longer meet their values (pairs); along d
    (dimension 0): the output's columns change between key blocks, through the online softmax's rescales
    (same_tile)."""
    from solver.kernel.audit import mutate
    entry, text = _corpus("tut06_attn_fwd_f16_d64_128x64_s3_w4_sm_90a")
    original = _audit(entry, text)
    assert _status(original, "audit.attention.pairs").status == "proved"
    assert _status(original, "audit.attention.pairs").checked > 0
    moved = [m for m in mutate.mutants(text, entry["tensormaps"], entry["kernel"])
             if m.kind == "coordinate" and m.name.startswith(f"coordinate {dimension}+")][-1]   # the last V load
    report = lp.audit(moved.text, moved.tensormaps, entry["params"], grid=entry["grid"], kernel=entry["kernel"])
    assert _status(report, broken).status == "refuted", moved.name
