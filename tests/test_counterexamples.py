"""The counterexample corpus (counterexamples/<property-id>/<n>.json): every case still shows its
failure when replayed through spec/, and every refuted property has at least one case kept."""
import glob
import json
import os

import pytest

from solver.prove.catalogue import all_properties

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "counterexamples")
PROPERTIES = {p.id: p for p in all_properties()}
# counterexamples/against/ holds differential disagreements (tests/test_fuzz_against_replay.py)
CASES = sorted(p for p in glob.glob(os.path.join(ROOT, "*", "*.json")) if "against" not in p.split(os.sep)[-2:])


def test_corpus_is_not_empty():
    assert len(CASES) >= 19


@pytest.mark.parametrize("path", CASES, ids=lambda p: os.path.relpath(p, ROOT))
def test_case_replays_through_spec(path):
    with open(path) as f:
        case = json.load(f)
    assert os.path.basename(os.path.dirname(path)) == case["property"]
    p = PROPERTIES[case["property"]]
    assert p.replay is not None and p.replay(case["counterexample"])


def test_every_refuted_property_has_a_kept_counterexample():
    kept = {os.path.basename(os.path.dirname(p)) for p in CASES}
    expected_refuted = {pid for pid, p in PROPERTIES.items() if p.expected == "refuted"}
    assert expected_refuted <= kept, expected_refuted - kept
