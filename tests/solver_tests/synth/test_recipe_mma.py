"""`recipe` reads the tile the way each instruction does (issue 29): on sm90 one wgmma per 64-row
warpgroup of A and one per N rows of B, each slice's descriptors checked element by element against
where the TMA boxes wrote the tile; the instruction's text; `--instr` on sm90 and sm100.

Expectations: the manual's shapes (PTX ISA 9.7.15.5: wgmma reads 64 rows of A; N a multiple of 8 up to
256, of 16 past 24 for s8/u8), the TMA placement (spec.tma.swizzle, independent of the descriptor), and
ptxas for the instruction text.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from contextlib import redirect_stdout

import pytest

from solver.cli.main import main
from solver.synth import recipe, recipe_mma

def _sm90_recipe(dtype, major, swizzle, mn, k):
    """The sm90 recipe of the tile, or None where sm90 has none (an MN-major type wgmma cannot transpose,
    a K tile narrower than one box, ...)."""
    from spec.rule import SpecError
    try:
        r = recipe.build("sm90", dtype, major, mn, k, swizzle, 0x400)
    except SpecError:
        return None
    return None if r.violations or any(s["status"] != "found" for s in r.instructions) else r


GRID = [case for case in ((dtype, major, swizzle, mn, k)
                          for dtype in ("bf16", "tf32", "e4m3", "s8") for major in ("K", "MN")
                          for swizzle in ("none", "64B", "128B") for mn in (64, 128, 256) for k in (32, 64))
        if _sm90_recipe(*case) is not None]


def _sm90(dtype, major, swizzle, mn, k, m=None, n=None):
    r = _sm90_recipe(dtype, major, swizzle, mn, k)
    return r, recipe_mma.sm90_reads(r, recipe.written_addresses(r), recipe.instruction_k(r), m, n)


def test_the_grid_covers_both_majors_and_every_dtype():
    assert {c[1] for c in GRID} == {"K", "MN"} and {c[0] for c in GRID} == {"bf16", "tf32", "e4m3", "s8"}


@pytest.mark.parametrize("case", GRID, ids=lambda c: "-".join(map(str, c)))
def test_every_warpgroup_and_instruction_slice_reads_what_tma_wrote(case):
    r, reads = _sm90(*case)
    mn = case[3]
    a = [s for s in reads["slices"] if s["operand"] == "A"]
    b = [s for s in reads["slices"] if s["operand"] == "B"]
    assert [s["rows"] for s in a] == [[64 * w, 64 * w + 63] for w in range(mn // 64)]   # wgmma is m64
    assert [s["rows"] for s in b] == [[0, mn - 1]]                                      # N = MN <= 256
    assert all(s["proof"]["status"] == "proved" for s in reads["slices"]), reads
    assert reads["shape"] == f"m64n{mn}k{recipe.instruction_k(r)}"


def test_warpgroup_one_starts_64_rows_in():
    """K-major, 128B swizzle, bf16: a row is 128 bytes, so warpgroup 1's start is 64 * 128 bytes later
    and every other field is the same (CUTLASS moves only the start address)."""
    _, reads = _sm90("bf16", "K", "128B", 128, 64)
    first, second = [s["descriptors"][0] for s in reads["slices"] if s["operand"] == "A"]
    assert int(second, 16) - int(first, 16) == (64 * 128) >> 4


def test_a_wrong_slice_start_is_refuted(monkeypatch):
    """The check is not the shift restated: a start 16 bytes off is found reading another byte."""
    real = recipe_mma._shift_bytes
    monkeypatch.setattr(recipe_mma, "_shift_bytes", lambda r, row: real(r, row) + (16 if row else 0))
    _, reads = _sm90("bf16", "K", "128B", 128, 64)
    second = [s for s in reads["slices"] if s["operand"] == "A"][1]
    assert second["proof"]["status"] == "refuted" and second["proof"]["element"][0] == 64


def test_instr_n_splits_b_and_a_wrong_n_breaks_the_shape_rule():
    _, reads = _sm90("bf16", "K", "128B", 256, 64, m=256, n=64)
    assert [s["rows"] for s in reads["slices"] if s["operand"] == "B"] == [[0, 63], [64, 127], [128, 191],
                                                                         [192, 255]]
    _, reads = _sm90("s8", "K", "128B", 160, 128, n=40)       # s8 past 24: multiples of 16 only
    b = [s for s in reads["slices"] if s["operand"] == "B"]
    assert b and b[0]["proof"]["status"] == "refuted"
    assert "operand.sm90.n_extent" in {v["rule"] for v in b[0]["proof"]["violations"]}
    assert any("as A" in note for note in reads["notes"])     # 160 rows: no whole warpgroups


def _run(argv):
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


def test_cli_prints_the_instruction_and_takes_instr_on_sm90():
    status, text = _run(["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                         "--swizzle", "128B", "--smem-address", "0x400", "--instr", "128,128"])
    assert status == 0
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in text
    assert text.count("proved (4096 elements)") == 2
    status, out = _run(["recipe", "--arch", "sm100", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                        "--swizzle", "128B", "--smem-address", "0x400", "--instr", "128,256", "--json"])
    document = json.loads(out)
    assert status == 0 and document["mma"]["instruction"].startswith("tcgen05.mma.cta_group::1.kind::f16")
    assert document["mma"]["instr_desc"] == document["instr_desc"]["word"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_ptxas_accepts_the_instruction_of_an_mn_major_recipe(tmp_path):
    """imm-trans-a and imm-trans-b are 1 for MN-major bf16 tiles: ptxas takes the text as printed."""
    _, reads = _sm90("bf16", "MN", "128B", 64, 32)
    text = reads["instruction"]
    assert text.endswith("1, 1, 1, 1;")
    registers = text[text.index("{") + 1:text.index("}")].split(", ")
    module = "\n".join([
        ".version 8.0", ".target sm_90a", ".address_size 64", ".visible .entry k() {",
        f"  .reg .f32 %d<{len(registers)}>;", "  .reg .b64 %desc_a, %desc_b;", "  .reg .pred %scale_d;",
        "  mov.b64 %desc_a, 0; mov.b64 %desc_b, 0; setp.ne.b32 %scale_d, 0, 0;",
        "  wgmma.fence.sync.aligned;", "  " + text, "  wgmma.commit_group.sync.aligned;",
        "  wgmma.wait_group.sync.aligned 0;", "  ret;", "}"])
    path = os.path.join(tmp_path, "k.ptx")
    with open(path, "w") as handle:
        handle.write(module)
    done = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.path.join(tmp_path, "k.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_emit_prints_the_snippet_alone_and_refuses_with_exit_1():
    status, text = _run(["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                         "--swizzle", "128B", "--smem-address", "0x400", "--emit", "cuda"])
    assert status == 0 and "cuTensorMapEncodeTiled(tensor_map," in text and "proof:" not in text
    status, out = _run(["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                        "--swizzle", "128B", "--smem-address", "0x480", "--emit", "cute", "--json"])
    document = json.loads(out)                 # 0x480 is off the 1024-byte repeat: refused, nothing to paste
    assert status == 1 and document["emit"]["text"] is None and document["emit"]["refused"]
