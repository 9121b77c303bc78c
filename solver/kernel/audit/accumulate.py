"""Accumulations: the MMAs that add into one accumulator, one output tile each (audit.gemm.same_tile and
audit.gemm.k_once, solver/kernel/audit/properties.py).

An accumulation starts where its accumulator is overwritten: by an MMA that does not add (wgmma scale-d
0, tcgen05.mma enable-input-d false: PTX ISA 9.0 9.7.15.5.2, 9.7.16.10.9), or, for a wgmma accumulator in
registers, by zeros written into every register of it (`mov.f32 %f, 0f00000000`, or a copy of a register
so zeroed: what Triton and TileLang emit before a tile), or by constants (`selp.f32 %f, 0fFF800000,
0f00000000, %p`, or a copy: TileLang's causal attention writes its mask, -inf or 0, into the scores'
accumulator before Q . K^T adds to it; a constant holds no earlier sum). A register multiplied into itself (attention's
rescaling, `mul.f32 %f, %f, x`) holds the same element, scaled: the accumulation goes on and same_tile
still compares its MMAs, but k_once is not checked on it. Any other write into an accumulator register
leaves where the accumulation started unknown, and k_once is not checked on it. Nor is it on a
tensor-memory accumulator (tcgen05.mma) that a tcgen05.st or tcgen05.cp may write after its first MMA and
before its last one completed (sm_100 attention rescales O in tensor memory between its MMAs; a store
before the first MMA, Triton's zeroing, is harmless to an accumulation that starts by overwriting).
An accumulation ends where the next one starts, or at the end of the run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from spec.rule import SpecError
from spec.tmem import accumulator

from solver.kernel.audit import compose, operations
from solver.kernel.frontend.instruction import FLOAT_BITS, destinations, parse_integer, registers_in

_ZERO = {"0f00000000", "0f80000000", "0d0000000000000000", "0d8000000000000000"}


def rescales(ins) -> bool:
    """A float multiply of a register into itself, `mul.f32 %f, %f, x` (attention's online softmax rescales its
    output accumulator so between two MMAs, PTX ISA 9.0 9.7.4.4): the same elements, scaled."""
    if ins.base != "mul" or len(ins.operands) != 3 or not ins.types() or ins.types()[-1] not in ("f32", "f16",
                                                                                                 "bf16", "f64"):
        return False
    target = ins.operands[0].strip()
    return target in (ins.operands[1].strip(), ins.operands[2].strip())


def writes_zero(ins) -> bool:
    """A mov of the constant zero (integer 0, +-0.0 as PTX writes float bits)."""
    if ins.base != "mov" or len(ins.operands) != 2:
        return False
    value = ins.operands[1].strip().lower()
    return value in _ZERO or parse_integer(value) == 0


def _constant(operand: str) -> bool:
    operand = operand.strip()
    return FLOAT_BITS.match(operand) is not None or parse_integer(operand) is not None


def writes_constant(ins) -> bool:
    """A mov of a constant, or a selp between two constants (whatever its predicate: PTX ISA 9.0 9.7.8.1)."""
    if ins.base == "mov" and len(ins.operands) == 2:
        return _constant(ins.operands[1])
    return ins.base == "selp" and len(ins.operands) == 4 and _constant(ins.operands[1]) and _constant(ins.operands[2])


@dataclass
class Chain:
    rows: dict                     # role -> the global rows (off K) of the operand
    line: int
    iteration: list
    start: Optional[str]           # "overwritten" | "zeroed" | "constants" | None (unknown)
    first: dict = field(default_factory=dict)   # where it started: {mma_line, warp, iteration}
    ks: list = field(default_factory=list)      # the global k of every k each MMA read
    extent: Optional[int] = None                # K: A's (or B's) map extent along its K dimension
    k_known: bool = True
    columns: object = None                      # a tcgen05.mma's accumulator columns (Accumulations._columns)
    first_order: int = -1                       # the visit index of its first MMA, and of its latest
    last: int = -1


EVERY_COLUMN = "every column"        # (Accumulations._columns: a shape with no layout)


@lru_cache(maxsize=64)
def _accumulator_columns(M: int, N: int, cta_group: int, ws: bool, sparse: bool) -> Optional[frozenset]:
    """The columns (relative to its address) a tcgen05.mma's accumulator takes, or None when its shape has
    no layout (spec.tmem.accumulator.d_locations)."""
    try:
        places = accumulator.d_locations(M, N, cta_group, ws, 0, sparse)
    except SpecError:
        return None
    return frozenset(column for _, _, column in places.values())


class Accumulations:
    def __init__(self, same_tile, k_once, stores_within=None):
        """stores_within(columns, first, last): whether a tcgen05.st or tcgen05.cp of the run may write one
        of those tensor-memory columns after the MMA of visit index `first` and before the one of visit
        index `last` completed (properties.StoresWithin); None: the run has none."""
        self.same_tile, self.k_once = same_tile, k_once
        self.stores_within = stores_within
        self.chains: dict = {}                 # (warp, accumulator key) -> Chain
        self.written: dict = {}                # warp -> {register: "zero" | "constant" | "rescale" | "other"}
                                               # since its last MMA

    def marker(self, warp: int, ins) -> None:
        """Another instruction wrote accumulator registers: zeros when it moves the constant 0, constants
        (a mov of one, a selp between two), or a copy of a register the warp so wrote since its last MMA
        (TileLang zeroes one register and copies it)."""
        kinds = self.written.setdefault(warp, {})
        copied = kinds.get(ins.operands[1].strip()) if ins.base == "mov" and len(ins.operands) == 2 else None
        for register in destinations(ins):
            kinds[register] = "zero" if writes_zero(ins) or copied == "zero" else \
                "constant" if writes_constant(ins) or copied == "constant" else \
                "rescale" if rescales(ins) else "other"

    def mma(self, ins, visit, site, traced: dict, loads: list, maps: dict, where: dict, order: int = -1) -> None:
        """One MMA visit (order: its index among the run's visits)."""
        key, adds = operations.accumulator(ins, visit.values)
        chain_key = (visit.warp, key)
        start = "overwritten" if adds is False else None
        if key[0] == "registers":
            registers = registers_in(ins.operands[0])
            kinds = self.written.get(visit.warp, {})
            seen = [kinds.pop(r) for r in registers if r in kinds]
            if adds and seen:
                if len(seen) == len(registers) and all(k == "zero" for k in seen):
                    start = "zeroed"
                elif len(seen) == len(registers) and all(k in ("zero", "constant") for k in seen):
                    start = "constants"
                elif all(k == "rescale" for k in seen):
                    start = "rescaled"          # the same tile, scaled row by row: the accumulation goes on
                else:
                    start = "unknown"           # part of it written: where it began is lost
        roles = [role for role, op in site.operands.items() if op.source == "descriptor"]
        shape = self.shape(roles, traced, loads, maps)
        previous = self.chains.get(chain_key)
        if adds is not True or start in ("zeroed", "constants", "unknown") or previous is None or shape is None:
            if previous is not None:
                self._finish(previous)
            if shape is None:
                self.chains.pop(chain_key, None)
                return
            rows, ks, extent = shape
            self.chains[chain_key] = Chain(rows, visit.line, list(visit.iteration),
                                           start if start in ("overwritten", "zeroed", "constants") else None,
                                           dict(where), ks,
                                           extent, ks is not None, self._columns(key, site), order, order)
            if adds is None:
                self.same_tile.unknown(f"line {visit.line}: whether the MMA adds to its accumulator (scale-d / "
                                       "enable-input-d) is unknown in the run")
            return
        rows, ks, extent = shape
        if start == "rescaled":
            previous.start = None               # (k_once: what a rescaled sum adds up is not a plain sum)
        for role in rows:
            if role in previous.rows and rows[role] != previous.rows[role]:
                mn = next(i for i, (x, y) in enumerate(zip(rows[role], previous.rows[role])) if x != y)
                self.same_tile.refuted({
                    "what": f"operand {role.upper()} row {mn} reads global {list(rows[role][mn])} where the MMA before "
                            f"it into the same accumulator (line {previous.line}, iteration "
                            f"{','.join(map(str, previous.iteration)) or '-'}) read {list(previous.rows[role][mn])}",
                    **where, "operand": role.upper(), "row": mn, "previous_line": previous.line})
                self.chains.pop(chain_key)
                return
        self.same_tile.proved()
        previous.rows, previous.line, previous.iteration = rows, visit.line, list(visit.iteration)
        previous.last = order
        if ks is None or extent != previous.extent:
            previous.k_known = False
        else:
            previous.ks.extend(ks)

    @staticmethod
    def _columns(key: tuple, site):
        """The absolute tensor-memory columns of a tcgen05.mma's accumulator; None for a wgmma's;
        EVERY_COLUMN when its shape has no layout."""
        if key[0] != "tmem":
            return None
        columns = None if site.m is None or site.n is None else \
            _accumulator_columns(site.m, site.n, site.cta_group, site.ws, site.sparse)
        if columns is None:
            return EVERY_COLUMN
        first = key[1] & 0xFFFF
        return frozenset(first + column for column in columns)

    def shape(self, roles: list, traced: dict, loads: list, maps: dict):
        """(role -> global rows, the global k of each k read, K) of the MMA, or None when an operand was not
        traced or is no rows x K grid (reads.written and same_k say why)."""
        rows, ks, extent = {}, None, None
        for role in roles:
            if role not in traced:
                return None
            outcome = traced[role]
            along_k, _, both = compose.operand_dimensions(outcome, loads, maps)
            if both is not None or not along_k:
                return None
            # the rows depend on the trace and on its boxes' coordinates off K only: kept per both
            placed = tuple(c for slot in outcome.slots for d, c in enumerate(loads[slot].coordinates) if d not in along_k)
            kept = outcome.__dict__.setdefault("_rows", {})
            if placed not in kept:
                column = [compose.global_element(loads[row[0][0]], maps[loads[row[0][0]].source], row[0][1],
                                                 outcome.packing) for row in outcome.cells]
                kept[placed] = [tuple(c for d, c in enumerate(element) if d not in along_k) for element in column]
            rows[role] = kept[placed]
            if ks is None and len(along_k) == 1:
                d = along_k[0]
                ks = [element[d] for element in compose.first_row(outcome, loads, maps)]
                extent = maps[loads[outcome.slots[0]].source].global_dim[d] * (outcome.packing if d == 0 else 1)
        return (rows, ks, extent) if rows else None

    def _finish(self, chain: Chain) -> None:
        """audit.gemm.k_once on a whole accumulation whose start is known (and, in tensor memory, that no
        store writes between its first MMA and its last one's completion)."""
        if chain.start is None or not chain.k_known or chain.extent is None:
            return
        if chain.columns is not None and self.stores_within is not None and \
                self.stores_within(chain.columns, chain.first_order, chain.last):
            return                      # (a store into the sum, as attention's rescale of O: not a plain sum)
        inside = sorted(k for k in chain.ks if 0 <= k < chain.extent)
        missing = next((k for k in range(chain.extent) if k not in set(inside)), None) \
            if len(set(inside)) != chain.extent else None
        twice = next((a for a, b in zip(inside, inside[1:]) if a == b), None)
        if missing is None and twice is None:
            self.k_once.proved()
            return
        what = (f"global k {twice} is read twice" if twice is not None else f"global k {missing} is never read") + \
            f" in the accumulation that starts at line {chain.first.get('mma_line')} (K = {chain.extent})"
        self.k_once.refuted({"what": what, **chain.first, "k": twice if twice is not None else missing,
                             "extent": chain.extent, "mmas_k_read": len(chain.ks)})

    def finish(self) -> None:
        for chain in self.chains.values():
            self._finish(chain)
        self.chains.clear()
