"""The GPU's verdict on corpus kernels and their injected bugs (tests/hardware/audit_kernels_sm90.json.gz: the
main loop's; audit_epilogue_sm90.json.gz: the epilogue's, each recorded by hardware/run_audit_kernels.py on a
Hopper GPU), against the audit's: every variant that computed the right product is proved, and none that
computed a wrong one, hung, or had a map the driver refused is proved (refuted, or unknown where it reads
bytes the audit does not model)."""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import lzma
import os

import pytest

import layoutproof as lp
from solver.kernel.audit import mutate

HERE = TESTS_DIR
RECORDS = {name: json.load(gzip.open(os.path.join(HERE, "hardware", name), "rt"))
           for name in ("audit_kernels_sm90.json.gz", "audit_epilogue_sm90.json.gz")}
VARIANTS = [v for record in RECORDS.values() for v in record["variants"]]
CORPUS = os.path.join(HERE, "fixtures", "ptx", "corpus")
ENTRIES = {e["file"]: e for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"]}
_MUTANTS: dict = {}


def _variant(file: str, name: str) -> mutate.Mutant:
    if file not in _MUTANTS:
        entry = ENTRIES[file]
        text = lzma.open(os.path.join(CORPUS, file), "rt").read()
        _MUTANTS[file] = {"original": mutate.Mutant("original", "original", text, entry["tensormaps"]),
                          **{m.name: m for m in mutate.mutants(text, entry["tensormaps"], entry["kernel"])}}
    return _MUTANTS[file][name]


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_the_record_is_whole(name):
    record = RECORDS[name]
    statuses = {v["status"] for v in record["variants"]}
    assert statuses <= {"right", "wrong", "hang", "encoder refused"}, statuses
    originals = [v for v in record["variants"] if v["variant"] == "original"]
    assert originals and all(v["status"] == "right" for v in originals)
    gpu = record["provenance"]["details"]["gpu"]
    assert "H100" in gpu or "H200" in gpu          # Hopper: sm_90a


def test_every_epilogue_bug_put_in_computed_a_wrong_product():
    mutants = [v for v in RECORDS["audit_epilogue_sm90.json.gz"]["variants"] if v["variant"] != "original"]
    assert {v["kind"] for v in mutants} == set(mutate.EPILOGUE_KINDS)
    assert all(v["status"] == "wrong" for v in mutants)


def _replayed_by_default() -> list:
    """Every variant, the default run keeping each kernel's originals, every variant the GPU did not see
    compute the right product through a plain wrong value (hangs, refused maps), and the first variant of
    each kind of injected bug per kernel and recorded status; the others of a kind (the same mutation at
    another line) run with -m full_replay, as the compiler campaigns' replays do."""
    seen, params = set(), []
    for v in VARIANTS:
        kind = (v["file"], v.get("kind") or v["variant"].split(" line ")[0], v["status"])
        first = v["variant"].startswith("original") or v["status"] not in ("wrong", "right") or kind not in seen
        seen.add(kind)
        params.append(pytest.param(v, id=f"{v['stem']}:{v['variant']}",
                                   marks=() if first else (pytest.mark.full_replay,)))
    return params


@pytest.mark.parametrize("recorded", _replayed_by_default())
def test_the_audit_agrees_with_the_gpu(recorded):
    entry = ENTRIES[recorded["file"]]
    mutant = _variant(recorded["file"], recorded["variant"])
    report = lp.audit(mutant.text, mutant.tensormaps, entry["params"], grid=entry["grid"], kernel=entry["kernel"])
    if recorded["status"] == "right":
        assert report.ok, report.explain()
    else:
        assert not report.ok, f"{recorded['variant']} ({recorded['status']}) is proved"
        if recorded["status"] != "wrong":         # a hang or a refused map: a property names it
            assert any(p.status == "refuted" for k in report.kernels for p in k.properties), report.explain()
