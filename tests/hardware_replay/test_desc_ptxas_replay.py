"""Replay of tests/hardware/desc_ptxas_agreement.json (hardware/run_desc_ptxas_agreement.py): ptxas 13.0 on
the kernels of `layoutproof fuzz --target desc --format ptx`, per arch (sm_90a wgmma, sm_100a / sm_103a
tcgen05.mma), for valid cases and for every rule the arch can break alone.

What the recording must show, checked here without ptxas: valid cases assemble; a case is refused exactly
when its label says "refused" (the rules whose instruction form ptxas refuses on that arch), and every other
case assembles (descriptor words and the tcgen05 instruction descriptor are run-time values); the rules
refused are the ones the catalogue says ptxas enforces there. The recorded sample cases are labelled
again by today's spec and must keep their rules and outcome. Where the recorded ptxas is on PATH, the
samples are assembled again.
"""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import re
import shutil

import pytest

from solver.fuzz import desc as fuzz_desc
from solver.fuzz.adapters import ptxas as adapter
from solver.fuzz.formats import ptx as fuzz_ptx
from solver.fuzz.outcome import refused_ids
from solver.model import desc_case as desc_model
from spec.rules import all_rules

ROOT = ROOT_DIR
with open(os.path.join(ROOT, "tests", "hardware", "desc_ptxas_agreement.json")) as handle:
    RECORDING = json.load(handle)
ARCHES = ("sm90", "sm100", "sm103")
RUNS = RECORDING["runs"]
PTXAS = RECORDING["provenance"]["details"]["ptxas_version"]


def runs_of(arch):
    return [r for r in RUNS if r["arch"] == arch]


def test_recording_is_well_formed():
    assert re.search(r"release \d+\.\d+, V\d+\.\d+\.\d+", PTXAS) and PTXAS in RECORDING["provenance"]["source"]
    assert RECORDING["provenance"]["details"]["ptx_isa_version"] == fuzz_ptx.PTX_VERSION
    for arch in ARCHES:
        mine = runs_of(arch)
        valid = [r for r in mine if r["violate"] is None]
        assert len(valid) == 1 and valid[0]["cases"] >= 200, arch
        # every rule of the target: a run of cases breaking it alone, or listed as having none on this arch
        ruled = {r["violate"] for r in mine if r["violate"]}
        assert ruled | set(RECORDING["summary"][arch]["no_case_alone"]) == set(desc_model.RULE_IDS), arch
        assert not ruled & set(RECORDING["summary"][arch]["no_case_alone"])
        for r in mine:
            assert r["cases"] > 0 and sum(r["outcomes"].values()) == r["cases"]
            assert r["command"].startswith(f"layoutproof fuzz --target desc --arch {arch} ")


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_refuses_exactly_the_refused_labels(arch):
    for r in runs_of(arch):
        assert r["disagreements"] == [], (r["command"], r["disagreements"][:1])
        assert r["agree"] == r["cases"] and r["refused_by_ptxas"] == r["labelled_refused"], r["command"]
        # the run's module (what --format ptx writes) assembles exactly when no kernel is labelled refused
        assert r["module"]["assembled"] == (r["labelled_refused"] == 0), r["command"]
        assert r["module"]["kernels"] == r["cases"]


@pytest.mark.parametrize("arch", ARCHES)
def test_valid_cases_assemble(arch):
    valid = next(r for r in runs_of(arch) if r["violate"] is None)
    assert valid["outcomes"] == {"ok": valid["cases"]} and valid["refused_by_ptxas"] == 0


def ptxas_rules(arch):
    catalogue = {r.id for r in all_rules() if r.enforced_by == "ptxas" and arch not in r.not_enforced_on}
    labels = set(refused_ids(desc_model.RULE_IDS, arch, "ptxas"))     # what the fuzz labels ask of the records
    assert labels == catalogue & set(desc_model.RULE_IDS)
    return sorted(labels)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_refused_rules_are_the_ones_ptxas_enforces(arch):
    """Each broken-alone run is refused in full or assembled in full, and the refused ones are the rules
    the catalogue (enforced_by, not_enforced_on), which the fuzz labels read, gives ptxas there."""
    assert RECORDING["ptxas_rules"][arch] == ptxas_rules(arch)
    refused = set()
    for r in runs_of(arch):
        assert r["labelled_refused"] in (0, r["cases"]), r["command"]
        if r["labelled_refused"]:
            refused.add(r["violate"])
    tested = {r["violate"] for r in runs_of(arch)}
    assert refused == set(ptxas_rules(arch)) & tested


def test_the_shape_rules_assemble():
    """No MMA-shape rule (spec.mma.shape) is ptxas's: their cases assemble on sm_100a and sm_103a, the
    K = 96 ones on sm_103a."""
    shape_runs = [r for r in RUNS if (r["violate"] or "").startswith("mma.shape.")]
    assert {r["violate"] for r in shape_runs if r["arch"] == "sm103"} == {
        "mma.shape.m", "mma.shape.n", "mma.shape.k96.cta_group", "mma.shape.k96.m", "mma.shape.mn_major_8bit.n"}
    for r in shape_runs:
        assert r["refused_by_ptxas"] == 0 and set(r["outcomes"]) <= {"unknown", "wrong-data"}, r["command"]


def samples():
    return [(r["arch"], s) for r in RUNS for s in r["samples"]]


@pytest.mark.parametrize("arch,sample", samples(), ids=lambda v: v if isinstance(v, str) else str(v["index"]))
def test_samples_keep_their_label(arch, sample):
    label = fuzz_desc.label(sample["case"], arch)
    assert list(label.violates) == sample["violates"] and label.outcome == sample["outcome"]
    assert sample["ptxas"]["accepted"] == (sample["outcome"] != "refused")


def test_samples_assemble_as_recorded_with_this_ptxas():
    found = shutil.which("ptxas")
    if found is None:
        if os.environ.get("LAYOUTPROOF_NO_PTXAS") == "1":
            pytest.skip("ptxas not on PATH and LAYOUTPROOF_NO_PTXAS=1")
        pytest.fail("ptxas is not on PATH (install the CUDA toolkit or set LAYOUTPROOF_NO_PTXAS=1)")
    if adapter.ptxas_version(found) != PTXAS:
        pytest.skip("a different ptxas than the recorded " + PTXAS)
    for arch, sample in samples()[::7]:
        record = {"index": sample["index"], "target": "desc", "arch": arch, "violates": sample["violates"],
                  "outcome": sample["outcome"], "witness": None, "case": sample["case"]}
        target, text = fuzz_ptx.render_case(record)
        accepted, detail = adapter.assemble(target, text, found)
        assert (accepted, "" if accepted else detail) == (sample["ptxas"]["accepted"],
                                                        sample["ptxas"]["first_error"]), sample
