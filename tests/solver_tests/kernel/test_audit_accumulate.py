"""Where an accumulation starts (solver/kernel/audit/accumulate.py): zeros, or constants (a mask: -inf or
0, whatever the predicate picks, PTX ISA 9.0 9.7.8.1 selp), written into every register of a wgmma
accumulator hold no earlier sum; anything else (a loaded value, a partial write) leaves the start unknown."""
from __future__ import annotations

import pytest

from solver.kernel.audit import accumulate
from solver.kernel.frontend.instruction import parse_instruction


def _ins(text: str):
    return parse_instruction(1, text.rstrip(";"))


@pytest.mark.parametrize("text, constant", [
    ("selp.f32 %f1, 0fFF800000, 0f00000000, %p1;", True),
    ("mov.f32 %f1, 0f3F800000;", True),
    ("mov.b32 %r1, 7;", True),
    ("selp.f32 %f1, %f9, 0f00000000, %p1;", False),         # one side a register: any value
    ("mov.f32 %f1, %f2;", False),
    ("add.f32 %f1, %f1, 0f00000000;", False),
])
def test_a_constant_write_is_a_mov_or_a_selp_of_two_constants(text, constant):
    assert accumulate.writes_constant(_ins(text)) is constant


def test_a_mask_and_its_copies_are_constants_and_a_load_is_not():
    accumulations = accumulate.Accumulations(None, None)
    accumulations.marker(0, _ins("selp.f32 %f1, 0fFF800000, 0f00000000, %p1;"))
    accumulations.marker(0, _ins("mov.f32 %f2, %f1;"))                 # a copy of a constant
    assert accumulations.written[0] == {"%f1": "constant", "%f2": "constant"}
    accumulations.marker(0, _ins("ld.shared.f32 %f3, [%r1];"))
    assert accumulations.written[0]["%f3"] == "other"


def _site(m, n):
    from types import SimpleNamespace
    return SimpleNamespace(m=m, n=n, cta_group=1, ws=False, sparse=False)


def test_a_tensor_memory_accumulators_columns_are_its_layouts():
    # M = 128, .cta_group::1: D[m][n] at lane m, column n (PTX ISA 9.0 9.7.16.10.5, data-path layout D)
    assert accumulate.Accumulations._columns(("tmem", 64), _site(128, 128)) == frozenset(range(64, 192))
    assert accumulate.Accumulations._columns(("registers", "{%f1}"), _site(64, 128)) is None
    assert accumulate.Accumulations._columns(("tmem", 0), _site(None, 128)) == accumulate.EVERY_COLUMN


class _Count:
    def __init__(self):
        self.proved_count, self.refuted_count = 0, 0

    def proved(self):
        self.proved_count += 1

    def refuted(self, witness):
        self.refuted_count += 1


@pytest.mark.parametrize("stored_between, checked", [(False, True), (True, False)])
def test_a_tensor_memory_sum_a_store_writes_into_is_not_checked(stored_between, checked):
    asked = []

    def stores_within(columns, first, last):
        asked.append((columns, first, last))
        return stored_between
    k_once = _Count()
    accumulations = accumulate.Accumulations(None, k_once, stores_within)
    chain = accumulate.Chain({}, 1, [], "overwritten", {}, ks=[0, 1, 2, 3], extent=4,
                             columns=frozenset(range(64, 192)), first_order=5, last=9)
    accumulations._finish(chain)
    assert asked == [(frozenset(range(64, 192)), 5, 9)]
    assert k_once.proved_count == (1 if checked else 0) and k_once.refuted_count == 0


def test_a_store_is_within_a_sum_unless_before_its_first_mma_or_after_its_last_completed():
    """Warp 1 issues the MMAs (ticks 20, 21) and commits FULL (tick 22); warp 0 waits for that phase at
    tick 23 (PTX ISA 9.0 9.7.16.11.2: the commit's arrival tracks the MMAs' completion)."""
    from types import SimpleNamespace

    from solver.kernel.audit.commits import MbarrierEvent
    from solver.kernel.audit.properties import StoresWithin
    from solver.kernel.audit.trace import TmemStore, TmemWrite
    full = 0x100
    events = [MbarrierEvent("init", 1, 0, 0, full, 1, ()), MbarrierEvent("commit", 22, 1, 0, full, 1, ()),
              MbarrierEvent("wait", 23, 0, 0, full, 0, ())]
    writes = [TmemWrite(20, 7, 0, 1, 0, 64, ()), TmemWrite(21, 8, 0, 1, 0, 64, ())]
    run = SimpleNamespace(warps=[SimpleNamespace(warp=w, clock=(), barrier_uses=set()) for w in (0, 1)])
    columns = frozenset(range(64, 192))

    def within(store):
        trace = SimpleNamespace(tmem_writes=writes, tmem_stores=[store], mbarriers=events)
        return StoresWithin(trace, run)(columns, 7, 8)
    assert not within(TmemStore(10, 1, 0, frozenset({(0, 64)})))          # the MMA warp's, before its first MMA
    assert within(TmemStore(5, 0, 0, frozenset({(0, 64)})))               # another warp's, not ordered
    assert not within(TmemStore(24, 0, 0, frozenset({(0, 64)})))          # after the wait: the sum is complete
    assert not within(TmemStore(5, 0, 0, frozenset({(0, 63)})))           # another column
    assert within(TmemStore(5, 0, 0, None))                               # cells not known, not ordered
    assert not within(TmemStore(24, 0, 0, None))                          # cells not known, after the sum
