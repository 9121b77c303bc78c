"""The executor's optimised path (solver/fast/kernel_concrete_semantics.py) against its reference, semantics.py: the
same value for every instruction form it plans, on random int operands with edge values, and the same
runs, visit by visit, on corpus kernels of every compiler with their recorded problem where they have one.
"""
from __future__ import annotations

import json
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import lzma

import pytest

from spec import fast as fast_paths
from solver.fast import kernel_concrete_semantics as fast
from solver.kernel import analysis
from solver.kernel.concrete import executor
from solver.kernel.concrete import semantics as reference
from solver.kernel.concrete.values import Unknown, mask

from tests.solver_tests.kernel.test_kernel_bitvector import _cases, _reader

CORPUS = TESTS / "fixtures" / "ptx" / "corpus"


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_path_computes_what_semantics_computes(seed):
    planned = 0
    for ins, values, widths in _cases(700, 100 + seed):
        expected = reference.handler_of(ins)(ins, _reader(values, widths), widths.get, None)
        env = dict(values)
        if not fast.run(ins, env, widths.get):
            assert env == values                       # declined: nothing written
            continue
        planned += 1
        (name,) = [n for n in expected]
        if isinstance(expected[name], Unknown):
            pytest.fail(f"{ins.text}: the reference has no value, the fast path wrote {env[name]:#x}")
        assert env[name] == expected[name] & mask(widths[name]), (ins.text, values)
    assert planned > 300


@pytest.mark.parametrize("seed", range(2))
def test_an_unknown_operand_gives_the_references_unknown(seed):
    """Where a register operand holds a plain Unknown (the value sets run blocks on unknown inputs), the fast
    path writes what the handler gives: the first Unknown it reads (values.lift), the same object; a tag (an
    Unknown of another class, the audit's accumulators) and a handler that does not lift are declined."""
    import random
    from solver.kernel.concrete.tags import Tagged
    rng = random.Random(900 + seed)
    compared = 0
    for ins, values, widths in _cases(700, 200 + seed):
        sources = [n for n in values if n != ins.operands[0].strip()]
        if not sources:
            continue
        chosen = [n for n in sources if rng.random() < 0.5] or [rng.choice(sources)]
        for name in chosen:
            values[name] = Unknown(f"unknown {name}")

        def read(operand, width, values=values):
            operand = operand.strip()
            if operand in values:
                value = values[operand]
                return value if isinstance(value, Unknown) or width >= widths[operand] else value & mask(width)
            return int(operand) & mask(width)
        expected = reference.handler_of(ins)(ins, read, widths.get, None)
        env = dict(values)
        if not fast.run(ins, env, widths.get):
            assert env == values
            continue
        (name,) = [n for n in expected]
        assert env[name] is expected[name] or env[name] == expected[name], (ins.text, values, expected)
        assert isinstance(env[name], Unknown)
        compared += 1
        tagged = {k: (Tagged(v.reason, ()) if isinstance(v, Unknown) else v) for k, v in values.items()}
        assert not fast.run(ins, dict(tagged), widths.get), ins.text
    assert compared > 150


def test_the_fast_path_declines_what_it_does_not_plan():
    """A guard, a pair of predicates, a vector, a special register or a value that is not one int: the
    reference's."""
    from solver.kernel.frontend.instruction import Instruction
    declared = {"%r1": 32, "%r2": 32, "%p1": 1, "%p2": 1, "%rd1": 64}

    def widths(name):                                 # as Warp.width_of: 32 for a name not declared
        return declared.get(name, 32)
    for text, opcode, operands, env in [
        ("setp.lt.s32 %p1|%p2, %r1, 4", "setp.lt.s32", ("%p1|%p2", "%r1", "4"), {"%r1": 1}),
        ("mov.b64 %rd1, {%r1, %r2}", "mov.b64", ("%rd1", "{%r1, %r2}"), {"%r1": 1, "%r2": 2}),
        ("mov.u32 %r1, %tid.x", "mov.u32", ("%r1", "%tid.x"), {}),
        ("selp.b32 %r1, %r2, 1, %p1", "selp.b32", ("%r1", "%r2", "1", "%p1"), {"%r2": Unknown("loaded"), "%p1": 1}),
        ("add.sat.s32 %r1, %r2, 1", "add.sat.s32", ("%r1", "%r2", "1"), {"%r2": 5}),
    ]:
        assert not fast.run(Instruction(1, text, None, False, opcode, operands), dict(env), widths), text
    guarded = Instruction(1, "@%p1 add.s32 %r1, %r2, 1", "%p1", False, "add.s32", ("%r1", "%r2", "1"))
    assert not fast.run(guarded, {"%r2": 5, "%p1": 1}, widths)


def _entries():
    chosen = ["tut09_tma_persistent_f16_128x128x64_s4_w4_sm_90a", "tut06_attn_fwd_ws_f16_d128_128x128_s3_w4_sm_90a",
              "tut10_block_scaled_mxfp8_128x256x128_s4_w4_sm_100a", "quack_sm90_pingpong_bf16_128x192_c2x1",
              "fa4_fwd_sm100_hd128_causal", "sm90_coop_bf16_256x128x64_mA_nB",
              "tl_sm90_mha_fwd_bshd_f16_d128_128x128_s2"]
    for manifest in sorted(CORPUS.glob("*/manifest.json")):
        for entry in json.loads(manifest.read_text())["kernels"]:
            if entry["file"].split(".")[0] in chosen:
                yield manifest.parent, entry


ENTRIES = list(_entries())


def _runs(text: str, launch) -> list:
    result = analysis.analyse(text, launch=launch, any_launch="always")
    runs = [([(v.line, v.warp, v.iteration, v.values) for v in run.visits],
             [(w.warp, w.steps, w.stopped, w.notes) for w in run.warps])
            for run in result.runs.values() if not isinstance(run, str)]
    return runs, result.any_launch


def test_the_chosen_kernels_are_found():
    assert len(ENTRIES) == 7


# The slowest (Triton's warp-specialized sm90 attention, some 15 s) with -m full_replay; the others, warp-
# specialized FlashAttention-4 and quack's ping-pong among them, run by default.
FULL_REPLAY_ONLY = {"tut06_attn_fwd_ws_f16_d128_128x128_s3_w4_sm_90a"}


@pytest.mark.parametrize("folder, entry", [pytest.param(f, e, marks=pytest.mark.full_replay)
                                           if e["file"].split(".")[0] in FULL_REPLAY_ONLY else (f, e)
                                           for f, e in ENTRIES], ids=[e["file"].split(".")[0] for _, e in ENTRIES])
def test_runs_and_sets_are_the_same_with_the_fast_path(folder, entry):
    text = lzma.open(folder / entry["file"], "rt").read()
    grid = (entry.get("problem") or {}).get("grid")
    launch = executor.Launch(params=dict(entry.get("params") or {}), grid=tuple(grid) if grid else None)
    with fast_paths.references_only():                 # spec.fast's one switch: semantics.py alone
        plain = _runs(text, launch)
    assert fast_paths.enabled()
    assert _runs(text, launch) == plain
    assert sum(len(visits) for visits, _ in plain[0]) > 0
