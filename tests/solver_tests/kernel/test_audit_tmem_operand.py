"""P through tensor memory (solver/kernel/audit/tmem_operand.py): Triton's warp-specialized causal attention
for sm_100a stores P = softmax(S) with tcgen05.st, and P . V reads it as A from tensor memory. The audit
proves the original (tests/solver_tests/kernel/test_audit_corpus.py); here bugs a compiler could make on that path are each
refuted, and the order checks on the cells are unit-tested against a stand-in pairing.

The expectations come from the manual: A[m][k] of .kind::f16 lies at lane m, column k / 2, half k mod 2
of the [a-tmem] address (PTX ISA 9.0 9.7.16.10.1), so an [a-tmem] eight columns further reads the
probabilities of keys 16 further than the V rows the MMA's B descriptor names; swapping two registers of
the tcgen05.st moves two pairs of probabilities to each other's columns (9.7.16.8.4)."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os
import re
from types import SimpleNamespace

import pytest

import layoutproof as lp
from solver.kernel.audit import tmem_operand
from solver.kernel.audit.trace import TmemStore

CORPUS = os.path.join(TESTS_DIR, "fixtures", "ptx", "corpus")
NAME = "tut06_attn_fwd_ws_causal_f16_d128_128x128_s3_w4_sm_100a"
ENTRY = next(e for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"] if NAME in e["file"])
TEXT = lzma.open(os.path.join(CORPUS, ENTRY["file"]), "rt").read()


def _audit(text):
    report = lp.audit(text, ENTRY["tensormaps"], ENTRY["params"], grid=ENTRY["grid"], kernel=ENTRY["kernel"])
    return {p.id: p for k in report.kernels for p in k.properties}


def _every_line(pattern, replace):
    """The text with `replace` applied to every line matching `pattern` (each P . V loop of the kernel)."""
    lines = TEXT.split("\n")
    hit = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert hit, pattern
    for i in hit:
        lines[i] = replace(lines[i])
    return "\n".join(lines)


def test_a_p_v_mma_reading_a_columns_further_is_refuted():
    mutant = _every_line(r"tcgen05\.mma.*\], \[ %r\d+ \+ 8 \]", lambda line: line.replace("+ 8 ]", "+ 16 ]"))
    found = _audit(mutant)["audit.attention.pairs"]
    assert found.status == "refuted", found.reason
    assert found.witness["k"] < 16 and "V's global row" in found.witness["what"]


def test_p_stored_with_two_registers_swapped_is_refuted():
    def swap(line):
        registers = re.search(r"\{(%r\d+), (%r\d+),", line)
        return line.replace(registers.group(0), "{" + registers.group(2) + ", " + registers.group(1) + ",", 1)
    mutant = _every_line(r"tcgen05\.st\.sync\.aligned\.32x32b\.x64\.b32 \[%r\d+ \+ 0\], \{%r18", swap)
    assert _audit(mutant)["audit.attention.pairs"].status == "refuted"


# --- the order of a cell's stores and the MMA that reads it (stand-ins for commits.Pairing) -------------

def _store(tick, warp=0, line=10):
    return TmemStore(tick, warp, line, frozenset({(0, 0)}), (), {(0, 0): (0, (None,) * 4)})


class _Pairing:
    """Stores with tick < `before` are ordered before the MMA; the MMA is complete before stores with tick
    >= `complete`."""

    def __init__(self, before, complete):
        self.before, self.complete = before, complete

    def after(self, store, warp, tick, clock):
        return store.tick < self.before

    def complete_before(self, store):
        return {1: 1 << 30} if store.tick >= self.complete else {}

    def unpaired(self):
        return None


def _choose(stores, before, complete):
    sources = SimpleNamespace(_pairing=lambda: _Pairing(before, complete))
    reader = tmem_operand._Reader(None, None, {}, sources)
    return reader._choose(stores, SimpleNamespace(warp=1, tick=100, clock=()))


@pytest.mark.parametrize("count", [1, 2, 5, 8])
def test_the_latest_store_before_the_mma_is_read(count):
    stores = [_store(10 * (i + 1)) for i in range(count)]
    for k in range(1, count + 1):            # the first k stores are before the MMA; the rest after it completed
        assert _choose(stores, 10 * k + 1, 10 * k + 1) is stores[k - 1]


def test_no_store_before_the_mma_is_unknown():
    assert "no tcgen05.st is ordered before" in _choose([_store(10), _store(20)], 0, 0)


def test_a_store_that_may_land_before_the_mma_completes_is_unknown():
    # the second store is not ordered before the MMA, and the MMA is not known complete before it
    assert "may overwrite it" in _choose([_store(10), _store(20)], 11, 1 << 20)


def test_stores_of_two_warps_are_unknown():
    assert "several warps" in _choose([_store(10, warp=0), _store(20, warp=2)], 100, 100)


def test_a_store_whose_values_are_not_followed_is_unknown():
    odd = TmemStore(10, 0, 33, frozenset({(0, 0)}), (), None)
    assert "line 33" in _choose([odd, _store(20)], 100, 100)
