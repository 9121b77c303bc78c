"""The corpus of real kernels (tests/fixtures/ptx/corpus/: Triton 3.9 tutorials, quack-kernels and
flash-attn-4 through the CuTe DSL, TileLang, CUTLASS C++ through nvcc; each folder's make.py regenerates
it, its manifest.json records what each source asked for). For every kernel (issue 26):

* nothing is silent: every site statement counted on the text (a plain count, written here) is a site or
  one of `others`, and the grammar reads the whole file;
* the two evaluators agree: every bit the first-iteration evaluation knows equals what the executor ran
  for each warp at the site's first visit (iteration 0 of every loop);
* every descriptor of every visit reads the swizzle and the major its source asked for;
* with the recorded problem (Triton: its parameters and grid), each descriptor is known at every visit
  or its warp says why it stopped.
"""
from __future__ import annotations

import json
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import lzma
import re
from functools import lru_cache

import pytest

from spec.mma import descriptor as desc_mod
from solver.kernel import analysis
from solver.kernel.concrete import executor

CORPUS = TESTS / "fixtures" / "ptx" / "corpus"
FAMILIES = ("wgmma.mma_async", "tcgen05.mma", "tcgen05.ld", "tcgen05.st", "tcgen05.cp", "tcgen05.shift",
            "tcgen05.alloc", "cp.async.bulk.tensor", "tensormap.replace")
KERNELS = [(folder.name, entry) for folder in sorted(CORPUS.iterdir()) if (folder / "manifest.json").exists()
           for entry in json.loads((folder / "manifest.json").read_text())["kernels"]]
SWIZZLE_NAMES = {128: "128B", 64: "64B", 32: "32B", 0: "none"}


def plain_count(text: str) -> int:
    """The site statements of the text: each family's opcode outside // and /* */ comments."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    pattern = r"(?<![\w$.%])(?:" + "|".join(re.escape(f) for f in FAMILIES) + r")(?![\w$])"
    return len(re.findall(pattern, text))


@lru_cache(maxsize=2)
def _text(folder: str, name: str) -> str:
    return lzma.open(CORPUS / folder / name, "rt").read()


def _ids(item):
    return f"{item[0]}/{item[1]['file'].split('.')[0]}"


def _first_visits(result) -> dict:
    """(function, line, warp) -> the executor's values at the site's first visit with every loop at 0."""
    first = {}
    for name, run in result.runs.items():
        if isinstance(run, str):
            continue
        for visit in run.visits:
            if not any(visit.iteration):
                first.setdefault((name, visit.line, visit.warp), visit.values)
    return first


@pytest.mark.parametrize("folder, entry", KERNELS, ids=[_ids(k) for k in KERNELS])
def test_kernel(folder, entry):
    """Each kernel analysed once, with no parameter: every site read, the evaluators agree, the executor's
    run lies in the any-launch sets, and every descriptor reads the swizzle and major asked for."""
    text = _text(folder, entry["file"])
    result = analysis.analyse(text, any_launch="always")
    assert result.unread == [] and result.module.unread == []
    assert len(result.sites) + len(result.others) == plain_count(text)
    compare_evaluators(result)
    executor_inside_sets(result)
    swizzles_as_asked(result, entry)


def compare_evaluators(result) -> int:
    """How many (site, operand, warp) the two evaluators were compared on; asserts that they agree."""
    first = _first_visits(result)
    compared = 0
    for site in result.sites:
        for role, op in site.operands.items():
            if op.word is None or not op.word.known:
                continue
            for (function, line, warp), values in first.items():
                if (function, line) != (site.function, site.line) or not isinstance(values.get(op.text), int):
                    continue
                ran = values[op.text]
                assert ran & op.word.known == op.word.value & op.word.known, (site.line, role, warp, hex(ran),
                                                                                op.word.hex())
                compared += 1
    return compared


@pytest.mark.parametrize("name", ["tut03_matmul_f16_128x256x64_s3_w8_sm_90a", "tut03_matmul_f16_128x256x64_s3_w8_sm_100a"])
def test_the_comparison_compares(name):
    """On the plain Triton GEMMs the first-iteration evaluation knows every descriptor: both operands of
    every site are compared, for every warp that issues it."""
    folder, entry = next(k for k in KERNELS if k[1]["file"].startswith(name))
    result = analysis.analyse(_text(folder, entry["file"]))
    mma_lines = {site.line for site in result.sites}
    issuing = {(v.line, v.warp) for v in result.runs[result.functions[0]].visits
               if not any(v.iteration) and v.line in mma_lines}
    assert {line for line, _ in issuing} == {site.line for site in result.sites}
    assert compare_evaluators(result) == 2 * len(issuing)


def _asked(entry: dict, role: str):
    operands = entry.get("asked", {}).get("operands", {})
    return operands.get(role.upper()) if set(operands) == {"A", "B"} else None


def swizzles_as_asked(result, entry: dict) -> None:
    """Every descriptor value seen (any evaluator) has the swizzle, and a wgmma its major, the source asked for."""
    for site in result.sites:
        found = result.iterations.get((site.function, site.line))
        sets = result.any_launch.get((site.function, site.line), {})
        for role, op in site.operands.items():
            asked = _asked(entry, role)
            if op.source != "descriptor" or asked is None or asked.get("swizzle_bytes") not in SWIZZLE_NAMES:
                continue
            words = found.operands[op.text].distinct if found and op.text in found.operands else []
            words += [op.word.value] if op.word.is_known else []
            words += sorted(sets[op.text]) if isinstance(sets.get(op.text), frozenset) else []
            for word in words:
                assert desc_mod.decode(site.arch, word).swizzle == SWIZZLE_NAMES[asked["swizzle_bytes"]], \
                    (site.line, role, hex(word), asked)
            if site.family == "wgmma" and op.major is not None and asked.get("major") in ("K", "MN") \
                    and asked.get("dtype") in ("f16", "bf16"):
                assert op.major == asked["major"], (site.line, role, op.major, asked)


def executor_inside_sets(result) -> None:
    """The value sets hold every iteration of every launch: the executor's run (one launch) lies inside them,
    warp by warp, site by site, register by register."""
    mma_lines = {(site.function, site.line) for site in result.sites}      # the sets follow the MMAs
    for name, run in result.runs.items():
        if isinstance(run, str):
            continue
        for visit in run.visits:
            if (name, visit.line) not in mma_lines:
                continue
            sets = result.any_launch.get((name, visit.line))
            assert sets is not None, (visit.line, visit.warp)
            for register, value in visit.values.items():
                held = sets.get(register)
                if isinstance(value, int) and isinstance(held, frozenset):
                    assert value in held, (visit.line, visit.warp, register, hex(value), sorted(map(hex, held)))


def test_the_any_launch_sets_know_the_staged_descriptors():
    """Without any parameter, Triton's persistent TMA GEMM (4 stages) feeds each wgmma one of 4 A and 4 B
    descriptors, 0x4000 bytes apart (what the H100 recording shows, iteration by iteration)."""
    folder, entry = next(k for k in KERNELS if k[1]["file"].startswith("tut09_tma_persistent_f16_128x128x64_s4_w4_sm_90a"))
    result = analysis.analyse(_text(folder, entry["file"]))
    for site in result.sites:
        sets = result.any_launch[(site.function, site.line)]
        for op in site.operands.values():
            starts = sorted(desc_mod.decode("sm90", word).start_address for word in sets[op.text])
            assert len(starts) == 4 and [b - a for a, b in zip(starts, starts[1:])] == [0x4000] * 3


TRITON = [k for k in KERNELS if k[0] == "triton" and k[1].get("params")]


@pytest.mark.parametrize("folder, entry", TRITON, ids=[_ids(k) for k in TRITON])
def test_with_the_recorded_problem_every_descriptor_is_known_or_its_warp_says_why(folder, entry):
    grid = (entry.get("problem") or {}).get("grid")
    launch = executor.Launch(params=dict(entry["params"]), grid=tuple(grid) if grid else None)
    result = analysis.analyse(_text(folder, entry["file"]), launch=launch, any_launch="never")
    runs = {name: run for name, run in result.runs.items() if not isinstance(run, str)}
    stopped = {name: {w.warp: w.stopped for w in run.warps} for name, run in runs.items()}
    for site in result.sites:
        found = result.iterations.get((site.function, site.line))
        for role, op in site.operands.items():
            if op.source != "descriptor":
                continue
            values = found.operands.get(op.text) if found else None
            if values is not None and values.known or found is None:
                continue                  # known at every visit, or never reached with this problem
            # unknown: a reason, and a warp that stopped saying why (or the value's own reason)
            reasons = [r for r in stopped.get(site.function, {}).values() if r] + \
                ([values.unknown] if values is not None and values.unknown else [])
            assert reasons, (site.line, role)


def test_start_patterns_describe_every_visit_or_nothing():
    """start_pattern's formula, evaluated at n = 0, 1, ..., gives back every start it was given; where no
    formula of its two forms fits, it says nothing."""
    from solver.kernel.iterations import start_pattern

    def evaluate(formula: str, n: int) -> int:
        return eval(formula.replace("mod", "%"), {"n": n})     # the formula's own arithmetic: + * %

    cases = [[0x400 + 0x4000 * (n % 4) for n in range(64)], [0x420 + 0x20 * n for n in range(3)],
             [0x18400] * 5, [0x400 + 0x4000 * (n % 3) for n in range(64)], [5, 1, 5, 2], [0x400, 0x500, 0x400]]
    for starts in cases:
        formula = start_pattern(starts)
        if formula is not None:
            assert [evaluate(formula, n) for n in range(len(starts))] == starts, (formula, starts)
    assert start_pattern(cases[0]) == "0x400 + 0x4000*(n mod 4)" and start_pattern([5, 1, 5, 2]) is None


def test_the_work_bounds_withdraw_claims_instead_of_running_on(monkeypatch):
    """Past its step budget the run stops the remaining warps, and past theirs the value sets give no
    result: less is known, nothing is claimed from a half-done fixpoint. (The sets' budget is spent on
    combinations run, not on those the memo keeps: a warp that finds every combination it needs kept
    finishes, with the sets of a whole fixpoint. Here the budget is spent at the first combination.)"""
    from solver.kernel.symbolic import valuesets
    folder, entry = next(k for k in KERNELS if k[1]["file"].startswith("tut09_tma_persistent_f16_128x128x64_s4_w4_sm_90a"))
    monkeypatch.setattr(executor, "MAX_STEPS_PER_RUN", 1000)
    monkeypatch.setattr(valuesets, "MAX_WORK", 10)
    result = analysis.analyse(_text(folder, entry["file"]), any_launch="always")
    run = result.runs[result.functions[0]]
    assert all(w.stopped for w in run.warps) and any("not run" in w.stopped for w in run.warps)
    assert result.any_launch == {}


def test_a_warp_without_sets_leaves_every_site_unknown():
    """iterations.any_launch_sets: a warp that gave up (the work bounds) may reach any site with values the
    other warps' sets lack, so the joined sets claim nothing: each register is Top, naming that warp."""
    from solver.kernel import iterations
    from solver.kernel.frontend import source
    from solver.kernel.symbolic import valuesets
    function = source.parse((TESTS / "fixtures" / "ptx" / "handwritten_wgmma.ptx").read_text()).functions[0]
    site = next(i for i, s in enumerate(function.statements) if s.instruction is not None and
                s.instruction.opcode.startswith("wgmma.mma_async"))
    finished = valuesets.WarpSets(0, {site: {"%rd2": frozenset({1}), "%rd3": frozenset({2})}})
    stopped = valuesets.WarpSets(1, {}, "more than 200000 blocks worked on")
    key = (function.name, function.statements[site].line)
    assert iterations.any_launch_sets(function, [finished]) == {key: {"%rd2": frozenset({1}), "%rd3": frozenset({2})}}
    joined = iterations.any_launch_sets(function, [finished, stopped])
    assert set(joined[key]) == {"%rd2", "%rd3"}
    assert all(isinstance(v, valuesets.Top) and "warp 1" in v.reason for v in joined[key].values())


def test_the_sets_kept_per_combination_are_the_sets_run_again(monkeypatch):
    """valuesets keeps each combination's runs (a loop's state grows one value at a time, and each growth
    would run every combination again): on Triton's warp-specialized kernels, whose loop counters grow so
    for 16 meetings, the sets are those of running every combination each time, in fewer runs."""
    from solver.kernel.frontend import cfg
    from solver.kernel.symbolic import evaluate, valuesets
    from solver.kernel.frontend import source
    folder, entry = next(k for k in KERNELS
                         if k[1]["file"].startswith("tut06_attn_fwd_ws_f16_d128_128x128_s3_w4_sm_90a"))
    module = source.parse(_text(folder, entry["file"]))
    function = module.functions[0]
    symbols = dict(evaluate.Context(module, function, evaluate.DEFAULT_SMEM_BASE, {}).symbols)
    graph = cfg.build(function.statements)
    runs = []
    real_runs, real_parts = valuesets._combination_runs, valuesets._part_runs

    def counted(*args, **kwargs):
        runs.append(1)
        return real_runs(*args, **kwargs)
    monkeypatch.setattr(valuesets, "_combination_runs", counted)

    def sets():
        runs.clear()
        found = valuesets.run(function, symbols, executor.Launch(), analysis._is_mma, graph)
        return [(w.warp, w.sites, w.gave_up) for w in found], len(runs)
    kept, kept_runs = sets()
    monkeypatch.setattr(valuesets, "_part_runs", lambda *args: real_parts(*args[:8]))     # (no memo: none kept)
    again, again_runs = sets()
    assert kept == again and not any(w[2] for w in kept)
    assert kept_runs < again_runs / 2, (kept_runs, again_runs)


def test_an_mma_records_the_sets_of_descriptors_an_earlier_block_made():
    """valuesets.components: an MMA whose descriptors come from an earlier block is a part of its own, so
    its descriptors are not combined with the loop test's values (past MAX_COMBINATIONS they were lost).
    Triton's causal attention (sm_90a, 3 stages): with no parameter, every descriptor of every wgmma is a
    few values, its stage's tiles: starts evenly spaced (the V descriptors were Top before)."""
    from solver.kernel.symbolic.valuesets import Top
    folder, entry = next(k for k in KERNELS
                         if k[1]["file"].startswith("tut06_attn_fwd_causal_f16_d128_128x128_s3_w8_sm_90a"))
    result = analysis.analyse(_text(folder, entry["file"]), any_launch="always")
    counted = 0
    for site in result.sites:
        for op in site.operands.values():
            if op.source != "descriptor":
                continue
            words = result.any_launch[(site.function, site.line)][op.text]
            assert not isinstance(words, Top) and 1 <= len(words) <= 3, (site.line, words)
            starts = sorted(desc_mod.decode("sm90", word).start_address for word in words)
            assert len({b - a for a, b in zip(starts, starts[1:])}) <= 1, (site.line, starts)
            counted += len(words) == 3
    assert counted >= 8                        # (the V tiles of the three stages, at each of 8 k-steps)
