"""solver/fuzz_ptx (PTX kernels for desc cases) and solver/adapters/ptxas (the ptxas oracle).

Cases whose verdict comes from ptxas need the CUDA toolkit. Without `ptxas` on PATH they fail with a
message, unless LAYOUTPROOF_NO_PTXAS=1 is set (then they are skipped): a missing toolkit must not
pass silently. tests/hardware/ptxas_forms.json (hardware/run_ptxas_forms.py) is the recording that
lets CI check ptxas's verdicts without a toolkit; the tests here check it is well-formed and, where
the same ptxas is present, that it still matches the renderer.
"""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import re
import shutil
import subprocess
import sys

import pytest

import spec.rules  # noqa: F401  (registers every rule)
from solver.fuzz.formats import ptx as fuzz_ptx
from solver.fuzz.adapters import ptxas as adapter
from spec.mma import descriptor as desc_mod
from spec.mma import instr_desc
from spec.mma import readmap
from spec.mma import shape as mma_shape
from spec.rules import check_all

ROOT = ROOT_DIR
FORMS_FILE = os.path.join(ROOT, "tests", "hardware", "ptxas_forms.json")
NO_PTXAS_ENV = "LAYOUTPROOF_NO_PTXAS"


@pytest.fixture
def ptxas():
    found = shutil.which("ptxas")
    if found is None:
        if os.environ.get(NO_PTXAS_ENV) == "1":
            pytest.skip(f"ptxas not on PATH and {NO_PTXAS_ENV}=1")
        pytest.fail(f"ptxas is not on PATH: install the CUDA toolkit (12.9 or later) or set "
                    f"{NO_PTXAS_ENV}=1 to skip the tests that run it")
    return found


def desc_record(arch, dtype, major, mn, k, kind=None, index=0, violates=(), word=None, start=1024):
    """A hand-written desc fuzz record; the descriptor is a valid no-swizzle one unless `word`."""
    if word is None:
        word = desc_mod.encode(arch, start, 128, 256, "none").raw
    return {"index": index, "target": "desc", "arch": arch, "violates": list(violates),
            "outcome": "ok" if not violates else "refused", "witness": None,
            "case": {"descriptor": desc_mod.format_hex(word), "dtype": dtype, "major": major, "mn": mn,
                     "k": k, "layout": "((8,8),(2,8)):((8,64),(1,512))", "start_address": start,
                     "kind": kind}}


def assemble(record, ptxas_path):
    target, text = fuzz_ptx.render_case(record)
    return adapter.assemble(target, text, ptxas_path)


# --- Rendering (no ptxas needed) --------------------------------------------------------------------
def test_target_arch():
    assert [fuzz_ptx.target_arch(a) for a in ("sm90", "sm100", "sm103")] == ["sm_90a", "sm_100a",
                                                                           "sm_103a"]
    with pytest.raises(ValueError):
        fuzz_ptx.target_arch("sm80")


def test_render_groups_by_target_one_kernel_per_case():
    records = [desc_record("sm90", "f16", "K", 64, 16, index=17, violates=["operand.sm90.dtype"]),
               desc_record("sm100", "f16", "K", 64, 16, kind="f16", index=3),
               desc_record("sm90", "bf16", "MN", 128, 16, index=18),
               {"index": 4, "target": "tensormap", "arch": "sm90", "case": {}}]
    modules = fuzz_ptx.render(records)
    assert set(modules) == {"sm_90a", "sm_100a"}
    assert re.findall(r"\.entry (\w+)\(", modules["sm_90a"]) == ["fuzz_case_17", "fuzz_case_18"]
    assert re.findall(r"\.entry (\w+)\(", modules["sm_100a"]) == ["fuzz_case_3"]
    assert ".target sm_90a" in modules["sm_90a"] and ".target sm_100a" in modules["sm_100a"]
    assert "violates operand.sm90.dtype" in modules["sm_90a"]
    assert modules["sm_90a"].count(".extern .shared") == 1


def test_kernel_comment_names_case_values_and_fill_point():
    record = desc_record("sm90", "e4m3", "MN", 16, 32, index=5, violates=["operand.mn_major.dtype"])
    target, text = fuzz_ptx.render_case(record)
    assert target == "sm_90a"
    for expected in ("violates operand.mn_major.dtype", "dtype = e4m3", "major = MN", "mn = 16",
                     "k = 32", f"descriptor = {record['case']['descriptor']}", "start_address = 1024"):
        assert expected in text
    assert text.count(fuzz_ptx.FILL_MARKER) == 1
    assert f"mov.b64 %desc_b, {record['case']['descriptor']};" in text
    assert ".param .u64 out" in text


@pytest.mark.parametrize("dtype,major,mn,k,expected", [
    ("f16", "K", 64, 16, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%d0, "),
    ("bf16", "MN", 128, 16, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "),
    ("tf32", "K", 8, 8, "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 "),
    ("f32", "K", 8, 8, "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 "),
    ("e4m3", "K", 256, 32, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "),
    ("s8", "K", 32, 32, "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 "),
    ("e2m1", "K", 64, 64, "wgmma.mma_async.sync.aligned.m64n64k64.f32.e2m1.e2m1 "),
])
def test_wgmma_spelling(dtype, major, mn, k, expected):
    text = fuzz_ptx.wgmma_instruction(dtype, major, mn, k)
    assert text.startswith(expected)
    assert len(re.findall(r"%d\d+", text)) == mn // 2     # f32/s32 accumulators: N/2 registers


@pytest.mark.parametrize("dtype,major,tail", [
    ("f16", "K", "%desc_a, %desc_b, %scale_d, 1, 1, 0, 0;"),
    ("bf16", "MN", "%desc_a, %desc_b, %scale_d, 1, 1, 0, 1;"),
    ("tf32", "K", "%desc_a, %desc_b, %scale_d, 1, 1;"),
    ("e4m3", "MN", "%desc_a, %desc_b, %scale_d, 1, 1, 0, 1;"),   # refused by ptxas: no transpose
    ("s8", "K", "%desc_a, %desc_b, %scale_d;"),
    ("u8", "MN", "%desc_a, %desc_b, %scale_d, 0, 1;"),
])
def test_wgmma_operand_lists(dtype, major, tail):
    assert fuzz_ptx.wgmma_instruction(dtype, major, 64, 16).endswith(tail)


@pytest.mark.parametrize("mn", [8, 64, 256])
def test_wgmma_stores_cover_d_once(mn):
    """Thread t's register i lands at (row, column) of the PTX 9.7.15.5.1.1 fragment: every element of
    the 64 x N output is written exactly once."""
    seen = []
    offsets = fuzz_ptx.wgmma_store_offsets(mn)
    for thread in range(128):
        warp, lane = divmod(thread, 32)
        first = (16 * warp + lane // 4) * mn + 2 * (lane % 4)
        seen += [first + offset // 4 for offset in offsets]
    assert sorted(seen) == list(range(64 * mn))


@pytest.mark.parametrize("arch,rows,chunks,dtype", [("sm90", 64, 2, "f16"), ("sm100", 128, 2, "e4m3"),
                                                     ("sm103", 128, 3, "e2m1")])
def test_a_operand_is_dense_and_valid(arch, rows, chunks, dtype):
    """spec's read map of the fixed A descriptor: no violations, and it reads exactly the 16-byte
    chunks of [A_START, A_START + rows * 16 * chunks)."""
    a = fuzz_ptx.a_descriptor(arch, rows, chunks)
    kind = "mxf4" if dtype == "e2m1" else None
    k = {"f16": 16, "e4m3": 32, "e2m1": 32 * chunks}[dtype]
    op = readmap.make_operand(a, dtype, "K", rows, k, kind)
    assert readmap.violations(op) == []
    chunks_read = {address // 16 for row in readmap.read_addresses(op) for address in row}
    size = fuzz_ptx.a_tile_bytes(rows, chunks)
    assert chunks_read == set(range(fuzz_ptx.A_START // 16, (fuzz_ptx.A_START + size) // 16))


def test_instruction_descriptor_fields():
    word, notes = fuzz_ptx.instruction_descriptor("sm100", "f16", "bf16", "MN", 64, 16)
    decoded = instr_desc.decode("f16", word, "sm100")
    assert notes == [] and instr_desc.violations(decoded) == []
    assert (decoded.m, decoded.n, decoded.a_major, decoded.b_major) == (128, 64, "K", "MN")
    assert decoded.field("atype") == decoded.field("btype") == 1 and decoded.field("dtype") == 1
    word, _ = fuzz_ptx.instruction_descriptor("sm103", "mxf4", "e2m1", "K", 256, 96)
    decoded = instr_desc.decode("mxf4", word, "sm103")
    assert decoded.field("k96") == 1 and decoded.n == 256 and decoded.m == 128
    assert instr_desc.violations(decoded) == []
    word, notes = fuzz_ptx.instruction_descriptor("sm100", "f8f6f4", "f16", "K", 12, 32)
    assert any("no type code" in note for note in notes) and any("N = 12" in note for note in notes)


def test_tcgen05_forms():
    assert fuzz_ptx.tcgen05_instruction("f16") == (
        "tcgen05.mma.cta_group::1.kind::f16 [%tmem], %desc_a, %desc_b, %idesc, %accumulate;")
    assert ".kind::mxf8f6f4.block_scale.scale_vec::1X " in fuzz_ptx.tcgen05_instruction("mxf8f6f4")
    assert fuzz_ptx.tmem_columns(8, False) == 32 and fuzz_ptx.tmem_columns(256, True) == 512
    assert fuzz_ptx.tmem_columns(64, False) == 64 and fuzz_ptx.tmem_columns(100, False) == 128


def test_first_error_strips_location():
    stderr = ("ptxas /tmp/x/case.ptx, line 70; error   : Arguments mismatch for instruction "
              "'wgmma.mma_async with FP8 types'\nptxas fatal   : Ptx assembly aborted due to errors\n")
    assert adapter.first_error(stderr) == "Arguments mismatch for instruction 'wgmma.mma_async with FP8 types'"
    assert adapter.first_error("ptxas fatal   : Unresolved extern function 'f'\n") == \
        "ptxas fatal : Unresolved extern function 'f'"


def test_verdict_without_ptxas_for_other_targets():
    assert adapter.verdict({"target": "tensormap"}) == {"verdict": None, "detail": "not a desc, tmem or tmem-alloc case"}
    assert adapter.verdict([1, 2])["verdict"] is None


# --- ptxas verdicts ---------------------------------------------------------------------------------
LEGAL_SM90 = [("f16", "K", 64, 16), ("bf16", "MN", 128, 16), ("tf32", "K", 8, 8), ("e4m3", "K", 256, 32),
              ("s8", "K", 32, 32), ("f16", "MN", 8, 16), ("bf16", "K", 256, 16), ("e5m2", "K", 64, 32),
              ("u8", "K", 128, 32), ("f32", "K", 64, 8)]


@pytest.mark.parametrize("dtype,major,mn,k", LEGAL_SM90)
def test_legal_sm90_cases_assemble(ptxas, dtype, major, mn, k):
    assert assemble(desc_record("sm90", dtype, major, mn, k), ptxas) == (True, "assembled")


ILLEGAL_SM90 = [
    # (dtype, major, mn, k, the rule the case breaks, a piece of ptxas's message)
    ("e2m1", "K", 64, 64, "operand.sm90.dtype", "Unexpected instruction types"),
    # ptxas knows .e2m3 as a type name and blames the shape: no wgmma shape takes it
    ("e2m3", "K", 64, 32, "operand.sm90.dtype", "Illegal matrix shape '.m64n64k32'"),
    ("e4m3", "MN", 64, 32, "operand.mn_major.dtype", "Arguments mismatch"),
    ("tf32", "MN", 64, 8, "operand.mn_major.dtype", "Arguments mismatch"),
    ("s8", "MN", 64, 32, "operand.mn_major.dtype", "Arguments mismatch"),
    ("f16", "K", 64, 32, "operand.instruction_k", "Illegal matrix shape '.m64n64k32'"),
    ("tf32", "K", 64, 16, "operand.instruction_k", "Illegal instruction types"),
    ("e4m3", "K", 64, 16, "operand.instruction_k", "Illegal matrix shape '.m64n64k16'"),
    ("f16", "K", 12, 16, "operand.mn_extent", "Unknown modifier '.m64n12k16'"),
    ("f16", "K", 264, 16, "(N <= 256)", "Unknown modifier '.m64n264k16'"),
    ("s8", "K", 40, 32, "(integer N: 8, 16, 24, then multiples of 16)", "Illegal matrix shape '.m64n40k32'"),
]


@pytest.mark.parametrize("dtype,major,mn,k,rule_id,message", ILLEGAL_SM90)
def test_illegal_sm90_cases_are_refused(ptxas, dtype, major, mn, k, rule_id, message):
    accepted, detail = assemble(desc_record("sm90", dtype, major, mn, k, violates=[rule_id]), ptxas)
    assert not accepted and message in detail, detail


@pytest.mark.parametrize("arch,dtype,major,mn,k,kind", [
    ("sm100", "f16", "K", 64, 16, "f16"), ("sm100", "bf16", "MN", 256, 16, "f16"),
    ("sm100", "tf32", "K", 128, 8, "tf32"), ("sm100", "e4m3", "K", 64, 32, "f8f6f4"),
    ("sm100", "e2m1", "K", 128, 32, "f8f6f4"), ("sm100", "s8", "K", 64, 32, "i8"),
    ("sm100", "e5m2", "K", 64, 32, "mxf8f6f4"), ("sm100", "e2m1", "K", 64, 64, "mxf4"),
    ("sm100", "e2m1", "K", 64, 64, "mxf4nvf4"), ("sm103", "e2m1", "K", 256, 96, "mxf4"),
    ("sm103", "f16", "K", 64, 16, "f16"),
])
def test_tcgen05_cases_assemble(ptxas, arch, dtype, major, mn, k, kind):
    assert assemble(desc_record(arch, dtype, major, mn, k, kind=kind), ptxas) == (True, "assembled")


def pair_record(arch, dtype, major, mn, k, kind, cta_group, m, index=0):
    record = desc_record(arch, dtype, major, mn, k, kind=kind, index=index)
    record["case"].update(cta_group=cta_group, m=m)
    return record


def test_cta_pair_kernel_shape():
    """.cta_group::2: a cluster of two CTAs, every tcgen05 instruction of the kernel with ::2 (ptxas
    refuses a function that mixes them), the multicast commit, and an instruction descriptor with the
    case's M and N = 2 x mn (rule desc.tile.cta_pair_split); each CTA holds M/2 rows of A."""
    target, text = fuzz_ptx.render_case(pair_record("sm103", "e2m1", "K", 64, 96, "mxf4", 2, 256))
    assert target == "sm_103a" and ".reqnctapercluster 2, 1, 1" in text
    groups = set(re.findall(r"tcgen05\.\w+(?:\.\w+)*?\.cta_group::(\d)", text))
    assert groups == {"2"}
    assert ".multicast::cluster.b64 [mma_done], %cta_mask;" in text and "%cluster_ctarank" in text
    word = int(re.search(r"mov\.b32 %idesc, (0x[0-9a-f]+);", text).group(1), 16)
    decoded = instr_desc.decode("mxf4", word, "sm103")
    assert (decoded.m, decoded.n, decoded.field("k96")) == (256, 128, 1) and instr_desc.violations(decoded) == []
    shape = mma_shape.of_instr_desc(decoded, 2, "e2m1")
    assert check_all("mma_shape", shape) == []
    a_word = int(re.search(r"mov\.b64 %desc_a, (0x[0-9a-f]+);", text).group(1), 16)
    assert a_word == fuzz_ptx.a_descriptor("sm103", 128, 3).raw       # 128 of the 256 rows per CTA


def test_cta_group_1_kernel_is_the_default():
    """A case naming .cta_group::1 and M = 128 gets the kernel of a case that names neither (the forms
    recorded in tests/hardware/ptxas_forms.json name neither)."""
    plain = desc_record("sm100", "f16", "K", 64, 16, kind="f16")
    named = pair_record("sm100", "f16", "K", 64, 16, "f16", 1, 128)
    named_text = fuzz_ptx.render_case(named)[1]
    kept = [line for line in named_text.split("\n") if not line.startswith(("// cta_group", "// m ="))]
    assert "\n".join(kept) == fuzz_ptx.render_case(plain)[1]
    _, text = fuzz_ptx.render_case(pair_record("sm100", "f16", "K", 64, 16, "f16", 1, 64))
    word = int(re.search(r"mov\.b32 %idesc, (0x[0-9a-f]+);", text).group(1), 16)
    assert instr_desc.decode("f16", word, "sm100").m == 64 and ".reqnctapercluster" not in text


@pytest.mark.parametrize("arch,dtype,major,mn,k,kind,cta_group,m", [
    ("sm103", "e2m1", "K", 64, 96, "mxf4", 2, 256), ("sm103", "e2m1", "K", 128, 96, "mxf4nvf4", 2, 256),
    ("sm100", "bf16", "MN", 128, 16, "f16", 2, 256), ("sm100", "e4m3", "MN", 16, 32, "f8f6f4", 2, 128),
    ("sm100", "s8", "K", 32, 32, "i8", 2, 256), ("sm103", "e2m1", "K", 64, 96, "mxf4", 1, 128),
])
def test_cta_pair_and_k96_kernels_assemble(ptxas, arch, dtype, major, mn, k, kind, cta_group, m):
    """Valid pair shapes and K = 96 assemble, and so does K = 96 with .cta_group::1 (rule
    mma.shape.k96.cta_group): the instruction descriptor is a run-time value ptxas does not inspect."""
    record = pair_record(arch, dtype, major, mn, k, kind, cta_group, m)
    assert assemble(record, ptxas) == (True, "assembled")


def test_tcgen05_i8_is_refused_on_sm103(ptxas):
    accepted, detail = assemble(desc_record("sm103", "s8", "K", 64, 32, kind="i8"), ptxas)
    assert not accepted and "'.kind::i8' not supported on .target 'sm_103a'" in detail


def test_ptxas_does_not_inspect_descriptor_bits(ptxas):
    """Descriptor words are run-time values: reserved bits set, an undefined swizzle code, or a
    malformed instruction-descriptor field all assemble."""
    bad_sm90 = desc_record("sm90", "f16", "K", 64, 16, word=0xFFFFFFFFFFFFFFFF,
                           violates=["desc.sm90.unused_bits_zero"])
    bad_sm100 = desc_record("sm100", "f16", "K", 12, 64, kind="f16", word=0xE000000000000000,
                            violates=["desc.sm100.swizzle_code", "desc.sm100.fixed_bits"])
    assert assemble(bad_sm90, ptxas) == (True, "assembled")
    assert assemble(bad_sm100, ptxas) == (True, "assembled")


def test_render_modules_assemble_with_several_kernels(ptxas):
    records = [desc_record("sm90", d, m, n, k, index=i) for i, (d, m, n, k) in enumerate(LEGAL_SM90)]
    records.append(desc_record("sm100", "f16", "K", 64, 16, kind="f16", index=50))
    records.append(desc_record("sm100", "e4m3", "K", 64, 32, kind="mxf8f6f4", index=51))
    for target, text in fuzz_ptx.render(records).items():
        assert adapter.assemble(target, text, ptxas) == (True, "assembled"), target


def test_adapter_stdin_stdout_loop(ptxas):
    records = [desc_record("sm90", "f16", "K", 64, 16, index=0),
               desc_record("sm90", "e4m3", "MN", 64, 32, index=1, violates=["operand.mn_major.dtype"]),
               {"index": 2, "target": "tensormap", "arch": "sm100", "case": {}}]
    process = subprocess.Popen([sys.executable, "-m", "solver.fuzz.adapters.ptxas", "--ptxas", ptxas],
                               cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    answers = []
    for record in records:   # one line at a time: each answer must come before the next question
        process.stdin.write(json.dumps(record) + "\n")
        process.stdin.flush()
        answers.append(json.loads(process.stdout.readline()))
    process.stdin.close()
    assert process.stdout.read() == ""
    assert process.wait(timeout=60) == 0, process.stderr.read()
    assert answers[0] == {"verdict": "accept", "detail": "assembled"}
    assert answers[1]["verdict"] == "refuse"
    assert answers[1]["detail"] == "Arguments mismatch for instruction 'wgmma.mma_async with FP8 types'"
    assert answers[2] == {"verdict": None, "detail": "not a desc, tmem or tmem-alloc case"}


def test_adapter_missing_ptxas_exits_2():
    result = subprocess.run([sys.executable, "-m", "solver.fuzz.adapters.ptxas", "--ptxas",
                             os.path.join(ROOT, "no", "such", "ptxas")], cwd=ROOT, input="",
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not found" in result.stderr


# --- The recording ----------------------------------------------------------------------------------
FORM_KEYS = {"arch": str, "target": str, "dtype": str, "major": str, "mn": int, "k": int,
             "descriptor": str, "accepted": bool, "first_error": str}


@pytest.fixture(scope="module")
def recording():
    with open(FORMS_FILE) as handle:
        return json.load(handle)


def test_recording_is_well_formed(recording):
    facts = recording["provenance"]["details"]
    assert re.search(r"release \d+\.\d+, V\d+\.\d+\.\d+", facts["ptxas_version"])
    assert facts["ptx_isa_version"] == fuzz_ptx.PTX_VERSION
    forms = recording["forms"]
    assert len(forms) > 500
    seen = set()
    for form in forms:
        for key, kind in FORM_KEYS.items():
            assert isinstance(form[key], kind), (key, form)
        assert form["target"] == fuzz_ptx.target_arch(form["arch"])
        assert form["major"] in ("K", "MN")
        assert re.fullmatch(r"0x[0-9a-f]{16}", form["descriptor"])
        assert (form["kind"] is None) == (form["arch"] == "sm90")
        assert form["accepted"] == (form["first_error"] == ""), form
        key = tuple(form[k] for k in ("arch", "dtype", "major", "mn", "k", "kind", "descriptor"))
        assert key not in seen, key
        seen.add(key)


def _verdict(recording, **values):
    hits = [f for f in recording["forms"] if all(f[k] == v for k, v in values.items())
            and f["descriptor"] == desc_mod.encode(f["arch"], 1024, 128, 256, "none").hex]
    assert len(hits) == 1, values
    return hits[0]["accepted"]


@pytest.mark.parametrize("n", [8, 64, 128, 256])
def test_recording_has_the_legal_sm90_forms(recording, n):
    for dtype, k in (("f16", 16), ("bf16", 16), ("tf32", 8), ("e4m3", 32), ("s8", 32)):
        assert _verdict(recording, arch="sm90", dtype=dtype, major="K", mn=n, k=k)
    for dtype in ("f16", "bf16"):
        assert _verdict(recording, arch="sm90", dtype=dtype, major="MN", mn=n, k=16)
    for dtype, k in (("tf32", 8), ("e4m3", 32), ("s8", 32), ("e2m1", 64)):
        assert not _verdict(recording, arch="sm90", dtype=dtype, major="MN", mn=n, k=k)
    assert not _verdict(recording, arch="sm90", dtype="e2m1", major="K", mn=n, k=64)


def test_recording_has_the_sm100_kinds(recording):
    for dtype, k, kind in (("f16", 16, "f16"), ("tf32", 8, "tf32"), ("e4m3", 32, "f8f6f4")):
        assert _verdict(recording, arch="sm100", dtype=dtype, major="K", mn=64, k=k, kind=kind)
    assert not _verdict(recording, arch="sm103", dtype="s8", major="K", mn=64, k=32, kind="i8")


def test_recording_matches_this_ptxas(ptxas, recording):
    """Where the toolkit is the recorded one, a sample of the forms still gets the recorded verdict
    (the renderer has not drifted from the recording; rerun hardware/run_ptxas_forms.py if it has)."""
    recorded = recording["provenance"]["details"]["ptxas_version"]
    if adapter.ptxas_version(ptxas) != recorded:
        pytest.skip("a different ptxas than the recorded " + recorded)
    forms = recording["forms"][::97]
    for form in forms:
        record = desc_record(form["arch"], form["dtype"], form["major"], form["mn"], form["k"],
                             kind=form["kind"], word=int(form["descriptor"], 16))
        accepted, detail = assemble(record, ptxas)
        assert (accepted, "" if accepted else detail) == (form["accepted"], form["first_error"]), form
