"""Replay of tests/hardware/tmem_ptxas_heldout.json.gz: a held-out sample of tcgen05 instruction forms
(hardware/heldout_tmem_forms.py), none of them in the grid spec/tmem was written against
(tests/hardware/tmem_ptxas_forms.json.gz), each judged by ptxas 13.0 alone. Checked without ptxas:

(a) the record: its header, its counts, no form of the grid in it, and the seed still draws its forms;
(b) agreement: spec.tmem.instruction.check says ptxas accepts exactly where ptxas did on at least 99 %
    of the forms, and disagrees on no form but those the record lists (issue 25, item 6);
(c) where the same ptxas is on PATH, a sample of forms still assembles as recorded.
"""
from __future__ import annotations

import gzip
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import random
import shutil
import sys

import pytest

from spec.rule import SpecError
from spec.tmem import instruction

ROOT = ROOT_DIR
HELDOUT = os.path.join(ROOT, "tests", "hardware", "tmem_ptxas_heldout.json.gz")
GRID = os.path.join(ROOT, "tests", "hardware", "tmem_ptxas_forms.json.gz")
AGREEMENT = 0.99


def _key(form) -> tuple:
    return form["instruction"], form["target"], form["ptx_version"]


@pytest.fixture(scope="module")
def document():
    with gzip.open(HELDOUT, "rt") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def forms(document):
    return document["forms"]


def _sampler():
    sys.path.insert(0, os.path.join(ROOT, "hardware"))
    import heldout_tmem_forms
    return heldout_tmem_forms


# --- (a) the record -----------------------------------------------------------------------------------
def test_header_and_counts(document, forms):
    header = document["provenance"]
    assert header["details"]["ptxas"].startswith("Cuda compilation tools, release 13.0")
    assert header["command"].startswith("python3 hardware/heldout_tmem_forms.py --seed ")
    assert header["recorded_by"] == "hardware/heldout_tmem_forms.py"
    assert document["count"] == len(forms) >= 1000
    assert document["ptxas_accepted"] == sum(f["accepted"] for f in forms)
    assert document["agree"] == sum(f["spec_accepts"] == f["accepted"] for f in forms)
    assert len(document["disagreements"]) == document["count"] - document["agree"]
    assert len({_key(f) for f in forms}) == len(forms)
    for form in forms:
        assert (form["error"] is None) == form["accepted"], form
        assert form["mutations"], form


def test_no_form_is_in_the_grid(forms):
    with gzip.open(GRID, "rt") as handle:
        grid = {_key(f) for f in json.load(handle)["forms"]}
    assert not [f for f in forms if _key(f) in grid]


def test_the_seed_draws_the_recorded_forms(document, forms):
    sampler = _sampler()
    drawn = sampler.draw(document["provenance"]["details"]["seed"], document["count"], sampler.load_grid(GRID))
    assert [(_key(f), f["mutations"]) for f in drawn] == [(_key(f), f["mutations"]) for f in forms]


# --- (b) agreement ------------------------------------------------------------------------------------
def _spec_accepts(form):
    """spec's verdict: True / False, or None where it gives none (SpecError: exit 2 in the CLI)."""
    try:
        return instruction.check(form["instruction"], form["target"], form["ptx_version"])["ptxas_accepts"]
    except SpecError:
        return None


def test_spec_agrees_with_ptxas_on_the_held_out_forms(document, forms):
    disagreeing = [f for f in forms if _spec_accepts(f) != f["accepted"]]
    listed = {_key(d) for d in document["disagreements"]}
    new = [f"{f['target']} {f['ptx_version']}: ptxas {'accepts' if f['accepted'] else 'refuses'} "
           f"({f['error']}): {f['instruction']}" for f in disagreeing if _key(f) not in listed]
    assert not new, f"{len(new)} held-out forms newly disagree with ptxas:\n" + "\n".join(new[:20])
    assert 1 - len(disagreeing) / len(forms) >= AGREEMENT


def test_the_four_forms_of_issue_25_item_6():
    """ptxas 13.0 (tests/hardware/tmem_ptxas_forms.json.gz): an immediate in st's source vector assembles,
    a repeated .x2 and .pack::16b with .unpack::16b do not, tcgen05.wait::mma is a syntax error."""
    st = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r0], {%r8, 0};"
    for target in ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"):
        assert instruction.check(st, target)["ptxas_accepts"], target
    repeated = instruction.check("tcgen05.st.sync.aligned.32x32b.x2.x2.b32 [%r0], {%r8, %r9};", "sm_100a")
    both = instruction.check("tcgen05.st.sync.aligned.32x32b.x2.pack::16b.unpack::16b.b32 [%r0], {%r8, %r9};",
                             "sm_100a")
    wait = instruction.check("tcgen05.wait::mma.sync;", "sm_100a")
    assert [v.rule.id for v in repeated["violations"]] == ["tmem.instruction.qualifiers"]
    assert [v.rule.id for v in both["violations"]] == ["tmem.instruction.qualifiers"]
    assert [v.rule.id for v in wait["violations"]] == ["tmem.instruction.syntax"]


def test_the_cli_gives_a_syntax_error_as_a_verdict(capsys):
    """`tmem check` of a tcgen05 text ptxas cannot parse: the verdict in the JSON and exit 1, not exit 2
    (docs/CLI.md `tmem check`); a text that is no tcgen05 instruction stays malformed input."""
    from solver.cli.main import main
    code = main(["tmem", "check", "--arch", "sm_100a", "--ptx", "tcgen05.wait::mma.sync;", "--json"])
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert code == 1 and err == "" and document["ptxas_accepts"] is False and document["undefined"] == []
    assert [v["rule"] for v in document["violations"]] == ["tmem.instruction.syntax"]
    code = main(["tmem", "check", "--arch", "sm_100a", "--ptx", "mov.b32 %r1, 0;", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


# --- (c) the same ptxas, where present ----------------------------------------------------------------
def test_sample_still_assembles_as_recorded(document, forms):
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas not on PATH: the record is replayed without it")
    runner = _sampler().runner
    recorded = document["provenance"]["details"]["ptxas"]
    if runner.ptxas_version("ptxas") != recorded:
        pytest.skip(f"ptxas on PATH is not the recorded {recorded}")
    for form in random.Random(11).sample(forms, 40):
        got = runner.assemble_alone("ptxas", form["target"], form["ptx_version"], 0, form["instruction"])
        assert got == (form["accepted"], form["error"]), form
