"""Which tcgen05.mma results a tcgen05.ld reads (solver/kernel/audit/commits.py): the MMAs a tcgen05.commit
covers are complete when a warp waited for the phase that commit completes (PTX ISA 9.0 9.7.16.11.2,
9.7.13.15.16); an MMA issued after the MMA warp waited for a phase the loading warp arrived on after its
load is after the load. Anything else on the cell may race with the load.

Each case is a persistent kernel's accumulator protocol, written as the events the audit's trace records,
one warp after another (ticks: warp 0, the epilogue, runs before warp 1, the MMA warp)."""
from __future__ import annotations

from types import SimpleNamespace

from solver.kernel.audit.commits import MbarrierEvent, Pairing

FULL, EMPTY = 0x100, 0x108            # "accumulator ready" (commit) and "accumulator free" (epilogue arrives)


def _event(kind, tick, warp, barrier, amount=None):
    return MbarrierEvent(kind, tick, warp, 0, barrier, amount, ())


def _run(*warps):
    return SimpleNamespace(warps=[SimpleNamespace(warp=w, clock=(), barrier_uses=set()) for w in warps])


def _protocol(epilogue_parities=(0, 1), free=True):
    """Warp 0 (epilogue): wait FULL (tile 0), load at tick 3, arrive EMPTY; wait FULL (tile 1), load at 7.
    Warp 1 (MMA): MMAs of tile 0 at ticks 20-21, commit FULL at 22; wait EMPTY; MMAs of tile 1 at 30-31,
    commit at 32."""
    events = [_event("init", 1, 0, FULL, 1), _event("init", 1, 0, EMPTY, 1),
              _event("wait", 2, 0, FULL, epilogue_parities[0]), _event("wait", 6, 0, FULL, epilogue_parities[1]),
              _event("commit", 22, 1, FULL, 1), _event("commit", 32, 1, FULL, 1)]
    if free:
        events += [_event("arrive", 4, 0, EMPTY, 1), _event("wait", 25, 1, EMPTY, 0)]
    return Pairing(events, _run(0, 1))


LOAD_TILE_0 = SimpleNamespace(warp=0, tick=3, clock=())
LOAD_TILE_1 = SimpleNamespace(warp=0, tick=7, clock=())


def test_the_first_tiles_mmas_are_complete_and_the_next_tiles_after_the_load():
    pairing = _protocol()
    assert pairing.complete_before(LOAD_TILE_0) == {1: 22}            # MMAs of warp 1 before tick 22
    assert pairing.after(LOAD_TILE_0, 1, 30, ())                      # tile 1's: after the EMPTY wait
    assert not pairing.after(LOAD_TILE_0, 1, 20, ())                  # tile 0's: not after
    assert pairing.complete_before(LOAD_TILE_1) == {1: 32}


def test_without_the_free_barrier_the_next_tiles_mmas_may_race_with_the_load():
    pairing = _protocol(free=False)
    assert pairing.complete_before(LOAD_TILE_0) == {1: 22}
    assert not pairing.after(LOAD_TILE_0, 1, 30, ())


def test_a_wait_that_skips_a_phase_pairs_nothing():
    pairing = _protocol(epilogue_parities=(0, 0))
    assert pairing.unpaired() is not None
    assert pairing.complete_before(LOAD_TILE_0) == {}


def test_a_producers_first_wait_on_a_fresh_barrier_is_for_the_phase_before():
    """Parity 1 on a fresh barrier passes at once (the phase before the first counts as complete): the
    warp's j-th wait is then for phase j - 1."""
    events = [_event("init", 1, 0, EMPTY, 1), _event("wait", 2, 1, EMPTY, 1), _event("wait", 3, 1, EMPTY, 0),
              _event("arrive", 10, 0, EMPTY, 1)]
    barrier = Pairing(events, _run(0, 1)).barriers[EMPTY]
    assert barrier.unpaired is None
    assert [p for _, _, p in barrier.waits[1]] == [-1, 0]


def test_two_warps_committing_to_one_barrier_pair_nothing():
    events = [_event("init", 1, 0, FULL, 1), _event("commit", 5, 1, FULL, 1), _event("commit", 9, 2, FULL, 1),
              _event("wait", 2, 0, FULL, 0)]
    pairing = Pairing(events, _run(0, 1, 2))
    assert pairing.unpaired() is not None and pairing.complete_before(LOAD_TILE_0) == {}


# --- a barrier initialised again (Triton's causal attention: inval and init between its two loops) -------

SYNC = (0, None)                      # bar.sync 0: every warp, a CTA barrier


def _at(kind, tick, warp, amount=None, syncs=0):
    return MbarrierEvent(kind, tick, warp, 0, FULL, amount, ((SYNC, syncs),) if syncs else ())


def _run_synced(syncs=4):
    return SimpleNamespace(warps=[SimpleNamespace(warp=w, clock=((SYNC, syncs),), barrier_uses={SYNC})
                                  for w in (0, 1)])


def _two_lives(waiter_syncs=(1, 3), inval_tick=5):
    """Warp 0 initialises FULL, commits once, invalidates it, initialises it again (after sync 2) and
    commits once more; warp 1 waits for phase 0 of each life, after sync 1 and sync 3."""
    return [_at("init", 1, 0, 1), _at("commit", 3, 0, 1, syncs=1), _at("inval", inval_tick, 0, syncs=2),
            _at("init", 6, 0, 1, syncs=2), _at("commit", 8, 0, 1, syncs=3),
            _at("wait", 20, 1, 0, syncs=waiter_syncs[0]), _at("wait", 30, 1, 0, syncs=waiter_syncs[1])]


def test_each_life_of_a_barrier_initialised_again_is_paired_on_its_own():
    pairing = Pairing(_two_lives(), _run_synced())
    assert pairing.unpaired() is None and set(pairing.barriers) == {(FULL, 0), (FULL, 1)}
    assert [p for _, _, p in pairing.barriers[(FULL, 1)].waits[1]] == [0]      # phase 0 of the second life
    load = SimpleNamespace(warp=1, tick=31, clock=((SYNC, 3),))
    assert pairing.complete_before(load) == {0: 8}       # the second life's commit covers the MMAs before it


def test_a_wait_before_the_second_init_is_of_the_first_life():
    # warp 1's second wait comes before sync 2, so before the second init: a second wait of the first
    # life, for a parity-0 phase it has not completed again (a phase skipped): nothing is paired
    pairing = Pairing(_two_lives(waiter_syncs=(1, 1)), _run_synced())
    assert pairing.unpaired() is not None


def test_a_barrier_used_after_its_inval_pairs_nothing():
    # the inval before the first commit: the commit arrives on an invalidated barrier
    pairing = Pairing(_two_lives(inval_tick=2), _run_synced())
    assert pairing.unpaired() is not None


def test_a_wait_no_barrier_orders_with_either_init_pairs_nothing():
    pairing = Pairing(_two_lives(waiter_syncs=(0, 0)), _run_synced())
    assert pairing.unpaired() is not None and set(pairing.barriers) == {FULL}
