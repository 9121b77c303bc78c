"""`layoutproof fuzz --target triton-nvmma` (solver/fuzz/triton_nvmma.py, solver/model/triton_nvmma.py):
each rule breaks alone, valid cases break nothing by spec (the judge), the Z3 model agrees with spec over
a grid, the same seed gives the same bytes in a fresh process, and the adapter's campaign can take its
cases from the target."""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import subprocess
import sys

import pytest

from solver.fuzz import engine as fuzz
from solver.fuzz import triton_nvmma as target
from solver.fuzz.adapters import triton_gluon
from solver.fuzz.compilers import triton as judge
from solver.model import triton_nvmma as model

TARGET = "triton-nvmma"
ROOT = ROOT_DIR
# where each rule can break (the others have no case there: every dtype here can be MN-major on sm100,
# tcgen05's shape rules do not apply to wgmma, Table 54's 32-bit rule and sm90's N are per arch)
ARCH_OF = {"operand.instruction_k": ("sm90", "sm100"), "operand.mn_major.dtype": ("sm90",),
           "operand.swizzle.table54": ("sm100",), "operand.sm90.n_extent": ("sm90",), "mma.shape.m": ("sm100",),
           "mma.shape.n": ("sm100",), "mma.shape.mn_major_8bit.n": ("sm100",)}


def generated(arch, violate, count=15, seed=3):
    stats = fuzz.Stats()
    records = list(fuzz.generate(TARGET, arch, frozenset(violate), count, seed, stats))
    assert stats.disagreements == [], stats.disagreements[:1]
    return records


def test_registered_and_rules_are_catalogue_rules():
    assert TARGET in fuzz.TARGETS and fuzz.target_module(TARGET) is target
    assert set(target.RULE_IDS) == set(ARCH_OF)
    for rule_id in target.RULE_IDS:
        assert fuzz.rule_info(rule_id)["id"] == rule_id


@pytest.mark.parametrize("rule_id", sorted(ARCH_OF))
def test_each_rule_breaks_alone(rule_id):
    for arch in model.ARCHES:
        records = generated(arch, {rule_id})
        if arch not in ARCH_OF[rule_id]:
            assert records == []
            continue
        assert len(records) == 15
        for r in records:
            assert r["violates"] == [rule_id]
            assert judge.spec_verdict(r["case"])["broken"] == [rule_id]          # spec, the independent side
            assert model.violated(target.field_values(r["case"])) == [rule_id]   # the Z3 model
            assert r["outcome"] == ("refused" if arch == "sm90" else "unknown")


@pytest.mark.parametrize("arch", model.ARCHES)
def test_valid_cases_break_nothing_by_spec(arch):
    records = generated(arch, set(), count=40)
    assert len(records) == 40
    assert len({r["case"]["dtype"] for r in records}) > 2 and len({r["case"]["swizzle_byte_width"] for r in records}) == 4
    shapes = {n for r in records for n in r["case"]["shape"]}
    assert any(n & (n - 1) for n in shapes), "only powers of two"
    for r in records:
        assert r["violates"] == [] and r["outcome"] == "ok" and r["witness"] is None
        verdict = judge.spec_verdict(r["case"])
        assert verdict["broken"] == [] and verdict["legal"] is None     # no rule broken; the layout is Triton's
        assert r["case"] == judge.check_case(r["case"]) and set(r["case"]) == {
            "arch", "dtype", "operand", "shape", "swizzle_byte_width", "element_bitwidth", "transposed"}


def test_instruction_k_is_asked_alone():
    # the judge reports operand.instruction_k alone (spec_verdict stops there)
    assert generated("sm90", {"operand.instruction_k", "operand.sm90.n_extent"}) == []


def test_pairs_break_together():
    records = generated("sm100", {"mma.shape.n", "mma.shape.mn_major_8bit.n"}, count=5)
    assert records and all(r["violates"] == ["mma.shape.n", "mma.shape.mn_major_8bit.n"] for r in records)


def test_model_agrees_with_spec_over_a_grid():
    extents = (1, 8, 16, 24, 40, 48, 64, 128, 256, 264)
    compared = 0
    for arch in model.ARCHES:
        for dtype in model.DTYPES:
            for operand in ("A", "B"):
                for sw in model.SWIZZLE_WIDTHS[::3]:
                    for transposed in (False, True):
                        for rows in extents:
                            for cols in extents:
                                case = {"arch": arch, "dtype": dtype, "operand": operand, "shape": [rows, cols],
                                        "swizzle_byte_width": sw, "element_bitwidth": model.BITS[dtype],
                                        "transposed": transposed}
                                values = target.field_values(case)
                                if target.case_of(values) is None:
                                    continue
                                ours = model.violated(values)
                                if "operand.instruction_k" in ours:
                                    ours = ["operand.instruction_k"]
                                assert sorted(ours) == judge.spec_verdict(case)["broken"], case
                                compared += 1
    assert compared > 3000


def _cli(args):
    return subprocess.run([sys.executable, "-m", "solver.cli.main", "fuzz", "--target", TARGET, *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_same_seed_same_bytes_in_a_fresh_process():
    args = ["--arch", "sm100", "--violate", "mma.shape.n", "--count", "6", "--seed", "5"]
    first, second = _cli(args), _cli(args)
    assert first.returncode == 0 and first.stdout and first.stdout == second.stdout
    in_process = [json.dumps(r) for r in generated("sm100", {"mma.shape.n"}, count=6, seed=5)]
    assert first.stdout.splitlines() == in_process


def test_cli_arch_is_required_and_read_as_written_and_coverage():
    missing = _cli(["--valid", "--count", "2", "--seed", "1"])       # --arch is required, as everywhere
    assert missing.returncode == 2 and "--arch" in missing.stderr and missing.stdout == ""
    out = _cli(["--valid", "--count", "2", "--seed", "1", "--arch", "sm_90a"])
    assert out.returncode == 0 and all(json.loads(l)["arch"] == "sm90" for l in out.stdout.splitlines())
    cov = _cli(["--coverage", "--json"])
    rules = json.loads(cov.stdout)["targets"][TARGET]["rules"]
    assert {r["id"] for r in rules if r["breakable"]} == set(target.RULE_IDS)


def test_adapter_campaign_takes_cases_from_the_target():
    for arch in judge.ARCHES:
        cases = triton_gluon.fuzz_cases(arch, 30, seed=2)
        assert len(cases) == 30 and len({triton_gluon.case_key(c) for c in cases}) == 30
        broken = {tuple(judge.spec_verdict(c)["broken"]) for c in cases}
        assert () in broken and len(broken) > 2
        assert cases == triton_gluon.fuzz_cases(arch, 30, seed=2)
