"""The counterexample corpus: every refuted property of the catalogue with the counterexample the prover
found, one file per property (<directory>/<property id>.json, solver.prove.prover.save_counterexample).

The prover is deterministic (fixed seeds, a fresh solver per query), so writing the corpus twice gives
the same bytes. `layoutproof prove --all --save DIR` writes it; the repository keeps one under
counterexamples/, which tests/hardware_replay/test_counterexamples.py replays through spec/.
"""
from __future__ import annotations

from solver.prove.catalogue import all_properties
from solver.prove.prover import prove

DEFAULT_TIMEOUT = 60.0


def write_corpus(directory: str, timeout: float = DEFAULT_TIMEOUT) -> list:
    """Prove the whole catalogue and write every refuted property's counterexample to
    directory/<id>.json (earlier files of those properties are overwritten, no other file is touched).
    The paths written, in catalogue order."""
    written = []
    for p in all_properties():
        result = prove(p, timeout=timeout, save_dir=directory)
        if result.saved_as:
            written.append(result.saved_as)
    return written
