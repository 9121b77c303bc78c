"""Descriptor synthesis and checking: which descriptor reads this tile, and does this one?

The tile is a CuTe layout L from element coordinates (mn, k) to element offsets, optionally composed
with a swizzle that acts on absolute byte addresses: element (mn, k) lives at
swizzle(B + byte(L(mn, k))), byte(o) = (o div T) * 16 + the element's byte inside its chunk
(= o * bits / 8 for unpadded types). One instruction reads (mn, KO .. KO+K-1).

Synthesis is counterexample-guided. For each swizzle mode the arch allows for this operand (Table 54),
Z3 solves for the fields (start address, LBO, SBO, base offset; the LBO mode is part of the mode)
that make the Z3 read map (solver.model.readmap) hit the tile's address for a few elements; spec's read
map then checks the candidate on every element read, and an element it gets wrong joins the query.
A mode with no solution yields an unsat core over named constraints: the elements that cannot all be
met, and the rules that tie them (their read-map rule, the field encodings).

The direct path (_direct, on unless DIRECT is False or LAYOUTPROOF_SYNTH_DIRECT=0) first solves the
first mode's fields from the tile's addresses with base offset 0, checks the answer with spec on every
element, and returns what the Z3 search would (its docstring says why); z3 is imported only when a Z3
query is made.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Optional

from spec import fast
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.notation import parse_layout
from spec.rules import SpecError
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES

MAX_ROUNDS = 64
# The direct path of synthesize (_direct); off, every answer comes from the Z3 search (tests compare the two).
DIRECT = os.environ.get("LAYOUTPROOF_SYNTH_DIRECT", "1") != "0"


@dataclass(frozen=True)
class Tile:
    """What the user has: where each element of the operand lives."""
    arch: str
    dtype: str
    major: str
    mn: int
    k: int
    k_offset: int
    layout: object          # spec.cute.layout.Layout or ComposedLayout
    start_address: int      # B: the tile's base byte address
    kind: str

    def target(self, mn: int, k: int) -> int:
        d = dtypes.dtype(self.dtype)
        per_chunk = dtypes.elements_per_chunk(d, self.kind)
        layout = self.layout.layout if isinstance(self.layout, ComposedLayout) else self.layout
        offset = layout(mn, self.k_offset + k)
        if isinstance(self.layout, ComposedLayout):
            offset += self.layout.offset
        address = self.start_address + (offset // per_chunk) * 16 + dtypes.byte_in_chunk(d, self.kind, offset % per_chunk)
        return self.layout.swizzle(address) if isinstance(self.layout, ComposedLayout) else address

    def targets(self) -> list:
        """Every element's address (targets_reference); while fast paths are on (spec.fast), a row at a
        time with the layout's offsets kept inside shared_work() (solver.fast.synth_descriptor)."""
        return fast.fastest(Tile.targets_reference)(self)

    def targets_reference(self) -> list:
        """Every element's address. A CuTe layout is linear in its modes, L(mn, k) = L(mn, 0) + L(0, k),
        so the offsets come from MN + K evaluations rather than MN x K."""
        d = dtypes.dtype(self.dtype)
        per_chunk = dtypes.elements_per_chunk(d, self.kind)
        composed = isinstance(self.layout, ComposedLayout)
        layout = self.layout.layout if composed else self.layout
        base = self.layout.offset if composed else 0
        along_mn = [layout(mn, self.k_offset) for mn in range(self.mn)]
        along_k = [layout(0, self.k_offset + k) - layout(0, self.k_offset) for k in range(self.k)]
        swizzle = self.layout.swizzle if composed else (lambda a: a)
        byte = lambda o: (o // per_chunk) * 16 + dtypes.byte_in_chunk(d, self.kind, o % per_chunk)
        return [[swizzle(self.start_address + byte(base + m + k)) for k in along_k] for m in along_mn]



# What a series of syntheses over one tile shares (a recipe: one per K step), kept only inside
# `shared_work()`: layout offsets and Z3 read-map terms. Outside it nothing is kept, so a definition a
# test changes in between (spec's layout, solver.model's read map) is always the one used.
_KEPT: Optional[dict] = None


@contextlib.contextmanager
def shared_work():
    """Syntheses inside this block share layout offsets and Z3 read-map terms (same results, less work)."""
    global _KEPT
    outer = _KEPT
    _KEPT = {} if outer is None else outer
    try:
        yield
    finally:
        _KEPT = outer


def make_tile(arch: str, dtype: str, major: str, mn: int, layout_text, start_address: int,
              k: Optional[int] = None, k_offset: int = 0, kind: Optional[str] = None) -> Tile:
    spec_descriptor.check_arch(arch)
    d = dtypes.dtype(dtype)
    kind = dtypes.check_kind(d, kind) if kind else dtypes.default_kind(d)
    layout = parse_layout(layout_text) if isinstance(layout_text, str) else layout_text
    if major not in readmap.MAJORS:
        raise SpecError("major", major, "expected K or MN", readmap.OPERAND_MAJOR.id)
    if mn <= 0 or mn % 8:
        raise SpecError("mn", mn, "the M or N extent must be a positive multiple of 8", readmap.MN_EXTENT.id)
    if mn > readmap.MAX_READ_EXTENT:
        raise SpecError("mn", mn, f"at most {readmap.MAX_READ_EXTENT} (no MMA reads an M or N above 256)",
                        readmap.MN_EXTENT.id)
    k = dtypes.default_instruction_k(d, kind) if k is None else k
    if k <= 0:
        raise SpecError("k", k, "K must be a positive number of elements", readmap.INSTRUCTION_K_RULE.id)
    if k > readmap.MAX_READ_EXTENT or mn * k > readmap.MAX_READ_ELEMENTS:
        raise SpecError("k", k, f"at most {readmap.MAX_READ_EXTENT} elements and mn x k at most "
                        f"{readmap.MAX_READ_ELEMENTS} (no MMA reads a K above 96)", readmap.INSTRUCTION_K_RULE.id)
    if k_offset < 0:
        raise SpecError("k_offset", k_offset, "the K offset must be non-negative", readmap.INSTRUCTION_K_RULE.id)
    inner = layout.layout if isinstance(layout, ComposedLayout) else layout
    if inner.rank != 2:
        raise SpecError("layout", inner.notation(), "needs two modes, (mn, k)", "layout.notation")
    mn_size, k_size = _mode_size(inner, 0), _mode_size(inner, 1)
    if mn > mn_size:
        raise SpecError("mn", mn, f"the layout covers {mn_size} x {k_size} elements, fewer rows than mn",
                        "layout.notation")
    if k_offset + k > k_size:
        raise SpecError("k_offset", k_offset, f"the instruction reads K {k_offset}..{k_offset + k - 1} (k = {k}); "
                        f"the layout covers {mn_size} x {k_size} elements", "layout.notation")
    if start_address < 0 or start_address % 16:
        raise SpecError("start_address", start_address, "must be a non-negative multiple of 16",
                        spec_descriptor.FIELD_ENCODING.id)
    return Tile(arch, d.name, major, mn, k, k_offset, layout, start_address, kind)


def _mode_size(layout: Layout, mode: int) -> int:
    from spec.cute.layout import product
    return product(layout.shape[mode])


# --- candidates -------------------------------------------------------------------------------------
@dataclass
class Mode:
    swizzle: str
    lbo_mode: Optional[str]

    @property
    def name(self) -> str:
        return self.swizzle + (" (absolute LBO)" if self.lbo_mode == "absolute" else "")


@dataclass
class Outcome:
    status: str                         # "found" | "none"
    descriptor: Optional[spec_descriptor.Descriptor] = None
    reason: str = ""
    ignored: list = field(default_factory=list)
    solutions: list = field(default_factory=list)
    excluded: dict = field(default_factory=dict)    # mode name -> reason


def _preferred_swizzles(tile: Tile) -> list:
    """The descriptor swizzles in the order to try them: the tile's own swizzle first."""
    names = list(spec_descriptor.swizzle_codes(tile.arch))
    if isinstance(tile.layout, ComposedLayout):
        for name, sw in DESCRIPTOR_SWIZZLES.items():
            if sw == tile.layout.swizzle and name in names:
                names.remove(name)
                names.insert(0, name)
    elif "none" in names:
        names.remove("none")
        names.insert(0, "none")
    return names


def _modes(tile: Tile) -> tuple:
    """(modes to try, {mode: why it is excluded})."""
    tried, excluded = [], {}
    for swizzle in _preferred_swizzles(tile):
        for lbo_mode in ((None,) if tile.arch == "sm90" else ("relative", "absolute")):
            mode = Mode(swizzle, lbo_mode)
            desc = spec_descriptor.encode(tile.arch, 0, 16, 16, swizzle, 0, lbo_mode)
            op = readmap.Operand(desc, dtypes.dtype(tile.dtype), tile.major, tile.mn, tile.k, tile.kind)
            broken = [v for v in readmap.violations(op)
                      if v.rule.id in ("operand.swizzle.table54", "operand.swizzle.k_major_atom32",
                                       "operand.mn_major.dtype", "operand.sm90.dtype",
                                       "desc.lbo_mode.arch", "desc.lbo_mode.absolute.swizzle_128b",
                                       "operand.lbo_absolute.k_major", "operand.lbo_absolute.k48")]
            if broken:
                excluded[mode.name] = "; ".join(f"{v.rule.id}: {v.message}" for v in broken)
            else:
                tried.append(mode)
    return tried, excluded


def _shape(tile: Tile, swizzle: str):
    """solver.model.readmap.Shape of the tile under `swizzle` (imported here: it brings in z3)."""
    from solver.model.readmap import Shape
    d = dtypes.dtype(tile.dtype)
    return Shape(tile.major, swizzle, d.bits, dtypes.elements_per_chunk(d, tile.kind))


def _rule_for(tile: Tile, mode: Mode) -> str:
    if mode.lbo_mode == "absolute":
        return readmap.K48_SPLIT.id
    family = {("K", True): readmap.K_MAJOR_NO_SWIZZLE, ("K", False): readmap.K_MAJOR_SWIZZLED,
              ("MN", True): readmap.MN_MAJOR_NO_SWIZZLE, ("MN", False): readmap.MN_MAJOR_SWIZZLED}
    return family[(tile.major, mode.swizzle == "none")].id


def _seed_elements(tile: Tile, shape) -> list:
    T = shape.per_chunk
    wanted = [(0, 0), (1, 0), (0, 1), (8, 0), (0, T), (T, 0), (0, 8), (0, 4), (8 * T, 0), (16, 0),
              (tile.mn - 1, tile.k - 1), (0, tile.k - 1), (tile.mn - 1, 0)]
    seen = []
    for mn, k in wanted:
        if mn < tile.mn and k < tile.k and (mn, k) not in seen:
            seen.append((mn, k))
    return seen


def _read_term(shape, fields, absolute: bool, mn: int, k: int):
    """The Z3 read map of element (mn, k). Every _Search names its fields alike (start, lbo, sbo,
    base_offset), so the term depends on the shape, the LBO mode and the element only: inside
    shared_work() it is kept across searches (a recipe runs one per K step, over the same elements)."""
    key = ("term", shape, absolute, mn, k)
    term = None if _KEPT is None else _KEPT.get(key)
    if term is None:
        from solver.model.bitvec import Arith, bv
        from solver.model.readmap import read_address
        term = read_address(shape, fields, bv(mn), bv(k), Arith())
        if _KEPT is not None:
            _KEPT[key] = term
    return term


def _operand(tile: Tile, desc) -> readmap.Operand:
    return readmap.Operand(desc, dtypes.dtype(tile.dtype), tile.major, tile.mn, tile.k, tile.kind)


def first_wrong(tile: Tile, targets: list, desc) -> Optional[tuple]:
    """The first element spec's read map puts somewhere else than the tile, or None."""
    return readmap.first_misread(_operand(tile, desc), targets)     # read_addresses, a row at a time


def other_values(desc) -> list:
    """(field, [descriptors like `desc` but for one other value of that field]) for the fields
    ignored_fields tries: one other value each, far from any stride a tile uses, and a flipped phase
    parity (a value the field cannot hold is left out)."""
    fields = desc.fields_json()
    found = []
    for name, alternatives in (("leading_byte_offset", (fields["leading_byte_offset"] ^ 0x1010,)),
                               ("stride_byte_offset", (fields["stride_byte_offset"] ^ 0x2010,)),
                               ("base_offset", (fields["base_offset"] ^ 1,))):
        others = []
        for value in alternatives:
            try:
                others.append(spec_descriptor.with_fields(desc, **{name: value}))
            except SpecError:
                continue
        found.append((name, others))
    return found


def reads_tile(tile: Tile, targets: list, desc) -> bool:
    """Whether `desc` reads every element of the tile right: the first two row groups first (a changed
    stride or phase shows there, as a rule), then every element."""
    return first_wrong(tile, targets[:16], desc) is None and first_wrong(tile, targets, desc) is None


def ignored_fields_by_element(tile: Tile, targets: list, desc) -> list:
    """The fields whose value does not change what is read (`desc` reads every element right): each other
    value checked with spec on every element."""
    return [name for name, others in other_values(desc) if all(reads_tile(tile, targets, o) for o in others)]


def ignored_fields(tile: Tile, targets: list, desc) -> list:
    """ignored_fields_by_element; while fast paths are on (spec.fast), another value that leaves the
    operand's read-map parts as they are is not checked element by element (solver.fast.synth_descriptor)."""
    return fast.fastest(ignored_fields_by_element)(tile, targets, desc)


class _Search:
    """One swizzle mode: Z3 over the fields, checked by spec on every element."""

    def __init__(self, tile: Tile, mode: Mode, targets: list):
        import z3
        from solver.model.readmap import Fields
        self.tile, self.mode, self.targets = tile, mode, targets
        self.shape = _shape(tile, mode.swizzle)
        self.start, self.lbo, self.sbo = (z3.BitVec(n, 14) for n in ("start", "lbo", "sbo"))
        self.base_offset = z3.BitVec("base_offset", 3)
        widen = lambda v: z3.ZeroExt(32 - v.size(), v)
        self.fields = Fields(widen(self.start) << 4, widen(self.lbo) << 4, widen(self.sbo) << 4,
                             widen(self.base_offset), mode.lbo_mode == "absolute")
        self.solver = z3.Solver()
        self.names = {}
        if mode.lbo_mode == "absolute" or mode.swizzle == "none":
            # restriction 3 of 9.7.16.3.1.2.1; and no pattern to phase without a swizzle
            self._track(self.base_offset == 0, "base offset 0",
                        "desc.lbo_mode.absolute.base_offset_zero" if mode.lbo_mode == "absolute"
                        else "desc.base_offset.no_swizzle")
        self.elements = []
        for mn, k in _seed_elements(tile, self.shape):
            self.add_element(mn, k)

    def _track(self, constraint, name: str, rule_id: str):
        import z3
        flag = z3.Bool(f"c{len(self.names)}")
        self.names[flag.get_id()] = (name, rule_id, flag)
        self.solver.assert_and_track(constraint, flag)

    def add_element(self, mn: int, k: int):
        from solver.model.bitvec import bv
        self.elements.append((mn, k))
        address = _read_term(self.shape, self.fields, self.mode.lbo_mode == "absolute", mn, k)
        self._track(address == bv(self.targets[mn][k]), f"element ({mn},{k}) at {self.targets[mn][k]:#x}",
                    _rule_for(self.tile, self.mode))

    def descriptor(self, model) -> spec_descriptor.Descriptor:
        value = lambda v: model.eval(v, model_completion=True).as_long()
        return spec_descriptor.encode(self.tile.arch, value(self.start) << 4, value(self.lbo) << 4,
                                      value(self.sbo) << 4, self.mode.swizzle, value(self.base_offset),
                                      self.mode.lbo_mode)

    def first_wrong(self, desc) -> Optional[tuple]:
        return first_wrong(self.tile, self.targets, desc)

    def _exclude(self, blocked):
        """Solutions already found are not wanted again (in the current solver scope)."""
        import z3
        for d in blocked:
            self.solver.add(z3.Or(self.start != d.start_address >> 4, self.lbo != d.leading_byte_offset >> 4,
                                  self.sbo != d.stride_byte_offset >> 4, self.base_offset != d.base_offset))

    def solve(self, blocked=()):
        """A descriptor that reads every element right, or None with the unsat core."""
        import z3
        self.solver.push()
        self._exclude(blocked)
        try:
            for _ in range(MAX_ROUNDS):
                # Prefer base offset 0 (what CUTLASS writes): another value only when 0 cannot work.
                answer = self.solver.check(self.base_offset == 0)
                if answer != z3.sat:
                    answer = self.solver.check()
                if answer != z3.sat:
                    core = [self.names[c.get_id()] for c in self.solver.unsat_core()] if answer == z3.unsat else []
                    return None, core, str(answer)
                desc = self.descriptor(self.solver.model())
                wrong = self.first_wrong(desc)
                if wrong is None:
                    return desc, [], "sat"
                self.solver.pop()
                self.add_element(*wrong)
                self.solver.push()
                self._exclude(blocked)
            return None, [], "unknown (too many refinement rounds)"
        finally:
            self.solver.pop()

    def ignored_fields(self, desc) -> list:
        return ignored_fields(self.tile, self.targets, desc)


# --- the direct path -----------------------------------------------------------------------------------
# (stride, the other stride): the two fields the read map multiplies by element coordinates.
_STRIDES = (("stride_byte_offset", "leading_byte_offset"), ("leading_byte_offset", "stride_byte_offset"))


def _direct_plan(tile: Tile, mode: Mode) -> Optional[dict]:
    """How to read the fields off the tile's addresses, from spec's read-map parts (readmap.mn_parts,
    k_parts) of probe descriptors: the linear address of (mn, k) is start + P(mn, k) + LBO * l(mn, k) +
    SBO * s(mn, k), P the parts with both strides 0, l and s their growth per byte of LBO and of SBO.
    For each stride: the element where it counts once and the other not at all (its value is that
    element's linear address less start and P), or None where no element reads it. None for the whole
    plan where some stride is read but by no such element. Kept inside shared_work() per shape."""
    key = ("direct", tile.arch, tile.dtype, tile.kind, tile.major, tile.mn, tile.k, mode.swizzle, mode.lbo_mode)
    if _KEPT is not None and key in _KEPT:
        return _KEPT[key]
    d = dtypes.dtype(tile.dtype)

    def parts(lbo: int, sbo: int) -> tuple:
        op = readmap.Operand(spec_descriptor.encode(tile.arch, 0, lbo, sbo, mode.swizzle, 0, mode.lbo_mode),
                             d, tile.major, tile.mn, tile.k, tile.kind)
        return readmap.mn_parts(op), [origin + offset for origin, offset in readmap.k_parts(op)]

    base_mn, base_k = parts(0, 0)
    growth = {}
    for name, (mn_parts, k_parts) in (("leading_byte_offset", parts(16, 0)), ("stride_byte_offset", parts(0, 16))):
        along_mn = [a - b for a, b in zip(mn_parts, base_mn)]
        along_k = [a - b for a, b in zip(k_parts, base_k)]
        if any(g % 16 for g in along_mn + along_k):
            plan = None
            break
        growth[name] = ([g // 16 for g in along_mn], [g // 16 for g in along_k])
    else:
        plan = {"origin": base_mn[0] + base_k[0], "base": (base_mn, base_k), "fields": {}}
        if any(growth[name][0][0] or growth[name][1][0] for name in growth):
            plan = None                 # (0, 0) does not give the start alone
        for name, other in _STRIDES if plan else ():
            (mn_grow, k_grow), (mn_other, k_other) = growth[name], growth[other]
            if not any(mn_grow) and not any(k_grow):
                plan["fields"][name] = None             # no element reads it
                continue
            element = next(((mn, 0) for mn in range(tile.mn) if mn_grow[mn] == 1 and mn_other[mn] == 0), None) \
                or next(((0, k) for k in range(tile.k) if k_grow[k] == 1 and k_other[k] == 0), None)
            if element is None:
                plan = None
                break
            plan["fields"][name] = element
    if _KEPT is not None:
        _KEPT[key] = plan
    return plan


def _direct(tile: Tile, mode: Mode, targets: list) -> Optional[spec_descriptor.Descriptor]:
    """The descriptor of `mode` that reads the tile with base offset 0, solved from the tile's addresses
    and checked by spec on every element (first_wrong); None where it misreads an element, or where this
    solve gives no answer the Z3 search must give too: the absolute LBO mode, an SBO no element reads
    (the search prints the value Z3 picked), a stride no element reads alone.

    Why the search returns this descriptor, so that synthesize's output is the same with either path
    (tests/solver_tests/synth/test_recipe_direct.py compares them over recipes and random tiles): with base offset 0 the
    swizzle (rule readmap.swizzle_phase) XORs address bits [M, M+B) with bits [7, 7+B), M + B <= 7, so it
    is its own inverse and each element's linear address is known; the linear address is start plus
    strides times non-negative whole multiples (readmap.k_major.*, mn_major.*), so (0, 0) fixes start and
    the element of each stride fixes it: every descriptor with base offset 0 that reads the whole tile
    right has these start and strides (an LBO no element reads aside, printed as 16 by
    _canonical_ignored either way). The search asks Z3 for base offset 0 first; as one exists, each of its
    candidates has base offset 0 (Z3's read map, solver.model.readmap, agrees with spec's: the prover checks
    the two), and it returns the first that spec finds right on every element (within MAX_ROUNDS: seeds
    that fix start and strides make it the first)."""
    if mode.lbo_mode == "absolute":
        return None
    plan = _direct_plan(tile, mode)
    if plan is None or plan["fields"]["stride_byte_offset"] is None:
        return None
    (base_mn, base_k), swizzle = plan["base"], mode.swizzle
    linear = lambda mn, k: readmap.apply_swizzle(swizzle, 0, targets[mn][k], 0)     # base offset 0
    start = linear(0, 0) - plan["origin"]
    values = {"leading_byte_offset": 16}
    for name, element in plan["fields"].items():
        if element is not None:
            mn, k = element
            values[name] = linear(mn, k) - start - base_mn[mn] - base_k[k]
    try:
        desc = spec_descriptor.encode(tile.arch, start, values["leading_byte_offset"],
                                      values["stride_byte_offset"], swizzle, 0, mode.lbo_mode)
    except SpecError:
        return None                     # not a descriptor field value
    return desc if first_wrong(tile, targets, desc) is None else None


def _canonical_ignored(desc, ignored: list):
    """Ignored fields take their conventional values: LBO 16 ('assumed 1'), base offset 0."""
    changes = {}
    if "leading_byte_offset" in ignored and desc.lbo_mode != "absolute":
        changes["leading_byte_offset"] = 16
    if "base_offset" in ignored:
        changes["base_offset"] = 0
    return spec_descriptor.with_fields(desc, **changes) if changes else desc


def _direct_outcome(tile: Tile, targets: list, modes: list, excluded: dict) -> Optional[Outcome]:
    """synthesize's Outcome (all_solutions off) from the direct path, or None where it gives none."""
    desc = _direct(tile, modes[0], targets) if modes else None     # what the search would return (_direct)
    if desc is None:
        return None
    ignored = ignored_fields(tile, targets, desc)
    return Outcome("found", _canonical_ignored(desc, ignored), ignored=ignored, excluded=excluded)


def solve_directly(tile: Tile) -> Optional[Outcome]:
    """synthesize(tile) without Z3, or None where the direct path gives no answer (synthesize's search then
    does)."""
    return _direct_outcome(tile, tile.targets(), *_modes(tile))


def synthesize(tile: Tile, all_solutions: bool = False, limit: int = 32, direct: Optional[bool] = None) -> Outcome:
    """The descriptor that reads `tile` (every one with all_solutions, up to `limit`); `direct` (default
    DIRECT): the direct path first."""
    targets = tile.targets()
    modes, excluded = _modes(tile)
    if (DIRECT if direct is None else direct) and not all_solutions:
        outcome = _direct_outcome(tile, targets, modes, excluded)
        if outcome is not None:
            return outcome
    import z3
    found, reasons = [], {}
    for mode in modes:
        search = _Search(tile, mode, targets)
        desc, core, answer = search.solve()
        if desc is None:
            reasons[mode.name] = _core_text(core, answer)
            continue
        ignored = search.ignored_fields(desc)
        desc = _canonical_ignored(desc, ignored)
        found.append((desc, ignored))
        if not all_solutions:
            break
        # Enumerate the rest with ignored fields pinned to their conventional values, and base
        # offsets below the pattern's row count (b and b + rows read the same).
        rows = 1 << DESCRIPTOR_SWIZZLES[mode.swizzle].bits
        pins = [z3.ULT(search.base_offset, rows)] if rows < 8 else []   # 8 does not fit 3 bits
        if "leading_byte_offset" in ignored and mode.lbo_mode != "absolute":
            pins.append(search.lbo == 1)
        if "stride_byte_offset" in ignored:
            pins.append(search.sbo == desc.stride_byte_offset >> 4)
        if "base_offset" in ignored:
            pins.append(search.base_offset == 0)
        search.solver.add(*pins)
        blocked = [desc]
        while len(found) < limit:
            more, _, _ = search.solve(blocked)
            if more is None:
                break
            more = _canonical_ignored(more, ignored)
            if any(more.raw == d.raw for d, _ in found):
                blocked.append(more)
                continue
            found.append((more, ignored))
            blocked.append(more)
    if not found:
        excluded_text = [f"{name}: {why}" for name, why in excluded.items()]
        reason_text = [f"{name}: {why}" for name, why in reasons.items()]
        return Outcome("none", reason="no descriptor reads this tile. " + " | ".join(reason_text + excluded_text),
                       excluded=excluded)
    best, ignored = found[0]
    solutions = [{"descriptor": d.hex, "fields": d.fields_json(), "ignored": ig} for d, ig in found]
    return Outcome("found", best, ignored=ignored, solutions=solutions if all_solutions else [],
                   excluded=excluded)


def _core_text(core: list, answer: str) -> str:
    if not core:
        return f"z3 says {answer}"
    elements = [name for name, _, _ in core]
    rules = sorted({rule for _, rule, _ in core} | {"desc.field.encoding", readmap.PHASE.id})
    count = f"{len(elements)} constraint" + ("" if len(elements) == 1 else "s")
    return (f"no fields meet {count} together ({'; '.join(elements)}) under rules " + ", ".join(rules))


def check(tile: Tile, desc: spec_descriptor.Descriptor) -> dict:
    """Does `desc` read `tile`? The first wrong element and, when a right descriptor exists, the
    fields to change."""
    targets = tile.targets()
    op = readmap.make_operand(desc, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
    mismatch = None
    for mn in range(tile.mn):
        for k in range(tile.k):
            read = readmap.element_address(op, mn, k)
            if read != targets[mn][k]:
                mismatch = {"mn": mn, "k": tile.k_offset + k, "expected": targets[mn][k], "read": read}
                break
        if mismatch:
            break
    report = {"match": mismatch is None, "descriptor": desc.hex, "fields": desc.fields_json(),
              "mismatch": mismatch, "violations": [v.as_json() for v in readmap.violations(op)]}
    if mismatch is None:
        return report
    outcome = synthesize(tile)
    if outcome.status == "found":
        right = outcome.descriptor.fields_json()
        report["fix"] = {name: {"from": value, "to": right[name]} for name, value in desc.fields_json().items()
                         if right[name] != value and name not in outcome.ignored}
        report["suggested_descriptor"] = _with_changes(desc, report["fix"], tile, outcome.descriptor).hex
    else:
        report["fix"] = None
        report["reason"] = outcome.reason
        hint = other_major_hint(tile)
        if hint:
            report["hint"] = hint
    return report


def _with_changes(desc: spec_descriptor.Descriptor, fix: dict, tile: Tile, found: spec_descriptor.Descriptor):
    """The user's descriptor with only the fields `fix` names changed (a field the tile never reads keeps
    its value, so the suggestion differs from the word given exactly as the "change:" line says), when it
    reads the tile; else the descriptor synth found."""
    fields = {**desc.fields_json(), **{name: change["to"] for name, change in fix.items()}}
    try:
        changed = spec_descriptor.encode(desc.arch, fields["start_address"], fields["leading_byte_offset"],
                                         fields["stride_byte_offset"], fields["swizzle"], fields["base_offset"],
                                         fields["lbo_mode"])
    except SpecError:
        return found
    op = readmap.make_operand(changed, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
    reads = readmap.read_addresses(op)
    return changed if reads == tile.targets() else found


def other_major_hint(tile: Tile) -> Optional[str]:
    """When no descriptor reads the tile as given but one does with the other --major: say so (a K-major
    layout checked as MN-major is a common slip)."""
    other = "MN" if tile.major == "K" else "K"
    try:
        swapped = make_tile(tile.arch, tile.dtype, other, tile.mn, tile.layout, tile.start_address, tile.k,
                            tile.k_offset, tile.kind)
        found = synthesize(swapped)
    except SpecError:
        return None
    if found.status != "found":
        return None
    return f"with --major {other} the tile is read by {found.descriptor.hex}: is the layout {other}-major?"
