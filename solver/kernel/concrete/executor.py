"""The concrete executor: runs one function for each warp of one CTA, every iteration of every loop, as
the hardware would, on the control-flow graph (frontend/cfg.py). It is the reference the symbolic
evaluator is checked against.

What it is given: the kernel's parameters (by .param name), the CTA's position, the block size (from
.reqntid / .maxntid, or given), optionally the grid and cluster shapes. What it assumes:
* every mbarrier wait completes when polled (semantics.wait): the run followed is one where the data
  each wait stands for has arrived; wait loops (cfg.Loop.wait) are left at once;
* values loaded from memory are Unknown, with the line that loaded them (values.py), except a load from
  shared memory of bytes another warp stored before a CTA barrier both passed (memory.py): a warp that
  stops on a branch on such a value (Triton's warp-specialized kernels dispatch each warp so) makes the
  run go again, answering those loads, until the answers agree with the writes (run, memory.py);
* a warp runs its lanes together; where a branch splits them, each group of lanes follows its side to
  where the sides meet again (the branch block's immediate post-dominator, inside every loop holding the
  branch), and there the lanes are one warp again, each register holding each lane's own value; where
  the sides do not meet so, the run follows the lowest active lane and the lanes that agree with it (the
  others are dropped, and the split is noted).
Where it cannot go on (a branch on an Unknown value, the step budget spent) it stops that warp and says
why. Each statement of a site family (analysis.SITE_OPCODE) reached is recorded with the iteration of
every loop holding it and the values of its register operands.

Two shortcuts give the same runs in fewer steps (tests compare each with running without it):
* a statement no warp's own value reaches (warp_independent) computes the same in every warp that ran the
  same blocks with the same lanes: a warp takes such results from the warp before it while their blocks
  agree (_WarpWalk: its trace), and runs every other statement itself;
* where every shared load of the first run lies under a TMA write of unknown extent, no pass can answer
  one, and the passes are not run (run: SharedMemory.unanswerable).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spec import fast
from spec.rule import SpecError

from solver.kernel.concrete import memory, semantics, tags
from solver.kernel.concrete.values import WARP, Lanes, Unknown, lane_of, mask, select, uniform
from solver.kernel.frontend import cfg
from solver.kernel.frontend.instruction import (FLOAT_BITS, REG_DECLARATION, SYMBOL_OFFSET, TYPE_BITS, destinations,
                                                parse_integer, registers_in)

MAX_STEPS_PER_WARP = 2_000_000     # statements one warp may execute (a K = 4096 GEMM needs some 10^4)
MAX_STEPS_PER_RUN = 8_000_000      # statements all the warps of a run may execute together
MAX_VISITS = 1_000_000             # site visits recorded per run, all warps together
MAX_WARPS = 32                     # 1024 threads: the most a CTA has (CUDA C++ Programming Guide, Table 21)
RULE = ""

_DIMENSIONS = ("x", "y", "z")


@dataclass
class Launch:
    """Where the CTA sits and what it was launched with."""
    params: dict = field(default_factory=dict)        # .param name -> int
    block: Optional[tuple] = None                     # (x, y, z) threads; None: from .reqntid / .maxntid
    cta: tuple = (0, 0, 0)
    grid: Optional[tuple] = None                      # (x, y, z) CTAs, when known
    cluster: Optional[tuple] = None                   # (x, y, z) CTAs per cluster, when known


@dataclass
class Visit:
    statement: int                 # index in the function's statements
    line: int
    warp: int
    iteration: tuple               # the iteration of each (non-wait) loop holding it, outermost first
    values: dict                   # register operand text -> int | "varying" | Unknown
    lanes: Optional[int] = None    # the lanes that executed it (active, guard true); None: the guard is unknown
    clock: Optional[tuple] = None  # the warp's CTA-barrier arrivals before it (memory.arrive); None: not known
    maybe: bool = False            # on a side of a branch on an unknown value, or under an unknown guard: a
                                   # launch may not make it


@dataclass
class WarpRun:
    warp: int
    steps: int = 0
    stopped: Optional[str] = None  # why it stopped before the function's end, or None
    notes: list = field(default_factory=list)
    clock: Optional[tuple] = None  # its CTA-barrier arrivals at its end (memory.arrive); None: not known
    barrier_uses: set = field(default_factory=set)  # (barrier id, count) it arrives with (memory.untrusted_ids)
    dropped_lanes: bool = False    # lanes a branch split off were not followed (_follow_leader)


@dataclass
class Run:
    function: str
    block: tuple
    warps: list                    # WarpRun
    visits: list                   # Visit, in execution order per warp
    loops: list                    # cfg.Loop

    def incomplete(self) -> Optional[str]:
        """Why the visits may not hold every value a site is fed in this launch's CTA (a warp stopped or
        was not run, lanes split off were not followed, the visits were cut), or None: every warp ran
        every lane to its end, and every visit is here."""
        for w in self.warps:
            if w.stopped is not None:
                return f"warp {w.warp} stopped before the end ({w.stopped})"
            if w.dropped_lanes:
                return f"warp {w.warp} split and some lanes were not followed"
        if len(self.visits) >= MAX_VISITS:
            return f"the run kept its most site visits ({MAX_VISITS}): any after are not kept"
        return None


def block_shape(function, launch: Launch) -> tuple:
    """The block size: given, else .reqntid, else .maxntid (PTX ISA 11.4.3, 11.4.2), padded to 3-D."""
    shape = launch.block or function.directives.get(".reqntid") or function.directives.get(".maxntid")
    if not shape:
        raise SpecError("block", "none", "the kernel declares no .reqntid or .maxntid: give the block size "
                        "(--block X[,Y,Z])", RULE)
    shape = tuple(shape) + (1,) * (3 - len(shape))
    if any(d is None or d < 1 for d in shape) or shape[0] * shape[1] * shape[2] > MAX_WARPS * WARP:
        raise SpecError("block", ",".join(map(str, shape)), f"1 to {MAX_WARPS * WARP} threads in all", RULE)
    return shape


def declared_widths(statements: list) -> dict:
    """register name or parameterized prefix -> width, from every .reg of the (flattened) function."""
    widths = {}
    for s in statements:
        m = REG_DECLARATION.match(s.text) if s.instruction is None and s.label is None else None
        if m and m.group(1) in TYPE_BITS:
            for d in s.declarators:
                widths[d.name] = TYPE_BITS[m.group(1)]
    return widths


def _lane_masks() -> dict:
    """%lanemask_eq/lt/le/gt/ge (PTX ISA 10, special registers): lane i's mask of the lanes j equal to,
    below, ... i; the same in every warp."""
    found = {}
    for lane_mask, test in (("eq", lambda i, j: i == j), ("lt", lambda i, j: j < i), ("le", lambda i, j: j <= i),
                            ("gt", lambda i, j: j > i), ("ge", lambda i, j: j >= i)):
        found[f"%lanemask_{lane_mask}"] = Lanes(tuple(sum(1 << j for j in range(WARP) if test(i, j))
                                                      for i in range(WARP)))
    return found


_LANE_MASKS = _lane_masks()


class Warp:
    """One warp's registers and how operands read from them."""

    def __init__(self, index: int, block: tuple, launch: Launch, symbols: dict, widths: dict):
        self.index, self.block, self.launch, self.symbols, self.widths = index, block, launch, symbols, widths
        self.params = launch.params
        self.env: dict = {}
        self.active = [index * WARP + lane < block[0] * block[1] * block[2] for lane in range(WARP)]
        self.special = self._special_registers()
        # the path for an unguarded instruction on plain ints (_execute), resolved once for the warp's run:
        # spec.fast's registered version (solver.fast.kernel_concrete_semantics.run) while fast paths are on,
        # else the reference semantics.no_integer_path (runs nothing: every instruction goes to its handler)
        self.on_ints = fast.fastest(semantics.no_integer_path)

    def _special_registers(self) -> dict:
        """PTX ISA 10 (special registers) for this warp's lanes."""
        linear = [self.index * WARP + lane for lane in range(WARP)]
        x, y = self.block[0], self.block[1]
        tid = {"x": [t % x for t in linear], "y": [t // x % y for t in linear], "z": [t // (x * y) for t in linear]}
        special = {"%laneid": Lanes(tuple(range(WARP)))}
        for k, d in enumerate(_DIMENSIONS):
            special[f"%tid.{d}"] = uniform(Lanes(tuple(tid[d])))
            special[f"%ntid.{d}"] = self.block[k]
            special[f"%ctaid.{d}"] = self.launch.cta[k]
            grid, cluster = self.launch.grid, self.launch.cluster
            special[f"%nctaid.{d}"] = grid[k] if grid else Unknown(f"%nctaid.{d}: the grid is not given (--grid)")
            special[f"%cluster_nctaid.{d}"] = cluster[k] if cluster else \
                Unknown(f"%cluster_nctaid.{d}: the cluster shape is not given (--cluster)")
            special[f"%cluster_ctaid.{d}"] = self.launch.cta[k] % cluster[k] if cluster else \
                Unknown(f"%cluster_ctaid.{d}: the cluster shape is not given (--cluster)")
            special[f"%clusterid.{d}"] = self.launch.cta[k] // cluster[k] if cluster else \
                Unknown(f"%clusterid.{d}: the cluster shape is not given (--cluster)")
            special[f"%nclusterid.{d}"] = grid[k] // cluster[k] if cluster and grid else \
                Unknown(f"%nclusterid.{d}: the grid and cluster shapes are not both given (--grid, --cluster)")
        if self.launch.cluster:
            cx, cy, cz = self.launch.cluster
            c = [self.launch.cta[k] % self.launch.cluster[k] for k in range(3)]
            special["%cluster_ctarank"] = c[0] + cx * (c[1] + cy * c[2])
            special["%cluster_nctarank"] = cx * cy * cz
        special.update(_LANE_MASKS)
        return special

    def width_of(self, name: str) -> int:
        if name in self.widths:
            return self.widths[name]
        return self.widths.get(name.rstrip("0123456789"), 32)

    def read(self, operand: str, width: int):
        operand = operand.strip()
        negations = len(operand) - len(operand.lstrip("!"))
        if negations:
            value = self.read(operand[negations:], 1)
            if negations % 2 == 0 or isinstance(value, Unknown):
                return value
            return uniform(Lanes(tuple(1 - lane_of(value, i) for i in range(WARP)))) \
                if isinstance(value, Lanes) else 1 - value
        value = self.env.get(operand)
        if value is not None:                 # held at the register's width: cut only to a narrower one
            return value if width >= self.width_of(operand) else _fit(value, width)
        if operand in self.special:
            return _fit(self.special[operand], width)
        if operand.startswith("%") and operand.split(".")[0] in _UNKNOWN_SPECIAL:
            return Unknown(f"{operand}: a special register the executor does not model")
        number = parse_integer(operand)
        if number is not None:
            return number & mask(width)
        m = FLOAT_BITS.match(operand)
        if m:
            return int(m.group(2), 16) & mask(width)
        m = SYMBOL_OFFSET.match(operand)
        if m and m.group(1) in self.symbols:
            offset = parse_integer(m.group(3)) if m.group(3) else 0
            if offset is None:
                return Unknown(f"{operand}: an offset that is no integer")
            return (self.symbols[m.group(1)] + (-offset if m.group(2) == "-" else offset)) & mask(width)
        if operand.startswith("%") or operand in self.widths:
            return Unknown(f"{operand} read before any write")
        return Unknown(f"{operand}: no value the executor knows (a symbol of another state space?)")

    def write(self, name: str, value) -> None:
        self.env[name] = _fit(value, self.width_of(name))

    def leader(self) -> int:
        return next((lane for lane in range(WARP) if self.active[lane]), 0)


_UNKNOWN_SPECIAL = {"%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%clock", "%clock64", "%globaltimer",
                    "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size", "%reserved_smem_offset_begin",
                    "%envreg", "%pm0", "%clusterid", "%nclusterid", "%is_explicit_cluster", "%cluster_ctarank",
                    "%cluster_nctarank"}


def _fit(value, width: int):
    m = mask(width)
    if isinstance(value, int):
        return value & m
    if isinstance(value, Lanes):
        if all(v <= m for v in value.values):
            return value
        return uniform(Lanes(tuple(v & m for v in value.values)))
    return value


class Tracer:
    """What follows an MMA's accumulator through a run (solver/kernel/audit/epilogue.py): the statements
    it watches are run, with every register they read, and shown to it (observe) before they execute;
    every instruction that reads a tags.Tagged value, and every wgmma, is executed by it (execute)."""

    def watches(self, ins) -> bool:
        return False

    def takes(self, ins) -> bool:
        """Whether `execute` may give what this instruction writes (beside any that reads a Tagged value)."""
        return False

    def observe(self, statement: int, ins, guard, warp: "Warp", order: int) -> None:
        """A watched statement, about to run; order: how many visits the run recorded before it."""

    def execute(self, statement: int, ins, guard, warp: "Warp", order: int) -> Optional[dict]:
        """{register: value} the instruction writes, or None: the semantics' own (only for an instruction
        that reads no Tagged value); order: how many visits the run recorded before it executes (its own
        visit, where it has one, included)."""
        return {}

    def restart(self) -> None:
        """Forget what the run showed: it starts again (run's passes, memory.py)."""


def run(function, symbols: dict, launch: Launch, is_site, graph: Optional[cfg.Graph] = None,
        warps: Optional[list] = None, max_steps: int = MAX_STEPS_PER_WARP, is_marker=None,
        tracer: Optional[Tracer] = None, extent=None, shared_loads: str = "when stopped") -> Run:
    """Run every warp of the CTA (or those listed) through the function; is_site(instruction) says which
    statements to record. is_marker(instruction): statements whose visits are recorded too, without
    their operands joining what the run computes (the audit marks the writes to an MMA's accumulator).
    tracer: follows accumulator values (Tracer). extent(instruction, warp): the bytes a TMA load writes
    at its destination, where the caller knows them (memory.py; else to the window's end).

    shared_loads: "when stopped" (a warp that stops makes the run go again with its loads from shared
    memory answered from the writes of the run before, memory.py, until a run's writes are the ones its
    answers came from: at most memory.MAX_PASSES runs; else the first run, with no answers, stands),
    "always" (so, whether a warp stops or not), "never" (every such load Unknown)."""
    if shared_loads not in ("when stopped", "always", "never"):
        raise ValueError(f"shared_loads: 'when stopped', 'always' or 'never', not {shared_loads!r}")
    block = block_shape(function, launch)
    graph = graph or cfg.build(function.statements)
    watched = set() if tracer is None else \
        {i for i, s in enumerate(graph.statements) if s.instruction is not None and tracer.watches(s.instruction)}
    noted = _memory_statements(graph)
    # The first run answers nothing. It follows the barriers and, where it runs a load from shared memory,
    # the bulk copies (TMA: their spans, timeless, may show that no pass can answer a load, memory.py); not
    # the other writes (logging them costs as much again, and only the bytes some load reads need them).
    first = noted["barriers"]
    if noted["bulk"] and noted["loads"] & needed_statements(graph, is_site, watched, _wanted(graph, first)):
        first = first | noted["bulk"]
    plain = _Runner(function, symbols, launch, is_site, graph, warps, max_steps, is_marker, tracer, block,
                    watched, first, extent)
    probe = memory.SharedMemory(None)       # answers nothing: it notes which bytes the loads read
    result = plain.run(probe)
    if shared_loads == "never" or not noted["writes"] or not probe.loaded or \
            (shared_loads == "when stopped" and not any(w.stopped for w in result.warps)):
        return result
    # The passes run without the tracer (it follows accumulators: nothing a branch or an address reads),
    # then one run with it, answered from the last pass's log, must write that log again.
    following = noted["writes"] | noted["barriers"] | noted["loads"]
    explorer = _Runner(function, symbols, launch, is_site, graph, warps, max_steps, is_marker, None, block,
                       set(), following, extent)
    if noted["loads"] & explorer.needed <= plain.needed and probe.unanswerable():
        # The first pass would be this run again step for step (it answers nothing either, and runs the
        # loads this run ran), with these spans and barriers in its log: its log answers none of its
        # loads, so it would stand, as would every pass after it (memory.py). This run is that run.
        return result
    bytes_loaded, previous, cycle = frozenset(probe.loaded), None, []
    for _ in range(memory.MAX_PASSES - 1):
        shared = memory.SharedMemory(previous, bytes_loaded)
        explored = explorer.run(shared)
        if previous is None and tracer is None and shared.answers_none_of_its_loads():
            return explored             # the next pass would be this run again, and would stand (memory.py)
        if previous is not None and shared.log.same(previous) and shared.loaded <= bytes_loaded:
            if tracer is None:          # the confirming run would be this pass again (the same runner, the
                confirm, result = shared, explored      # same answers, nothing watched): it is that run
            else:
                confirm = memory.SharedMemory(previous, bytes_loaded)
                result = _Runner(function, symbols, launch, is_site, graph, warps, max_steps, is_marker, tracer,
                                 block, watched, following, extent).run(confirm)
            if confirm.log.same(previous) and confirm.loaded <= bytes_loaded and confirm.justified():
                return result
            break
        bytes_loaded, previous = bytes_loaded | shared.loaded, shared.log
        # a pass is given the log before it and the bytes watched: where both come back as after an earlier
        # pass, the passes go round that cycle and never stand; the first run stands, as after MAX_PASSES
        if _comes_back(cycle, previous, bytes_loaded):
            break
        cycle.append((previous, bytes_loaded))
    # The first run stands. Its probe answered no load (a load it answers nothing reads Unknown, as with no
    # memory at all) and only logs, so running it again with no memory would give this run step for step.
    return result


def _comes_back(earlier: list, log: memory.Log, watched: frozenset) -> bool:
    """Whether an earlier pass left this log and these watched bytes: the state the next pass starts from."""
    return any(old.same(log) and old_watched == watched for old, old_watched in earlier)


def _memory_statements(graph: cfg.Graph) -> dict:
    """The statements the shared memory (memory.py) follows: barriers, writes, loads from shared memory;
    and among the writes, the bulk copies (a few lanes each, their spans timeless)."""
    found = {"barriers": set(), "writes": set(), "loads": set(), "bulk": set()}
    for i, s in enumerate(graph.statements):
        ins = s.instruction
        if ins is None:
            continue
        if memory.BARRIER.match(ins.opcode):
            found["barriers"].add(i)
        elif ins.base == "ld" and memory.state_space(ins) in ("shared", None):
            found["loads"].add(i)
        elif memory.writes_shared(ins):
            found["writes"].add(i)
            if ins.opcode.startswith(BULK_COPIES):
                found["bulk"].add(i)
    return {k: frozenset(v) for k, v in found.items()}


class _Runner:
    """One run of the CTA's warps, again as often as run's passes need (the tracer restarted each time)."""

    def __init__(self, function, symbols, launch, is_site, graph, warps, max_steps, is_marker, tracer, block,
                 watched, noted: frozenset, extent):
        self.function, self.symbols, self.launch, self.is_site, self.graph = function, symbols, launch, is_site, graph
        self.max_steps, self.tracer, self.block, self.watched, self.noted = max_steps, tracer, block, watched, noted
        self.extent = extent
        self.widths = declared_widths(function.statements)
        count = -(-block[0] * block[1] * block[2] // WARP)
        self.chosen = list(range(count)) if warps is None else [w for w in warps if 0 <= w < count]
        self.needed = needed_statements(graph, is_site, watched, _wanted(graph, noted))
        self.sites = {i for i, s in enumerate(graph.statements) if s.instruction is not None and
                      (is_site(s.instruction) or (is_marker is not None and is_marker(s.instruction)))}
        # (a tracer follows each warp's accumulators: with one, every warp runs every statement itself)
        self.independent = warp_independent(graph) if tracer is None else frozenset()

    def run(self, shared: Optional[memory.SharedMemory]) -> Run:
        if self.tracer is not None:
            self.tracer.restart()
        result = Run(self.function.name, self.block, [], [], self.graph.loops)
        left = MAX_STEPS_PER_RUN
        relevant: dict = {}              # per run: each block's statements that matter (_WarpWalk._relevant)
        before = None                    # the warp before: (its lanes at the start, its trace)
        for index in self.chosen:
            warp = Warp(index, self.block, self.launch, self.symbols, self.widths)
            if left <= 0:
                result.warps.append(WarpRun(index, 0, f"not run: the run's {MAX_STEPS_PER_RUN} statements are spent"))
                if shared is not None:
                    shared.end(index, Unknown("not run"), True, {("*", memory.ARRIVE)})
                continue
            walk = _WarpWalk(self.graph, warp, self.is_site, result.visits, min(self.max_steps, left), self.needed,
                             self.sites, relevant, self.tracer, self.watched)
            walk.memory, walk.noted, walk.extent = shared, self.noted, self.extent
            lanes = tuple(warp.active)
            if self.independent:
                walk.independent, walk.trace = self.independent, []
                if before is not None and before[0] == lanes and before[1]:
                    walk.replay = [before[1], 0]
            result.warps.append(walk.run())
            left -= result.warps[-1].steps
            before = (lanes, walk.trace)
        return result


def _wanted(graph: cfg.Graph, noted: frozenset) -> list:
    """The registers the shared memory's statements read (_address_registers): what a run that follows them
    computes besides what its sites and branches read."""
    return [r for i in noted for r in _address_registers(graph.statements[i].instruction)]


def _address_registers(ins) -> list:
    """The registers a barrier, a load from or a write to shared memory reads: its id and count, its
    address, the values it stores (so that a run with a tracer and one without log the same bytes:
    memory.py), its guard."""
    operands = ins.operands[1:] if ins.base == "ld" else ins.operands     # (a load's destination: not read)
    return [r for operand in operands for r in registers_in(operand)] + ([ins.guard] if ins.guard else [])


MAX_FORKS_PER_WARP = 4096         # branches on Unknown values a warp may follow both ways


@dataclass
class _Path:
    """Where one path of a warp is: its registers, active lanes and loop iterations."""
    env: dict
    active: list
    counters: dict
    previous: Optional[int]


class _WarpWalk:
    """One warp through the graph. A branch on an Unknown value whose two sides meet again (at the
    branch block's immediate post-dominator, inside every loop that holds the branch) is followed both
    ways, and the registers where the paths disagree become Unknown there; any other branch on an Unknown
    value (a loop's exit, a side that never comes back) stops the warp, with the reason."""

    def __init__(self, graph: cfg.Graph, warp: Warp, is_site, visits: list, max_steps: int,
                 needed: Optional[set] = None, sites: Optional[set] = None, shared: Optional[dict] = None,
                 tracer: Optional[Tracer] = None, watched: frozenset = frozenset()):
        self.graph, self.warp, self.is_site, self.visits, self.max_steps = graph, warp, is_site, visits, max_steps
        self.tracer, self.watched = tracer, watched
        self.record = WarpRun(warp.index)
        self.headed: dict = {}
        for k, loop in enumerate(graph.loops):
            self.headed.setdefault(loop.header, []).append(k)
        self.counted = [k for k, loop in enumerate(graph.loops) if not loop.wait]
        self.forks = 0
        self.forking: set = set()           # the blocks of the forks under way (nested sides)
        self.needed = needed if needed is not None else needed_statements(graph, is_site)
        self.sites = sites if sites is not None else \
            {i for i, s in enumerate(graph.statements) if s.instruction is not None and is_site(s.instruction)}
        self.relevant: dict = shared if shared is not None else {}
        self.memory: Optional[memory.SharedMemory] = None    # set by _Runner: what shared memory reads back
        self.noted: frozenset = frozenset()                   # the barriers and writes it follows
        self.extent = None
        self.events = 0                     # this warp's memory events so far (its order, memory.py)
        self.maybe = 0                      # inside a side of a branch on an unknown value
        self.open_end = None                # the clock where lanes were left behind (memory.py)
        # Warps that walk the same blocks (warp_independent): set by _Runner
        self.independent: frozenset = frozenset()   # the statements whose results are every warp's
        self.trace: Optional[list] = None   # each block this warp ran, in order, sides of forks included:
                                            # (block, its active lanes or None: the first ones, what its
                                            # independent statements wrote)
        self.tracing = True                 # (False from a block run statement by statement: the budget)
        self.replay: Optional[list] = None  # [the warp before's trace, how many of its blocks this warp ran
                                            # the same]
        self.lanes: Optional[list] = None   # the warp's active lanes at its start

    def run(self) -> WarpRun:
        if self.graph.blocks:
            self.warp.env[memory.CLOCK] = ()
            path = _Path(self.warp.env, self.warp.active, {}, None)
            self.lanes = path.active
            self._walk(0, None, path)
        clock = self.warp.env.get(memory.CLOCK, ())
        self.record.clock = None if isinstance(clock, Unknown) else clock
        if self.memory is not None:
            opened = self.record.stopped is not None or self.open_end is not None
            self.memory.end(self.warp.index, self.open_end if self.open_end is not None else clock, opened,
                            self.record.barrier_uses)
        return self.record

    def _stop(self, reason: str) -> None:
        if self.record.stopped is None:
            self.record.stopped = reason

    # -- shared memory (memory.py) --
    def _left_behind(self, before: list) -> None:
        """Lanes a branch dropped (_follow_leader) go on unseen: what they write is not known."""
        if self.warp.active != before and self.open_end is None:
            self.open_end = self.warp.env.get(memory.CLOCK, ())

    def _remember(self, ins, guard) -> None:
        """A barrier moves the warp's clock; a write is logged, byte by byte where it is known."""
        warp, shared = self.warp, self.memory
        clock = warp.env.get(memory.CLOCK, ())
        if memory.BARRIER.match(ins.opcode):
            lanes = sum(warp.active) if guard is None else \
                sum(1 for lane in range(WARP) if warp.active[lane] and lane_of(guard, lane))
            warp.env[memory.CLOCK], use = memory.arrive(clock, ins, guard, warp.read, lanes)
            self.record.barrier_uses.add(use)
            return
        if shared is None:
            return
        if ins.base == "ld":
            self.events += 1    # (every load from shared memory, needed or not: the order is the same with a
            return              # tracer or without one)
        lanes = [lane for lane, active in enumerate(warp.active) if active] \
            if guard is None or isinstance(guard, Unknown) else \
            [lane for lane in range(WARP) if warp.active[lane] and lane_of(guard, lane)]
        if not lanes:
            return
        self.events += 1
        step, known = self.events, None if isinstance(clock, Unknown) else clock
        if memory.from_other_ctas(ins):
            shared.span(warp.index, step, known, timeless=True)
            return
        space = memory.state_space(ins)
        addresses = memory.lane_addresses(next((o for o in ins.operands if o.strip().startswith("[")), ""),
                                          warp, lanes, space)
        if any(a is None for a in addresses):
            shared.span(warp.index, step, known, timeless=bool(memory.ASYNC_PROXY.match(ins.opcode)))
            return
        # (a .shared::cluster address the run knows is this CTA's: another CTA's comes through mapa, not known)
        chosen = [(lane, a[1]) for lane, a in zip(lanes, addresses) if a[0] in ("shared", "shared::cluster")]
        if ins.base == "st" and not ins.has("async") and self.maybe == 0 and not isinstance(guard, Unknown):
            size = ins.width // 8 * _vector_length(ins)
            for lane, address in chosen:
                if shared.watches(address, size):
                    for k, byte in enumerate(_stored_bytes(ins, warp, lane)):
                        shared.write(warp.index, lane, step, known, address + k, byte)
            return
        size, timeless = self._bytes_written(ins), bool(memory.ASYNC_PROXY.match(ins.opcode))
        for address in sorted({a for _, a in chosen}):
            shared.span(warp.index, step, known, address, None if size is None else address + size, timeless)
        if timeless and ".mbarrier::" in ins.opcode:    # complete_tx on [mbar], the last address (9.7.9.25)
            brackets = [o for o in ins.operands if o.strip().startswith("[")]
            for found in memory.lane_addresses(brackets[-1], warp, lanes[:1], space):
                low = None if found is None else found[1]
                shared.span(warp.index, step, known, low or 0, None if low is None else low + 8, True)

    def _bytes_written(self, ins) -> Optional[int]:
        """How many bytes a (non-st) write touches at its address, where that is known."""
        for prefix, size in memory.FIXED_BYTES:
            if ins.opcode.startswith(prefix + "."):
                return size
        if ins.base in ("st", "atom", "red"):
            return ins.width // 8 * _vector_length(ins)
        if ins.opcode.startswith(("cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor")):
            return None if self.extent is None else self.extent(ins, self.warp)
        if ins.base == "cp" and len(ins.operands) > 2:
            size = self.warp.read(ins.operands[2], 32)
            return size if isinstance(size, int) else None
        return None

    def _load(self, ins, guard) -> Optional[dict]:
        """A shared load's registers, where every byte is known (memory.py); else None."""
        warp = self.warp
        if not (guard is None or guard == 1) or ins.has("volatile") or len(ins.operands) != 2:
            return None
        lanes = [lane for lane in range(WARP) if warp.active[lane]]
        addresses = set(memory.lane_addresses(ins.operands[1], warp, lanes, memory.state_space(ins)))
        if len(addresses) != 1 or not lanes:
            return None
        found = addresses.pop()
        if found is None or found[0] != "shared":
            return None
        names = registers_in(ins.operands[0]) if ins.operands[0].strip().startswith("{") else [ins.operands[0].strip()]
        size = ins.width // 8
        clock = warp.env.get(memory.CLOCK, ())
        out, values = {}, [self.memory.load(warp.index, self.events, clock, found[1] + k * size, size)
                            for k in range(len(names))]
        if None in values:
            return None
        for name, value in zip(names, values):
            if ins.types() and ins.types()[-1].startswith("s") and value >> (8 * size - 1):
                value -= 1 << (8 * size)        # ld.s8/.s16: sign-extended to the register (9.7.9.8)
            out[name] = value & mask(warp.width_of(name))
        return out

    def _walk(self, current: Optional[int], until: Optional[int], path: _Path) -> Optional[_Path]:
        """Follow the path from block `current` until block `until` (the path there is returned; that
        block is not entered), or the thread's end or a stop (None; record.stopped says which)."""
        while current is not None and current != until and path is not None:
            if self.record.stopped is not None:
                return None
            self.warp.env, self.warp.active = path.env, path.active
            current, path = self._block(current, path)
        return path if current is not None and current == until else None

    def _block(self, current: int, path: _Path) -> tuple:
        """Run one block: (the next block, the path there); (None, None) at the thread's end or a stop."""
        graph, warp = self.graph, self.warp
        for k in self.headed.get(current, ()):
            loop = graph.loops[k]
            path.counters[k] = path.counters.get(k, -1) + 1 if path.previous in loop.blocks else 0
        block = graph.blocks[current]
        following = block.successors[-1] if block.successors else None
        count, relevant, every = self._relevant(block)
        if self.record.steps + count <= self.max_steps:
            self.record.steps += count      # (the statements skipped count as run: the budget is the same)
            statements = relevant
        else:                               # the budget runs out in this block: statement by statement
            statements = every
        recorded = recording = None
        if self.trace is not None:
            whole = statements is relevant
            if self.replay is not None:
                trace, at = self.replay
                if whole and at < len(trace) and trace[at][0] == current and self._lanes_are(trace[at][1], path):
                    recorded = trace[at][2]
                    self.replay[1] = at + 1
                else:
                    self.replay = None
            if self.tracing and whole:
                recording = [] if recorded is None else None
                self.trace.append((current, None if path.active is self.lanes else tuple(path.active),
                                   recorded if recorded is not None else recording))
            self.tracing = self.tracing and whole
        if recorded is not None:
            recorded = iter(recorded)
        on_ints, env = warp.on_ints, warp.env
        for i, ins, control, watched, noted, site, needed, kept in statements:
            if statements is every:
                self.record.steps += 1
                if self.record.steps > self.max_steps:
                    self._stop(f"the step budget ({self.max_steps} statements) is spent at line {ins.line}")
                    return None, None
                if not (needed or site or watched or noted or control):
                    continue                # writes nothing a site, a branch or a guard reads (needed_statements)
            if kept is not None:
                if recorded is not None:    # what the warp before wrote here, walking the same blocks
                    for name in kept:
                        value = next(recorded)
                        if value is not _ABSENT:
                            env[name] = value
                    continue
                if not (ins.guard is None and on_ints(ins, env, warp.width_of)):
                    _execute(ins, _guard(ins, warp), warp, i, self.tracer, len(self.visits), None)
                if recording is not None:
                    recording.extend([env.get(name, _ABSENT) for name in kept])
                continue
            if ins.guard is None:
                if needed and not (control or watched or noted or site) and on_ints(ins, env, warp.width_of):
                    continue                # (the common case, as _execute starts: ints only, the same results)
                guard = None
            else:
                guard = _guard(ins, warp)
            if control:
                if ins.base in ("bra", "brx"):
                    before = warp.active
                    following = _branch(ins, block, guard, warp, self.record)
                    self._left_behind(before)
                    path.active = warp.active
                    if following == "stop":
                        return None, None
                    if following == "fork":
                        return self._fork(current, block, ins, guard, path)
                    if following == "split":
                        return self._split(current, block, ins, guard, path)
                    break
                if guard is None or guard == 1:
                    return None, None       # ret, exit, trap (cfg.ENDS_THREAD)
                if isinstance(guard, Unknown):
                    self._stop(f"line {ins.line}: {ins.base} under an unknown predicate ({guard.reason})")
                    return None, None
                if isinstance(guard, Lanes):
                    warp.active = path.active = [a and not guard.values[lane] for lane, a in enumerate(warp.active)]
                    self.record.notes.append(f"line {ins.line}: some lanes leave ({ins.base})")
                continue
            if watched:
                self.tracer.observe(i, ins, guard, warp, len(self.visits))
            if noted:
                self._remember(ins, guard)
            if site and len(self.visits) < MAX_VISITS and not (guard is not None and guard == 0):
                holding = [k for k in self.counted if current in graph.loops[k].blocks]
                clock = env.get(memory.CLOCK, ())
                self.visits.append(Visit(i, ins.line, warp.index, tuple(path.counters.get(k, 0) for k in holding),
                                         _operand_values(ins, warp), _executing_lanes(guard, warp.active),
                                         None if isinstance(clock, Unknown) else clock,
                                         self.maybe > 0 or isinstance(guard, Unknown)))
            if needed:
                loader = self._load if self.memory is not None and ins.base == "ld" else None
                _execute(ins, guard, warp, i, self.tracer, len(self.visits), loader)
        path.previous = current
        return following, path

    def _lanes_are(self, recorded: Optional[tuple], path: _Path) -> bool:
        """Whether the path's active lanes are those of the trace's block (None there: the warp's first)."""
        if recorded is None:
            return path.active is self.lanes or path.active == self.lanes
        return tuple(path.active) == recorded

    def _relevant(self, block) -> tuple:
        """(how many instruction statements the block has, those a site, a branch or a guard depends on:
        needed, sites and control, every one of them), kept per block: the others write nothing observed
        (needed_statements). Each is (index, instruction, control, watched, noted, site, needed, kept):
        kept, a needed statement of warp_independent that is no site, branch, watched or noted one: its
        destinations (what a warp walking the same blocks as the warp before takes from it)."""
        found = self.relevant.get(block.index)
        if found is None:
            instructions = ((i, self.graph.statements[i].instruction) for i in range(block.first, block.last + 1))
            every = [(i, ins, ins.base in _CONTROL, i in self.watched, i in self.noted, i in self.sites,
                      i in self.needed) for i, ins in instructions if ins is not None]
            every = [item + ((tuple(destinations(item[1])) if item[0] in self.independent and item[6] and
                              not any(item[2:6]) else None),) for item in every]
            found = self.relevant[block.index] = (len(every), [item for item in every if any(item[2:7])], every)
        return found

    def _split(self, current: int, block, ins, guard: Lanes, path: _Path) -> tuple:
        """A branch that splits the active lanes: each group runs its side to where the sides meet, and the
        warp goes on there with every lane's own values (select lane by lane); where they do not meet
        inside the loops holding the branch, the lowest active lane's side is followed (_follow_leader)."""
        meet = self.graph.post_dominator(current)
        holding = [loop for loop in self.graph.loops if current in loop.blocks]
        if meet is None or any(meet not in loop.blocks for loop in holding) or current in self.forking \
                or self.forks >= MAX_FORKS_PER_WARP:
            before = self.warp.active
            following = _follow_leader(ins, block, guard, self.warp, self.record)
            self._left_behind(before)
            path.active, path.previous = self.warp.active, current
            return following, path
        self.forks += 1
        taken = [a and bool(guard.values[lane]) for lane, a in enumerate(path.active)]
        falls = [a and not guard.values[lane] for lane, a in enumerate(path.active)]
        arrived = self._sides(current, meet, path, zip(block.successors, (taken, falls)))
        if not arrived:
            return None, None               # a stop, or every lane ended the thread
        return meet, _merge_lanes(arrived)

    def _sides(self, current: int, meet: int, path: _Path, sides) -> list:
        """Each (successor, active lanes) walked from a copy of the path to `meet`: the paths that arrive
        there; [] when the warp stops on one of them."""
        arrived = []
        self.forking.add(current)
        for side, active in sides:
            reached = self._walk(side, meet, _Path(dict(path.env), list(active), dict(path.counters), current))
            if self.record.stopped is not None:
                break
            if reached is not None:
                arrived.append(reached)
        self.forking.discard(current)
        return [] if self.record.stopped is not None else arrived

    def _fork(self, current: int, block, ins, guard: Unknown, path: _Path) -> tuple:
        """(the block where the sides meet, the path there), or (None, None) when the warp stops or every
        side ends the thread."""
        meet = self.graph.post_dominator(current)
        holding = [loop for loop in self.graph.loops if current in loop.blocks]
        if meet is None or any(meet not in loop.blocks for loop in holding):
            self._stop(f"line {ins.line}: a branch on an unknown value ({guard.reason}) that leaves its loop or "
                       f"never meets its other side")
            return None, None
        if current in self.forking:
            self._stop(f"line {ins.line}: a branch on an unknown value ({guard.reason}) that one of its own sides "
                       f"comes back to before the sides meet (a loop whose trip count is unknown)")
            return None, None
        self.forks += 1
        if self.forks > MAX_FORKS_PER_WARP:
            self._stop(f"line {ins.line}: more than {MAX_FORKS_PER_WARP} branches on unknown values followed")
            return None, None
        self.maybe += 1                     # (a write on either side may not happen: memory.py)
        arrived = self._sides(current, meet, path, ((side, path.active) for side in block.successors))
        self.maybe -= 1
        if not arrived:
            return None, None               # a stop, or every side ended the thread
        if len(arrived) < len(block.successors) and holding:
            self._stop(f"line {ins.line}: whether the warp ends or goes on round its loop depends on an unknown "
                       f"value ({guard.reason})")
            return None, None
        return meet, _merge(arrived, ins.line)


_CONTROL = ("bra", "brx") + cfg.ENDS_THREAD
BULK_COPIES = ("cp.async.bulk", "cp.reduce.async.bulk")   # PTX ISA 9.0 9.7.9.25: of the async proxy (memory.py)


def needed_statements(graph: cfg.Graph, is_site, watched: frozenset = frozenset(), wanted: tuple = ()) -> set:
    """The statements whose results can reach what the run observes: a site's register operands, a
    branch's operands, the guard of a branch, of a ret / exit or of a site, every register a watched
    statement (a Tracer's) reads. The others write registers
    nothing observed reads, however the run goes (a backward slice over register names, whatever the
    order), so skipping them changes no recorded value: they are most of a kernel (its data: loads,
    float math, accumulators). wanted: registers wanted besides (shared memory's addresses, memory.py)."""
    wanted = list(wanted)
    for i, s in enumerate(graph.statements):
        ins = s.instruction
        if ins is None:
            continue
        if i in watched:
            wanted.extend(r for operand in ins.operands for r in registers_in(operand))
            wanted.extend([ins.guard] if ins.guard else [])
        if ins.base in _CONTROL:
            wanted.extend(reads(ins))
        elif is_site(ins):
            wanted.extend(site_operand_registers(ins))
            wanted.extend([ins.guard] if ins.guard else [])
    return slice_of(graph, wanted)[1]


def site_operand_registers(ins) -> list:
    """The registers a site's operands name (an MMA's vectors left out: its data, not addresses)."""
    mma = ins.opcode.startswith(("wgmma", "tcgen05.mma"))
    return [r for operand in ins.operands[(1 if destinations(ins) else 0):]
            if not (mma and operand.startswith("{")) for r in registers_in(operand)]


def reads(ins) -> list:
    """The registers an instruction reads: its operands past what it writes, and its guard. (Kept on the
    instruction once computed, as destinations: callers read the list, never change it.)"""
    found = ins.__dict__.get("_reads")
    if found is None:
        written = destinations(ins)
        found = ins.__dict__["_reads"] = \
            [r for k, operand in enumerate(ins.operands) if k > 0 or not written for r in registers_in(operand)] \
            + ([ins.guard] if ins.guard else [])
    return found


def slice_of(graph: cfg.Graph, wanted: list) -> tuple:
    """(the registers `wanted` are computed from through any chain of instructions, them included; the
    statements that write those registers): a backward slice over register names, whatever the order."""
    writers = _writers(graph)
    registers, statements = set(), set()
    wanted = list(wanted)
    while wanted:
        name = wanted.pop()
        if name in registers:
            continue
        registers.add(name)
        for i in writers.get(name, ()):
            if i not in statements:
                statements.add(i)
                wanted.extend(reads(graph.statements[i].instruction))
    return registers, statements


_ABSENT = object()          # in a trace: the register holds nothing


def warp_independent(graph: cfg.Graph) -> frozenset:
    """The statements whose results are the same in every warp of the CTA that ran the same blocks in the same
    order (the sides of its forks and splits included), each with the same lanes active: those that read no
    register a warp's own values reach. A warp's own values come from %tid (its threads' indexes, PTX ISA 9.0
    10.2) and from loads (shared memory answers each warp apart, memory.py); they reach every register a
    statement that reads one of them writes. A guarded statement that writes such a register is not one of these
    either (where its guard fails, the register keeps the warp's own value). Every other input of an instruction
    is the launch's (parameters, the CTA, the block) or the warp's lanes and path, the same for such warps. The
    executor runs a warp's other statements itself, and takes these from the warp before it while the two walk
    the same blocks (_Runner.run): the same results in fewer steps. Kept on the graph."""
    found = graph.__dict__.get("_warp_independent")
    if found is not None:
        return found
    instructions = [(i, s.instruction) for i, s in enumerate(graph.statements) if s.instruction is not None]
    readers: dict = {}                      # register -> the instructions that read it
    for _, ins in instructions:
        for name in reads(ins):
            readers.setdefault(name, []).append(ins)
    own: set = set()                        # the registers a warp's own values reach
    work = [ins for _, ins in instructions if _loads_own(ins) or any(r.startswith("%tid") for r in reads(ins))]
    while work:
        for name in destinations(work.pop()):
            if name not in own:
                own.add(name)
                work.extend(readers.get(name, ()))
    found = graph.__dict__["_warp_independent"] = frozenset(
        i for i, ins in instructions
        if not (_loads_own(ins) or any(r.startswith("%tid") or r in own for r in reads(ins)) or
                (ins.guard is not None and any(name in own for name in destinations(ins)))))
    return found


def _loads_own(ins) -> bool:
    """A load whose value may be the warp's own: from shared memory (memory.py answers each warp apart),
    from a generic address (it may be shared), or from a thread's local memory; not a kernel parameter
    (the launch's), nor global or constant memory (Unknown, with the same reason, in every warp)."""
    return ins.base == "ld" and memory.state_space(ins) not in ("param", "global", "const")


def _writers(graph: cfg.Graph) -> dict:
    """register -> the statements that write it, in order (kept on the graph: its statements never change)."""
    found = graph.__dict__.get("_writers")
    if found is None:
        found = graph.__dict__["_writers"] = {}
        for i, s in enumerate(graph.statements):
            if s.instruction is not None:
                for name in destinations(s.instruction):
                    found.setdefault(name, []).append(i)
    return found


def _merge(paths: list, line: int) -> _Path:
    """Where the sides of a branch meet: a register keeps its value where every side agrees."""
    first = paths[0]
    env = {}
    for name, value in first.env.items():
        if all(p.env.get(name) == value for p in paths[1:]):
            env[name] = value
        else:
            env[name] = Unknown(f"{name} depends on the branch on an unknown value at line {line}")
    active = [all(p.active[lane] for p in paths) for lane in range(WARP)]
    counters = {k: v for k, v in first.counters.items() if all(p.counters.get(k) == v for p in paths[1:])}
    return _Path(env, active, counters, first.previous)


def _merge_lanes(paths: list) -> _Path:
    """Where the lane groups of a split meet: each lane takes its own group's values (the groups are
    disjoint; a lane that left the thread keeps none)."""
    first = paths[0]
    env = dict(first.env)
    for other in paths[1:]:
        lanes = Lanes(tuple(int(a) for a in other.active))
        for name in set(env) | set(other.env):
            mine, theirs = env.get(name), other.env.get(name)
            if theirs is None or mine == theirs:
                continue
            if mine is None:
                mine = Unknown(f"{name} written by some lanes only, before the branch that split them")
            if name == memory.CLOCK:        # lanes that passed different barriers: the warp's count is lost
                env[name] = Unknown("lanes of the warp arrived at different barriers") if any(other.active) else mine
                continue
            env[name] = uniform(select(lanes, theirs, mine)) if any(other.active) else mine
    active = [any(p.active[lane] for p in paths) for lane in range(WARP)]
    counters = {k: v for k, v in first.counters.items() if all(p.counters.get(k) == v for p in paths[1:])}
    return _Path(env, active, counters, first.previous)


def _guard(ins, warp: Warp):
    """None (no guard), or the guard's value: 1/0, Lanes, Unknown."""
    if ins.guard is None:
        return None
    value = warp.read(("!" if ins.guard_negated else "") + ins.guard, 1)
    return value


def _branch(ins, block, guard, warp: Warp, record: WarpRun):
    taken, falls = (block.successors[0] if block.successors else None), \
        (block.successors[1] if len(block.successors) > 1 else None)
    if ins.base == "brx":
        return _indirect(ins, block, guard, warp, record)
    if guard is None:
        return taken
    if isinstance(guard, Unknown):
        return "fork" if len(block.successors) == 2 else "stop"
    if isinstance(guard, Lanes):
        values = {bool(guard.values[lane]) for lane, a in enumerate(warp.active) if a}
        if len(values) > 1 and len(block.successors) == 2:
            return "split"                  # (_WarpWalk._split: each group of lanes its side)
        return _follow_leader(ins, block, guard, warp, record)
    return taken if guard else falls


def _indirect(ins, block, guard, warp: Warp, record: WarpRun):
    """brx.idx index, tlist: to the index-th label of the .branchtargets list (PTX ISA 9.0 9.7.12.3;
    an index past the list's end is undefined behaviour: the warp stops)."""
    index = warp.read(ins.operands[0], 32) if ins.operands else Unknown("brx.idx with no index")
    if isinstance(index, Lanes):
        live = {index.values[lane] for lane, a in enumerate(warp.active) if a}
        index = live.pop() if len(live) == 1 else Unknown("an index the lanes do not agree on")
    if guard is not None and guard != 1 or block.targets is None or not isinstance(index, int) \
            or index >= len(block.targets):
        why = index.reason if isinstance(index, Unknown) else \
            "its list of targets is not known" if block.targets is None else \
            f"index {index} past its {len(block.targets)} targets" if isinstance(index, int) and \
            (guard is None or guard == 1) else "under a predicate"
        record.stopped = f"line {ins.line}: an indirect branch (brx.idx), not followed: {why}"
        return "stop"
    return block.targets[index]


def _follow_leader(ins, block, guard: Lanes, warp: Warp, record: WarpRun):
    """The side the lowest active lane takes, with the lanes that agree with it (the others dropped)."""
    taken, falls = (block.successors[0] if block.successors else None), \
        (block.successors[1] if len(block.successors) > 1 else None)
    leader = warp.leader()
    choice = guard.values[leader]
    kept = [a and guard.values[lane] == choice for lane, a in enumerate(warp.active)]
    if kept != warp.active:
        record.notes.append(f"line {ins.line}: the warp splits; lanes {_lanes(kept)} followed")
        record.dropped_lanes = True
        warp.active = kept
    return taken if choice else falls


def _lanes(active: list) -> str:
    lanes = [i for i, a in enumerate(active) if a]
    return f"{lanes[0]}..{lanes[-1]}" if lanes == list(range(lanes[0], lanes[-1] + 1)) else ",".join(map(str, lanes))


def _execute(ins, guard, warp: Warp, statement: int = -1, tracer: Optional[Tracer] = None, order: int = 0,
             loader=None) -> None:
    if guard is None and warp.on_ints(ins, warp.env, warp.width_of):
        return                          # the optimised path (Warp.on_ints): ints only, the same results
    if tracer is not None and (tracer.takes(ins) or tags.reads_tagged(ins, warp.env)):
        written = tracer.execute(statement, ins, guard, warp, order)
        if written is not None or tags.reads_tagged(ins, warp.env):
            for name, value in (written or {}).items():
                warp.write(name, value)     # (an accumulator's values: never the integer semantics')
            return
    loaded = loader(ins, guard) if loader is not None else None
    if loaded:
        for name, value in loaded.items():  # (bytes another warp stored: memory.py)
            warp.write(name, value)
        return
    handler = semantics.handler_of(ins)
    written = destinations(ins)
    if handler is None and (guard is None or guard == 1):
        unmodelled = _unmodelled(ins)   # (an MMA's 64 accumulators: one Unknown each, kept as it is by write)
        for name in written:
            warp.env[name] = unmodelled
        return
    result = None
    if handler is not None:
        try:
            result = handler(ins, warp.read, warp.width_of, warp)
        except (IndexError, ValueError):
            result = None
    if guard is not None and guard == 0:
        return
    for name in written:
        value = (result or {}).get(name)
        if value is None:
            value = _unmodelled(ins)
        if guard is None or guard == 1:
            warp.write(name, value)
        elif isinstance(guard, Unknown):
            warp.write(name, Unknown(f"written at line {ins.line} under an unknown predicate ({guard.reason})"))
        else:
            old = warp.env.get(name, Unknown(f"{name} not written in every lane (line {ins.line})"))
            warp.write(name, select(guard, value, old))


def _unmodelled(ins) -> Unknown:
    """What an instruction the executor does not model writes (kept on the instruction once made)."""
    found = ins.__dict__.get("_unmodelled")
    if found is None:
        found = ins.__dict__["_unmodelled"] = \
            Unknown(f"written by {ins.opcode} at line {ins.line}, which the executor does not model")
    return found


def _stored_bytes(ins, warp: Warp, lane: int) -> list:
    """st's bytes in one lane, little-endian (PTX ISA 9.0 9.7.9.9: .v2/.v4 store consecutive elements);
    None for a byte that is not known."""
    width = ins.width
    operand = ins.operands[1].strip() if len(ins.operands) > 1 else ""
    elements = [e.strip() for e in operand.strip("{}").split(",")] if operand.startswith("{") else [operand]
    out = []
    for element in elements:
        value = lane_of(warp.read(element, width), lane)
        known = isinstance(value, int) and type(value) is int
        out.extend((value >> (8 * k)) & 0xFF if known else None for k in range(width // 8))
    return out


def _vector_length(ins) -> int:
    return next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), 1)


def _executing_lanes(guard, active: list) -> Optional[int]:
    """How many lanes execute a statement under this guard (an arrive counts once per lane, PTX ISA
    9.7.13.15.13); None when the guard is unknown."""
    if guard is None or guard == 1:
        return sum(active)
    if isinstance(guard, Lanes):
        return sum(1 for lane, a in enumerate(active) if a and guard.values[lane])
    return None if isinstance(guard, Unknown) else 0


def _operand_values(ins, warp: Warp) -> dict:
    """The value of each register its operands name (a TMA's coordinates and barrier included), as the
    lowest active lane holds it; "varying" where the active lanes differ. An MMA's vectors are its
    accumulators and fragments: data, not addresses, and not recorded."""
    out = {}
    mma = ins.opcode.startswith(("wgmma", "tcgen05.mma"))
    for operand in ins.operands:
        if mma and operand.startswith("{"):
            continue
        for name in registers_in(operand):
            value = warp.env.get(name)
            if value is None:
                continue
            if isinstance(value, Lanes):
                live = {v for v, a in zip(value.values, warp.active) if a}
                value = next(iter(live)) if len(live) == 1 else "varying"
            out[name] = value
    return out
