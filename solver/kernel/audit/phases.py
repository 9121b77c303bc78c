"""Barrier phases: which TMA loads a wait stands for (PTX ISA 9.0 9.7.13.15: mbarrier).

An mbarrier counts phases. Phase n completes when its pending arrivals reach zero (the count given to
mbarrier.init) and its transaction count, raised by expect_tx and lowered by each complete_tx of a TMA
load, is back to zero (9.7.13.15.1, 9.7.13.15.16). A wait `try_wait.parity P` returns once the phase of
parity P has completed.

From one CTA's run (the executor: every warp, every iteration, in each warp's program order), the audit
groups each barrier's producer operations into phases and pairs each consumer's waits with them:
* producer: the one warp that arrives on the barrier; a phase's group starts with the first expect_tx or
  arrive after the previous group reached its count, and holds the TMA loads issued on the barrier until
  the next group starts (Triton: arrive.expect_tx, then the loads; TileLang: expect_tx, load A,
  arrive.expect_tx, load B); loads on it by other warps are of its only phase when it has one (Triton's
  attention loads Q from two warps, once), and not paired otherwise;
* consumer: a warp's j-th wait on the barrier waits for phase j, when its parity is j mod 2 and the warp
  waits on every phase the producer completes (no phase skipped).
Where these do not hold (several warps arrive, a wait on a state instead of a parity, a warp that skips
phases as a ping-pong consumer does, a guard the run does not know) the pairing is not made, and says why:
the properties that need it are then unknown, never guessed.
Assumed, not checked here: a stage is refilled only after its consumers released it (the empty barriers);
under that protocol a phase's data stay in place until the consumer's next wait on that barrier.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.audit import operations
from solver.kernel.concrete import memory
from solver.kernel.concrete.executor import MAX_VISITS
from solver.kernel.concrete.values import Unknown


@dataclass
class Load:
    """One TMA load a warp issued (one visit of a cp.async.bulk.tensor load)."""
    line: int
    warp: int
    iteration: tuple
    form: operations.TmaForm
    smem: object                   # int | Unknown
    barrier: object                # int | Unknown
    coordinates: tuple             # int | Unknown each
    source: Optional[operations.ParamSource]
    why_no_source: Optional[str]
    clock: Optional[tuple] = None  # the warp's CTA-barrier arrivals before it (memory.arrive)


@dataclass
class Phase:
    barrier: int
    index: int
    warp: int
    arrivals: int = 0
    expected_bytes: int = 0
    loads: list = field(default_factory=list)
    lines: list = field(default_factory=list)      # the expect_tx / arrive lines
    clock: Optional[tuple] = None                  # the producer's CTA-barrier arrivals when it opened


@dataclass
class Barrier:
    address: int
    count: Optional[int] = None                    # from mbarrier.init
    phases: list = field(default_factory=list)
    unpaired: Optional[str] = None                 # why its phases are not known (None: they are)

    @property
    def complete(self) -> list:
        return [p for p in self.phases if self.count is not None and p.arrivals == self.count]


@dataclass
class Timeline:
    """What the audit needs of a run: the barriers with loads, and for each MMA visit the phases its warp
    last waited for."""
    barriers: dict                                 # address -> Barrier (those some TMA load signals)
    loads: list                                    # every Load, in run order
    unknown: list                                  # (line, why): operations whose barrier or lanes are unknown
    waited: dict                                   # id(visit) of an MMA -> {barrier address: phase index}
    wait_problems: dict                            # barrier address -> why its waits are not paired
    stopped: list                                  # why the run is not whole: warps it cut short, visits
                                                   # past executor.MAX_VISITS not recorded


def build(run, statements: list, params: list, symbols: dict, is_mma) -> Timeline:
    forms: dict = {}
    for i, s in enumerate(statements):
        ins = s.instruction
        if ins is not None and operations.is_recorded(ins):
            try:
                forms[i] = (operations.tma_form(ins) if operations.TMA_OPCODE.match(ins.opcode)
                            else operations.barrier_form(ins))
            except operations.FormError as error:
                forms[i] = error
    sources: dict = {}
    loads, unknown, events = [], [], []
    for visit in run.visits:
        form = forms.get(visit.statement)
        if form is None:
            continue
        if isinstance(form, operations.FormError):
            unknown.append((visit.line, str(form)))
            continue
        if visit.lanes == 0:
            continue
        if visit.lanes is None:
            unknown.append((visit.line, "issued under a guard the run does not know"))
            continue
        if isinstance(form, operations.TmaForm):
            if form.kind != "load":
                continue
            if form.tensormap not in sources:
                sources[form.tensormap] = operations.tensormap_source(statements, params, form.tensormap)
            source, why = sources[form.tensormap]
            load = Load(visit.line, visit.warp, visit.iteration, form,
                        operations.address_of(form.smem, visit.values, symbols),
                        operations.address_of(form.mbarrier, visit.values, symbols),
                        tuple(operations.value_of(c, visit.values, 0xFFFFFFFF) for c in form.coordinates),
                        source, why, visit.clock)
            if visit.lanes != 1:
                unknown.append((visit.line, f"{visit.lanes} lanes issue the same load"))
            loads.append(load)
            events.append((visit, load))
        else:
            events.append((visit, form))
    barriers = {load.barrier: Barrier(load.barrier) for load in loads if isinstance(load.barrier, int)}
    for load in loads:
        if isinstance(load.barrier, Unknown):
            unknown.append((load.line, f"the load's mbarrier address is unknown ({load.barrier.reason})"))
    _group_phases(events, barriers, symbols, unknown, _Order(run))
    waited, problems = _pair_waits(run, events, barriers, symbols, is_mma)
    stopped = [f"warp {w.warp} stopped: {w.stopped}" for w in run.warps if w.stopped is not None]
    stopped += [f"warp {w.warp} split and some of its lanes were not followed ({_split_note(w)})"
                for w in run.warps if w.dropped_lanes]
    if undecided(run) is not None:
        stopped.append(undecided(run))
    if len(run.visits) >= MAX_VISITS:
        stopped.append(f"the run recorded its {MAX_VISITS} visits; the statements it ran after them are not seen")
    return Timeline(barriers, loads, unknown, waited, problems, stopped)


def undecided(run) -> Optional[str]:
    """Why the run's events may hold one a launch does not make: a visit on a side of a branch on an unknown
    value (the run follows both; a launch takes one, not known which) or under an unknown guard
    (executor.Visit.maybe); None where every visit lies on a path the run decided."""
    visit = next((v for v in run.visits if v.maybe), None)
    return None if visit is None else (f"line {visit.line} ran on a side of a branch on an unknown value (or under "
                                       "an unknown guard): a launch may not run it")


def _split_note(warp) -> str:
    """The executor's note where the warp's lanes split and only some were followed."""
    return next((note for note in warp.notes if "the warp splits" in note), "a branch on a value its lanes differ on")


class _Order:
    """Happens-before between events of two warps of one run, through CTA barriers only (memory.ordered)."""

    def __init__(self, run):
        self.finals = {w.warp: w.clock for w in run.warps}
        self.untrusted = memory.untrusted_ids({w.warp: w.barrier_uses for w in run.warps})

    def before(self, warp: int, clock, then) -> bool:
        return memory.ordered(clock, self.finals.get(warp), then, self.untrusted)


def _group_phases(events: list, barriers: dict, symbols: dict, unknown: list, order: _Order) -> None:
    producer: dict = {}
    open_phase: dict = {}
    strays: dict = {}
    for visit, item in events:
        if isinstance(item, Load):
            address = item.barrier
            kind = "load"
        else:
            address = operations.address_of(item.address, visit.values, symbols)
            kind = item.kind
        if not isinstance(address, int) or address not in barriers:
            if kind in ("init", "expect_tx", "arrive", "arrive.expect_tx", "arrive_drop") and isinstance(address, Unknown):
                unknown.append((visit.line, f"an mbarrier {kind} on an unknown address ({address.reason})"))
            continue
        barrier = barriers[address]
        if barrier.unpaired is not None or kind == "wait":
            continue
        if kind == "init":
            count = operations.value_of(item.amount, visit.values)
            if not isinstance(count, int) or (barrier.count is not None and barrier.count != count) or barrier.phases:
                barrier.unpaired = f"line {visit.line}: initialised again, or with a count the run does not know"
            barrier.count = count if isinstance(count, int) else None
            continue
        if kind == "arrive_drop":
            barrier.unpaired = f"line {visit.line}: arrive_drop changes the expected count (not modelled)"
            continue
        if kind == "load" and producer.get(address, visit.warp) != visit.warp:
            strays.setdefault(address, []).append(item)      # a load by a warp that does not arrive here
            continue
        if producer.setdefault(address, visit.warp) != visit.warp:
            barrier.unpaired = (f"warps {producer[address]} and {visit.warp} both arrive or load on it (line "
                                f"{visit.line}): one producer warp per barrier is modelled")
            continue
        if barrier.count is None:
            barrier.unpaired = f"line {visit.line}: used before an mbarrier.init the run saw"
            continue
        phase = open_phase.get(address)
        if kind != "load" and (phase is None or phase.arrivals >= barrier.count):
            phase = open_phase[address] = Phase(address, len(barrier.phases), visit.warp, clock=visit.clock)
            barrier.phases.append(phase)
        if phase is None:
            barrier.unpaired = f"line {visit.line}: a load before any expect_tx or arrive on its barrier"
            continue
        if kind == "load":
            phase.loads.append(item)
            continue
        phase.lines.append(visit.line)
        if kind in ("expect_tx", "arrive.expect_tx"):
            amount = operations.value_of(item.amount, visit.values)
            if not isinstance(amount, int):
                barrier.unpaired = f"line {visit.line}: expect_tx of bytes the run does not know"
                continue
            phase.expected_bytes += amount * visit.lanes
        if kind in ("arrive", "arrive.expect_tx"):
            count = 1 if kind == "arrive.expect_tx" or item.amount is None else \
                operations.value_of(item.amount, visit.values)
            if not isinstance(count, int):
                barrier.unpaired = f"line {visit.line}: an arrive count the run does not know"
                continue
            phase.arrivals += count * visit.lanes
            if phase.arrivals > barrier.count:
                barrier.unpaired = (f"line {visit.line}: {phase.arrivals} arrivals in a phase of count "
                                    f"{barrier.count}")
    for address, loads in strays.items():
        barrier = barriers[address]
        if barrier.unpaired is not None:
            continue
        if len(barrier.phases) == 1:     # a barrier used once (attention's Q): every load on it is of phase 0
            barrier.phases[0].loads.extend(loads)
            continue
        for load in loads:
            phase = _phase_between(barrier.phases, load, order)
            if phase is None:
                barrier.unpaired = (f"line {load.line}: warp {load.warp} loads on it but does not arrive, and no "
                                    f"CTA barrier places the load after one of its {len(barrier.phases)} phases "
                                    "opened and before the next opened")
                break
            phase.loads.append(load)


def _phase_between(phases: list, load: Load, order: _Order) -> Optional[Phase]:
    """The phase a load by a warp that does not arrive on its barrier is of: the one whose opening arrival
    (by the producer warp) happens before the load, while the load happens before the next phase's opening
    arrival (Triton's warp-specialized loader: one warp arrives with expect_tx, `bar.sync 4, 64`, then both
    loader warps issue their half of the box). Under the protocol assumed above (a phase opens only after
    the one before it completed), the load's complete_tx can then only count towards that phase; the bytes
    property checks that the phase's loads deliver what it expects.  None: no such phase is ordered."""
    for k, phase in enumerate(phases):
        following = phases[k + 1] if k + 1 < len(phases) else None
        if order.before(phase.warp, phase.clock, load.clock) and \
                (following is None or order.before(load.warp, load.clock, following.clock)):
            return phase
    return None


def _pair_waits(run, events: list, barriers: dict, symbols: dict, is_mma) -> tuple:
    """(id(MMA visit) -> {barrier: the phase its warp last waited for}, barrier -> why its waits are not
    paired)."""
    problems: dict = {}
    waits: dict = {}                   # (warp, barrier) -> count of waits so far
    for visit, item in events:
        if isinstance(item, Load) or item.kind != "wait":
            continue
        address = operations.address_of(item.address, visit.values, symbols)
        if not isinstance(address, int) or address not in barriers:
            continue
        key = (visit.warp, address)
        j = waits.get(key, 0)
        waits[key] = j + 1
        if item.parity is None:
            problems.setdefault(address, f"line {visit.line}: a wait on a state, not a parity (not modelled)")
            continue
        parity = operations.value_of(item.parity, visit.values)
        if not isinstance(parity, int) or parity & 1 != j % 2:
            problems.setdefault(address, f"line {visit.line}: warp {visit.warp}'s wait number {j} on barrier "
                                         f"{address:#x} waits for parity {parity}, not {j % 2}: the warp skips "
                                         "phases (a ping-pong consumer?); pairing it needs the order across "
                                         "warps, not modelled")
    for (warp, address), count in waits.items():
        barrier = barriers[address]
        complete = len(barrier.complete)
        if barrier.unpaired is None and count != complete:
            problems.setdefault(address, f"warp {warp} waits {count} times on barrier {address:#x}, which "
                                         f"completes {complete} phases: the warp skips phases, or waits "
                                         "for one that never completes")
    waited: dict = {}
    order = {id(v): (k, item) for k, (v, item) in enumerate(events)}
    current: dict = {}                 # warp -> {barrier: phase}
    others: dict = {}                  # barrier -> [(warp, clock, phase)]: every wait paired so far
    loaded = {address for address, barrier in barriers.items() if any(p.loads for p in barrier.phases)}
    memo: dict = {}
    for visit in run.visits:
        entry = order.get(id(visit))
        if entry is not None:
            item = entry[1]
            if not isinstance(item, Load) and item.kind == "wait":
                address = operations.address_of(item.address, visit.values, symbols)
                if isinstance(address, int) and address in barriers:
                    phases = current.setdefault(visit.warp, {})
                    phases[address] = phases.get(address, -1) + 1
                    if address in loaded:
                        others.setdefault(address, []).append((visit.warp, visit.clock, phases[address]))
            continue
        if is_mma(visit):
            own = current.get(visit.warp, {})
            missing = tuple(sorted(b for b in others if b not in own))
            key = (visit.warp, visit.clock, missing, tuple(len(others[b]) for b in missing))
            if key not in memo:
                memo[key] = _waited_by_others(run, others, missing, visit)
            waited[id(visit)] = {**memo[key], **own}
    return waited, problems


def _waited_by_others(run, others: dict, missing: tuple, visit) -> dict:
    """{barrier: phase}, for the barriers of TMA loads the visit's warp does not wait on itself: the latest
    phase another warp waited for before a CTA barrier the visit's warp passed after it (memory.ordered: a
    bar.sync with no thread count, PTX ISA 9.0 9.7.13.1). That phase's data are visible to the visit's
    warp through the barrier (causality order, PTX ISA 9.0 8.x, the memory consistency model): Triton's
    warp-specialized attention waits for Q in one warp, then dispatches the MMA warp."""
    finals = {w.warp: w.clock for w in run.warps}
    untrusted = memory.untrusted_ids({w.warp: w.barrier_uses for w in run.warps})
    found: dict = {}
    for barrier in missing:
        for warp, clock, phase in others[barrier]:
            if warp != visit.warp and memory.ordered(clock, finals.get(warp), visit.clock, untrusted):
                found[barrier] = max(found.get(barrier, -1), phase)
    return found
