"""The `scales` fuzz target (solver/fuzz/scales.py): every rule broken alone, labelled by spec, with the
model (solver/model/scale_config.py) and spec agreeing on every case and on arbitrary field values; the
PTX each case carries is accepted by ptxas exactly when scales.vector.kind holds (the recorded forms of
tests/hardware/scales_ptxas_forms.json, and ptxas itself where it is installed)."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from solver.fuzz import engine
from solver.fuzz import scales as target
from solver.model import scale_config as model
from spec.scales import layouts

HERE = TESTS_DIR
RECORDED = json.load(open(os.path.join(HERE, "hardware", "scales_ptxas_forms.json")))
FORMS = {(f["kind"], f["qualifier"], f["cta_group"], f["target"]): f["accepted"] for f in RECORDED["forms"]}
OUTCOME = {"scales.vector.kind": "refused", "scales.path.interleaved_writer": "wrong-data",
           "scales.vector.scale_type": "unknown", "mma.shape.m": "unknown", "mma.shape.n": "unknown",
           "scales.path.k_steps": "unknown"}


def generated(violate, count=12, seed=1):
    stats = engine.Stats()
    records = list(engine.generate("scales", "sm100", frozenset(violate), count, seed, stats))
    assert not stats.disagreements, stats.disagreements[:2]
    return records


def test_every_rule_of_the_target_has_an_outcome():
    assert set(target.RULE_IDS) == set(OUTCOME)


@pytest.mark.parametrize("rule_id", sorted(OUTCOME))
def test_each_rule_is_broken_alone_with_its_outcome(rule_id):
    records = generated({rule_id})
    assert len(records) == 12
    for r in records:
        assert r["violates"] == [rule_id] and r["outcome"] == OUTCOME[rule_id]
        assert model.violated(target.field_values(r["case"])) == [rule_id]


def test_valid_cases_are_ok_and_read_right():
    from spec.scales import path
    for r in generated(set(), count=20):
        case = r["case"]
        assert r["outcome"] == "ok" and model.violated(target.field_values(case)) == []
        rows = min(case["m"] // case["cta_group"], 256)
        assert path.first_misread(case["sf_layout"], rows, case["k"], case["kind"], case["scale_vec"]) is None


def test_a_wrong_data_witness_names_an_element_and_the_scale_it_gets():
    for r in generated({"scales.path.interleaved_writer"}):
        w, case = r["witness"], r["case"]
        rows = min(case["m"] // case["cta_group"], 256)
        blocks = -(-case["k"] // (16 if case["scale_vec"] == "4X" else 32))
        assert w["applied_offset"] != w["expected_offset"]
        assert layouts.offset(case["sf_layout"], w["row"], w["k_block"], rows, blocks) == w["expected_offset"]
        if w["applied_scale_of"]:
            assert layouts.offset(case["sf_layout"], *w["applied_scale_of"], rows, blocks) == w["applied_offset"]


def test_two_rules_at_once():
    records = generated({"scales.path.interleaved_writer", "mma.shape.n"})
    assert records and all(r["outcome"] == "wrong-data" for r in records)


def test_the_same_seed_gives_the_same_bytes():
    first = json.dumps(generated({"scales.vector.kind"}, seed=7))
    assert first == json.dumps(generated({"scales.vector.kind"}, seed=7))
    assert first != json.dumps(generated({"scales.vector.kind"}, seed=8))


def test_the_cases_kernels_are_the_recorded_forms_kernels():
    facts = RECORDED["provenance"]["details"]
    assert facts["template"] == target.MMA_KERNEL and facts["ptx_version"] == target.PTX_VERSION


def _form(case):
    return case["kind"], f".scale_vec::{case['scale_vec']}", case["cta_group"], target.TARGET


@pytest.mark.parametrize("rule_id", ["scales.vector.kind", "scales.vector.scale_type", None])
def test_recorded_ptxas_forms_agree_with_the_labels(rule_id):
    for r in generated({rule_id} if rule_id else set()):
        assert FORMS[_form(r["case"])] == ("scales.vector.kind" not in r["violates"])


@given(st.fixed_dictionaries({"kind": st.integers(0, 2), "vector": st.integers(0, 2), "scale_type": st.integers(0, 1),
                              "sf_layout": st.integers(0, 2), "m": st.integers(1, 512), "n": st.integers(1, 512),
                              "k": st.integers(1, 2048), "cta_group": st.integers(1, 2)}))
@settings(max_examples=300, deadline=None)
def test_model_and_spec_agree_on_any_configuration(values):
    case = target.case_of(values)
    label = target.label(case, "sm100")
    assert set(label.violates) == set(model.violated(values)), (values, label.violates)


def test_ptxas_agrees_with_the_labels():
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH (CUDA 13.0 toolkit): the cases' PTX is checked against the recorded forms")
    records = generated({"scales.vector.kind"}, count=6) + generated(set(), count=6)
    with tempfile.TemporaryDirectory() as work:
        for r in records:
            source = os.path.join(work, "case.ptx")
            with open(source, "w") as handle:
                handle.write(r["case"]["ptx"])
            done = subprocess.run([ptxas, "-arch", target.TARGET, source, "-o", os.path.join(work, "case.cubin")],
                                  capture_output=True, text=True)
            assert (done.returncode == 0) == (r["outcome"] != "refused"), (r["case"]["ptx"], done.stderr)
