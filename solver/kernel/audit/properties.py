"""The audit's properties: each with its id, statement and source, and the decider that checks it on one
kernel's run (docs/CLI.md `audit`). A property is proved only when every instance the run shows was
checked and none of the preconditions of its check failed; a failed precondition makes it unknown, with
the reason; a broken instance refutes it, with a witness the run shows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError
from spec.tma import tensormap

from solver.model.vocab import TMA_MODE
from solver.kernel.audit import accumulate, commits, compose, epilogue, operations, pairs, scales, tmem, tmem_operand
from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import Definition, Tally, first_time

MAX_MMA_CHECKS = 20_000        # distinct MMA visits traced per kernel (then: unknown)
MAX_LEGALITY_CHECKS = 2_000    # distinct (map, destination, coordinates) checked by tma rules (then: unknown)


MAPS = Definition(
    "audit.tma.maps", "Every cp.async.bulk.tensor is read, and the tensor map it names is traced to a kernel "
    "parameter whose map is given (--tensormap).",
    "PTX ISA 9.0 9.7.9.25.5 (cp.async.bulk.tensor: [tensorMap, tensorCoords]); CUDA Driver API "
    "cuTensorMapEncodeTiled (a __grid_constant__ CUtensorMap parameter)")
LEGAL = Definition(
    "audit.tma.legal", "Each given tensor map, with the destination and coordinates of each load the run "
    "issues, breaks no rule `tma check` applies.",
    "the rules of spec/tma/tensormap.py (layoutproof rules --subject tensormap), each with its own source")
BYTES = Definition(
    "audit.bytes.expect_tx", "In every completed phase of a barrier that TMA loads signal, the bytes "
    "expect_tx announces equal the bytes the phase's boxes deliver.",
    "PTX ISA 9.0 9.7.13.15.1 (phase completion: pending arrivals and transaction count both zero), "
    "9.7.9.25.5.1 (.mbarrier::complete_tx::bytes)")
WRITTEN = Definition(
    "audit.reads.written", "Every shared-memory element an MMA reads was written by a TMA load of the phase "
    "its warp last waited for on that load's barrier.",
    "PTX ISA 9.0 9.7.13.15.16 (mbarrier.try_wait: the phase's writes are visible after the wait), "
    "9.7.15.5.1 (wgmma operands in shared memory), 9.7.16.10.9 (tcgen05.mma)")
SWIZZLE = Definition(
    "audit.swizzle.agrees", "For every box an MMA reads, the descriptor's swizzle mode is the tensor map's.",
    "PTX ISA 9.0 5.5.7 (TMA swizzling modes), 9.7.15.5.1.2.2 and 9.7.16.4.1 (the descriptor's swizzle)")
SAME_TILE = Definition(
    "audit.gemm.same_tile", "Every MMA that adds to an accumulator reads the same global rows of A (m) and "
    "of B (n) as the MMA before it into that accumulator: one output tile per accumulation.",
    "PTX ISA 9.0 9.7.15.5.2 (wgmma scale-d: D = A x B + D), 9.7.16.10.9 (tcgen05.mma enable-input-d)")
K_ONCE = Definition(
    "audit.gemm.k_once", "Every accumulation that starts from an overwritten, zeroed or constant (a mask) "
    "accumulator reads each "
    "global k below K exactly once (K: the extent of A's map along its K dimension; k at or past K reads the "
    "map's zero fill).", "PTX ISA 9.0 9.7.15.5.2, 9.7.16.10.9 (D = A x B + D, summed over K); 5.5.3 (out of "
    "bounds: zero fill)")
SAME_K = Definition(
    "audit.gemm.same_k", "For every MMA reading A and B from shared memory: A's element (m, k) and B's "
    "(n, k) come from the same global k, and each row m of A (n of B) stays on one global row along k; "
    "with A in registers or tensor memory, B's elements are rows of its tensor, each k a different global k.",
    "PTX ISA 9.0 9.7.15.5 / 9.7.16.10.9 (D = A x B + D, summed over K)")

CATALOGUE = (MAPS, LEGAL, BYTES, WRITTEN, SWIZZLE, SAME_K, SAME_TILE, K_ONCE, *epilogue.DEFINITIONS, pairs.PAIRS,
             *tmem.DEFINITIONS, scales.PATH)

# descriptor swizzle (spec.mma.readmap) -> the TMA swizzle that writes what it reads (solver.model.vocab)
_SWIZZLE_NAMES = TMA_MODE


@dataclass
class Kernel:
    """What the deciders read: one function's statements, run, timeline, sites and the maps given."""
    name: str
    arch: str                          # sm90 | sm100 | sm103 (the tma rules' arch)
    statements: list
    params: list
    run: object                        # executor.Run
    timeline: object                   # phases.Timeline
    sites: dict                        # statement line -> mma.Site
    maps: dict                         # operations.ParamSource -> TensorMapParams
    unread: list                       # the site statements the reader did not read ({line, text, reason})
    markers: set                       # statement indexes of other writes to a wgmma accumulator
    trace: Optional[object] = None     # trace.Trace: the accumulators followed to global memory
    targets: tuple = ()                # the module's .target names (tcgen05's rules take them)

def decide(kernel: Kernel) -> list:
    rows: dict = {}
    scaled: dict = {}
    reads = decide_reads(kernel, rows, scaled)
    in_tmem = tmem_operand.follow(kernel.trace, rows, kernel.run, kernel.sites,
                                  epilogue.Sources(kernel.trace, rows, kernel.run, kernel.sites)) \
        if kernel.trace is not None else []
    return [decide_maps(kernel), decide_legal(kernel), decide_bytes(kernel), *reads,
            *epilogue.decide(kernel.trace, kernel.run, kernel.statements, kernel.params, kernel.maps, rows,
                             kernel.sites),
            pairs.decide_pairs(kernel.trace, rows, kernel.run, kernel.statements, in_tmem),
            *tmem.decide(kernel.statements, kernel.run, list(kernel.targets)),
            scales.decide(kernel.trace, scaled, kernel.maps)]


def source_text(source: operations.ParamSource) -> str:
    return source.param + (f"+{source.offset}" if source.offset else "")


def decide_maps(kernel: Kernel) -> Property:
    tally = Tally(MAPS)
    for u in kernel.unread:
        tally.unknown(f"line {u['line']}: not read ({u['reason']})")
    for s in kernel.statements:
        ins = s.instruction
        if ins is None or not operations.TMA_OPCODE.match(ins.opcode):
            continue
        try:
            form = operations.tma_form(ins)
        except operations.FormError as error:
            tally.unknown(str(error))
            continue
        source, why = operations.tensormap_source(kernel.statements, kernel.params, form.tensormap)
        if source is None:
            tally.unknown(f"line {s.line}: {why}")
        elif source not in kernel.maps:
            tally.unknown(f"line {s.line}: no tensor map given for parameter {source_text(source)} "
                          f"(--tensormap {source_text(source)}=DOC)")
        else:
            tally.proved()
    return tally.result("the kernel issues no cp.async.bulk.tensor")


def decide_legal(kernel: Kernel) -> Property:
    tally = Tally(LEGAL)
    checked: set = set()
    for source, params in kernel.maps.items():
        for v in _broken(params, kernel.arch):
            tally.refuted({"what": f"the map of {source_text(source)} breaks {v['rule']}", "map": source_text(source),
                           "rule": v["rule"], "message": v["message"]})
    for load in kernel.timeline.loads:
        params = kernel.maps.get(load.source)
        if params is None:
            continue                                   # (audit.tma.maps names it)
        if not isinstance(load.smem, int) or any(not isinstance(c, int) for c in load.coordinates):
            tally.unknown(f"line {load.line}: the load's destination or coordinates are unknown")
            continue
        new = first_time(checked, (id(params), load.smem, load.coordinates), MAX_LEGALITY_CHECKS, tally, "loads")
        if new is None:
            break
        if not new:
            continue
        placed = dataclasses.replace(params, smem_address=load.smem, coordinates=_signed(load.coordinates))
        broken = _broken(placed, kernel.arch)
        if broken:
            v = broken[0]
            tally.refuted({"what": f"line {load.line}'s load breaks {v['rule']}", "line": load.line, "warp": load.warp,
                           "iteration": list(load.iteration), "map": source_text(load.source),
                           "smem": hex(load.smem), "coordinates": list(_signed(load.coordinates)),
                           "rule": v["rule"], "message": v["message"]})
        else:
            tally.proved()
    if kernel.timeline.stopped:         # loads the run never issued are not checked: no proof
        tally.unknown(kernel.timeline.stopped[0] + " (what it did after that was not checked)")
    return tally.result("no load with a given map was issued in the run")


def _signed(coordinates: tuple) -> tuple:
    """The coordinates as the instruction reads them: signed 32-bit (PTX ISA 9.7.9.25.5.1: .s32)."""
    return tuple(c - (1 << 32) if c >= 1 << 31 else c for c in coordinates)


def _broken(params, arch: str) -> list:
    try:
        report = tensormap.check(params, arch)
    except SpecError as error:
        return [{"rule": error.rule_id, "message": str(error)}]
    return report["violations"] + report["warnings"]


def box_bytes(params) -> Optional[int]:
    if params.encode != "tiled" or params.dtype.bits % 8:
        return None
    count = params.box_dim[0]
    for d, s in zip(params.box_dim[1:], params.element_strides[1:]):
        count *= -(-d // s)
    return count * params.dtype.bits // 8


def decide_bytes(kernel: Kernel) -> Property:
    tally = Tally(BYTES)
    timeline = kernel.timeline
    if timeline.unknown:                # a load or an arrive the phases may miss: no verdict either way
        line, why = timeline.unknown[0]
        tally.unknown(f"line {line}: {why}")
        return tally.result("")
    for address, barrier in timeline.barriers.items():
        if barrier.unpaired is not None:
            tally.unknown(f"barrier {address:#x}: {barrier.unpaired}")
            continue
        for phase in barrier.phases:
            if phase.arrivals != barrier.count:
                if phase.loads:
                    tally.unknown(f"barrier {address:#x} phase {phase.index}: {phase.arrivals} of {barrier.count} "
                                  "arrivals in the run (the phase never completes)")
                continue
            delivered, missing = 0, None
            for load in phase.loads:
                params = kernel.maps.get(load.source)
                size = box_bytes(params) if params is not None else None
                if load.form.multicast or load.form.cta_group != 1:
                    missing = f"line {load.line}: a multicast or cta_group::2 load (other CTAs' bytes: not modelled)"
                elif size is None:
                    missing = f"line {load.line}: no tiled map given for its parameter"
                if missing:
                    break
                delivered += size
            if missing:
                tally.unknown(missing)
            elif delivered == phase.expected_bytes:
                tally.proved()
            else:
                tally.refuted({"what": f"expect_tx announces {phase.expected_bytes} bytes, the boxes deliver "
                                       f"{delivered}", "barrier": hex(address), "phase": phase.index,
                               "warp": phase.warp, "expect_tx_lines": phase.lines,
                               "load_lines": [load.line for load in phase.loads]})
    if timeline.stopped:                # phases the run never reached are not checked: no proof
        tally.unknown(timeline.stopped[0] + " (what it did after that was not checked)")
    return tally.result("no barrier completed by TMA loads in the run")


def decide_reads(kernel: Kernel, rows: Optional[dict] = None, scaled: Optional[dict] = None) -> list:
    """audit.reads.written, audit.swizzle.agrees, audit.gemm.same_k, audit.gemm.same_tile and
    audit.gemm.k_once, over every MMA visit (one check per distinct visit: the same descriptors, values and
    awaited phases read the same; the accumulations see every visit). rows: filled with (warp, MMA
    statement) -> [(visit index, {role: the global rows its operand reads, where traced})], for the
    epilogue. scaled: filled with visit index -> (site, traced operands, visible loads) of each block-scaled
    MMA visit whose reads were traced, for the scale path (audit/scales.py)."""
    rows = {} if rows is None else rows
    scaled = {} if scaled is None else scaled
    written, swizzle, same_k = Tally(WRITTEN), Tally(SWIZZLE), Tally(SAME_K)
    same_tile, k_once = Tally(SAME_TILE), Tally(K_ONCE)
    accumulations = accumulate.Accumulations(same_tile, k_once, StoresWithin(kernel.trace, kernel.run)
                                             if kernel.trace is not None and kernel.trace.tmem_stores else None)
    timeline = kernel.timeline
    if timeline.unknown:                # a load the phases may miss: a read could be refuted wrongly
        line, why = timeline.unknown[0]
        for tally in (written, swizzle, same_k, same_tile, k_once):
            tally.unknown(f"line {line}: {why}")
        return [tally.result("") for tally in (written, swizzle, same_k, same_tile, k_once)]
    placements = compose.Placements()
    done: dict = {}                    # visit key -> (site, traced operands, visible loads) once checked
    merged_by_slots: dict = {}
    outcomes: dict = {}
    every_load: Optional[dict] = None
    for index, visit in enumerate(kernel.run.visits):
        if visit.statement in kernel.markers:     # another write to an accumulator register
            accumulations.marker(visit.warp, kernel.statements[visit.statement].instruction)
            continue
        site = kernel.sites.get(visit.line)
        if site is None:
            continue
        traced_rows: dict = {}                    # (filled below when the visit's operands are traced)
        rows.setdefault((visit.warp, visit.statement), []).append((index, traced_rows))
        waited = timeline.waited.get(id(visit), {})
        key = (visit.line, tuple(sorted((k, v) for k, v in visit.values.items() if isinstance(v, int))),
               tuple(sorted(waited.items())))
        where = {"mma_line": visit.line, "warp": visit.warp, "iteration": list(visit.iteration)}
        if key in done:                           # the same reads as a visit checked already
            if done[key] is not None and site.block_scale:
                scaled[index] = done[key]
            if done[key] is not None:
                accumulations.mma(kernel.statements[visit.statement].instruction, visit, *done[key], kernel.maps,
                                  where, index)
                traced_rows.update(_rows(accumulations, *done[key], kernel.maps))
            continue
        if len(done) >= MAX_MMA_CHECKS:
            for tally in (written, swizzle, same_k, same_tile, k_once):
                tally.unknown(f"more than {MAX_MMA_CHECKS} distinct MMA visits")
            break
        done[key] = None
        problem = next((timeline.wait_problems.get(b) or timeline.barriers[b].unpaired for b in waited
                        if timeline.wait_problems.get(b) or timeline.barriers[b].unpaired), None)
        if problem:
            for tally in (written, swizzle, same_k, same_tile, k_once):
                tally.unknown(problem)
            continue
        visible = [load for b, j in waited.items() for load in _phase_loads(timeline.barriers[b], j)]
        missing = next((load for load in visible if load.source not in kernel.maps), None)
        if missing is not None:
            why = (f"line {missing.line}: no tensor map given for parameter {source_text(missing.source)}"
                   if missing.source else f"line {missing.line}: {missing.why_no_source}")
            for tally in (written, swizzle, same_k, same_tile, k_once):
                tally.unknown(why)
            continue
        slots = compose.slot_key(visible, kernel.maps)
        if slots not in merged_by_slots:           # (the placement depends on maps and destinations only)
            merged_by_slots[slots] = compose.visible_map(visible, kernel.maps, placements)
        merged, why, overlap = merged_by_slots[slots]
        if overlap is not None:
            first, second, address = overlap
            written.refuted({"what": f"the loads at lines {visible[first].line} and {visible[second].line}, both of "
                                     f"phases the warp waited for, write {address:#x}", **where,
                             "address": hex(address), "load_lines": [visible[first].line, visible[second].line]})
        if merged is None:
            for tally in (swizzle, same_k, same_tile, k_once) if overlap else (written, swizzle, same_k, same_tile, k_once):
                tally.unknown(why or "two awaited loads write one address (audit.reads.written)")
            continue
        site_now = _at_visit(site, visit)
        traced = {}
        for role, op in site_now.operands.items():
            if op.source != "descriptor":
                continue
            trace_key = (visit.line, role, op.word.value if op.word.is_known else None,
                         site_now.idesc_word.value if site_now.idesc_word is not None and site_now.idesc_word.is_known
                         else None, slots)
            outcome = outcomes.get(trace_key)
            if outcome is None:
                outcome = outcomes[trace_key] = compose.trace_operand(site_now, op, merged, visible, kernel.maps)
            _check_swizzle(swizzle, site_now, op, outcome, visible, kernel.maps, where)
            if outcome.unknown is not None:
                for tally in (written, swizzle, same_k, same_tile, k_once):
                    tally.unknown(f"line {visit.line} operand {role.upper()}: {outcome.unknown}")
            elif outcome.unwritten is not None:
                if every_load is None:
                    every_load = _every_load_map(timeline.loads, kernel.maps, placements)
                address = outcome.unwritten["address"]
                writer = every_load.get(address)
                if writer is None:
                    written.unknown(f"line {visit.line} operand {role.upper()} reads {address:#x}, which no TMA "
                                    "load of the run writes (st.shared, cp.async or another CTA: not modelled)")
                else:
                    written.refuted({"what": f"operand {role.upper()} reads {address:#x}, written by the load at "
                                             f"line {writer.line} of a phase the warp did not wait for", **where,
                                     "operand": role.upper(), **outcome.unwritten, "address": hex(address)})
            else:
                written.proved()
                traced[role] = outcome
        if traced and all(role in traced for role, op in site_now.operands.items() if op.source == "descriptor"):
            _check_same_k(same_k, traced, visible, kernel.maps, where)
        accumulations.mma(kernel.statements[visit.statement].instruction, visit, site_now, traced, visible,
                          kernel.maps, where, index)
        done[key] = (site_now, traced, visible)
        if site.block_scale:
            scaled[index] = done[key]
        traced_rows.update(_rows(accumulations, site_now, traced, visible, kernel.maps))
    if timeline.stopped:
        for tally in (written, swizzle, same_k, same_tile, k_once):
            tally.unknown(timeline.stopped[0] + " (what it did after that was not checked)")
    nothing = "no MMA reading shared memory through descriptors was reached in the run"
    accumulations.finish()
    return [written.result(nothing), swizzle.result(nothing), same_k.result(nothing),
            same_tile.result("no MMA added to an accumulator an earlier MMA of the run wrote"),
            k_once.result("no accumulation whose start the run shows (an overwriting MMA, or zeros or constants "
                          "written) was followed to its end")]


class StoresWithin:
    """Whether a tcgen05.st or tcgen05.cp of the run may write an accumulation's tensor-memory columns
    between its first MMA and its last one's completion (accumulate.Accumulations): a store is outside
    when the first MMA is after it (commits.Pairing.after: the same warp, a CTA barrier, or an mbarrier
    phase) or the last MMA is complete before it (a tcgen05.commit phase the storing warp waited for)."""

    def __init__(self, trace, run):
        self.trace, self.run, self.pairing = trace, run, None
        self.writes = {write.order: write for write in trace.tmem_writes}
        self.columns = []                        # (store, its columns, or None for every column)
        for store in trace.tmem_stores:
            if store.cells is None:
                self.columns.append((store, None))
            elif isinstance(store.cells, frozenset):
                self.columns.append((store, frozenset(column for _, column in store.cells)))
            else:
                self.columns.append((store, frozenset(range(store.cells[1], store.cells[2]))))

    def __call__(self, columns, first: int, last: int) -> bool:
        stores = [store for store, written in self.columns
                  if written is None or columns == accumulate.EVERY_COLUMN or not written.isdisjoint(columns)]
        if not stores:
            return False
        start, end = self.writes.get(first), self.writes.get(last)
        if start is None or end is None:
            return True
        if self.pairing is None:
            self.pairing = commits.Pairing(self.trace.mbarriers, self.run)
        return any(not self.pairing.after(store, start.warp, start.tick, start.clock) and
                   self.pairing.complete_before(store).get(end.warp, -1) <= end.tick for store in stores)


def _rows(accumulations, site, traced: dict, loads: list, maps: dict) -> dict:
    """{role: the global rows its operand reads} of an MMA whose descriptor operands were all traced, and of
    B (for the attention pairing, epilogue.py): "b_k_dims" and "b_n_dims", the global dimensions that follow
    its k and its n, and "b_first_row", the global elements of its row n = 0 for each k."""
    roles = [role for role, op in site.operands.items() if op.source == "descriptor"]
    shape = accumulations.shape(roles, traced, loads, maps)
    found = dict(shape[0]) if shape else {}
    if "b" in found:
        along_k, along_n, _ = compose.operand_dimensions(traced["b"], loads, maps)
        found.update(b_k_dims=along_k, b_n_dims=along_n, b_first_row=compose.first_row(traced["b"], loads, maps))
    return found


def _phase_loads(barrier, index: int) -> list:
    return barrier.phases[index].loads if 0 <= index < len(barrier.phases) else []


def _at_visit(site, visit):
    from solver.kernel import mma
    return mma.at_visit(site, visit.values)


def _every_load_map(loads: list, maps: dict, placements) -> dict:
    """address -> a load of the run that writes it (any phase), for the witness of an unawaited read."""
    found: dict = {}
    for load in loads:
        params = maps.get(load.source)
        if params is None or not isinstance(load.smem, int) or params.encode != "tiled" or params.dtype.bits % 8:
            continue
        try:
            placed = placements.of(params, load.smem)
        except SpecError:
            continue
        for address in placed or ():
            found.setdefault(address, load)
    return found


def _check_swizzle(tally: Tally, site, op, outcome, loads: list, maps: dict, where: dict) -> None:
    if outcome.unknown is not None or not outcome.slots:
        return
    from solver.kernel import mma
    described = _SWIZZLE_NAMES.get(mma.make_operand(site, op).desc.swizzle)
    for slot in outcome.slots:
        load = loads[slot]
        mapped = maps[load.source].swizzle
        if described != mapped:
            tally.refuted({"what": f"operand {op.role.upper()}'s descriptor swizzle is {described}, the map of "
                                   f"{source_text(load.source)} (line {load.line}) swizzles {mapped}", **where,
                           "operand": op.role.upper(), "load_line": load.line})
            return
    tally.proved()


def _check_same_k(tally: Tally, traced: dict, loads: list, maps: dict, where: dict) -> None:
    layouts = {}
    for role, outcome in traced.items():
        along_k, along_mn, both = compose.operand_dimensions(outcome, loads, maps)
        if both is not None:
            tally.refuted({"what": f"operand {role.upper()}'s global dimension {both} changes both along k and "
                                   "along the rows: its elements are no rows x K grid of the tensor", **where,
                           "operand": role.upper()})
            return
        if not along_k:
            tally.unknown(f"line {where['mma_line']} operand {role.upper()}: no global dimension follows k")
            return
        layouts[role] = along_k
    if len(layouts) == 1:                    # A in registers or tensor memory: B alone, its k all different
        (role, dims), = layouts.items()
        row = compose.first_row(traced[role], loads, maps)
        seen: dict = {}
        for k, element in enumerate(row):
            key = tuple(element[d] for d in dims)
            if key in seen:
                tally.refuted({"what": f"operand {role.upper()} reads global k {_one(key)} at k = {seen[key]} and at "
                                       f"k = {k}", **where, "operand": role.upper(), "k": k})
                return
            seen[key] = k
        tally.proved()
        return
    if len(layouts["a"]) != len(layouts["b"]):
        tally.unknown(f"line {where['mma_line']}: K spans {len(layouts['a'])} dimensions of A's map and "
                      f"{len(layouts['b'])} of B's")
        return
    a, b = (compose.first_row(traced[role], loads, maps) for role in ("a", "b"))
    for k in range(min(len(a), len(b))):
        ka = tuple(a[k][d] for d in layouts["a"])
        kb = tuple(b[k][d] for d in layouts["b"])
        if ka != kb:
            tally.refuted({"what": f"at k = {k}, A reads global k {_one(ka)} and B global k {_one(kb)}", **where,
                           "k": k, "a_global_k": _one(ka), "b_global_k": _one(kb),
                           "a_element": list(a[k]), "b_element": list(b[k])})
            return
    tally.proved()


def _one(values: tuple):
    return values[0] if len(values) == 1 else list(values)
