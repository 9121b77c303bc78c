"""Triton (Gluon) as a `fuzz --against` oracle, without Triton: the adapter's protocol on recorded answers,
the PTX descriptor reading on PTX Triton 3.9.0 emitted, the comparison (solver/fuzz/compilers/triton.py)
on cases whose expectations come from the manual and CuTe's swizzle, and the recorded campaign replayed
(tests/hardware/triton_gluon_campaign.jsonl.gz: every recorded judgement is still what spec says today)."""
from __future__ import annotations

import gzip
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import io
import json
import os

import pytest

from solver.fuzz.adapters import triton_gluon as adapter
from solver.fuzz.compilers import triton as judge
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES
from spec.mma import descriptor as spec_descriptor

ROOT = ROOT_DIR
CAMPAIGN = os.path.join(ROOT, "tests", "hardware", "triton_gluon_campaign.jsonl.gz")

# Triton 3.9.0's to_linear_layout(NVMMASharedLayout(128, 16), [64, 64]): offset bit i -> (row, col)
SW128_16BIT = {"offset_bases": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32],
                                [8, 0], [16, 0], [32, 0]], "alignment": 1024}
# ... and of NVMMASharedLayout(0, 16) at [64, 64]: plain row-major, 128-byte rows
ROW_MAJOR_16BIT = {"offset_bases": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0],
                                    [8, 0], [16, 0], [32, 0]], "alignment": 16}

# What Triton 3.9.0 emitted for sm_90a, A [64, 64] f16 (128B swizzle), B [64, 64] f16 (64B swizzle, not
# transposed): the straight-line part before the first wgmma, and the first wgmma.
PTX_SM90 = """
.extern .shared .align 16 .b8 global_smem[];
.visible .entry kern( .param .u64 .ptr .global .align 1 kern_param_0 )
{
	.loc	1 14 11                         // k90.py:14:11
	mov.b32 	%r33, global_smem;
	bfe.u32 	%r34, %r33, 4, 15;
	add.s32 	%r35, %r33, 8192;
	bfe.u32 	%r36, %r35, 4, 15;
	wgmma.fence.sync.aligned;
	cvt.u64.u32 	%rd42, %r34;
	or.b32 	%r37, %r36, 16777216;
	cvt.u64.u32 	%rd46, %r37;
	or.b64 	%rd2, %rd46, -9223371899415822336;
	or.b64 	%rd1, %rd42, 4611686293305294848;
	// begin inline asm
	.loc	1 14 11                         // k90.py:14:11
	wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r1,%r2,%r3,%r4}, %rd1, %rd2, 0, 1, 1, 0, 1;
	// end inline asm
}
"""
# ... and for sm_100a (tcgen05_mma, M = 128): descriptors built from two 32-bit halves.
PTX_SM100 = """
.extern .shared .align 16 .b8 global_smem[];
.visible .entry kern()
{
	mov.b32 	%r2, global_smem;
	elect.sync 	%r6|%p4, -1;
	bfe.u32 	%r7, %r2, 4, 15;
	add.s32 	%r8, %r2, 16384;
	bfe.u32 	%r9, %r8, 4, 15;
	mov.b32 	%r10, 1073758272;
	mov.b64 	%rd1, {%r7, %r10};
	or.b32 	%r11, %r9, 16777216;
	mov.b32 	%r12, -2147467232;
	mov.b64 	%rd2, {%r11, %r12};
	mov.b32 	%r5, 135331856;
	mov.pred 	%p3, 0;
	// begin inline asm
	@%p4 tcgen05.mma.cta_group::1.kind::f16 [ %r19 + 0 ], %rd1, %rd2, %r5, %p3;
}
"""


# --- PTX: the MMAs and their descriptors ------------------------------------------------------------
def test_wgmma_descriptors_of_triton_ptx():
    (mma,) = judge.mma_descriptors(PTX_SM90)
    assert mma["shape"] == [64, 64, 16] and (mma["trans_a"], mma["trans_b"]) == (0, 1)
    a = spec_descriptor.decode("sm90", mma["a"])
    b = spec_descriptor.decode("sm90", mma["b"])
    # A K-major 128B: 8 rows of 128 B per group -> SBO 1024 (PTX 9.7.15.5.1.2.2); start at the base
    assert (a.swizzle, a.start_address, a.stride_byte_offset) == ("128B", 0, 1024)
    # B MN-major 64B: 8 K rows of 64 B -> SBO 512; the next 32-element MN atom after 64 K rows -> LBO 4096
    assert (b.swizzle, b.start_address, b.stride_byte_offset, b.leading_byte_offset) == ("64B", 8192, 512, 4096)


def test_tcgen05_descriptors_of_triton_ptx():
    (mma,) = judge.mma_descriptors(PTX_SM100)
    assert (mma["instruction"], mma["cta_group"], mma["kind"]) == ("tcgen05", 1, "f16")
    a = spec_descriptor.decode("sm100", mma["a"])
    b = spec_descriptor.decode("sm100", mma["b"])
    assert not spec_descriptor.violations(a) and not spec_descriptor.violations(b)
    assert (a.swizzle, a.stride_byte_offset) == ("128B", 1024)
    assert (b.swizzle, b.start_address, b.stride_byte_offset, b.leading_byte_offset) == ("64B", 16384, 512, 4096)
    from spec.mma import instr_desc
    d = instr_desc.decode("f16", mma["idesc"])
    assert (d.m, d.n, d.a_major, d.b_major) == (128, 64, "K", "MN")


def test_a_shared_base_moves_the_start_address():
    (mma,) = judge.mma_descriptors(PTX_SM90, smem_base=1024)
    assert spec_descriptor.decode("sm90", mma["a"]).start_address == 1024


# --- Triton's layout: the linear layout inverted -----------------------------------------------------
def test_offset_table_of_the_128b_layout_is_cutes_swizzle():
    """Element (r, c) of a 16-bit 128B-swizzled tile of 128-byte rows lies at Sw<3,4,3>(128 r + 2 c)."""
    table = judge.offset_table(SW128_16BIT, [64, 64])
    sw = DESCRIPTOR_SWIZZLES["128B"]
    assert len(table) == 64 * 64
    for (r, c), offset in table.items():
        assert offset * 2 == sw(128 * r + 2 * c)


# --- The comparison -----------------------------------------------------------------------------------
CASE_A = {"arch": "sm90", "dtype": "f16", "operand": "A", "shape": [64, 64], "swizzle_byte_width": 128,
          "element_bitwidth": 16, "transposed": False}


def _wgmma_answer(sbo: int = 1024, steps: int = 4) -> dict:
    """A K-major 128B f16 A as the manual reads it: SBO = 8 rows x 128 B, k-step i starts 32 B further."""
    mmas = [{"instruction": "wgmma", "shape": [64, 64, 16], "trans_a": 0, "trans_b": 1,
             "a": spec_descriptor.encode("sm90", 32 * i, 16, sbo, "128B").raw, "b": None} for i in range(steps)]
    return {"verdict": "accept", "detail": "compiled", "layout": {"A": SW128_16BIT},
            "descriptor": {"smem_base": 0, "mmas": mmas}}


def test_the_manuals_descriptor_reads_tritons_128b_tile():
    found, compared = judge.misreads(CASE_A, _wgmma_answer(), operands=("A",))
    assert found == [] and compared == 64 * 64


def test_a_wrong_sbo_is_a_misread_at_the_second_row_group():
    (finding,), _ = judge.misreads(CASE_A, _wgmma_answer(sbo=512), operands=("A",))
    assert finding["finding"] == "misread" and finding["witness"]["mn"] == 8 and finding["witness"]["k"] == 0


def test_refusing_a_legal_tile_is_a_disagreement():
    answer = {"verdict": "refuse", "detail": "no", "layout": {"A": SW128_16BIT}}
    result = judge.compare(CASE_A, answer)
    assert result["outcome"] == "disagree" and result["findings"][0]["finding"] == "refuses_legal"


def test_refusing_an_mn_major_fp8_operand_on_sm90_agrees():
    """wgmma transposes only f16/bf16 (PTX 9.7.15.5.1): an MN-major e4m3 B is illegal on sm90."""
    case = dict(CASE_A, dtype="e4m3", operand="B", shape=[64, 64], element_bitwidth=8)
    result = judge.compare(case, {"verdict": "refuse", "detail": "WGMMA type or shape is not supported"})
    assert result["outcome"] == "agree" and "operand.mn_major.dtype" in result["spec"]["broken"]


def test_accepting_an_mn_major_fp8_operand_on_sm90_is_a_disagreement():
    case = dict(CASE_A, dtype="e4m3", operand="B", shape=[32, 64], element_bitwidth=8)
    word = spec_descriptor.encode("sm90", 0, 4096, 512, "64B").raw
    answer = {"verdict": "accept", "layout": {}, "descriptor": {"mmas": [
        {"instruction": "wgmma", "shape": [64, 64, 32], "trans_a": 0, "trans_b": 1, "a": None, "b": word}]}}
    result = judge.compare(case, answer)
    assert result["outcome"] == "disagree"
    assert "B:operand.mn_major.dtype" in result["findings"][-1]["broken"]


def test_no_descriptor_reads_a_row_major_unswizzled_tile():
    """Without a swizzle, a core matrix's 8 rows are 16 B apart (PTX 9.7.15.5.1.2.1): a tile whose rows
    are 128 B apart is no canonical layout, so refusing it is right."""
    verdict = judge.spec_verdict(dict(CASE_A, swizzle_byte_width=0), ROW_MAJOR_16BIT)
    assert verdict["legal"] is False and verdict["broken"] == ["desc.tile.reads"]


def test_an_element_bitwidth_other_than_the_dtypes_is_not_judged():
    assert judge.spec_verdict(dict(CASE_A, element_bitwidth=32), SW128_16BIT)["legal"] is None


# --- The adapter's protocol, on recorded answers ----------------------------------------------------
def _serve(lines, answers):
    out = io.StringIO()
    adapter.serve(lines, out.write, compile_fn=lambda case: answers[adapter.case_key(case)])
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_protocol_one_answer_per_record_in_order():
    recorded = _wgmma_answer()
    case = judge.check_case(CASE_A)
    lines = [json.dumps({"target": "triton-nvmma", "case": CASE_A}), "", "not json",
             json.dumps({"target": "desc", "case": {}}), json.dumps({"target": "triton-nvmma", "case": {"arch": "sm80"}}),
             json.dumps({"case": CASE_A})]
    answers = _serve(lines, {adapter.case_key(case): recorded})
    assert len(answers) == 5                                       # the blank line gets none
    assert answers[0] == recorded and answers[4] == recorded
    assert answers[1]["verdict"] is None and answers[1]["detail"].startswith("not JSON")
    assert answers[2] == {"verdict": None, "detail": "not a triton-nvmma case"}
    assert answers[3]["verdict"] is None and "malformed case" in answers[3]["detail"]


def test_sampled_cases_are_distinct_and_cover_the_grid():
    cases = adapter.sample_cases("sm90", 300)
    assert len({adapter.case_key(c) for c in cases}) == 300
    assert {c["swizzle_byte_width"] for c in cases} == set(judge.SWIZZLES)
    assert {c["dtype"] for c in cases} == set(judge.DTYPES)


# --- The recorded campaign, replayed ----------------------------------------------------------------
def _campaign():
    with gzip.open(CAMPAIGN, "rt") as handle:
        header = json.loads(handle.readline())
        return header, [json.loads(line) for line in handle]


@pytest.mark.replay
def test_recorded_campaign_header():
    header, rows = _campaign()
    assert header["provenance"]["details"]["triton"] and header["configurations"] == len(rows)
    for arch in judge.ARCHES:
        assert sum(r["case"]["arch"] == arch for r in rows) >= 2000


def _replay(rows):
    for row in rows:
        result = judge.compare(row["case"], row["answer"])
        assert result["outcome"] == row["outcome"], row["case"]
        assert sorted(f["finding"] for f in result["findings"]) == sorted(row["findings"]), row["case"]


@pytest.mark.replay
def test_recorded_disagreements_and_a_sample_still_hold():
    """Every recorded disagreement and one case in 20, judged again from Triton's recorded answer, get the
    recorded outcome and findings."""
    _, rows = _campaign()
    _replay([r for i, r in enumerate(rows) if r["outcome"] == "disagree" or i % 20 == 0])


@pytest.mark.replay
@pytest.mark.slow
@pytest.mark.full_replay
def test_recorded_campaign_judgements_still_hold():
    """Every recorded case, judged again from Triton's recorded answer, gets the recorded outcome and
    findings: an agreement still agrees with spec today, and each disagreement is still one."""
    _, rows = _campaign()
    _replay(rows)
