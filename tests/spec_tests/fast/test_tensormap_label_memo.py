"""The tensormap target's labels with spec's box placements kept across one generation run
(solver/fuzz/tensormap.py Placements, the `memo` of label and misplaced_element) are the labels without
it: on the cases a run emits (whose labels were made with the memo), for the witness against the whole
box placed element by element, and with one memo shared by documents of every arch in shuffled order,
also while it is emptied every few answers."""
from __future__ import annotations

import random

import pytest

from solver.fuzz import engine
from solver.fuzz import tensormap

RULE = "tma.map.smem_alignment"


def _records(arch: str, count: int = 150, seed: int = 5) -> list:
    return list(engine.generate("tensormap", arch, frozenset({RULE}), count, seed, engine.Stats()))


@pytest.mark.parametrize("arch", ("sm90", "sm100", "sm103"))
def test_a_run_labels_as_spec_without_the_memo(arch):
    witnesses = 0
    for r in _records(arch):
        fresh = tensormap.label(r["case"], arch)
        assert (list(fresh.violates), fresh.outcome, fresh.witness) == (r["violates"], r["outcome"], r["witness"])
        if r["outcome"] == "wrong-data":
            witnesses += 1
            assert r["witness"] == tensormap.misplaced_element_whole(r["case"])
    assert witnesses >= 20


@pytest.mark.parametrize("most_kept", (3, 1 << 10))
def test_a_shared_memo_answers_as_none(most_kept, monkeypatch):
    monkeypatch.setattr(tensormap.Placements, "MOST_KEPT", most_kept)
    docs = [(arch, r["case"]) for arch in ("sm90", "sm100", "sm103") for r in _records(arch, 60, 9)]
    random.Random(0).shuffle(docs)
    memo: dict = {}
    for arch, doc in docs + docs:            # the second pass reads what the first one kept
        assert tensormap.label(doc, arch, memo=memo) == tensormap.label(doc, arch)
        assert tensormap.misplaced_element(doc, memo) == tensormap.misplaced_element(doc)
        assert len(memo) <= most_kept
    assert memo
