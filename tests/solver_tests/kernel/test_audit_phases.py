"""Which phase a TMA load belongs to when the warp that issues it does not arrive on its mbarrier
(solver/kernel/audit/phases.py). Triton's warp-specialized attention loads K and V from two warps: warp 8
arrives with expect_tx, the two loader warps meet at `bar.sync 4, 64`, then each issues half of the box.
The load is of phase k only when CTA barriers order it after phase k's opening arrival and before phase
k+1's (PTX ISA 9.0 9.7.13.1: bar.sync; 9.7.13.15.16: mbarrier phases); anything else is not placed.

The clocks are what memory.arrive counts: per (barrier id, thread count), the warp's arrivals so far."""
from __future__ import annotations

from types import SimpleNamespace

from solver.kernel.audit.phases import Phase, _Order, _phase_between

LOADER_SYNC = (4, 64)                                 # bar.sync 4, 64: warps 8 and 9, 64 threads


def _clock(n):
    return ((LOADER_SYNC, n),) if n else ()


def _order(uses=frozenset({LOADER_SYNC}), syncs=6):
    warps = [SimpleNamespace(warp=w, clock=_clock(syncs), barrier_uses=set(uses)) for w in (8, 9)]
    return _Order(SimpleNamespace(warps=warps))


def _phases():
    """Warp 8 opens phase k after its (2k+1)-th bar.sync (wait on the empty barrier, sync, arrive)."""
    return [Phase(0x100, k, 8, clock=_clock(2 * k + 1)) for k in range(3)]


def _load_of_warp_9(syncs):
    return SimpleNamespace(warp=9, clock=_clock(syncs), line=1)


def test_a_load_after_the_second_sync_of_iteration_k_is_of_phase_k():
    phases = _phases()
    for k in range(3):
        assert _phase_between(phases, _load_of_warp_9(2 * k + 2), _order()) is phases[k]


def test_a_load_no_barrier_orders_after_the_opening_is_not_placed():
    # issued after only the first sync of iteration 1: warp 8 may not have armed phase 1 yet
    assert _phase_between(_phases(), _load_of_warp_9(3), _order()) is None
    # no CTA barrier at all
    assert _phase_between(_phases(), _load_of_warp_9(0), _order()) is None


def test_a_load_after_two_openings_is_of_the_later_one():
    # phases 1 and 2 both opened before the load: a phase opens only once the one before it completed, so
    # the load's bytes can only count towards phase 2 (the bytes property then checks phase 2's sum)
    phases = [Phase(0x100, 0, 8, clock=_clock(1)), Phase(0x100, 1, 8, clock=_clock(3)),
              Phase(0x100, 2, 8, clock=_clock(3))]
    assert _phase_between(phases, _load_of_warp_9(4), _order()) is phases[2]


def test_a_barrier_some_warp_only_arrives_at_orders_nothing():
    uses = {LOADER_SYNC, (4, "arrive")}
    assert _phase_between(_phases(), _load_of_warp_9(2), _order(uses)) is None
