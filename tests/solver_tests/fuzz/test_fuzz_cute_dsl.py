"""`layoutproof fuzz --target cute-dsl` (solver/fuzz/cute_dsl.py, solver/model/cute_dsl.py): each rule
breaks alone or is tied (mma.shape.mn_major_8bit.n: see below), valid cases break nothing by spec (and the
judge's legality calls them legal), the Z3 model agrees with spec over a grid and on the recorded DSL
campaign, the same seed gives the same bytes in a fresh process, and the campaign can take its cases from
the target."""
from __future__ import annotations

import gzip
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import itertools
import json
import os
import random
import subprocess
import sys

import pytest

from spec.rules import SpecError

from solver.fuzz import coverage
from solver.fuzz import cute_dsl as target
from solver.fuzz import engine as fuzz
from solver.fuzz.adapters import cute_dsl as adapter
from solver.fuzz.compilers import cute_dsl as judge
from solver.model import cute_dsl as model

TARGET = "cute-dsl"
ROOT = ROOT_DIR
RECORDING = os.path.join(ROOT, "tests", "hardware", "cute_dsl_campaign.json.gz")
# where each rule breaks alone; the outcome there (sm90: ptxas refuses the wgmma form of the two it sees)
ALONE = {"operand.mn_major.dtype": {"sm90": "refused"}, "operand.swizzle.table54": {"sm100": "unknown"},
         "operand.sm90.n_extent": {"sm90": "refused"},
         "operand.k_slice.inside_line": {"sm90": "unknown", "sm100": "unknown"},
         "mma.shape.m": {"sm100": "unknown"}, "mma.shape.n": {"sm100": "unknown"}}
# Tied: an MN-major 8-bit B's N is a whole number of its atom's rows (16 elements at least), so with
# .cta_group::1 N is a multiple of 16 and (::2: 32 per CTA pair) Table 52 breaks only above 256, where
# Table 39's N breaks too.
TIED = {"mma.shape.mn_major_8bit.n": ("mma.shape.n",)}


def generated(arch, violate, count=12, seed=3):
    stats = fuzz.Stats()
    records = list(fuzz.generate(TARGET, arch, frozenset(violate), count, seed, stats))
    assert stats.disagreements == [], stats.disagreements[:1]
    return records


def test_registered_rules_are_catalogue_rules_and_coverage():
    assert TARGET in fuzz.TARGETS and fuzz.target_module(TARGET) is target and TARGET in coverage.MODELS
    assert set(target.RULE_IDS) == set(ALONE) | set(TIED)
    for rule_id in target.RULE_IDS:
        assert fuzz.rule_info(rule_id)["id"] == rule_id
    report = {r["id"]: r for r in coverage.coverage(TARGET)}
    assert {i for i, r in report.items() if r["breakable"]} == set(ALONE)
    for rule_id, ties in TIED.items():
        assert tuple(report[rule_id]["tied_to"]) == ties


@pytest.mark.parametrize("rule_id", sorted(ALONE))
def test_each_rule_breaks_alone(rule_id):
    for arch in model.ARCHES:
        records = generated(arch, {rule_id})
        if arch not in ALONE[rule_id]:
            assert records == []
            continue
        assert len(records) == 12
        for r in records:
            assert r["violates"] == [rule_id] and r["outcome"] == ALONE[rule_id][arch]
            assert target.spec_verdict(r["case"])["broken"] == [rule_id]           # spec
            assert model.violated(target.field_values(r["case"])) == [rule_id]      # the Z3 model


def test_tied_rule_breaks_with_its_tie():
    assert generated("sm100", {"mma.shape.mn_major_8bit.n"}) == []
    records = generated("sm100", {"mma.shape.n", "mma.shape.mn_major_8bit.n"}, count=5)
    assert len(records) == 5
    for r in records:
        assert r["violates"] == ["mma.shape.n", "mma.shape.mn_major_8bit.n"]
        assert r["case"]["operand"] == "B" and r["case"]["major"] == "MN" and r["case"]["mma_tiler"][1] > 256


@pytest.mark.parametrize("arch", model.ARCHES)
def test_valid_cases_break_nothing_by_spec(arch):
    records = generated(arch, set(), count=40)
    assert len(records) == 40
    assert len({r["case"]["dtype"] for r in records}) > 2 and len({r["case"]["atom"] for r in records}) > 3
    assert any(r["case"]["atom"] is None for r in records) and {r["case"]["major"] for r in records} == {"K", "MN"}
    assert any(r["case"]["smem_base"] % 1024 for r in records), "only 1024-aligned tiles"
    for r in records:
        assert r["violates"] == [] and r["outcome"] == "ok" and r["witness"] is None
        case = r["case"]
        atom = target.spec_verdict(case)["atom"]
        assert target.spec_verdict(case)["broken"] == [] and judge.legality(case, atom) is None
        assert adapter.check_case(case) == case and list(case) == list(target.CASE_FIELDS)


def test_malformed_or_outside_cases_are_spec_errors():
    case = {"arch": "sm90", "operand": "B", "dtype": "f16", "major": "K", "atom": "MN_SW128",
            "mma_tiler": [64, 64, 64], "cta_group": 1, "smem_base": 0, "stages": 1}
    with pytest.raises(SpecError):            # an atom of the other major: the judge names no rule
        target.spec_verdict(case)
    with pytest.raises(SpecError):            # not the adapter's dtype
        target.spec_verdict({**case, "atom": None, "dtype": "f64"})
    assert target.spec_verdict({**case, "atom": None})["broken"] == []


def _grid(rng):
    for arch, operand, dtype, major in itertools.product(model.ARCHES, model.OPERANDS, model.DTYPES, model.MAJORS):
        kinst = 256 // model.BITS[dtype]
        atoms = [a for a in model.ATOMS if a is None or a.startswith(major + "_")]
        grid = list(itertools.product(atoms, (64, 128, 256), (16, 24, 48, 264), (kinst * 4, kinst * 8), (1, 2),
                                      (0, 16, 80, 112)))
        for atom, m, n, k, cg, base in rng.sample(grid, 30):
            yield {"arch": arch, "operand": operand, "dtype": dtype, "major": major, "atom": atom,
                   "mma_tiler": [m, n, k], "cta_group": cg, "smem_base": base, "stages": 1}


def test_model_agrees_with_spec_over_a_grid():
    # a fixed sample of the grid (every arch, operand, dtype and major; the whole grid, 59136 cases, agrees
    # too but takes minutes): same domain, same broken rules
    compared = 0
    for case in _grid(random.Random(0)):
        values = target.field_values(case)
        try:
            spec = target.spec_verdict(case)["broken"]
        except SpecError:
            spec = None
        ours = model.violated(values) if model.in_domain(values) else None
        assert (ours is None) == (spec is None), case
        if spec is not None:
            assert sorted(ours) == sorted(spec), case
            compared += 1
    assert compared > 700


def test_spec_verdict_agrees_with_the_recorded_dsl_campaign():
    # the DSL's own descriptors (every k-block), judged by spec: the same operand rules and the same atom
    with gzip.open(RECORDING, "rt") as handle:
        document = json.load(handle)
    compared = 0
    for records in document["records"].values():
        for record in records:
            case, answer = record["case"], record["answer"]
            if answer.get("verdict") != "accept":
                continue
            try:
                verdict = target.spec_verdict(case)
            except SpecError:
                continue
            assert verdict["atom"] == answer["atom"], case
            ours = [i for i in verdict["broken"] if not i.startswith("mma.shape.")]
            assert sorted(ours) == sorted(judge.broken_rules(case, answer)), case
            compared += 1
    assert compared > 1000


def _cli(args):
    return subprocess.run([sys.executable, "-m", "solver.cli.main", "fuzz", "--target", TARGET, *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_same_seed_same_bytes_in_a_fresh_process():
    args = ["--arch", "sm100", "--violate", "operand.swizzle.table54", "--count", "6", "--seed", "5"]
    first, second = _cli(args), _cli(args)
    assert first.returncode == 0 and first.stdout and first.stdout == second.stdout
    in_process = [json.dumps(r) for r in generated("sm100", {"operand.swizzle.table54"}, count=6, seed=5)]
    assert first.stdout.splitlines() == in_process


def test_cli_arch_is_required_and_read_as_written():
    missing = _cli(["--valid", "--count", "2", "--seed", "1"])       # --arch is required, as everywhere
    assert missing.returncode == 2 and "--arch" in missing.stderr and missing.stdout == ""
    out = _cli(["--valid", "--count", "2", "--seed", "1", "--arch", "sm_90a"])
    assert out.returncode == 0 and all(json.loads(l)["arch"] == "sm90" for l in out.stdout.splitlines())


def test_campaign_takes_cases_from_the_target():
    for arch in judge.CAMPAIGN_ARCHES:
        cases = judge.fuzz_cases(arch, 30, seed=2)
        assert len(cases) == 30 and len({judge.json_key(c) for c in cases}) == 30
        broken = {tuple(target.spec_verdict(c)["broken"]) for c in cases}
        assert () in broken and len(broken) > 2
        assert cases == judge.fuzz_cases(arch, 30, seed=2)
