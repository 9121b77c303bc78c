"""`layoutproof audit` (solver/kernel/audit): a real compiled kernel (Triton 3.9's TMA GEMM, sm_90a) is
proved with the maps its host code builds, and each mutant of data movement is refuted under the property
it breaks. The expectations are the manual's (a box of a 128-byte-swizzled map lands where PTX ISA 5.5.7
puts it; expect_tx must equal the bytes delivered, 9.7.13.15.1) and the mutation itself (a shifted B
coordinate reads another global k), never the audit's own output. Preconditions that fail give unknown,
never proved."""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os
import subprocess
import sys

import pytest

import layoutproof as lp
from solver.kernel.audit import operations
from solver.kernel.frontend import source

ROOT = ROOT_DIR
EXAMPLE = os.path.join(ROOT, "examples", "audit")
PTX = os.path.join(EXAMPLE, "triton_tma_gemm_sm90.ptx")
M, N, K = 512, 512, 256
PARAMS = {"matmul_kernel_tma_param_15": M, "matmul_kernel_tma_param_16": N, "matmul_kernel_tma_param_17": K}


def _map(name: str) -> dict:
    with open(os.path.join(EXAMPLE, f"triton_tma_gemm_{name}.json")) as handle:
        return json.load(handle)


MAPS = {"0": _map("a"), "5": _map("b"), "10": _map("c")}


@pytest.fixture(scope="module")
def text() -> str:
    with open(PTX) as handle:
        return handle.read()


def _statuses(report) -> dict:
    (kernel,) = report.kernels
    return {p.id: p.status for p in kernel.properties}


def test_the_example_maps_are_what_tritons_host_code_builds():
    """A [M, K] and B [N, K] row-major f16, boxes of BLOCK_K x BLOCK_M / BLOCK_N (the kernel's own
    expect_tx: (128 + 256) x 64 x 2 = 49152 bytes per stage), 128B swizzle (64 f16 = 128 bytes a row)."""
    a, b = MAPS["0"], MAPS["5"]
    assert a["globalDim"] == [K, M] and b["globalDim"] == [K, N]
    assert (a["boxDim"][0] * a["boxDim"][1] + b["boxDim"][0] * b["boxDim"][1]) * 2 == 49152
    with open(PTX) as handle:
        assert "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r7], 49152;" in handle.read()


def test_a_production_kernel_is_proved(text):
    report = lp.audit(text, MAPS, PARAMS)
    assert report.ok, report.explain()
    (kernel,) = report.kernels
    checked = {p.id: p.checked for p in kernel.properties}
    # K / BLOCK_K = 4 phases; each phase read by 4 k-slices x 2 warpgroups (rows 0-63, 64-127) of A and B
    assert checked["audit.bytes.expect_tx"] == K // 64
    assert checked["audit.gemm.same_k"] == (K // 64) * 4 * 2


def _mutant(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_a_wrong_expect_tx_is_refuted(text):
    report = lp.audit(_mutant(text, "_, [%r7], 49152;", "_, [%r7], 49024;"), MAPS, PARAMS)
    statuses = _statuses(report)
    assert statuses["audit.bytes.expect_tx"] == "refuted"
    witness = report.kernels[0].properties[2].witness
    assert "49024" in witness["what"] and "49152" in witness["what"]


def test_a_buffer_moved_by_512_bytes_is_refuted(text):
    """A's first stage 512 bytes on: off its 1024-byte swizzle repeat (a TMA rule), and overlapping the
    stage after it, so that an element A reads was written by a load of a phase not waited for."""
    moved = _mutant(text, "add.s32 \t%r10, %r11, 98304;", "add.s32 \t%r10, %r11, 98816;")
    statuses = _statuses(lp.audit(moved, MAPS, PARAMS))
    assert statuses["audit.tma.legal"] == "refuted"
    assert statuses["audit.reads.written"] == "refuted"


def test_a_map_with_another_swizzle_is_refuted(text):
    maps = dict(MAPS, **{"0": dict(MAPS["0"], swizzle="64B")})
    statuses = _statuses(lp.audit(text, maps, PARAMS))
    assert statuses["audit.swizzle.agrees"] == "refuted"
    assert statuses["audit.gemm.same_k"] == "refuted"


def test_b_loaded_one_box_further_along_k_is_refuted(text):
    shifted = _mutant(text, "[%rd15, {%r183, %r12}], [%r7];", "[%rd15, {%rshift, %r12}], [%r7];")
    shifted = _mutant(shifted, "\tmov.b32 \t%r183, 0;\n",
                      "\tmov.b32 \t%r183, 0;\n\t.reg .b32 %rshift;\n\tadd.s32 %rshift, %r183, 64;\n")
    report = lp.audit(shifted, MAPS, PARAMS)
    assert _statuses(report)["audit.gemm.same_k"] == "refuted"
    witness = next(p.witness for p in report.kernels[0].properties if p.id == "audit.gemm.same_k")
    assert witness["b_global_k"] - witness["a_global_k"] == 64          # one BLOCK_K box


def test_a_missing_map_is_unknown_and_named(text):
    maps = {key: value for key, value in MAPS.items() if key != "5"}
    report = lp.audit(text, maps, PARAMS)
    (kernel,) = report.kernels
    maps_property = kernel.properties[0]
    assert maps_property.status == "unknown" and "matmul_kernel_tma_param_5" in maps_property.reason
    assert "proved" not in {p.status for p in kernel.properties if p.id.startswith("audit.reads")}
    assert not report.ok


def test_a_wait_that_skips_a_phase_is_never_proved(text):
    """Every wait made with parity 0: from the second k-block on, the warp's wait j is not for phase j
    (PTX ISA 9.7.13.15.16: try_wait.parity waits for the phase of that parity), so the pairing of waits
    with phases fails, and the reads are unknown."""
    constant = _mutant(text, "complete, [%r53], %r183;", "complete, [%r53], 0;")
    statuses = _statuses(lp.audit(constant, MAPS, PARAMS))
    assert statuses["audit.reads.written"] == "unknown"
    assert statuses["audit.gemm.same_k"] == "unknown"


def _vacuous(p) -> bool:
    """Proved for want of any instance in the kernel's text (no TMA store, no tcgen05.ld, ...)."""
    from solver.kernel.audit import tally
    return p.status == "proved" and p.reason.startswith(tally.VACUOUS)


def test_without_the_problem_nothing_is_proved(text):
    report = lp.audit(text, MAPS)
    assert not report.ok
    assert all(p.status == "unknown" or _vacuous(p) for p in report.kernels[0].properties
               if p.id != "audit.tma.maps")


def test_a_kernel_without_tma_is_not_proved():
    with lzma.open(os.path.join(ROOT, "tests", "fixtures", "ptx", "corpus", "triton",
                                "tut03_matmul_f16_128x128x32_s4_w4_sm_90a.ptx.xz"), "rt") as handle:
        text = handle.read()
    report = lp.audit(text, {}, {"matmul_kernel_param_3": 256, "matmul_kernel_param_4": 256,
                                 "matmul_kernel_param_5": 64})
    assert not report.ok
    vacuous = {p.id for p in report.kernels[0].properties if _vacuous(p)}
    assert vacuous == {"audit.epilogue.fenced", "audit.attention.pairs", "audit.tmem.access", "audit.tmem.alloc",
                       "audit.scales.path"}
    assert {p.status for p in report.kernels[0].properties if p.id not in vacuous} == {"unknown"}


# --- the forms, as PTX ISA 9.0 writes them -------------------------------------------------------------------

def _instruction(text: str):
    module = source.parse(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                          ".reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .b16 %rs<3>;\n" + text + "\nret;\n}\n")
    return [s.instruction for s in module.functions[0].statements if s.instruction is not None][0]


@pytest.mark.parametrize("statement, kind, rank, mode, multicast, group, mask", [
    ("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
     "load", 2, "tile", False, 1, None),
    ("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
     ".L2::cache_hint [%r1], [%rd1, {%r2, %r3, %r5}], [%r4], %rs1, %rd2;", "load", 3, "tile", True, 1, "%rs1"),
    ("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.cta_group::2 "
     "[%r1], [%rd1, {%r2, %r3, %r5, %r6}], [%r4], {%rs1, %rs2};", "load", 4, "im2col", False, 2, None),
    ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r3}], [%r1];", "store", 2, "tile", False,
     1, None),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];", "reduce",
     2, "tile", False, 1, None),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r2, %r3}];", "prefetch", 2, "tile", False, 1, None),
])
def test_tma_forms(statement, kind, rank, mode, multicast, group, mask):
    form = operations.tma_form(_instruction(statement))
    assert (form.kind, form.rank, form.mode, form.multicast, form.cta_group, form.cta_mask) == \
        (kind, rank, mode, multicast, group, mask)
    assert form.tensormap == "%rd1" and len(form.coordinates) == rank


def test_a_coordinate_count_unlike_the_rank_is_no_form():
    with pytest.raises(operations.FormError):
        operations.tma_form(_instruction(
            "cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];"))


@pytest.mark.parametrize("statement, kind, amount, parity", [
    ("mbarrier.init.shared::cta.b64 [%r1], 1;", "init", "1", None),
    ("mbarrier.expect_tx.shared::cta.b64 [%r1], %r2;", "expect_tx", "%r2", None),
    ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 49152;", "arrive.expect_tx", "49152", None),
    ("mbarrier.arrive.shared::cta.b64 %rd1, [%r1];", "arrive", None, None),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r3;", "wait", None, "%r3"),
    ("mbarrier.try_wait.shared::cta.b64 %p1, [%r1], %rd2;", "wait", None, None),
])
def test_barrier_forms(statement, kind, amount, parity):
    form = operations.barrier_form(_instruction(".reg .pred %p<2>;\n" + statement))
    assert (form.kind, form.amount, form.parity, form.address) == (kind, amount, parity, "[%r1]")


def test_the_map_parameter_is_traced_through_moves_and_an_offset():
    module = source.parse(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .align 64 .b8 "
                          "k_param_0[256])\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<5>;\nmov.b32 %r1, k_param_0;\n"
                          "cvt.u64.u32 %rd1, %r1;\nadd.s64 %rd2, %rd1, 128;\ncvta.param.u64 %rd3, %rd2;\n"
                          "ld.param.u64 %rd4, [k_param_0];\nret;\n}\n")
    function = module.functions[0]
    found, why = operations.tensormap_source(function.statements, function.params, "%rd3")
    assert found == operations.ParamSource("k_param_0", 128) and why is None
    found, why = operations.tensormap_source(function.statements, function.params, "%rd4")
    assert found is None and "loaded from a parameter" in why


# --- the command -------------------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "layoutproof", "audit", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_command_exits_1_and_names_the_missing_map(tmp_path, text):
    alone = tmp_path / "gemm.ptx"                     # (the example's sidecar gives every map)
    alone.write_text(text)
    out = _cli(str(alone), "--tensormap", f"0={EXAMPLE}/triton_tma_gemm_a.json", "--json",
               *[f"--param={k}={v}" for k, v in PARAMS.items()])
    assert out.returncode == 1, out.stderr
    document = json.loads(out.stdout)
    (kernel,) = document["kernels"]
    first = kernel["properties"][0]
    assert first["id"] == "audit.tma.maps" and first["status"] == "unknown"
    assert "matmul_kernel_tma_param_5" in first["reason"]
    assert {a["id"] for a in document["assumptions"]} >= {"audit.assume.smem_base", "audit.assume.stages_released"}


@pytest.mark.parametrize("argument, field", [("0", "tensormap"), ("nosuch=examples/audit/triton_tma_gemm_a.json",
                                                                  "tensormap"), ("0=/nonexistent.json", "tensormap")])
def test_malformed_tensormaps_get_one_line_and_exit_2(argument, field):
    out = _cli(PTX, "--tensormap", argument)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and field in out.stderr


@pytest.mark.parametrize("case", ["original", "B one box along k", "A's map 64B"])
def test_the_optimised_same_k_gives_the_reference_report(text, case):
    """compose.operand_dimensions' fast path (solver/fast/kernel_audit_compose.py: an operand's dimensions
    from its box indexes, kept per trace) against the reference (operand_dimensions_by_element:
    grid_dimensions of every global element), on the original and on the two mutants same_k refutes."""
    from spec import fast as fast_paths
    shifted = _mutant(text, "[%rd15, {%r183, %r12}], [%r7];", "[%rd15, {%rshift, %r12}], [%r7];")
    shifted = _mutant(shifted, "\tmov.b32 \t%r183, 0;\n",
                      "\tmov.b32 \t%r183, 0;\n\t.reg .b32 %rshift;\n\tadd.s32 %rshift, %r183, 64;\n")
    cases = {"original": (text, MAPS), "B one box along k": (shifted, MAPS),
             "A's map 64B": (text, dict(MAPS, **{"0": dict(MAPS["0"], swizzle="64B")}))}
    for ptx, maps in [cases[case]]:
        fast = lp.audit(ptx, maps, PARAMS).document()
        with fast_paths.references_only():
            reference = lp.audit(ptx, maps, PARAMS).document()
        assert fast == reference


# --- many files ---------------------------------------------------------------------------------------------

@pytest.fixture()
def folder(tmp_path, text):
    """Two kernels with sidecars (the Triton GEMM, and it again with B one box along k) and a broken file."""
    side = {"kernel": "matmul_kernel_tma", "tensormaps": MAPS, "params": PARAMS}
    (tmp_path / "a_gemm.ptx").write_text(text)
    (tmp_path / "a_gemm.audit.json").write_text(json.dumps(side))
    shifted = _mutant(text, "[%rd15, {%r183, %r12}], [%r7];", "[%rd15, {%rshift, %r12}], [%r7];")
    shifted = _mutant(shifted, "\tmov.b32 \t%r183, 0;\n",
                      "\tmov.b32 \t%r183, 0;\n\t.reg .b32 %rshift;\n\tadd.s32 %rshift, %r183, 64;\n")
    (tmp_path / "b_shifted.ptx").write_text(shifted)
    (tmp_path / "b_shifted.audit.json").write_text(json.dumps(side))
    (tmp_path / "c_broken.ptx").write_text(".version 8.0\n.target sm_90a\n.entry k( {\n")
    return tmp_path


def test_a_folder_gives_a_line_per_kernel_the_same_for_any_number_of_processes(folder):
    one, two = _cli(str(folder), "--json"), _cli(str(folder), "--json", "--jobs", "2")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    document = json.loads(one.stdout)
    assert [os.path.basename(f["file"]) for f in document["files"]] == ["a_gemm.ptx", "b_shifted.ptx", "c_broken.ptx"]
    first, second, broken = document["files"]
    assert first["ok"] and not second["ok"] and broken["error"]
    assert document["summary"] == {"files": 3, "kernels": 2, "ok": 1, "not_ok": 1, "errors": 1}
    text = _cli(str(folder)).stdout.splitlines()
    assert text[0].endswith("matmul_kernel_tma: ok (14 proved, 0 refuted, 0 unknown)")
    assert "refuted audit.gemm.same_k" in text[1] and "error" in text[2]


def test_a_malformed_sidecar_is_refused_before_any_work(folder):
    (folder / "a_gemm.audit.json").write_text(json.dumps({"tensormap": {}}))
    out = _cli(str(folder))
    assert out.returncode == 2 and out.stdout == "" and "sidecar" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_jobs_and_a_scheduler_exclude_each_other(folder):
    out = _cli(str(folder), "--jobs", "2", "--scheduler", "local")
    assert out.returncode == 2 and "jobs" in out.stderr


def test_tritons_metadata_builds_the_maps_the_example_writes_by_hand(tmp_path, text):
    """--triton-meta: the maps from tensordesc_meta (as the corpus manifest records it for this kernel) and
    the descriptors' shape and stride params equal the example's hand-written documents."""
    from solver.kernel.audit import triton
    meta = [{"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64], "fp4_padded": False,
             "is_im2col": False},
            {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [256, 64], "fp4_padded": False,
             "is_im2col": False},
            {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64], "fp4_padded": False,
             "is_im2col": False}]
    shapes = {"matmul_kernel_tma_param_1": M, "matmul_kernel_tma_param_2": K, "matmul_kernel_tma_param_3": K,
              "matmul_kernel_tma_param_4": 1, "matmul_kernel_tma_param_6": N, "matmul_kernel_tma_param_7": K,
              "matmul_kernel_tma_param_8": K, "matmul_kernel_tma_param_9": 1, "matmul_kernel_tma_param_11": M,
              "matmul_kernel_tma_param_12": N, "matmul_kernel_tma_param_13": N, "matmul_kernel_tma_param_14": 1}
    built = triton.tensormaps(text, meta, {**PARAMS, **shapes})
    names = {"0": "matmul_kernel_tma_param_0", "5": "matmul_kernel_tma_param_5", "10": "matmul_kernel_tma_param_10"}
    assert {names[k]: v for k, v in MAPS.items()} == built
    (tmp_path / "meta.json").write_text(json.dumps({"tensordesc_meta": meta}))
    alone = tmp_path / "gemm.ptx"
    alone.write_text(text)
    out = _cli(str(alone), "--triton-meta", str(tmp_path / "meta.json"),
               *[f"--param={k}={v}" for k, v in {**PARAMS, **shapes}.items()])
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("meta", [[{"swizzle": 3}], ["x"], [{"swizzle": 3, "elem_size": 2, "elem_type": 6,
                                                            "block_size": [0, 64]}]])
def test_a_malformed_triton_meta_gets_one_line_and_exit_2(tmp_path, meta):
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    out = _cli(PTX, "--triton-meta", str(tmp_path / "meta.json"))
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "tensordesc_meta" in out.stderr


def test_a_run_cut_short_proves_nothing(text, monkeypatch):
    """The executor stops recording after MAX_VISITS visits, and a warp after --max-steps statements: what
    the run did not see is not proved (the properties that it saw break stay refuted)."""
    from solver.kernel.audit import phases
    from solver.kernel.concrete import executor
    monkeypatch.setattr(executor, "MAX_VISITS", 40)
    monkeypatch.setattr(phases, "MAX_VISITS", 40)
    statuses = _statuses(lp.audit(text, MAPS, PARAMS))
    assert "proved" not in {statuses[p] for p in ("audit.tma.legal", "audit.bytes.expect_tx", "audit.reads.written",
                                                   "audit.gemm.same_k", "audit.gemm.k_once")}
    monkeypatch.undo()
    from solver.kernel.audit import audit
    cut = audit(text, MAPS, PARAMS, executor.Launch(params=PARAMS), max_steps=200)
    assert not cut.ok and "proved" not in {p.status for p in cut.kernels[0].properties[1:] if not _vacuous(p)}



def _lanes_left(run) -> None:
    run.warps[0].dropped_lanes = True


def _undecided(run) -> None:
    run.visits[0].maybe = True


@pytest.mark.parametrize("mark, said", [(_lanes_left, "lanes were not followed"),
                                        (_undecided, "a launch may not run it")])
def test_a_run_not_whole_or_undecided_proves_nothing(text, monkeypatch, mark, said):
    """Lanes a split left behind (the sides never meet: the lowest lane's side is followed) may issue loads
    and waits the run never saw; an event on a side of a branch on an unknown value or under an unknown
    guard (Visit.maybe: the run follows both sides, a launch takes one) may never happen. Either way the
    properties over the run's events are not proved."""
    from solver.kernel.concrete import executor
    real = executor._Runner.run

    def marked(self, shared):
        found = real(self, shared)
        mark(found)
        return found
    monkeypatch.setattr(executor._Runner, "run", marked)
    report = lp.audit(text, MAPS, PARAMS)
    statuses = _statuses(report)
    assert "proved" not in {statuses[p] for p in ("audit.tma.legal", "audit.bytes.expect_tx", "audit.swizzle.agrees",
                                                   "audit.gemm.same_k", "audit.gemm.k_once", "audit.epilogue.lands",
                                                   "audit.epilogue.fenced")}
    assert any(said in (p.reason or "") for p in report.kernels[0].properties)
