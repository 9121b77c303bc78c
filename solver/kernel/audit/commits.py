"""Which tcgen05.mma results a tcgen05.ld reads: those whose completion it waited for.

A tcgen05.mma is asynchronous. `tcgen05.commit.mbarrier::arrive::one [mbar]` "makes the mbarrier object
track the completion of all prior asynchronous tcgen05 operations ... initiated by the executing thread":
its arrive-on happens when they are done (PTX ISA 9.0 9.7.16.11.2 tcgen05.commit; 9.7.13.15 mbarrier). A
warp that waits for that phase of the mbarrier (9.7.13.15.16 try_wait.parity), or passes a CTA barrier
after a warp that did (memory.ordered, 9.7.13.1), reads their results. An MMA issued after a CTA barrier
the loading warp passed after its load (or later in the loading warp itself) is after the load. Any other
MMA that wrote the cell may race with the load: what it reads is then not known.

The executor runs one warp after another (executor.py), so this is read from each warp's own order: a
barrier's phases from its mbarrier.init count and the commits that arrive on it (n lanes: n arrivals;
phase j completes at the commit that brings its arrivals to the count); a warp's j-th wait with parity
j mod 2 is for phase j. A barrier that anything else arrives on, that several warps commit to, whose count
is not known, or a wait that skips a phase, pairs nothing. The MMAs a commit covers are taken per warp
(the elected lane that issues them commits them: Triton, CUTLASS, TileLang).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.audit import operations
from solver.kernel.concrete import memory
from solver.kernel.concrete.values import Unknown


@dataclass(frozen=True)
class MbarrierEvent:
    kind: str                      # "init", "inval", "commit", "arrive", "expect_tx", "wait", "other"
                                   # (arrive_drop, a multicast commit: pairs nothing)
    tick: int
    warp: int
    line: int
    barrier: Optional[int]         # its shared address, None when not known
    amount: Optional[int]          # init: the count; commit: arrivals (lanes); wait: the parity
    clock: Optional[tuple]         # the warp's CTA-barrier arrivals then


def kind_of(ins) -> Optional[str]:
    if ins.opcode.startswith("tcgen05.commit"):
        return "commit" if ".mbarrier::arrive" in ins.opcode and ".multicast" not in ins.opcode else "other"
    if ins.opcode.startswith("mbarrier.inval"):
        return "inval"
    m = operations.BARRIER_OPCODE.match(ins.opcode)
    if m is None:
        return None
    return {"init": "init", "try_wait": "wait", "test_wait": "wait", "arrive": "arrive", "expect_tx": "expect_tx"
            }.get(m.group(1), "other")


def observe(ins, warp, lanes: list, tick: int) -> MbarrierEvent:
    """The event an mbarrier statement or a tcgen05.commit makes, read from the warp's registers."""
    kind = kind_of(ins)
    brackets = [o for o in ins.operands if o.strip().startswith("[")]
    found = memory.lane_addresses(brackets[0], warp, lanes[:1], "shared")[0] if brackets else None
    barrier = found[1] if found is not None and found[0] in ("shared", "shared::cluster") else None
    amount = None
    after = list(ins.operands[ins.operands.index(brackets[0]) + 1:]) if brackets else []
    if kind == "init" and after:
        amount = warp.read(after[0], 32)
    elif kind == "commit":
        amount = len(lanes)
    elif kind == "arrive":          # one arrival per thread, or the count operand's (PTX ISA 9.0 9.7.13.15.13)
        count = warp.read(after[0], 32) if after and not ins.has("expect_tx") else 1
        amount = len(lanes) * count if isinstance(count, int) else None
    elif kind == "wait" and after and ins.has("parity"):
        amount = warp.read(after[0], 32)
    clock = warp.env.get(memory.CLOCK, ())
    return MbarrierEvent(kind, tick, warp.index, ins.line, barrier, amount if isinstance(amount, int) else None,
                         None if isinstance(clock, Unknown) else clock)


@dataclass
class Phases:
    """One mbarrier's phases as the run shows them: each arrival's phase, each wait's phase."""
    address: int
    count: Optional[int] = None
    committer: Optional[int] = None                # the warp whose tcgen05.commits arrive on it (one at most)
    completes: dict = field(default_factory=dict)  # phase -> the tick of the committer's commit that completes it
    arrivals: dict = field(default_factory=dict)   # warp -> [(tick, phase, clock)]
    waits: dict = field(default_factory=dict)      # warp -> [(tick, clock, phase)] (phase -1: the one before the first)
    unpaired: Optional[str] = None


class Pairing:
    """The mbarriers of a run, paired: for a tcgen05.ld, the MMAs complete before it and those after it."""

    def __init__(self, events: list, run):
        self.finals = {w.warp: w.clock for w in run.warps}
        self.untrusted = memory.untrusted_ids({w.warp: w.barrier_uses for w in run.warps})
        by_barrier: dict = {}
        for event in events:
            by_barrier.setdefault(event.barrier, []).append(event)
        self.barriers: dict = {}        # address, or (address, generation) once initialised again -> Phases
        for address, found in by_barrier.items():
            if address is not None:
                for key, part in _generations(address, found, self._before).items():
                    self.barriers[key] = _phases(address, part)
        self.arrivals_after: dict = {}      # (warp, tick) of a load -> _arrived_after

    def _before(self, first: MbarrierEvent, then: MbarrierEvent) -> bool:
        """One mbarrier event happens before another: earlier in one warp, or through a CTA barrier."""
        return self.ordered(first.warp, first.tick, first.clock, then.warp, then.tick, then.clock)

    def _waited(self, barrier: Phases, warp: int, tick: int, clock) -> int:
        """The latest phase of the barrier that `warp` waited for before `tick`, itself or through another
        warp's wait before a CTA barrier it passed after (memory.ordered); -2 for none."""
        phase = max((p for t, c, p in barrier.waits.get(warp, ()) if t < tick), default=-2)
        for other, waits in barrier.waits.items():
            if other != warp:
                phase = max([phase] + [p for t, c, p in waits
                                       if memory.ordered(c, self.finals.get(other), clock, self.untrusted)])
        return phase

    def complete_before(self, load) -> dict:
        """{warp: tick}: that warp's MMAs issued before the tick are complete when `load` (a TmemLoad)
        reads: a commit after them completed a phase the load's warp waited for."""
        limits: dict = {}
        for barrier in self.barriers.values():
            if barrier.unpaired is not None or barrier.committer is None:
                continue
            phase = self._waited(barrier, load.warp, load.tick, load.clock)
            done = [tick for p, tick in barrier.completes.items() if p <= phase]
            if done:
                limits[barrier.committer] = max(limits.get(barrier.committer, -1), max(done))
        return limits

    def after(self, load, warp: int, tick: int, clock: Optional[tuple]) -> bool:
        """An MMA (by `warp`, at `tick` and `clock`) issued after the load: later in the loading warp, after
        a CTA barrier the loading warp passed after the load, or after the MMA's warp waited for a phase
        the loading warp arrived on after the load, or another warp after a CTA barrier the loading warp
        passed after it (the epilogue's "accumulator free" barrier, arrived on by one of its warps)."""
        if warp == load.warp:
            return tick > load.tick
        if memory.ordered(load.clock, self.finals.get(load.warp), clock, self.untrusted):
            return True
        return any(self._waited(self.barriers[address], warp, tick, clock) >= phase
                   for address, phase in self._arrived_after(load).items())

    def _arrived_after(self, load) -> dict:
        """{barrier: the first phase an arrival after the load is in} (cached per load)."""
        key = (load.warp, load.tick)
        if key not in self.arrivals_after:
            found = {}
            for address, barrier in self.barriers.items():
                if barrier.unpaired is not None:
                    continue
                phases = [p for other, arrivals in barrier.arrivals.items() for t, p, c in arrivals
                          if (t > load.tick if other == load.warp else
                              memory.ordered(load.clock, self.finals.get(load.warp), c, self.untrusted))]
                if phases:
                    found[address] = min(phases)
            self.arrivals_after[key] = found
        return self.arrivals_after[key]

    def ordered(self, warp: int, tick: int, clock, then_warp: int, then_tick: int, then_clock) -> bool:
        """An event of `warp` (at tick, clock) happens before one of `then_warp`: earlier in one warp, or
        through a CTA barrier (memory.ordered)."""
        if warp == then_warp:
            return tick < then_tick
        return memory.ordered(clock, self.finals.get(warp), then_clock, self.untrusted)

    def unpaired(self) -> Optional[str]:
        return next((b.unpaired for b in self.barriers.values() if b.unpaired is not None), None)


def _generations(address: int, events: list, before) -> dict:
    """A barrier initialised again (Triton's causal attention invalidates and initialises its barriers
    between its two loops: PTX ISA 9.0 9.7.13.15.10 mbarrier.inval, 9.7.13.15.9 init) is a new barrier
    each time: {address: events} when it is initialised once, else {(address, g): the events of generation
    g}. The initialising warp's events go by its program order; another warp's event is of generation g
    when the g-th init happens before it and it before the next init (before: a CTA barrier orders them).
    An mbarrier.inval must end a generation: the initialising warp's last event of it, every other event
    of it before the inval. Anything else leaves one generation, which _phases then refuses (two inits)."""
    inits = sorted((e for e in events if e.kind == "init"), key=lambda e: e.tick)
    if len(inits) < 2 and not any(e.kind == "inval" for e in events):
        return {address: events}
    if not inits or len({e.warp for e in inits}) > 1:
        return {address: events}
    owner = inits[0].warp
    parts: list = [[] for _ in inits]
    invals: list = [None] * len(inits)
    for event in sorted(events, key=lambda e: e.tick):
        if event.warp == owner:
            g = sum(1 for init in inits if init.tick <= event.tick) - 1
        else:
            g = next((k for k, init in enumerate(inits) if before(init, event) and
                      (k + 1 == len(inits) or before(event, inits[k + 1]))), None)
        if g is None or g < 0:
            return {address: events}
        if event.kind == "inval":
            if event.warp != owner or invals[g] is not None:
                return {address: events}
            invals[g] = event
            continue
        if invals[g] is not None and (event.warp == owner or not before(event, invals[g])):
            return {address: events}          # (used after its inval: not one barrier's life)
        parts[g].append(event)
    for g, inval in enumerate(invals):
        if inval is not None and any(e.warp != owner and not before(e, inval) for e in parts[g]):
            return {address: events}
    if len(inits) == 1:
        return {address: parts[0]}
    return {(address, g): part for g, part in enumerate(parts)}


def _phases(address: int, events: list) -> Phases:
    """Arrivals: a warp's n-th arrival is in phase n when every phase takes one arrival of each arriving
    warp (their lanes add up to the count); a single warp's commits, each completing a phase when its
    arrivals reach the count. Waits: a warp's j-th wait, with parity j mod 2, is for phase j; with parity
    (j + 1) mod 2 from its first on, for phase j - 1 (a producer's first wait passes on a fresh barrier:
    PTX ISA 9.0 9.7.13.15.16, the phase before the current one counts as complete)."""
    barrier = Phases(address)
    events = sorted(events, key=lambda e: e.tick)
    inits = [e for e in events if e.kind == "init"]
    if len(inits) != 1 or inits[0].amount is None:
        barrier.unpaired = f"barrier {address:#x}: {'its count' if inits else 'no mbarrier.init'} is not known"
        return barrier
    barrier.count = count = inits[0].amount
    other = next((e for e in events if e.kind == "other"), None)
    if other is not None:
        barrier.unpaired = f"line {other.line}: barrier {address:#x} is arrived on in a way not paired here"
        return barrier
    arrivals = [e for e in events if e.kind in ("arrive", "commit")]
    committers = {e.warp for e in arrivals if e.kind == "commit"}
    if committers and (len(committers) > 1 or any(e.kind != "commit" for e in arrivals)):
        barrier.unpaired = f"barrier {address:#x}: tcgen05.commits of warps {sorted(committers)} and other arrivals"
        return barrier
    if committers:
        barrier.committer, arrived, phase = committers.pop(), 0, 0
        for event in arrivals:
            barrier.arrivals.setdefault(event.warp, []).append((event.tick, phase, event.clock))
            arrived += event.amount or 0
            if event.amount is None or arrived > count:
                barrier.unpaired = f"line {event.line}: arrivals on barrier {address:#x} past its count {count}"
                return barrier
            if arrived == count:
                barrier.completes[phase], arrived, phase = event.tick, 0, phase + 1
    else:
        lanes: dict = {}
        for event in arrivals:
            mine = barrier.arrivals.setdefault(event.warp, [])
            mine.append((event.tick, len(mine), event.clock))
            lanes.setdefault(event.warp, set()).add(event.amount)
        if any(len(v) != 1 or None in v for v in lanes.values()) or sum(v.pop() for v in lanes.values()) != count:
            barrier.unpaired = f"barrier {address:#x}: its arrivals are not one of each arriving warp per phase"
            return barrier
    for warp in sorted({e.warp for e in events if e.kind == "wait"}):
        waits = [e for e in events if e.kind == "wait" and e.warp == warp]
        offset = 0 if waits[0].amount == 0 else -1
        for j, event in enumerate(waits):
            if event.amount is None or event.amount & 1 != (j + offset) % 2:
                barrier.unpaired = (f"line {event.line}: warp {warp}'s wait number {j} on barrier {address:#x} "
                                    "skips a phase, or waits on a state")
                return barrier
            barrier.waits.setdefault(warp, []).append((event.tick, event.clock, j + offset))
    return barrier
