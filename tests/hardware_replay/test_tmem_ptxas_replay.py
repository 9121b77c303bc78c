"""Replay of tests/hardware/tmem_ptxas_forms.json.gz: what ptxas 13.0 decides about tcgen05
tensor-memory instructions (hardware/run_tmem_ptxas_forms.py), checked without ptxas.

(a) The recording itself: well-formed, every target and op present, and the facts about ptxas that
    spec/tmem relies on (which .num each shape takes, how many registers, which qualifiers and
    operands ptxas checks and which it does not).
(b) Agreement: spec.tmem.instruction.check says ptxas accepts exactly the forms ptxas accepted.
(c) Where the same ptxas is on PATH, a sample of forms still assembles as recorded.

Instruction texts are recorded without the trailing semicolon, as `layoutproof tmem check --ptx`
takes them.
"""
from __future__ import annotations

import collections
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import os
import random
import re
import shutil
import sys

import pytest

ROOT = ROOT_DIR
FORMS_FILE = os.path.join(ROOT, "tests", "hardware", "tmem_ptxas_forms.json.gz")
TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a")
PTX_VERSIONS = ("8.6", "8.7", "8.8", "9.0")
OPS = ("ld", "st", "ld.red", "alloc", "dealloc", "relinquish_alloc_permit", "wait::ld", "wait::st", "cp", "shift")
SHAPES = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
REGS_PER_NUM = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1}
MAX_NUM = {"16x64b": 128, "16x128b": 64, "16x256b": 32, "32x32b": 128, "16x32bx2": 128}
_OP = re.compile(r"^tcgen05\.(ld\.red|ld|st|alloc|dealloc|relinquish_alloc_permit|wait::\w+|cp|shift)")
_SHAPE_NUM = re.compile(r"\.(\d+x\d+b(?:x2)?)\.x(\d+)\b")


@pytest.fixture(scope="module")
def document():
    with gzip.open(FORMS_FILE, "rt") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def forms(document):
    return document["forms"]


def op_of(instruction: str):
    """The op a form names (None for a name that is no op: tcgen05.wait without ::ld / ::st)."""
    match = _OP.match(instruction)
    return match.group(1) if match else None


def shape_num(instruction: str):
    match = _SHAPE_NUM.search(instruction)
    return (match.group(1), int(match.group(2))) if match else (None, None)


def registers(instruction: str) -> int:
    """The data registers of an ld/st form: the first {...} vector (ld's destination or st's source)."""
    vectors = re.findall(r"\{([^}]*)\}", instruction)
    return len(vectors[0 if op_of(instruction) != "st" else -1].split(",")) if vectors else 1


def select(forms, target="sm_100a", version="9.0", op=None):
    return [f for f in forms if f["target"] == target and f["ptx_version"] == version
            and (op is None or op_of(f["instruction"]) == op)]


def verdict(forms, instruction, target="sm_100a", version="9.0"):
    found = [f for f in forms if f["instruction"] == instruction and f["target"] == target
             and f["ptx_version"] == version]
    assert len(found) == 1, (instruction, target, version, len(found))
    return found[0]["accepted"]


# --- (a) the recording ------------------------------------------------------------------------------
def test_header_names_ptxas_and_command(document):
    header = document["provenance"]
    assert header["details"]["ptxas"].startswith("Cuda compilation tools, release 13.0")
    assert header["command"].startswith("python3 hardware/run_tmem_ptxas_forms.py")
    assert header["recorded_by"] == "hardware/run_tmem_ptxas_forms.py"


def test_forms_are_well_formed(forms):
    assert 3000 <= len(forms) <= 8000
    seen = set()
    for form in forms:
        assert set(form) == {"instruction", "target", "ptx_version", "accepted", "error"}, form
        assert form["target"] in TARGETS and form["ptx_version"] in PTX_VERSIONS, form
        assert form["instruction"].startswith("tcgen05.") and not form["instruction"].endswith(";")
        assert isinstance(form["accepted"], bool)
        assert (form["error"] is None) == form["accepted"], form
        assert form["error"] is None or ("ptxas" not in form["error"] and "line" not in form["error"])
        key = (form["instruction"], form["target"], form["ptx_version"])
        assert key not in seen, key
        seen.add(key)
    assert {f["target"] for f in forms} == set(TARGETS)


def test_every_op_is_recorded_on_every_target(forms):
    counts = collections.Counter((f["target"], op_of(f["instruction"])) for f in forms)
    for target in TARGETS:
        for op in OPS:
            assert counts[(target, op)] > 0, (target, op)


def test_each_shape_num_family_has_accepted_and_refused_forms_on_sm100a(forms):
    """Every real (op, shape, .num) family the shape takes has accepted forms (the right register count)
    and refused ones (one register fewer or more); the others (.num too large, x256, the bogus shape)
    have only refused forms."""
    families = collections.defaultdict(set)
    for form in select(forms):
        op = op_of(form["instruction"])
        if op in ("ld", "st"):
            families[(op,) + shape_num(form["instruction"])].add(form["accepted"])
    for op in ("ld", "st"):
        for shape in SHAPES:
            for num in (1, 2, 4, 8, 16, 32, 64, 128, 256):
                expected = {True, False} if num <= MAX_NUM[shape] else {False}
                assert families[(op, shape, num)] == expected, (op, shape, num)
        assert families[(op, "16x512b", 2)] == {False}


def test_register_count_is_num_times_the_shape_width_with_or_without_packing(forms):
    for form in select(forms):
        op = op_of(form["instruction"])
        shape, num = shape_num(form["instruction"])
        if op not in ("ld", "st") or shape not in SHAPES or not form["accepted"]:
            continue
        assert registers(form["instruction"]) == REGS_PER_NUM[shape] * num, form
        assert num <= MAX_NUM[shape]
        has_offset = re.search(r"\[%r0\], -?\d+", form["instruction"]) is not None
        assert has_offset == (shape == "16x32bx2"), form


def test_what_ptxas_checks_and_what_it_does_not(forms):
    v = lambda text, target="sm_100a": verdict(forms, text, target)  # noqa: E731
    # .sync is required everywhere; .aligned only on alloc / dealloc / relinquish / wait.
    assert v("tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r0]")
    assert v("tcgen05.st.sync.32x32b.x2.b32 [%r0], {%r1, %r2}")
    assert v("tcgen05.ld.red.sync.32x32b.x4.min.f32 {%r1, %r2, %r3, %r4}, %r2000, [%r0]", "sm_103a")
    assert not v("tcgen05.ld.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0]")
    assert not v("tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [sh], 32")
    assert not v("tcgen05.dealloc.cta_group::1.sync.b32 %r0, 32")
    assert not v("tcgen05.wait::ld.sync")
    assert v("tcgen05.wait::ld.aligned.sync")        # qualifier order is free
    # alloc: immediate columns a power of 2 in [32, 512]; dealloc: only a multiple of 32.
    for cols, ok in ((0, False), (16, False), (32, True), (48, False), (512, True), (1024, False)):
        assert v(f"tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [sh], {cols}") == ok, cols
    for cols, ok in ((0, True), (16, False), (48, False), (1024, True), (2048, True)):
        assert v(f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, {cols}") == ok, cols
    # The half-split offset must be an immediate, of any value.
    for offset in (0, 1, 3, 65536, -1):
        assert v(f"tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {{%r1, %r2}}, [%r0], {offset}")
    assert not v("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, [%r0], %r5")
    # .pack::16b on ld, .unpack::16b on st, never the other way round; the count does not change.
    assert v("tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32 {%r1}, [%r0]")
    assert not v("tcgen05.ld.sync.aligned.32x32b.x2.unpack::16b.b32 {%r1, %r2}, [%r0]")
    assert not v("tcgen05.st.sync.aligned.32x32b.x2.pack::16b.b32 [%r0], {%r1, %r2}")


def test_targets_and_versions(forms):
    by_pair = collections.defaultdict(list)
    for form in forms:
        by_pair[(form["target"], form["ptx_version"])].append(form)
    for (target, version), group in by_pair.items():
        accepted = {op_of(f["instruction"]) for f in group if f["accepted"]}
        unsupported = [f for f in group if "does not support .target" in (f["error"] or "")]
        if target in ("sm_90a", "sm_120a") or unsupported:
            assert not accepted, (target, version)
        else:
            assert {"ld", "st", "alloc", "dealloc", "wait::ld"} <= accepted, (target, version)
            assert ("ld.red" in accepted) == (target in ("sm_103a", "sm_103f", "sm_110a", "sm_110f"))
    assert by_pair[("sm_100a", "8.6")] and not any(
        "does not support" in (f["error"] or "") for f in by_pair[("sm_100a", "8.6")])
    for target, first in (("sm_100f", "8.8"), ("sm_103a", "8.8"), ("sm_110a", "9.0"), ("sm_120a", "8.7")):
        for version in PTX_VERSIONS:
            unsupported = any("does not support .target" in (f["error"] or "")
                              for f in by_pair[(target, version)])
            assert unsupported == (version < first), (target, version)


def test_what_ptxas_decides_about_cp_and_shift(forms):
    v = lambda text, target="sm_100a": verdict(forms, text, target)  # noqa: E731
    cp = "tcgen05.cp.cta_group::{g}.{shape} [%r0], %rd1"
    # every shape with its own multicast (and only it), either decompression pair, either cta_group
    for shape, multicasts in (("128x256b", ("",)), ("4x256b", ("",)), ("128x128b", ("",)),
                              ("64x128b", (".warpx2::02_13", ".warpx2::01_23")), ("32x128b", (".warpx4",))):
        for multicast in ("", ".warpx2::02_13", ".warpx2::01_23", ".warpx4"):
            for fmt in ("", ".b8x16.b6x16_p32", ".b8x16.b4x16_p64"):
                for g in (1, 2):
                    text = cp.format(g=g, shape=shape + multicast + fmt)
                    assert v(text) == (multicast in multicasts), text
    assert not v(cp.format(g=1, shape="16x256b"))
    assert not v("tcgen05.cp.cta_group::1.128x256b.b8x16 [%r0], %rd1")             # half a format pair
    assert not v("tcgen05.cp.cta_group::1.128x256b.b6x16_p32.b8x16 [%r0], %rd1")   # reversed pair
    assert not v("tcgen05.cp.128x256b [%r0], %rd1")                                 # .cta_group required
    assert not v("tcgen05.cp.cta_group::1.128x256b.sync.aligned [%r0], %rd1")       # no .sync/.aligned
    assert v("tcgen05.cp.cta_group::1.b8x16.b6x16_p32.128x256b [%r0], %rd1")       # order is free
    assert v("tcgen05.cp.cta_group::1.128x256b [%r0+16], %rd1")
    assert v("tcgen05.cp.cta_group::1.128x256b [%r0], 5")                           # immediate s-desc
    assert not v("tcgen05.cp.cta_group::1.128x256b [%r0], %r1")
    # an immediate tensor-memory address crashes ptxas 13.0 (no message)
    crashed = [f for f in select(forms) if f["instruction"] in (
        "tcgen05.cp.cta_group::1.128x256b [0], %rd1", "tcgen05.shift.cta_group::1.down [0x10000]")]
    assert len(crashed) == 2 and all(f["error"].startswith("crashed with signal") for f in crashed)
    # shift: .down and .cta_group required, the shape never written, not on the family targets
    assert v("tcgen05.shift.cta_group::2.down [%r0]") and v("tcgen05.shift.down.cta_group::1 [%r0]")
    assert not v("tcgen05.shift.cta_group::1 [%r0]") and not v("tcgen05.shift.down [%r0]")
    assert not v("tcgen05.shift.cta_group::1.down.31x256b [%r0]")
    assert v("tcgen05.shift.cta_group::1.down [%r0+4]")
    for target in ("sm_100a", "sm_103a", "sm_110a", "sm_100f", "sm_103f", "sm_110f"):
        assert verdict(forms, "tcgen05.shift.cta_group::1.down [%r0]", target) == target.endswith("a")
        assert verdict(forms, cp.format(g=1, shape="128x256b"), target)


def test_what_ptxas_decides_about_immediates_repeats_and_operand_order(forms):
    """The edge forms (issue 25): ptxas 13.0 reads constants and qualifiers more loosely than the manual's
    syntax in places, and more strictly in others."""
    v = lambda text, target="sm_100a": verdict(forms, text, target)  # noqa: E731
    st = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r0], {}"
    # st's source vector may hold constants, of any spelling, but not constants only; ld's may not
    for target in ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"):
        assert v(st.format("{%r1, 0}"), target) and not v(st.format("{0, 0}"), target), target
    for constant in ("-1", "0x10", "4294967296", "017", "0b101", "5U"):
        assert v(st.format(f"{{%r1, {constant}}}")), constant
    assert not v("tcgen05.st.sync.aligned.32x32b.x1.b32 [%r0], {5}")
    assert not v("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, 0}, [%r0]")
    # every kind of qualifier once, but .sync and .NaN may repeat; .pack::16b and .unpack::16b are one kind
    assert not v("tcgen05.st.sync.aligned.32x32b.x2.x2.b32 [%r0], {%r1, %r2}")
    assert not v("tcgen05.st.sync.aligned.32x32b.x2.pack::16b.unpack::16b.b32 [%r0], {%r1, %r2}")
    assert not v("tcgen05.st.sync.aligned.aligned.32x32b.x2.b32 [%r0], {%r1, %r2}")
    assert v("tcgen05.st.sync.sync.aligned.32x32b.x2.b32 [%r0], {%r1, %r2}")
    assert v("tcgen05.ld.red.sync.aligned.32x32b.x2.min.NaN.NaN.f32 {%r1, %r2}, %r3, [%r0]", "sm_103a")
    assert not v("tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.abs.f32 {%r1, %r2}, %r3, [%r0]", "sm_103a")
    # tcgen05.wait::mma and tcgen05.wait are syntax errors (the first one on every target)
    for target in TARGETS:
        assert any(f["instruction"] == "tcgen05.wait::mma.sync.aligned" and f["target"] == target
                   and f["error"].startswith("Parsing error") for f in forms), target
    # addresses: [base+imm] with a negative imm, never [base-imm]; .b32 constants keep their low 32 bits
    assert v("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0+-4]")
    assert not v("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0-4]")
    assert v("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sh], 4294967328")
    assert v("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sh], 040")      # octal 32
    assert not v("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sh], 08")
    # the decompression qualifiers: up to two anywhere (ignored?), cp's pair in order, split or not
    assert v("tcgen05.ld.sync.aligned.32x32b.x2.b8x16.b32 {%r1, %r2}, [%r0]")
    assert v("tcgen05.st.sync.aligned.32x32b.x2.b6x16_p32.b8x16.b32 [%r0], {%r1, %r2}")
    assert not v("tcgen05.st.sync.aligned.32x32b.x2.b8x16.b6x16_p32.b8x16.b32 [%r0], {%r1, %r2}")
    assert v("tcgen05.cp.cta_group::1.b8x16.128x256b.b6x16_p32 [%r0], %rd1")
    # operand order is fixed, but dealloc's two .b32 operands may be either a register or a constant
    assert not v("tcgen05.st.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0]")
    assert not v("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0],")
    assert v("tcgen05.dealloc.cta_group::1.sync.aligned.b32 32, %r0")


# --- (b) agreement with spec/tmem -------------------------------------------------------------------
def _reason(violations) -> str:
    """The first violation as 'rule id: message' ('(none)' when spec lets the form through)."""
    if not violations:
        return "(none)"
    first = violations[0]
    rule = getattr(first, "rule", None)
    rule_id = getattr(rule, "id", None) or str(rule)
    return f"{rule_id}: {getattr(first, 'message', '')}".rstrip(": ")


def _error_pattern(error) -> str:
    return "accepted" if error is None else re.sub(r"'[^']*'|\d+", "_", error)


def test_spec_agrees_with_ptxas(forms):
    """A form spec cannot parse (SpecError, e.g. rule tmem.instruction.syntax) counts as refused;
    any other exception is a disagreement. Disagreements are grouped by (ptxas's error with names
    and numbers masked, spec's first violation) and listed with up to three forms each."""
    from spec.tmem import instruction
    from spec.rules import SpecError
    groups = collections.defaultdict(list)
    for form in forms:
        try:
            answer = instruction.check(form["instruction"], form["target"], form["ptx_version"])
            spec_accepts, reason = answer["ptxas_accepts"], _reason(answer.get("violations"))
        except SpecError as error:
            spec_accepts, reason = False, f"SpecError: {error}"
        except Exception as error:
            spec_accepts, reason = None, f"raised {type(error).__name__}: {error}"
        if spec_accepts != form["accepted"]:
            groups[(_error_pattern(form["error"]), reason)].append(form)
    if groups:
        total = sum(len(group) for group in groups.values())
        lines = [f"{total} of {len(forms)} forms: spec.tmem.instruction.check disagrees with ptxas"]
        for (ptxas_said, spec_said), group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {len(group)} x ptxas: {ptxas_said} | spec: {spec_said}")
            lines += [f"      {f['target']} {f['ptx_version']}: {f['instruction'][:120]}" for f in group[:3]]
            spread = collections.Counter((f["target"], f["ptx_version"]) for f in group)
            lines.append("      on " + ", ".join(f"{t} {v} ({n})" for (t, v), n in sorted(spread.items())))
        pytest.fail("\n".join(lines))


def test_what_ptxas_cannot_parse_gets_a_verdict(forms):
    """A tcgen05 text ptxas refuses with a syntax error ("Parsing error near ...") is an instruction
    ptxas refuses, not malformed input: spec gives its verdict (the CLI exits 1, not 2)."""
    from spec.tmem import instruction
    texts = {(f["instruction"], f["target"], f["ptx_version"]) for f in forms
             if (f["error"] or "").startswith("Parsing error")}
    assert len(texts) > 100
    for text, target, version in sorted(texts):
        assert not instruction.check(text, target, version)["ptxas_accepts"], text


# --- (c) the same ptxas, where present ----------------------------------------------------------------
def test_sample_still_assembles_as_recorded(document, forms):
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas not on PATH: the recording is replayed without it")
    sys.path.insert(0, os.path.join(ROOT, "hardware"))
    import run_tmem_ptxas_forms as runner
    recorded = document["provenance"]["details"]["ptxas"]
    if runner.ptxas_version("ptxas") != recorded:
        pytest.skip(f"ptxas on PATH is not the recorded {recorded}")
    sample = random.Random(7).sample(forms, 40)
    for form in sample:
        got = runner.assemble_alone("ptxas", form["target"], form["ptx_version"], 0, form["instruction"])
        assert got == (form["accepted"], form["error"]), form
