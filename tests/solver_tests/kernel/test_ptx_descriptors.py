"""The PTX descriptor evaluator (solver/kernel) and `layoutproof ptx descriptors | check` (docs/CLI.md `ptx`).

Expected values come from outside the evaluator:
* hand-written PTX (tests/fixtures/ptx/handwritten_*.ptx) whose descriptors were built from fields with
  spec.mma.descriptor.encode and spec.mma.instr_desc.encode (the manual's bit tables);
* PTX that Triton 3.9.0 emitted for Gluon kernels (tests/fixtures/ptx/README.md): the tiles' layouts come
  from the NVMMASharedLayout parameters they were compiled with (swizzle width, element width, transposed),
  written as the manual's canonical layouts (PTX 9.7.16.3.2-3: 8 rows of W bytes per swizzle atom, atoms of
  W bytes of the contiguous dimension one after another), which the fixture README records as equal to
  Triton's own hardware view of those layouts;
* the PTX ISA definitions of the instructions (bfe, bfi, add carries) for the known-bit arithmetic.
"""
from __future__ import annotations

import io
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import json
import time
from pathlib import Path

import pytest

from spec.mma import descriptor as desc_mod
from spec.mma import instr_desc
from spec.rule import SpecError

from solver.cli.main import main
from solver.kernel import analysis
from solver.kernel.symbolic import bits
from solver.kernel.frontend import source
from solver.kernel import check as ptx_check

FIXTURES = TESTS / "fixtures" / "ptx"
HANDWRITTEN_WGMMA = FIXTURES / "handwritten_wgmma.ptx"
HANDWRITTEN_TCGEN05 = FIXTURES / "handwritten_tcgen05.ptx"


def run(capsys, *argv, stdin=None, monkeypatch=None):
    capsys.readouterr()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def descriptors(capsys, path, *extra):
    rc, out, err = run(capsys, "ptx", "descriptors", path, "--json", *extra)
    assert err == ""
    return rc, json.loads(out)


def sites_of(path, **options):
    return analysis.analyse(Path(path).read_text(), **options).sites


# --- known bits ----------------------------------------------------------------------------------------------
def test_adding_an_aligned_unknown_keeps_the_low_bits():
    unknown_multiple_of_1024 = bits.shl(bits.unknown(32), bits.const(10, 32))
    total = bits.add(bits.const(0x400 + 0x20, 32), unknown_multiple_of_1024)
    assert total.known & 0x3FF == 0x3FF and total.value & 0x3FF == 0x20
    assert total.known >> 10 == 0


def test_carries_that_cannot_reach_a_bit_leave_it_known():
    # 0x4000004000000000 + an unknown 32-bit value: no carry can leave the low word
    total = bits.add(bits.const(0x4000004000000000, 64), bits.resize(bits.unknown(32), 64))
    assert total.known == ((1 << 64) - 1) & ~((1 << 32) - 1) and total.value == 0x4000004000000000
    # with a low word of its own, bit 32 may take the carry; bits 33.. (0 + 0 + 1 at most) cannot change
    total = bits.add(bits.const(0x4000004000010240, 64), bits.resize(bits.unknown(32), 64))
    assert total.known == ((1 << 64) - 1) & ~((1 << 33) - 1) and total.value == 0x4000004000000000


def test_subtraction_and_multiplication():
    assert bits.sub(bits.const(5, 32), bits.const(7, 32)) == bits.const(-2, 32)
    product = bits.mul(bits.shl(bits.unknown(32), bits.const(4, 32)), bits.const(6, 32), 32)
    assert product.known & 0x1F == 0x1F and product.value & 0x1F == 0      # 16 * 2: five zero bits


def test_bfe_and_bfi_follow_the_ptx_definitions():
    # PTX 9.7.1.18: bfe.u32 d, a, 4, 15 = (a >> 4) & 0x7fff; bfe.s32 sign-extends from bit pos+len-1
    a = bits.const(0x12345678, 32)
    assert bits.bit_field_extract(a, bits.const(4, 32), bits.const(15, 32), False).value == (0x12345678 >> 4) & 0x7FFF
    assert bits.bit_field_extract(bits.const(0xF0, 32), bits.const(4, 32), bits.const(4, 32), True).value == 0xFFFFFFFF
    # PTX 9.7.1.19: bfi.b32 d, f, b, 0, 14 puts f's low 14 bits into b
    assert bits.bit_field_insert(bits.const(0x40, 32), bits.const(0x10000, 32), bits.const(0, 32),
                                 bits.const(14, 32)).value == 0x10040
    partly = bits.bit_field_extract(bits.unknown(32), bits.const(4, 32), bits.const(15, 32), False)
    assert partly.known == 0xFFFF8000                                    # the bits above the field are 0


def test_packing_and_the_shared_generic_tag():
    word = bits.concat([bits.const(0x40, 32), bits.const(0x40000040, 32)])
    assert word.value == 0x4000004000000040 and word.is_known
    assert bits.split(word, [32, 32]) == [bits.const(0x40, 32), bits.const(0x40000040, 32)]
    generic = bits.Bits(64, 0x400, (1 << 64) - 1, shared_generic=True)
    assert bits.add(generic, bits.const(16, 64)).shared_generic
    assert not bits.and_(generic, bits.const(-1, 64)).known         # a generic address has no number


def test_join_keeps_what_both_paths_agree_on():
    assert bits.join(bits.const(0b1010, 8), bits.const(0b1000, 8)) == bits.make(8, 0b1000, 0xFD)


# --- hand-written sm_90a ------------------------------------------------------------------------------------------
def _sm90(start, lbo=16):
    return desc_mod.encode("sm90", start, lbo, 1024, "128B").hex


def test_handwritten_wgmma_descriptors_are_the_encoded_ones(capsys):
    rc, document = descriptors(capsys, HANDWRITTEN_WGMMA)
    assert rc == 0
    assert document["shared"] == {"handwritten": {"smem_a": 0x400, "smem_b": 0x2400}}
    first, in_loop, after_loop, partial = document["sites"]
    assert [first["operands"][r]["value"] for r in "ab"] == [_sm90(0x400), _sm90(0x2400)]
    assert not first["first_iteration"] and first["loop"] is None
    # the loop's first iteration: +32 bytes; said so
    assert [in_loop["operands"][r]["value"] for r in "ab"] == [_sm90(0x420), _sm90(0x2420)]
    assert in_loop["first_iteration"] and in_loop["loop"]["header_line"] < in_loop["line"] < in_loop["loop"]["back_branch_line"]
    # every iteration (the executor runs the loop's 3): +32, +64, +96 bytes
    for role, start in (("a", 0x400), ("b", 0x2400)):
        seen = in_loop["iterations"]["operands"][role]
        assert seen["distinct"] == [_sm90(start + 32 * n) for n in (1, 2, 3)] and seen["known"]
    # after the loop the descriptors are what the third iteration left
    assert [after_loop["operands"][r]["value"] for r in "ab"] == [_sm90(0x460), _sm90(0x2460)]
    assert all(after_loop["operands"][r]["known"] for r in "ab")
    # a start address that depends on %tid.x: LBO, SBO, swizzle still decoded
    a = partial["operands"]["a"]
    assert a["fields"] == {"start_address": None, "leading_byte_offset": 16, "stride_byte_offset": 1024,
                           "base_offset": 0, "lbo_mode": None, "swizzle": "128B"}
    assert a["value"] == "0x400000400001???0"
    assert first["shape"] == {"m": 64, "n": 64, "k": 16}
    assert first["dtypes"] == {"a": "bf16", "b": "bf16", "d": "f32"}
    assert (first["operands"]["a"]["major"], first["operands"]["b"]["major"]) == ("K", "K")


def test_read_map_of_a_k_major_128b_operand(capsys):
    _, document = descriptors(capsys, HANDWRITTEN_WGMMA)
    a = document["sites"][0]["operands"]["a"]
    assert (a["mn"], a["k"]) == (64, 16) and len(a["addresses"]) == 64 and len(a["addresses"][0]) == 16
    # 128B swizzle at 0x400 (PTX 9.7.16.3.2): row r at 0x400 + 128 r, its 16-byte chunks XORed with r mod 8
    for row in range(8):
        for chunk in range(2):
            assert a["addresses"][row][8 * chunk] == 0x400 + 128 * row + 16 * (chunk ^ row)
    assert a["addresses"][8][0] == 0x400 + 1024                              # SBO: the next 8-row group


def test_smem_base_and_params_move_what_they_should(capsys):
    _, document = descriptors(capsys, HANDWRITTEN_WGMMA, "--smem-base", "0")
    assert document["sites"][0]["operands"]["a"]["value"] == _sm90(0)
    _, document = descriptors(capsys, HANDWRITTEN_WGMMA, "--param", "handwritten_param_1=4")
    assert document["sites"][-1]["operands"]["b"]["value"] == _sm90(0x2400 + 4 * 16)
    _, document = descriptors(capsys, HANDWRITTEN_WGMMA)
    assert document["sites"][-1]["operands"]["b"]["fields"]["start_address"] is None


def test_handwritten_check_finds_the_k_slices(capsys):
    layout = "Sw<3,4,3> o (64,64):(64,1)"         # bf16 K-major 128B tiles of 64 x 64 (rows of 128 bytes)
    rc, out, _ = run(capsys, "ptx", "check", HANDWRITTEN_WGMMA, "--layout", f"A={layout}", "--layout",
                     f"B={layout}", "--json")
    document = json.loads(out)
    assert rc == 1                                        # the last MMA reads a start that depends on %tid.x
    by_line = {}
    for c in document["checks"]:
        by_line.setdefault(c["line"], []).append(c)
    statuses = [[c["status"] for c in by_line[line]] for line in sorted(by_line)]
    # the loop's three iterations (one row per value fed), then what the third left
    assert statuses == [["match"] * 2, ["match"] * 6, ["match"] * 2, ["unknown", "unknown"]]
    in_loop = sorted((c["operand"], c["k_offset"], c["visits"]) for c in by_line[sorted(by_line)[1]])
    assert in_loop == [(role, k, 4) for role in "ab" for k in (16, 32, 48)]      # 32 bytes = 16 bf16 a turn
    assert [c["k_offset"] for c in by_line[sorted(by_line)[2]]] == [48, 48]
    assert document["layouts"]["A"]["tile_address"] == {"handwritten": 0x400}


# --- hand-written sm_100a: every tcgen05.mma form ----------------------------------------------------------------
def test_handwritten_tcgen05_forms(capsys):
    rc, document = descriptors(capsys, HANDWRITTEN_TCGEN05)
    assert rc == 0
    dense, a_tmem, ws, sparse, scaled, pair = document["sites"]
    sm100 = lambda start: desc_mod.encode("sm100", start, 16, 1024, "128B").hex
    assert [dense["operands"][r]["value"] for r in "ab"] == [sm100(0x400), sm100(0x4400)]
    assert dense["instr_desc"]["value"] == "0x%08x" % instr_desc.encode(
        "f16", dtype=1, atype=1, btype=1, m=128, n=64, transpose_b=1).word
    assert (dense["shape"], dense["operands"]["b"]["major"]) == ({"m": 128, "n": 64, "k": 16}, "MN")
    assert a_tmem["operands"]["a"]["source"] == "tmem" and a_tmem["operands"]["a"]["value"] is None
    assert ws["ws"] and ws["shape"]["m"] == 64 and ws["operands"]["a"]["mn"] == 64
    # .sp: K doubles; A holds the compressed half (PTX 9.7.16.10.4)
    assert sparse["sparse"] and sparse["shape"]["k"] == 32
    assert (sparse["operands"]["a"]["k"], sparse["operands"]["b"]["k"]) == (16, 32)
    assert scaled["block_scale"] and scaled["kind"] == "mxf8f6f4"
    assert scaled["dtypes"]["a"] == "e4m3" and scaled["dtypes"]["b"] == "e5m2" and scaled["shape"]["k"] == 32
    # .cta_group::2: each CTA reads M/2 rows of A and N/2 of B (rule desc.tile.cta_pair_split)
    assert pair["cta_group"] == 2 and pair["shape"] == {"m": 256, "n": 128, "k": 16}
    assert (pair["operands"]["a"]["mn"], pair["operands"]["b"]["mn"]) == (128, 64)
    assert all(s["arch"] == "sm100" and s["arch_from"] == ".target sm_100a" for s in document["sites"])


def test_wgmma_with_a_from_registers_and_a_transposed_b():
    text = HANDWRITTEN_WGMMA.read_text().replace(
        "%rd2, %rd3, 0, 1, 1, 0, 0;", "{%r1, %r2, %r3, %r4}, %rd3, 0, 1, 1, 1;")
    site = analysis.analyse(text).sites[0]
    assert site.operands["a"].source == "registers" and site.operands["a"].word is None
    assert site.operands["b"].major == "MN" and site.operands["b"].word.value == int(_sm90(0x2400), 16)


def test_an_unknown_instruction_descriptor_leaves_the_shape_unknown():
    text = HANDWRITTEN_TCGEN05.read_text().replace("mov.b32 \t%r20, 0x08110490;", "mov.u32 \t%r20, %tid.x;")
    site = analysis.analyse(text, kernel="one_cta").sites[0]
    assert site.m is None and site.operands["a"].dtype is None
    assert site.operands["a"].word.is_known                          # the descriptor itself is still known


# --- compiler fixtures: the descriptors read the tiles the compiler laid out ---------------------------------------
# fixture -> (sites, {operand: the canonical layout of its NVMMASharedLayout parameters})
TRITON = {
    # A [64, 64] f16, 128B, K-major; B [K=64, N=64] f16, 128B, N contiguous (MN-major)
    "triton_wgmma_f16_sw128.ptx": (4, {"A": "Sw<3,4,3> o (64,64):(64,1)", "B": "Sw<3,4,3> o (64,64):(1,64)"}),
    # A [64, 128] e4m3, 64B: two 64-byte K atoms of 64 rows; B stored [N=128, K=128] (transposed), 64B
    "triton_wgmma_e4m3_sw64.ptx": (4, {"A": "Sw<2,4,3> o (64,(64,2)):(64,(1,4096))",
                                       "B": "Sw<2,4,3> o (128,(64,2)):(64,(1,8192))"}),
    # the K loop: A [64, 64] and B [N=64, K=64] f16, 128B, both K-major
    "triton_wgmma_loop.ptx": (4, {"A": "Sw<3,4,3> o (64,64):(64,1)", "B": "Sw<3,4,3> o (64,64):(64,1)"}),
    # A stored [K=64, M=128] (transposed) and B [K=64, N=64], f16, 32B: MN-major, 16-element MN atoms
    "triton_tcgen05_f16_sw32_mn.ptx": (4, {"A": "Sw<1,4,3> o ((16,8),64):((1,1024),16)",
                                           "B": "Sw<1,4,3> o ((16,4),64):((1,1024),16)"}),
    # A[:, 64:96] of a [128, 128] f16 128B tile, and B[64:96, 32:64] of a [K=128, N=128] one: the view's
    # offset in the whole tile (element (0, 64) of A: 8192; (n=32, k=64) of B: 64 * 64 + 32)
    # CuTe DSL 4.8.1 (not Triton): A [64, 64] and B [N 64, K 64] bf16 in the layout the DSL chose and printed
    "cutedsl_wgmma_bf16_sw128.ptx": (4, {"A": "Sw<3,4,3> o ((8,8),64):((64,512),1)",
                                         "B": "Sw<3,4,3> o ((8,8),64):((64,512),1)"}),
    "triton_tcgen05_f16_slice.ptx": (2, {"A": "Sw<3,4,3> o 8192 o (128,(64,2)):(64,(1,8192))",
                                         "B": "Sw<3,4,3> o 4128 o ((64,2),128):((1,8192),64)"}),
}


@pytest.mark.parametrize("name", sorted(TRITON))
def test_compiler_descriptors_read_the_compiler_layouts(capsys, name):
    count, layouts = TRITON[name]
    argv = ["ptx", "check", FIXTURES / name] + [x for role, text in layouts.items() for x in ("--layout", f"{role}={text}")]
    rc, out, err = run(capsys, *argv, "--json")
    document = json.loads(out)
    assert (rc, err) == (0, ""), out
    assert document["summary"] == {"match": 2 * count, "mismatch": 0, "unknown": 0, "unread": 0}
    # the K slices come in order, one instruction K apart
    k_offsets = [c["k_offset"] for c in document["checks"] if c["operand"] == "a"]
    step = k_offsets[1] - k_offsets[0]
    assert k_offsets == [k_offsets[0] + i * step for i in range(count)] and step > 0


def test_triton_loop_sites_are_first_iterations(capsys):
    _, document = descriptors(capsys, FIXTURES / "triton_wgmma_loop.ptx")
    assert [s["first_iteration"] for s in document["sites"]] == [True] * 4
    _, document = descriptors(capsys, FIXTURES / "triton_wgmma_f16_sw128.ptx")
    assert [s["first_iteration"] for s in document["sites"]] == [False] * 4


def test_triton_instruction_descriptor_matches_the_kernel(capsys):
    _, document = descriptors(capsys, FIXTURES / "triton_tcgen05_f16_sw32_mn.ptx")
    site = document["sites"][0]
    expected = instr_desc.encode("f16", dtype=1, atype=0, btype=0, m=128, n=64, transpose_a=1, transpose_b=1)
    assert site["instr_desc"]["value"] == "0x%08x" % expected.word
    assert site["operands"]["a"]["fields"]["swizzle"] == "32B" and site["operands"]["a"]["major"] == "MN"


def test_a_wrong_layout_is_a_mismatch_with_a_witness(capsys):
    # the f16 sw128 fixture's B is 128B-swizzled; claim 64B
    rc, out, _ = run(capsys, "ptx", "check", FIXTURES / "triton_wgmma_f16_sw128.ptx", "--layout",
                     "B=Sw<2,4,3> o (64,64):(1,64)", "--json")
    document = json.loads(out)
    assert rc == 1 and document["summary"]["mismatch"] == 4
    first = document["checks"][0]
    assert "desc.tile.swizzle" in [v["rule"] for v in first["violations"]]
    assert first["witness"]["read_from"] != first["witness"]["held_at"]


def test_a_corrupted_sbo_in_compiler_ptx_is_caught(capsys, tmp_path, monkeypatch):
    # Triton ORs 0x4000004000000000 (128B, SBO 1024) into each sm90 descriptor; make it SBO 512
    text = (FIXTURES / "triton_wgmma_f16_sw128.ptx").read_text()
    good = str(0x4000004000000000)
    assert good in text
    bad = text.replace(good, str(0x4000002000000000))
    rc, out, _ = run(capsys, "ptx", "check", "-", "--layout", "A=Sw<3,4,3> o (64,64):(64,1)", "--json",
                     stdin=bad, monkeypatch=monkeypatch)
    document = json.loads(out)
    assert rc == 1
    check = document["checks"][0]
    assert [v["rule"] for v in check["violations"]] == ["desc.tile.stride_byte_offset"]
    assert check["witness"]["element"]["mn"] == 8              # the first row of the second 8-row group


def test_explicit_tile_address(capsys):
    layout = "Sw<3,4,3> o (128,(64,2)):(64,(1,8192))"         # the whole A tile of the slice fixture
    rc, out, _ = run(capsys, "ptx", "check", FIXTURES / "triton_tcgen05_f16_slice.ptx", "--layout",
                     f"A={layout}@0x400", "--json")
    document = json.loads(out)
    assert rc == 0 and [c["k_offset"] for c in document["checks"]] == [64, 80]
    # without the address, the first MMA is taken to read K slice 0 of a tile at its start address, which
    # these reads are consistent with too
    rc, out, _ = run(capsys, "ptx", "check", FIXTURES / "triton_tcgen05_f16_slice.ptx", "--layout", f"A={layout}", "--json")
    assert rc == 0 and [c["k_offset"] for c in json.loads(out)["checks"]] == [0, 16]


def _one_loop_kernel(name: str, body: str) -> str:
    """An sm_90a kernel of 128 threads whose one u32 parameter is in %r1: `body`, then ret."""
    return (".version 8.0\n.target sm_90a\n.address_size 64\n.shared .align 1024 .b8 smem_a[32768];\n"
            f".visible .entry {name}(.param .u32 {name}_param_0)\n.maxntid 128, 1, 1\n{{\n"
            ".reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<4>; .reg .f32 %f<33>;\n"
            f"ld.param.u32 %r1, [{name}_param_0];\n" + body + "ret;\n}\n")


# %rd2 := the descriptor of the shared address in %r8 (K-major, 128B swizzle, LBO 16, SBO 1024: the hand-written
# kernel's A); an m64n64k16 bf16 MMA reading A and B there
DESCRIPTOR_OF_R8 = "shr.u32 %r9, %r8, 4;\nand.b32 %r10, %r9, 16383;\ncvt.u64.u32 %rd1, %r10;\n" \
    "or.b64 %rd2, %rd1, 4611686293305360384;\n"
MMA_AT_RD2 = "wgmma.fence.sync.aligned;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" + \
    ", ".join(f"%f{i}" for i in range(1, 33)) + "}, %rd2, %rd2, 0, 1, 1, 0, 0;\n"

# A stage s = i & 3 shifted in one block and again in the next: the start is smem_a + (s << 13) - (s << 13),
# always smem_a. The any-launch sets take the two shifts of s apart (their blocks are apart: valuesets.py), so
# they also hold smem_a + 8192 x d for d in -3..3, which no launch feeds.
APART = _one_loop_kernel("apart", "mov.u32 %r2, 0;\n$L_loop:\nsetp.ge.u32 %p2, %r2, %r1;\n@%p2 bra $L_done;\n"
                         "and.b32 %r3, %r2, 3;\nshl.b32 %r4, %r3, 13;\nsetp.eq.u32 %p1, %r1, 7;\n@%p1 bra $L_mma;\n"
                         "$L_mma:\nshl.b32 %r5, %r3, 13;\nsub.s32 %r6, %r4, %r5;\nmov.u32 %r7, smem_a;\n"
                         "add.s32 %r8, %r7, %r6;\n" + DESCRIPTOR_OF_R8 + MMA_AT_RD2 +
                         "add.s32 %r2, %r2, 1;\nbra.uni $L_loop;\n$L_done:\n")


def test_check_takes_a_misread_value_of_the_any_launch_sets_as_possible_only(capsys, monkeypatch):
    """With no parameter the run stops before the MMA, and ptx check checks each value of the any-launch
    sets: the one every launch feeds (smem_a) matches; the others misread and are unknown (possibly misread,
    with their witness), not mismatches. With the trip count the run feeds smem_a in every iteration: every
    row a match with its visits."""
    layout = "Sw<3,4,3> o (64,64):(64,1)@0x400"
    argv = ("ptx", "check", "-", "--layout", f"A={layout}", "--layout", f"B={layout}", "--json")
    rc, out, _ = run(capsys, *argv, stdin=APART, monkeypatch=monkeypatch)
    checks = json.loads(out)["checks"]
    assert rc == 1 and len(checks) == 14 and all(c["any_launch"] and not c["first_iteration"] for c in checks)
    start = lambda c: desc_mod.decode("sm90", int(c["descriptor"], 16)).start_address
    assert sorted({start(c) for c in checks}) == [(0x400 + 8192 * d) % (1 << 18) for d in (0, 1, 2, 3, -3, -2, -1)]
    for c in checks:
        if start(c) == 0x400:
            assert c["status"] == "match" and c["reason"] is None
        else:
            assert c["status"] == "unknown" and c["reason"].startswith("possibly misread") and c["witness"]
    rc, out, _ = run(capsys, *argv, "--param", "apart_param_0=8", stdin=APART, monkeypatch=monkeypatch)
    checks = json.loads(out)["checks"]
    assert rc == 0 and [(c["status"], c["visits"], c["any_launch"]) for c in checks] == [("match", 32, False)] * 2


# Two loops whose trip count is a parameter, as a kernel's K loop is: with no parameter every warp stops at
# the loop's test after the first iteration, so the run sees the first iteration's descriptor only.
# STAGED reads stage s = i & 3 at smem_a + 8192 s (the any-launch sets know the 4 starts); K_STEPS steps its
# start by 32 bytes (16 bf16 of K) each iteration, for as long as the parameter says (the sets do not know it).
STAGED = _one_loop_kernel("staged", "mov.u32 %r2, 0;\n$L_loop:\nand.b32 %r3, %r2, 3;\nshl.b32 %r4, %r3, 13;\n"
                          "mov.u32 %r7, smem_a;\nadd.s32 %r8, %r7, %r4;\n" + DESCRIPTOR_OF_R8 + MMA_AT_RD2 +
                          "add.s32 %r2, %r2, 1;\nsetp.lt.u32 %p2, %r2, %r1;\n@%p2 bra $L_loop;\n")
K_STEPS = _one_loop_kernel("k_steps", "mov.u32 %r8, smem_a;\n" + DESCRIPTOR_OF_R8 + "mov.u32 %r2, 0;\n$L_loop:\n" +
                           MMA_AT_RD2 + "add.s64 %rd2, %rd2, 2;\nadd.s32 %r2, %r2, 1;\nsetp.lt.u32 %p2, %r2, %r1;\n"
                           "@%p2 bra $L_loop;\n")


def test_check_says_unknown_where_the_run_stopped_before_every_value_was_fed(capsys, monkeypatch):
    """A stopped run has not fed every value: the values it saw are checked (facts), and the rest come from
    the any-launch sets where they know them, else a row says that not every value was checked (unknown,
    exit 1). A tile of K 64 passes 4 steps of K 16 and no more; a single tile at smem_a is wrong for stages
    1-3, which only later iterations read. Neither may pass on the first iteration alone."""
    one_tile = "Sw<3,4,3> o (64,64):(64,1)@0x400"
    four_stages = one_tile + "+4*0x2000"

    def checks(kernel, layout, *extra):
        rc, out, _ = run(capsys, "ptx", "check", "-", "--layout", f"A={layout}", "--layout", f"B={layout}", "--json",
                         *extra, stdin=kernel, monkeypatch=monkeypatch)
        return rc, [c for c in json.loads(out)["checks"] if c["operand"] == "a"]
    start = lambda c: desc_mod.decode("sm90", int(c["descriptor"], 16)).start_address
    rc, found = checks(K_STEPS, one_tile)
    assert rc == 1 and [(c["status"], c["visits"]) for c in found] == [("match", 4), ("unknown", None)]
    assert found[1]["descriptor"] is None and "values the run did not see" in found[1]["reason"]
    assert "warp 0 stopped" in found[1]["reason"] and "any-launch sets do not know" in found[1]["reason"]
    rc, found = checks(K_STEPS, one_tile, "--param", "k_steps_param_0=4")
    assert rc == 0 and [(c["k_offset"], c["visits"]) for c in found] == [(k, 4) for k in (0, 16, 32, 48)]
    rc, found = checks(K_STEPS, one_tile, "--param", "k_steps_param_0=5")
    assert rc == 1 and [c["status"] for c in found] == ["match"] * 4 + ["mismatch"]
    rc, found = checks(STAGED, four_stages)         # the run's value, then the sets' others (any launch)
    assert rc == 0 and [(start(c), c["visits"], c["any_launch"]) for c in found] == \
        [(0x400, 4, False)] + [(0x400 + 0x2000 * s, None, True) for s in (1, 2, 3)]
    rc, found = checks(STAGED, one_tile)
    assert rc == 1 and [c["status"] for c in found] == ["match"] + ["unknown"] * 3
    assert all(c["reason"].startswith("possibly misread") for c in found[1:])
    rc, found = checks(STAGED, one_tile, "--param", "staged_param_0=8")     # the run feeds all four: facts
    assert rc == 1 and [(start(c), c["status"], c["visits"]) for c in found] == \
        [(0x400, "match", 8)] + [(0x400 + 0x2000 * s, "mismatch", 8) for s in (1, 2, 3)]


def test_a_value_fed_only_on_an_undecided_side_is_a_possible_misread(capsys, monkeypatch):
    """An MMA reads smem_a + 8192 on the side of `if (param == 7)` only. With no parameter the run follows
    both sides (the branch is on an unknown value): the value is fed on a side a launch may not take, so its
    misread against a tile at smem_a is unknown (possibly misread), not a mismatch; with the parameter 7
    the side is taken: a mismatch."""
    kernel = _one_loop_kernel("side", "mov.u32 %r8, smem_a;\nsetp.eq.u32 %p1, %r1, 7;\n@!%p1 bra $L_end;\n"
                                      "add.s32 %r8, %r8, 8192;\n" + DESCRIPTOR_OF_R8 + MMA_AT_RD2 + "$L_end:\n")
    layout = "Sw<3,4,3> o (64,64):(64,1)@0x400"

    def checks(*extra):
        rc, out, _ = run(capsys, "ptx", "check", "-", "--layout", f"A={layout}", "--layout", f"B={layout}", "--json",
                         *extra, stdin=kernel, monkeypatch=monkeypatch)
        return rc, [(c["status"], c["visits"], (c["reason"] or "")[:40]) for c in json.loads(out)["checks"]]
    rc, found = checks()
    assert rc == 1 and found == [("unknown", 4, "possibly misread: the run fed it only on")] * 2
    rc, found = checks("--param", "side_param_0=7")
    assert rc == 1 and found == [("mismatch", 4, "")] * 2


def test_a_rule_broken_only_on_an_undecided_side_is_a_possible_violation(capsys, tmp_path):
    """ptx descriptors: the MMA of `if (param == 7)` reads a descriptor with an unused bit set (bit 14:
    desc.sm90.unused_bits_zero). With no parameter the run fed it only on that undecided side: a possible
    violation, exit 0; with the parameter 7 the side is taken: a violation, exit 1."""
    kernel = tmp_path / "side.ptx"
    kernel.write_text(_one_loop_kernel("side", "mov.u32 %r8, smem_a;\n" + DESCRIPTOR_OF_R8 +
                                       "setp.eq.u32 %p1, %r1, 7;\n@!%p1 bra $L_end;\nor.b64 %rd2, %rd2, 16384;\n" +
                                       MMA_AT_RD2 + "$L_end:\n"))
    rules = lambda found: sorted({(v["rule"], v["operand"]) for v in found})
    broken = [("desc.sm90.unused_bits_zero", "a"), ("desc.sm90.unused_bits_zero", "b")]
    rc, document = descriptors(capsys, kernel)
    (site,) = document["sites"]
    assert rc == 0 and site["violations"] == [] and rules(site["possible_violations"]) == broken
    rc, document = descriptors(capsys, kernel, "--param", "side_param_0=7")
    (site,) = document["sites"]
    assert rc == 1 and rules(site["violations"]) == broken and site["possible_violations"] == []


def _tcgen05_loop(step_idesc: bool) -> str:
    """A tcgen05.mma f16 (M 128, N 32) in a loop of a parameter's trip count, its descriptors those of the
    hand-written sm_100a kernel; step_idesc: the instruction descriptor's N field grows by 8 each iteration
    (its first iteration's shape is not every iteration's), else it is set once."""
    step = "add.u32 %r20, %r20, 0x10000;\n" if step_idesc else ""
    return (".version 8.7\n.target sm_100a\n.address_size 64\n.shared .align 1024 .b8 smem_a[16384];\n"
            ".visible .entry t(.param .u32 t_param_0)\n.maxntid 128, 1, 1\n{\n"
            ".reg .pred %p<4>; .reg .b32 %r<32>; .reg .b64 %rd<4>;\nld.param.u32 %r1, [t_param_0];\n"
            "mov.u32 %r3, smem_a;\nshr.u32 %r4, %r3, 4;\nor.b32 %r5, %r4, 65536;\nmov.b32 %r7, 1073758272;\n"
            "mov.b64 %rd1, {%r5, %r7};\nmov.u32 %r10, 0;\nmov.b32 %r20, 0x08110490;\nmov.u32 %r2, 0;\n"
            "$L_loop:\nsetp.ne.u32 %p1, %r2, 0;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd1, %rd1, %r20, %p1;\n" + step +
            "add.s32 %r2, %r2, 1;\nsetp.lt.u32 %p2, %r2, %r1;\n@%p2 bra $L_loop;\nret;\n}\n")


def test_check_takes_a_shape_only_where_it_holds_in_every_iteration(capsys, monkeypatch):
    """ptx check reads a tcgen05.mma's shape from its instruction descriptor. With no parameter the run
    stops after the first iteration: where the loop changes the descriptor, the first iteration's shape is
    not shown to be every iteration's, and every row is unknown, saying so; where it is set once (a mov of a
    constant, as FlashAttention's inline asm does) the rows are checked."""
    layout = "(128,64):(64,1)@0x400"
    for step, shape_unknown in ((True, True), (False, False)):
        rc, out, _ = run(capsys, "ptx", "check", "-", "--layout", f"A={layout}", "--json", stdin=_tcgen05_loop(step),
                         monkeypatch=monkeypatch)
        rows = [c for c in json.loads(out)["checks"] if c["descriptor"] is not None]
        assert rows, step
        said = ["instruction descriptor" in (c["reason"] or "") for c in rows]
        assert said == [shape_unknown] * len(rows), (step, rows)
        if shape_unknown:
            assert rc == 1 and all(c["status"] == "unknown" for c in rows)


def test_an_operand_is_known_only_where_every_value_it_is_fed_is(capsys):
    """`known` (ptx descriptors): the K loop's run stops after its first iteration and the sets do not know
    the start it steps: the value the run saw is shown, with the warning, and the operand is not known;
    with the trip count the run is whole and it is. The stage loop's sets know its 4 values: known."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, text in (("k_steps", K_STEPS), ("staged", STAGED)):
            paths[name] = Path(folder) / f"{name}.ptx"
            paths[name].write_text(text)
        known = lambda document: [site["operands"][role]["known"] for site in document["sites"] for role in "ab"]
        _, document = descriptors(capsys, paths["k_steps"])
        assert known(document) == [False, False]
        rc, out, _ = run(capsys, "ptx", "descriptors", paths["k_steps"])
        assert out.count("1 value, start 0x400; the run is not whole: others may follow") == 2
        _, document = descriptors(capsys, paths["k_steps"], "--param", "k_steps_param_0=4")
        assert known(document) == [True, True]
        _, document = descriptors(capsys, paths["staged"])
        assert known(document) == [True, True]


def test_the_sets_follow_every_lane_not_lane_0():
    """The stage loop with `@p ret` after its MMA, p true in lane 0 of each warp only: lanes 1-31 go round
    again and feed stages 1-3. The any-launch sets once took lane 0 for the warp (it leaves: stage 0 alone,
    and ptx check passed a single tile, exit 0); they follow both ways now, and with no parameter the check
    cannot pass a single tile (the run stops after the first iteration)."""
    text = STAGED.replace("mov.u32 %r2, 0;\n",
                          "mov.u32 %r2, 0;\nmov.u32 %r11, %laneid;\nsetp.eq.u32 %p3, %r11, 0;\n", 1)
    text = text.replace("add.s32 %r2, %r2, 1;\n", "@%p3 ret;\nadd.s32 %r2, %r2, 1;\n", 1)
    (sets,) = analysis.analyse(text, any_launch="always").any_launch.values()
    assert sorted(desc_mod.decode("sm90", word).start_address for word in sets["%rd2"]) == \
        [0x400 + 0x2000 * s for s in range(4)]
    layout = "Sw<3,4,3> o (64,64):(64,1)@0x400"
    document = ptx_check.check(analysis.analyse(text), [ptx_check.parse_intended(f"{r}={layout}") for r in "AB"])
    assert document["summary"]["unknown"] == 6 and document["summary"]["match"] == 2


def test_the_sets_fix_a_stage_not_each_register_made_from_it():
    """valuesets._fixed_runs: where a block computes the stage s = i & 3 and from it 8192 s, the start and
    the descriptor, bounds.py finds 4 values for each; fixing s alone gives the 4 descriptors the loop feeds
    (fixing each register apart would run 4^8 combinations, past MAX_COMBINATIONS: no value)."""
    from solver.kernel.symbolic import valuesets
    found = analysis.analyse(STAGED, any_launch="always")
    (sets,) = found.any_launch.values()
    starts = sorted(desc_mod.decode("sm90", word).start_address for word in sets["%rd2"])
    assert starts == [0x400 + 0x2000 * s for s in range(4)]
    assert valuesets.MAX_COMBINATIONS < 4 ** 8


def test_tensor_maps_given_let_the_run_past_the_dispatch_byte(capsys, tmp_path):
    """Triton's TMA ws sm_100a kernel with its problem: its worker warps dispatch on a state byte above the
    TMA destinations; with no map, a load may write up to the window's end, so the byte is not answered
    and warps 4-7 stop there. With the maps its launcher builds (tests/fixtures/ptx/corpus/audit.json), each
    load writes its box, the byte is answered, and every warp runs to its end: each operand is known from a
    whole run. A map for a parameter no function has is one line, exit 2."""
    import lzma
    corpus = FIXTURES / "corpus"
    entry = next(k for k in json.loads((corpus / "audit.json").read_text())["kernels"]
                 if k["file"] == "triton/tut09_tma_ws_f16_128x256x64_s3_w4_sm_100a.ptx.xz")
    kernel = tmp_path / "k.ptx"
    kernel.write_text(lzma.open(corpus / entry["file"], "rt").read())
    problem = [x for name, value in entry["params"].items() for x in ("--param", f"{name}={value}")] + \
        ["--grid", ",".join(map(str, entry["grid"]))]
    maps = []
    for key, document in entry["tensormaps"].items():
        (tmp_path / f"{key}.json").write_text(json.dumps(document))
        maps += ["--tensormap", f"{key}={tmp_path / f'{key}.json'}"]

    def stopped(*extra):
        _, document = descriptors(capsys, kernel, *problem, *extra)
        run = document["runs"]["matmul_kernel_tma"]
        return [r["warps"] for r in run["roles"] if r["stopped"]], document
    without, _ = stopped()
    assert without == [[4, 5, 6, 7]]
    given, document = stopped(*maps)
    assert given == [] and all(s["iterations"]["complete"] for s in document["sites"])
    assert all(s["operands"][r]["known"] and not (s["iterations"]["any_launch"] or {}).get(r)
               for s in document["sites"] for r in "ab" if s["operands"][r]["source"] == "descriptor")
    # --triton-meta builds the same maps from the compiled kernel's tensordesc_meta (each map's box outermost
    # first; f16 is the device's type 6, 128B swizzle is 3) and the descriptors' shape and stride params
    meta = [{"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": document["boxDim"][::-1],
             "fp4_padded": False, "is_im2col": False} for document in entry["tensormaps"].values()]
    assert all(d["dataType"] == "FLOAT16" and d["swizzle"] == "128B" for d in entry["tensormaps"].values())
    (tmp_path / "meta.json").write_text(json.dumps({"tensordesc_meta": meta}))
    assert stopped("--triton-meta", str(tmp_path / "meta.json")) == stopped(*maps)
    rc, out, err = run(capsys, "ptx", "descriptors", kernel, "--tensormap", "nosuch=" + maps[1].split("=", 1)[1])
    assert rc == 2 and not out and err.count("\n") == 1 and "no parameter of that name" in err


# --- the command line -------------------------------------------------------------------------------------------
SITE_KEYS = {"function", "line", "instruction", "family", "arch", "arch_from", "guard", "first_iteration", "loop",
             "kind", "cta_group", "sparse", "ws", "block_scale", "shape", "dtypes", "instr_desc", "operands",
             "violations", "possible_violations", "iterations"}
OPERAND_KEYS = {"source", "operand", "value", "known", "fields", "dtype", "kind", "major", "mn", "k", "addresses",
                "no_addresses", "violations"}
CHECK_KEYS = {"function", "line", "instruction", "operand", "tile", "stage", "mn_offset", "status", "descriptor",
              "visits", "k_offset", "tile_address", "first_iteration", "any_launch", "violations", "witness", "reason"}


def test_json_keys_are_the_documented_ones(capsys):
    _, document = descriptors(capsys, HANDWRITTEN_TCGEN05)
    assert set(document) == {"smem_base", "functions", "shared", "launch", "runs", "sites", "others", "unread"}
    assert set(document["launch"]) == {"params", "cta", "grid", "cluster", "block"}
    for function_run in document["runs"].values():
        assert set(function_run) == {"block", "roles", "not_run"}
        assert all(set(r) == {"warps", "site_lines", "stopped"} for r in function_run["roles"])
    for site in document["sites"]:
        assert set(site) == SITE_KEYS and set(site["operands"]) == {"a", "b"}
        assert all(set(op) == OPERAND_KEYS for op in site["operands"].values())
        assert set(site["instr_desc"]) == {"operand", "value", "known", "fields", "violations"}
    rc, out, _ = run(capsys, "ptx", "check", HANDWRITTEN_TCGEN05, "--kernel", "cta_pair", "--layout",
                     "A=Sw<3,4,3> o (128,64):(64,1)", "--json")
    document = json.loads(out)
    assert set(document) == {"smem_base", "functions", "layouts", "checks", "summary", "unread"}
    assert all(set(c) == CHECK_KEYS for c in document["checks"])
    assert rc == 0 and document["summary"]["match"] == 1


def test_text_output_names_the_sites(capsys):
    rc, out, _ = run(capsys, "ptx", "descriptors", HANDWRITTEN_WGMMA)
    assert rc == 0
    assert out.startswith("4 MMA sites in 1 function; shared memory from 0x400")
    assert "handwritten: warps 0-3 reach 4 sites; ran to the end" in out
    assert "3 values, start 0x420 + 0x20*n" in out                # the loop's three iterations, 32 bytes apart
    rc, out, _ = run(capsys, "ptx", "descriptors", HANDWRITTEN_WGMMA, "--full")
    assert rc == 0
    assert "in the loop of lines" in out and "values of its first iteration" in out
    assert "no read map of A: the descriptor has unknown bits" in out


def test_a_long_function_name_is_named_once_and_labelled(capsys, monkeypatch):
    """A C++ template's mangled name (CUTLASS's run to thousands of characters) is `function 1` in the text
    of `ptx descriptors` and `ptx check`, named in full once, on a legend line; JSON keeps the name; a
    short name is itself (docs/CLI.md)."""
    import io
    from solver.cli import render
    long_name = "_ZN7cutlass13device_kernel" + "I" * (render.LONG_FUNCTION_NAME + 10) + "E"
    text = HANDWRITTEN_WGMMA.read_text().replace("handwritten", long_name)

    def text_of(*command) -> list:
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        _, out, _ = run(capsys, *command)
        assert out.count(long_name) == 1 and f"function 1: {long_name}" in out.splitlines(), command
        return out.splitlines()
    assert "function 1: warps 0-3 reach 4 sites; ran to the end" in text_of("ptx", "descriptors", "-")
    checked = text_of("ptx", "check", "-", "--layout", "A=Sw<3,4,3> o (64,64):(64,1)")
    assert any(line.split()[:2] == ["52", "function"] and line.split()[2] == "1" for line in checked)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    _, out, _ = run(capsys, "ptx", "descriptors", "-", "--json")
    assert long_name in json.loads(out)["runs"]


def test_stdin_is_read(capsys, monkeypatch):
    rc, out, _ = run(capsys, "ptx", "descriptors", "-", "--json", stdin=HANDWRITTEN_WGMMA.read_text(),
                     monkeypatch=monkeypatch)
    assert rc == 0 and len(json.loads(out)["sites"]) == 4


def test_a_descriptor_breaking_a_rule_exits_1(capsys, monkeypatch):
    # swizzle code 3 in bits [61,64) is invalid on sm100 (Table 40)
    text = HANDWRITTEN_TCGEN05.read_text().replace("mov.b32 \t%r7, 1073758272;", "mov.b32 \t%r7, 0x60004040;")
    rc, out, _ = run(capsys, "ptx", "descriptors", "-", "--kernel", "one_cta", "--json", stdin=text,
                     monkeypatch=monkeypatch)
    assert rc == 1
    rules = {v["rule"] for v in json.loads(out)["sites"][0]["violations"]}
    assert "desc.sm100.swizzle_code" in rules


@pytest.mark.parametrize("argv, field", [
    (["ptx", "check", HANDWRITTEN_WGMMA, "--layout", "C=(64,64):(64,1)"], "layout"),
    (["ptx", "check", HANDWRITTEN_WGMMA, "--layout", "A=(64,64:(64,1)"], "layout"),
    (["ptx", "check", HANDWRITTEN_WGMMA, "--layout", "A=(16,64):(64,1)"], "layout"),
    (["ptx", "check", HANDWRITTEN_TCGEN05, "--kernel", "nothing", "--layout", "A=(64,64):(64,1)"], "kernel"),
    (["ptx", "descriptors", HANDWRITTEN_WGMMA, "--param", "no_equals_sign"], "param"),
    (["ptx", "descriptors", "/nonexistent/file.ptx"], "ptx"),
    (["ptx", "check", HANDWRITTEN_WGMMA, "--layout", "A=(64,64):(64,1)", "--layout", "a=(64,64):(64,1)"], "layout"),
])
def test_malformed_input_is_one_line_and_exit_2(capsys, argv, field):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and f"{field}=" in err


def test_a_layout_naming_an_operand_no_mma_reads_from_smem():
    text = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"
    with pytest.raises(SpecError, match="no MMA"):
        ptx_check.check(analysis.analyse(text), [ptx_check.parse_intended("A=(64,64):(64,1)")])


def test_size_limits_are_checked_before_the_work(capsys, monkeypatch):
    huge = "// " + "x" * (source.MAX_BYTES + 10)
    started = time.time()
    rc, _, err = run(capsys, "ptx", "descriptors", "-", stdin=huge, monkeypatch=monkeypatch)
    assert rc == 2 and "larger than" in err and time.time() - started < 5
    # a kernel of more than 10^6 statements: refused before it is parsed (the ';' are counted first)
    body = "\tadd.s32 %r1, %r1, 1;\n" * (source.MAX_TOTAL_STATEMENTS + 1)
    text = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n" + body + "}\n"
    started = time.time()
    with pytest.raises(SpecError, match="statements read per file"):
        analysis.analyse(text)
    assert time.time() - started < 10
    # one function of 300,000: the per-function bound
    text = text.replace(body, "\tadd.s32 %r1, %r1, 1;\n" * 300_000)
    with pytest.raises(SpecError, match="statements read per function"):
        analysis.analyse(text)


def test_long_values_are_cut_in_errors(capsys):
    rc, _, err = run(capsys, "ptx", "check", HANDWRITTEN_WGMMA, "--layout", "Q=" + "x" * 500)
    assert rc == 2 and "characters)" in err and len(err) < 400


def test_an_excerpt_without_register_declarations_keeps_64_bit_descriptors():
    """A trimmed excerpt (no .reg lines, as quoted in issues): %rd registers are 64-bit, as nvcc and
    Triton name them, so a descriptor's high word survives (spec.mma.descriptor.encode gives the word)."""
    from solver.kernel import analysis
    from spec.mma import descriptor
    word = descriptor.encode("sm90", 0, 16, 1024, "128B").raw
    ptx = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
           f"mov.b64 %rd1, {word};\nmov.b64 %rd2, {word};\n"
           "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r1,%r2,%r3,%r4}, %rd1, %rd2, 0, 1, 1, 0, 0;\n}\n")
    (site,) = analysis.analyse(ptx, smem_base=0).sites
    assert site.operands["a"].word.is_known and site.operands["a"].word.value == word


def test_a_binary_file_is_not_ptx(tmp_path, capsys):
    path = tmp_path / "kernel.cubin"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    assert main(["ptx", "descriptors", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not PTX text" in err


def test_a_tile_given_as_nvmma_parameters_is_the_canonical_layout(capsys):
    """nvmma(W, BITS, MN, K, MAJOR) names the tile Triton's NVMMASharedLayout stores (the fixture README's
    formula): Triton's own f16 128B tiles match, and the wrong major or a K that is not the tile's does not."""
    fixture = str(FIXTURES / "triton_wgmma_f16_sw128.ptx")
    rc, out, _ = run(capsys, "ptx", "check", fixture, "--layout", "A=nvmma(128,16,64,64,K)",
                     "--layout", "B=nvmma(128,16,64,64,MN)", "--json")
    document = json.loads(out)
    assert rc == 0 and document["summary"]["match"] == 8
    # the formula itself, element by element, against the layout it is turned into
    layout = ptx_check.parse_intended("A=nvmma(64,8,32,128,K)").layout
    atom = 8 * 64 // 8
    for mn in range(32):
        for k in range(128):
            assert layout.layout(mn, k) == (k // atom) * 32 * atom + mn * atom + k % atom
    rc, out, _ = run(capsys, "ptx", "check", fixture, "--layout", "B=nvmma(128,16,64,64,K)", "--json")
    assert rc == 1 and json.loads(out)["summary"]["mismatch"] == 4
    rc, _, err = run(capsys, "ptx", "check", fixture, "--layout", "B=nvmma(128,16,64,60,K)")
    assert rc == 2 and "swizzle atom" in err


def test_a_tile_given_as_a_recipe_is_the_recipes_layout(capsys):
    """recipe(ARCH, DTYPE, MAJOR, MN, K, SWIZZLE) names the tile `layoutproof recipe` lays out with its TMA
    boxes: for Triton's f16 128B tiles (K-major A, MN-major B, 64 x 64) it is the tile the kernel reads, the
    wrong major is not, and a shape the recipe refuses is refused here with the recipe's reason."""
    fixture = str(FIXTURES / "triton_wgmma_f16_sw128.ptx")
    rc, out, _ = run(capsys, "ptx", "check", fixture, "--layout", "A=recipe(sm90,f16,K,64,64,128B)",
                     "--layout", "B=recipe(sm90,f16,MN,64,64,128B)", "--json")
    document = json.loads(out)
    assert rc == 0 and document["summary"]["match"] == 8
    assert document["layouts"]["A"]["layout"] == "Sw<3,4,3> o ((8,8),(64,1)):((64,512),(1,4096))"
    layout = ptx_check.parse_intended("A=recipe(sm90,f16,K,64,64,128B)").layout
    assert all(layout.layout(mn, k) == mn * 64 + k for mn in range(64) for k in range(64))
    rc, out, _ = run(capsys, "ptx", "check", fixture, "--layout", "B=recipe(sm90,f16,K,64,64,128B)", "--json")
    assert rc == 1 and json.loads(out)["summary"]["mismatch"] == 4
    rc, _, err = run(capsys, "ptx", "check", fixture, "--layout", "B=recipe(sm90,f16,MN,60,64,128B)")
    assert rc == 2 and "mn" in err and len(err.strip().splitlines()) == 1
