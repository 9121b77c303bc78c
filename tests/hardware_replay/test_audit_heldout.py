"""The audit on held-out kernels (tests/fixtures/ptx/heldout/audit.json, written by its make_audit.py): 12
TMA kernels of Triton and TileLang that the audit was never developed on, with the tensor maps their host
code builds. Run first at the end of issue 27's first part: it found one bug, in the Triton adapter (a
bf16 map's element type read in cuda.h's encoding instead of the device's), fixed before this was
recorded. Production kernels: no property may be refuted but the findings of tests/audit_findings.py;
the sm_90a ones, whose every step the audit models, are proved, and so are Triton's persistent sm_100a
GEMMs (their tiles told apart through mbarriers: solver/kernel/audit/commits.py, not yet there when these
kernels were first run) and Triton's causal sm_100a attention (P through tensor memory, tmem_operand.py,
and its barriers initialised again between its two loops, commits._generations: both built after)."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os

import pytest

import audit_findings
import layoutproof as lp

HERE = os.path.join(TESTS_DIR, "fixtures", "ptx", "heldout")
ENTRIES = json.load(open(os.path.join(HERE, "audit.json")))["kernels"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"].replace(".ptx.xz", ""))
def test_a_held_out_kernel_is_never_refuted_and_proved_where_modelled(entry):
    text = lzma.open(os.path.join(HERE, entry["file"]), "rt").read()
    report = lp.audit(text, entry["tensormaps"], entry["params"], grid=entry["grid"], kernel=entry["kernel"])
    refuted = {p.id for k in report.kernels for p in k.properties if p.status == "refuted"}
    assert refuted == audit_findings.expected_breaches(entry["file"].replace(".ptx.xz", "")), report.explain()
    if not entry["file"].startswith("tilelang__tl_sm100"):     # (those: the finding, audit_findings.py)
        assert report.ok, report.explain()


def test_the_held_out_set_has_both_compilers():
    assert {e["file"].split("__")[0] for e in ENTRIES} == {"triton", "tilelang"}
    assert len(ENTRIES) == 12
