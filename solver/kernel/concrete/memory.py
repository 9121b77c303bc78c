"""Shared memory between the warps of one CTA: what a load reads back in the concrete executor.

The executor runs warp after warp (executor.py), so no warp sees another's store as it happens. A load
from shared memory is answered instead from the log of every shared-memory write of a whole earlier run
(executor.run, its passes). It reads the value one write left when CTA barriers order that write before
the load, and every other write to the byte comes before that write or after the load. Where a write may
race with the load, or nothing known was written, the load is Unknown, as it always was before.

Order (PTX ISA 9.0, 9.7.13.1 bar, barrier): "The barrier{.cta}.sync or barrier{.cta}.red ... instruction
guarantees that when the barrier completes, prior memory accesses requested by this thread are performed
relative to all threads participating in the barrier", and "further guarantees that no new memory access
is requested by this thread before the barrier completes". With no thread count, every thread of the CTA
takes part, so the k-th arrival of every warp at barrier a is in a's k-th completion. Then a write made
before its warp's k-th arrival at a comes before a load made after its own warp's k-th (or a later)
arrival at a; and a load made before its warp's k-th arrival comes before a write made after the
writer's k-th. A thread count b (bar.sync a, b) orders so when the warps that arrive with it make up b
(untrusted_ids); a bar.arrive, an id not known, or a predicate not known orders nothing here. Within one
warp, the executor's order is the program's: it runs a warp's lanes together.

What counts as a write (`writes_shared`):
* st.shared, st with a generic address inside the shared window: per lane and byte, with its value where
  the value is an int;
* anything else that names memory and may write it (st.async, atom, red, mbarrier, tcgen05.alloc,
  stmatrix, cp.async*, TMA, a generic st outside what is known): a write of unknown bytes over what it may
  touch (its address and width where known, else the whole window). Writes of the async proxy
  (cp.async*, TMA, st.async, red.async) are ordered with nothing;
* a write on a side of a branch on an unknown value (executor._fork), or under an unknown predicate: a
  write of unknown bytes (it may not have happened);
* a warp that stopped, or left lanes behind (executor._follow_leader), may write anything after that
  point: the run stands only when each load it answered comes before that point (justified).

The passes (executor.run): a run answers its loads from the log of the run before it, and records its own.
When a run's log is the log it was answered from, each answer rests on writes that this run made, with
the order this run shows; that run is the result, if its answers are justified. (A run answered nothing
whose log answers none of its own loads is such a run already: the next would repeat it step for step.)
Otherwise, after MAX_PASSES runs, or where the passes come back to where an earlier one started (a cycle
that never stands), the first run (no answers) stands. Only the bytes some load of a run read have their
writes logged (SharedMemory.watches).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.concrete.values import SharedGeneric, Unknown, lane_of
from solver.kernel.frontend.instruction import parse_integer

MAX_PASSES = 8                 # runs, the first (no answers) included
MAX_WRITES = 2_000_000         # bytes, and writes of unknown bytes, logged per run (more: no answers)
WINDOW = 1 << 32               # the shared window's addresses (a 32-bit offset, PTX ISA 9.0 6.4.1)
CLOCK = "@barriers"            # the path's clock, kept beside its registers (a name no register has)

# [reg], [reg+imm], [reg+-imm], [symbol+imm]: the address operands the executor reads (PTX ISA 9.0 6.4.1)
ADDRESS = re.compile(r"^\[\s*([%\w$.]+)\s*(?:([+-])\s*(-?\w+))?\s*\]$")
BARRIER = re.compile(r"^(bar|barrier)(\.cta)?\.(sync|red|arrive)(\.|$)")
# Opcodes that name memory and never write shared memory (PTX ISA 9.0 9.7.9, 9.7.16): loads, prefetches,
# tensor-memory copies that read shared memory, waits that only read an mbarrier.
READS_ONLY = re.compile(r"^(ld|ldu|ldmatrix|prefetch|prefetchu|isspacep|applypriority|discard|createpolicy|"
                        r"cp\.async\.bulk\.prefetch|tcgen05\.(ld|st|cp|shift|mma|wait|relinquish|dealloc)|"
                        r"mbarrier\.(test_wait|try_wait|pending_count)|fence|wgmma|tensormap\.cp_fenceproxy|"
                        r"multimem|cp\.async\.bulk\.(global\.shared|tensor\.\d+d\.global)|"
                        r"cp\.reduce\.async\.bulk\.(global|tensor\.\d+d\.global))(\.|$)")
ASYNC_PROXY = re.compile(r"^(cp\.async|cp\.reduce\.async|st\.async|red\.async|tcgen05\.commit)(\.|$)")
ASYNC_REMOTE = re.compile(r"^(st\.async|red\.async)(\.|$)")
# the bytes some writers touch at their address: an mbarrier object (PTX ISA 9.0 9.7.13.15.1: 64 bits),
# the tensor-memory address tcgen05.alloc writes (9.7.16.7.1: 32 bits), one stmatrix row (9.7.9.? : 16)
FIXED_BYTES = (("mbarrier", 8), ("cp.async.mbarrier", 8), ("tcgen05.commit", 8), ("tcgen05.alloc", 4),
               ("stmatrix", 16))


def lane_addresses(operand: str, warp, lanes: list, space: Optional[str] = None) -> list:
    """Per lane: ("shared" | "global" | space, address) or None. space: the instruction's state space
    (None: a generic address, PTX ISA 9.0 6.4.1: a SharedGeneric one is shared, any other global)."""
    m = ADDRESS.match(operand.strip())
    if m is None:
        return [None] * len(lanes)
    base_text, sign, offset_text = m.groups()
    offset = parse_integer(offset_text) if offset_text else 0
    if offset is None:
        return [None] * len(lanes)
    offset = -offset if sign == "-" else offset
    base = warp.read(base_text, 64)
    out = []
    for lane in lanes:
        value = lane_of(base, lane)
        if isinstance(value, SharedGeneric):
            out.append(("shared", value.offset + offset))
        elif isinstance(value, int):
            out.append((space or "global", value + offset))
        else:
            out.append(None)
    return out


def state_space(ins) -> Optional[str]:
    """"shared" (this CTA's: .shared, .shared::cta), "shared::cluster", "global", another space, or None
    for a generic address (PTX ISA 9.0 6.4)."""
    for m in ins.modifiers:
        if m in ("shared", "shared::cta"):
            return "shared"
        if m in ("shared::cluster", "global", "local", "const", "param"):
            return m
    return None


def from_other_ctas(ins) -> bool:
    """A write that other CTAs of the cluster make into this CTA's shared memory too, where this run
    cannot see them (PTX ISA 9.0 9.7.9.25: .multicast::cluster, .cta_group::2; 9.7.9.12 st.async,
    9.7.9.13 red.async; st / atom / red on .shared::cluster)."""
    if ".multicast" in ins.opcode or "cta_group::2" in ins.opcode or ASYNC_REMOTE.match(ins.opcode):
        return True
    return ins.base in ("st", "atom", "red") and "shared::cluster" in ins.modifiers


# --- the clock --------------------------------------------------------------------------------------------
def arrive(clock, ins, guard, read, lanes: int) -> tuple:
    """(the clock after this barrier instruction, how it used the barrier). The clock counts, per barrier
    id and thread count (None: none given), the warp's waiting arrivals: ((id, count), arrivals), ...)
    sorted, or an Unknown once they are not known. The use is (id, count), the count ARRIVE for a
    bar.arrive or an arrival with lanes missing (it orders nothing). untrusted_ids judges a run's uses."""
    operands = [o.strip() for o in ins.operands if o.strip()]
    if ".red" in ins.opcode:
        operands = operands[1:-1]               # bar.red.op d, a{, b}, {!}c: the destination, the predicate
    ident = read(operands[0], 32) if operands else Unknown("a barrier with no id")
    if not isinstance(ident, int) or isinstance(clock, Unknown):
        return Unknown(f"line {ins.line}: a barrier whose id is not known"), ("*", ARRIVE)
    count = read(operands[1], 32) if len(operands) > 1 else None
    if ".arrive" in ins.opcode or not (guard is None or guard == 1) or lanes != 32 or isinstance(count, Unknown):
        return clock, (ident, ARRIVE)
    counts = dict(clock)
    counts[(ident, count)] = counts.get((ident, count), 0) + 1
    return tuple(sorted(counts.items(), key=lambda item: (item[0][0], -1 if item[0][1] is None else item[0][1]))), \
        (ident, count)


ARRIVE = "arrive"


def untrusted_ids(uses: dict) -> set:
    """The (id, count) barriers whose k-th arrival of a warp is not known to be in their k-th completion,
    from each warp's uses {(id, count)}. Every warp that arrives must take part in each completion: with
    no thread count (the whole CTA: PTX ISA 9.0 9.7.13.1 "all threads in the CTA participate"), or with a
    count b that the warps arriving with it make up exactly (32 threads each: a named barrier of one
    group of warps, Triton's and CUTLASS's epilogue warpgroup). One id used with two counts is two
    barriers, one after the other (a completion needs one count). Not trusted: an id some warp reaches
    with bar.arrive or with lanes missing; "*": an id not known (no barrier then)."""
    warps: dict = {}
    arrived_only = set()
    for warp, used in uses.items():
        for ident, count in used:
            if count == ARRIVE:
                arrived_only.add(ident)
            else:
                warps.setdefault((ident, count), set()).add(warp)
    found = {"*"} if "*" in arrived_only else set()
    for key, group in warps.items():
        ident, count = key
        if ident in arrived_only or (count is not None and count != 32 * len(group)):
            found.add(key)
    return found


@dataclass(frozen=True)
class Event:
    """A write (value: the byte, or None when not known) or a load: by `lane` of `warp`, its `step`-th
    memory event, with the warp's clock then (None: not known)."""
    warp: int
    lane: int
    step: int
    clock: Optional[tuple]
    value: Optional[int] = None


@dataclass(frozen=True)
class Span:
    """A write of unknown bytes over [low, high) (high None: to the window's end); timeless: of the
    async proxy, ordered with nothing."""
    warp: int
    step: int
    clock: Optional[tuple]
    low: int = 0
    high: Optional[int] = None
    timeless: bool = False


@dataclass
class Log:
    """One run's shared-memory writes, and how far each warp's arrivals are known."""
    writes: dict = field(default_factory=dict)      # address -> [Event]
    spans: list = field(default_factory=list)       # Span
    uses: dict = field(default_factory=dict)        # warp -> {(barrier id, count)} (arrive, untrusted_ids)
    final: dict = field(default_factory=dict)       # warp -> its clock at its end (None: not known)
    open_ends: dict = field(default_factory=dict)   # warp -> its clock where it stopped or dropped lanes
    watched: frozenset = frozenset()                # the bytes whose writes `writes` holds (the others: not logged)
    overflow: bool = False
    _untrusted: Optional[tuple] = field(default=None, compare=False, repr=False)

    def same(self, other: "Log") -> bool:
        return (self.writes, self.spans, self.uses, self.final, self.open_ends, self.watched, self.overflow) == \
            (other.writes, other.spans, other.uses, other.final, other.open_ends, other.watched, other.overflow)

    @property
    def untrusted(self) -> set:
        if self._untrusted is None or self._untrusted[0] != len(self.uses):
            self._untrusted = (len(self.uses), untrusted_ids(self.uses))
        return self._untrusted[1]


class SharedMemory:
    """The memory one run reads from (`answers`, the log of the run before; None: no answers) and the
    log it records. The warps the answering log shows stopping (open_ends) are not waited for while the
    passes go on: the run whose log is the one it was answered from must then show that each answer came
    before every warp's open end (justified)."""

    def __init__(self, answers: Optional[Log] = None, watched: frozenset = frozenset()):
        self.answers = answers
        self.log = Log(watched=watched)
        self.count = 0
        self.answered: list = []            # (warp, step, clock, address, size, value): each load answered
        self.loaded: set = set()            # the bytes the run's loads read (the next run watches them)
        self.loads: list = []               # (warp, step, clock, address, size): each load, answered or not
        self._low = min(watched, default=0)
        self._high = max(watched, default=-1)

    def watches(self, address: int, size: int) -> bool:
        """Whether any byte of [address, address + size) has its writes logged (only the bytes some load of
        a run reads are: the log stays as small as what it answers)."""
        return address <= self._high and address + size > self._low and \
            any(address + k in self.log.watched for k in range(size))

    def justified(self) -> bool:
        """Each answer is what this run's own log gives, strictly: every warp's arrivals as it shows them,
        and nothing any warp may write after it stopped or left lanes behind racing with the load (only
        meaningful once this log is the answering one)."""
        return all(self._value(self.log, warp, step, clock, address, size, strict=True) == value
                   for warp, step, clock, address, size, value in self.answered)

    # -- recording --
    def write(self, warp: int, lane: int, step: int, clock, address: int, value: Optional[int]) -> None:
        if address not in self.log.watched:
            return
        if self.count >= MAX_WRITES:
            self.log.overflow = True
            return
        self.count += 1
        self.log.writes.setdefault(address, []).append(Event(warp, lane, step, clock, value))

    def span(self, warp: int, step: int, clock, low: int = 0, high: Optional[int] = None,
             timeless: bool = False) -> None:
        if len(self.log.spans) >= MAX_WRITES:
            self.log.overflow = True
            return
        self.log.spans.append(Span(warp, step, clock, low, high, timeless))

    def end(self, warp: int, clock, open_end: bool, uses: set) -> None:
        self.log.final[warp] = None if isinstance(clock, Unknown) else clock
        self.log.uses[warp] = frozenset(uses)
        if open_end:
            self.log.open_ends[warp] = None if isinstance(clock, Unknown) else clock

    # -- answering --
    def load(self, warp: int, step: int, clock, address: int, size: int) -> Optional[int]:
        """The little-endian value of bytes [address, address + size) that `warp` loads, or
        None when a byte is not known (see the module's docstring)."""
        self.loaded.update(range(address, address + size))
        self.loads.append((warp, step, clock, address, size))
        if self.answers is None or isinstance(clock, Unknown):
            return None
        if any(address + k not in self.answers.watched for k in range(size)):
            return None
        value = self._value(self.answers, warp, step, clock, address, size, strict=False)
        if value is not None:
            self.answered.append((warp, step, clock, address, size, value))
        return value

    def answers_none_of_its_loads(self) -> bool:
        """Whether a run answered from this run's log would answer none of this run's loads. For a run that
        was answered nothing, that next run is then this run again, step for step (a run is deterministic,
        and the two could first part at a load answered differently): the passes may stop at this one."""
        if self.answered:
            return False
        if self.log.overflow:
            return True                 # (an overflowing log answers nothing)
        return all(isinstance(clock, Unknown) or any(address + k not in self.log.watched for k in range(size)) or
                   self._value(self.log, warp, step, clock, address, size, strict=False) is None
                   for warp, step, clock, address, size in self.loads)

    def unanswerable(self) -> bool:
        """Whether no log of a run that repeats this one step for step (the same loads, and in its log the
        same spans and barrier uses as this run's log) answers any of this run's loads: each load has a
        byte under a timeless span of this log (a write of the async proxy, ordered with nothing: _byte),
        or a clock not known, or the log trusts no barrier or overflows (_value). This log need not hold
        the stores: none of them is looked at before those."""
        log = self.log
        if log.overflow or "*" in log.untrusted:
            return True
        timeless = [span for span in log.spans if span.timeless]
        return all(isinstance(clock, Unknown) or
                   any(span.low <= address + k < (WINDOW if span.high is None else span.high)
                       for k in range(size) for span in timeless)
                   for _warp, _step, clock, address, size in self.loads)

    def _value(self, log: Log, warp: int, step: int, clock, address: int, size: int, strict: bool) -> Optional[int]:
        """Not strict (while the passes go on): a warp the log shows stopping is taken to arrive at every
        barrier after, and what it may write after is not counted; justified() then checks strictly."""
        if log.overflow or "*" in log.untrusted:
            return None
        value = 0
        for k in range(size):
            byte = self._byte(log, Event(warp, -1, step, clock), address + k, strict)
            if byte is None:
                return None
            value |= byte << (8 * k)
        return value

    def _byte(self, log: Log, load: Event, address: int, strict: bool) -> Optional[int]:
        for span in log.spans:
            if span.low <= address < (WINDOW if span.high is None else span.high):
                if span.timeless or not self._before(log, load, Event(span.warp, -1, span.step, span.clock), strict):
                    return None         # a write of unknown bytes before the load, or racing with it
        if strict:
            for other, clock in log.open_ends.items():
                if other != load.warp and not _barrier_between(log, load, Event(other, -1, 0, clock), strict):
                    return None         # what that warp may write after it stopped could race with the load
        before = []
        # (the lanes of one store are one event to the order: kept once per value)
        for event in {(e.warp, e.step, e.clock, e.value): e for e in log.writes.get(address, ())}.values():
            if self._before(log, event, load, strict):
                before.append(event)
            elif not self._before(log, load, event, strict):
                return None             # neither before nor after the load: a race
        latest = [e for e in before if not any(self._before(log, e, f, strict) for f in before if f is not e)]
        values = {e.value for e in latest}
        if not latest or len(values) != 1 or None in values:
            return None
        return values.pop()

    @staticmethod
    def _before(log: Log, first: Event, then: Event, strict: bool) -> bool:
        """first happens before then: earlier in their warp (the executor runs a warp's lanes together,
        executor.py), or through a CTA barrier."""
        if first.warp == then.warp:
            return first.step < then.step
        return _barrier_between(log, first, then, strict)


def ordered(first: Optional[tuple], first_final: Optional[tuple], then: Optional[tuple], untrusted: set) -> bool:
    """An event at clock `first` of a warp whose arrivals end at `first_final` happens before an event at
    clock `then` of another warp: a trusted barrier a (an (id, count)) and a k with the first before its
    warp's (k+1)-th arrival at a, that warp arriving there, and the second after its own warp's (k+1)-th
    (a sync)."""
    if first is None or then is None or first_final is None or "*" in untrusted:
        return False
    mine, arrived = dict(first), dict(first_final)
    return any(ident not in untrusted and after > mine.get(ident, 0) and arrived.get(ident, 0) > mine.get(ident, 0)
               for ident, after in then)


def _barrier_between(log: Log, first: Event, then: Event, strict: bool = True) -> bool:
    """ordered(), with the first warp's arrivals from the log (not strict: a warp the log shows stopping is
    taken to arrive at every barrier after)."""
    final = log.final.get(first.warp)
    if not strict and first.warp in log.open_ends and then.clock is not None:
        final = tuple((ident, 1 << 62) for ident, _ in then.clock)
    return ordered(first.clock, final, then.clock, log.untrusted)


def writes_shared(ins) -> bool:
    """Whether the instruction may write shared memory: it names memory ([...]) and is not a read."""
    if BARRIER.match(ins.opcode) or READS_ONLY.match(ins.opcode) or \
            (ins.base in ("st", "atom", "red") and state_space(ins) in ("global", "local", "param", "const")):
        return False
    return any(o.strip().startswith("[") for o in ins.operands) or ins.base in ("st", "atom", "red")
