"""Properties of the user's own layouts (`layoutproof prove --layout L PROPERTY`, lp.prove_layout).

A layout in CuTe notation, with the swizzle on absolute byte addresses as `synth` has it: element i (a
1-D index or a coordinate) lives at

    address(i) = swizzle(start + bytes * (offset + L(i)))      (bytes = 1, start = 0 without --dtype)

Properties (each over every coordinate of the layout):
  injective             no two coordinates share an address;
  bijective [lo, hi)    injective, every address is lo + bytes * t inside [lo, hi), and every such slot
                        is used: the default range is [start + bytes*offset, ... + bytes * cosize(L));
  equals L2             the two layouts give the same address for every 1-D index (same size);
  inside (line, slice)  rank-2 (row, k): for every row and every k-slice of `slice` elements
                        (k in [s*slice, (s+1)*slice), default the whole k mode), all bytes of its elements
                        lie in one aligned `line`-byte line (PTX ISA 9.7.16.3.1.2: a 48-byte K slice
                        packed contiguously "would overflow the 128B shared memory boundary");
  read-by DESC          a shared-memory descriptor reads exactly this (mn, k) layout, every k-step;
  written-by --tma P    a TMA tiled box writes exactly this layout (both: solver.prove.layout_io).

A layout may also be given as GF(2) bases (Triton's LinearLayout; solver.gf2.bases): BasesSubject,
linear by construction, for injective, bijective and equals. --param: every instance linear -> one GF(2)
decision per distinct bit matrix; otherwise one Z3 query with the parameters as bounded variables when
each is a whole stride or the offset (_prove_params); otherwise instance by instance.

Engines: a layout that is affine over GF(2) (solver.gf2.layout) is decided by rank and kernel
(solver.gf2.matrix); any other by Z3 over the model solver.model.cute_layout (written apart from spec);
a domain of at most ENUMERATION_LIMIT coordinates is also enumerated by spec as a cross-check, and
engines that disagree make the answer "unknown". Every counterexample is replayed by spec's own
evaluation of the layout before the answer is "refuted". Each engine answers only inside the
preconditions of its claims, checked in code before it answers: GF(2) (gf2_unmet: an affine map; for
bijective and inside, power-of-two elements; for inside, elements no wider than the line, their
addresses multiples of their size and a power-of-two slice), the mixed-radix criterion
(mixed_radix.proves_injective: a bijective swizzle), Z3 (z3_width: bit-vectors wide enough for every
value the question produces, the k-slice and the range included) and enumeration (ENUMERATION_MAX);
a question outside them goes to the next engine, or is "unknown" under --engine gf2.
tests/solver_tests/prove/test_prove_engines_differential.py checks every engine against the definitions.
"""
from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, field
from typing import Optional, Union

from spec.cute.layout import ComposedLayout, Layout, flatten, idx2crd, is_tuple
from spec.cute.notation import parse_layout
from spec.mma import dtypes
from spec.rule import SpecError

from solver.gf2 import bases as bases_io
from solver.gf2 import matrix
from solver.gf2.bases import BasesLayout
from solver.gf2.layout import Affine, linearize, power_of_two_log
from solver.prove import mixed_radix
from solver.model.address_map import AddressMap

PROPERTIES = ("injective", "bijective", "equals", "inside", "read-by", "written-by")
ENGINES = ("auto", "gf2", "z3", "enumeration")     # auto may also answer by "radix" (injective)
ENUMERATION_LIMIT = 1 << 12      # spec enumerates domains this small as a cross-check
MAX_INSTANCES = 4096             # --param value combinations
SOURCE = "CuTe docs 01_layout.md (layouts), cute/swizzle.hpp (Swizzle<B,M,S>); PTX ISA 9.7.16.3.1.2 (inside)"
RULES = ["layout.notation", "layout.colexicographic", "swizzle.cute.formula"]


# --- the subject ------------------------------------------------------------------------------------------

@dataclass
class Subject:
    text: str
    layout: Union[Layout, ComposedLayout]
    element_bytes: int
    start: int
    amap: AddressMap
    linear: Union[Affine, str]       # the affine map, or why there is none

    @property
    def inner(self) -> Layout:
        return self.layout.layout if isinstance(self.layout, ComposedLayout) else self.layout

    @property
    def size(self) -> int:
        return self.inner.size()

    def address(self, coordinate) -> int:
        """spec's evaluation: the byte address of a 1-D index or a coordinate tuple."""
        offset = self.inner(coordinate)
        if isinstance(self.layout, ComposedLayout):
            return self.layout.swizzle(self.start + self.element_bytes * (self.layout.offset + offset))
        return self.start + self.element_bytes * offset

    def coordinate(self, index: int):
        return _json(idx2crd(index, self.inner.shape))


def _json(value):
    return [_json(v) for v in value] if is_tuple(value) else value


def element_bytes(dtype: Optional[str]) -> int:
    if dtype is None:
        return 1
    d = dtypes.dtype(dtype)
    if d.bits < 8:
        raise SpecError("dtype", dtype, "prove --layout addresses whole bytes: sub-byte types are not "
                        "supported (use a byte type of the same width in bytes, or no --dtype)",
                        dtypes.DTYPE_TABLE.id)
    return d.bits // 8


@dataclass
class BasesSubject:
    """A layout given as GF(2) bases (Triton's LinearLayout, solver.gf2.bases): linear by construction;
    its values are addresses as given (offset included): --dtype and --smem-address do not apply."""
    bases: BasesLayout
    element_bytes: int = 1
    start: int = 0
    amap: None = None

    @property
    def text(self) -> str:
        return self.bases.notation()

    @property
    def linear(self) -> Affine:
        return Affine(self.bases.columns, self.bases.offset, self.bases.mode_bits)

    @property
    def size(self) -> int:
        return self.bases.size

    def address(self, coordinate) -> int:
        return self.bases(self.bases.index(coordinate))

    def coordinate(self, index: int):
        return self.bases.coordinate(index)


MAX_LEAVES = 64                  # leaves of a layout: far more than any tile has (a 64-bit index holds 64)
MAX_COORDINATES = 1 << 64        # a layout's size: CuTe indexes with at most 64-bit integers


def _check_extent(text, leaves: int, size: int, what: str = "leaves") -> None:
    """Refused before any engine runs: more leaves (bases: input bits) or coordinates than a 64-bit index
    can number (the engines' work and the numbers they print grow with both)."""
    if leaves > MAX_LEAVES:
        raise SpecError("layout", text, f"{leaves} {what}: prove --layout takes at most {MAX_LEAVES}",
                        "layout.notation")
    if size > MAX_COORDINATES:
        raise SpecError("layout", text, f"a size of {size.bit_length()} bits: prove --layout takes at most "
                        "2^64 coordinates", "layout.notation")


def refuse_non_cute_swizzle(layout) -> None:
    """spec.cute.swizzle.refuse_outside_cute, for the layout texts users give prove_layout."""
    from spec.cute import swizzle as cute_swizzle
    cute_swizzle.refuse_outside_cute(layout)


def make_subject(layout, dtype: Optional[str] = None, start: int = 0, bytes_: Optional[int] = None) -> Subject:
    if bases_io.looks_like_bases(layout):
        bases = bases_io.load(layout)
        _check_extent(bases.notation()[:80], len(bases.columns), bases.size, "input bits (bases)")
        if bases.in_elements and (dtype is not None or bytes_ is not None):   # Gluon offset_bases
            bases = bases.scaled(element_bytes(dtype) if bytes_ is None else bytes_)
        return BasesSubject(bases)
    parsed = parse_layout(layout) if isinstance(layout, str) else layout
    inner = parsed.layout if isinstance(parsed, ComposedLayout) else parsed
    _check_extent(layout if isinstance(layout, str) else "<layout>", len(flatten(inner.shape)), inner.size())
    if inner.has_basis_strides():
        raise SpecError("layout", inner.notation(), "prove --layout needs integer strides (addresses), "
                        "not basis strides", "layout.basis_strides")
    if start < 0:
        raise SpecError("start_address", start, "must be non-negative", "layout.notation")
    b = element_bytes(dtype) if bytes_ is None else bytes_
    shape, stride = inner.shape, inner.stride
    top = zip(shape, stride) if is_tuple(shape) else [(shape, stride)]
    modes = tuple(tuple(zip(flatten(s), flatten(d))) for s, d in top)
    offset = parsed.offset if isinstance(parsed, ComposedLayout) else 0
    swizzle = None
    if isinstance(parsed, ComposedLayout) and not parsed.swizzle.is_identity():
        sw = parsed.swizzle
        swizzle = (sw.bits, sw.base, sw.shift)
    amap = AddressMap(modes, b, start + b * offset, swizzle)
    return Subject(parsed.notation(), parsed, b, start, amap, linearize(amap))


def _bases_document(s: Subject) -> dict:
    a = s.linear
    return bases_io.describe(bases_io.from_affine(a.columns, a.offset, a.mode_bits), s.element_bytes)


# --- results ----------------------------------------------------------------------------------------------

@dataclass
class LayoutResult:
    id: str
    statement: str
    domain: str
    status: str
    engine: str
    seconds: float
    counterexample: Optional[dict] = None
    reason: str = ""
    cross_checked_by: list = field(default_factory=list)
    layout: str = ""
    bases: Optional[dict] = None
    expected: str = "proved"
    source: str = SOURCE
    rules: list = field(default_factory=lambda: list(RULES))

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def as_json(self) -> dict:
        document = {"id": self.id, "statement": self.statement, "domain": self.domain,
                    "source": self.source, "rules": self.rules, "status": self.status, "expected": self.expected,
                    "seconds": round(self.seconds, 6), "counterexample": self.counterexample,
                    "engine": self.engine, "cross_checked_by": self.cross_checked_by, "layout": self.layout}
        if self.reason:
            document["reason"] = self.reason
        if self.bases is not None:
            document["bases"] = self.bases
        return document


@dataclass
class Question:
    """What is asked, with its parameters resolved."""
    prop: str
    lo: int = 0
    hi: int = 0
    line: int = 128
    k_slice: int = 0
    k_extent: int = 0        # inside: the size of the k mode

    @property
    def slice(self) -> int:
        """The k-slice the engines ask about: one at least as long as the k mode is the whole k mode
        (every k is in slice 0), the same question with no number larger than the layout."""
        return min(self.k_slice, self.k_extent) if self.k_extent else self.k_slice


# A verdict of one engine: ("proved", None), ("refuted", witness) or ("unknown", reason); a witness is a
# tuple naming what spec replays: ("collide", i, j), ("outside", i), ("count",), ("differ", i),
# ("sizes",), ("cross", row, k1, k2).


# --- GF(2) ------------------------------------------------------------------------------------------------
# The engine's claims hold under preconditions, each checked by gf2_unmet before it answers; a question
# outside them goes to another engine (auto) or is "unknown" (--engine gf2).

def _gf2_injective(a: Affine):
    """An affine map on the index bits (every extent a power of two: linearize): two indices share an
    address iff their XOR is in the kernel of the columns."""
    kernel = matrix.Basis(list(a.columns)).kernel
    return ("refuted", ("collide", 0, kernel[0])) if kernel else ("proved", None)


def _gf2_bijective(a: Affine, q: Question, b: int):
    """b a power of two (gf2_unmet): an address is on a b-byte slot of [lo, hi) iff its low log2(b) bits
    are lo's, and the low bits of offset XOR (columns) are lo's for every index iff the offset's are and
    every column's are zero."""
    low = b - 1
    if (a.offset ^ q.lo) & low:
        return "refuted", ("outside", 0)
    for j, c in enumerate(a.columns):
        if c & low:
            return "refuted", ("outside", 1 << j)
    basis = matrix.Basis(list(a.columns))
    if basis.kernel:
        return "refuted", ("collide", 0, basis.kernel[0])
    smallest, at = basis.extreme(a.offset, largest=False)
    if smallest < q.lo:
        return "refuted", ("outside", at)
    largest, at = basis.extreme(a.offset, largest=True)
    if largest >= q.hi:
        return "refuted", ("outside", at)
    if (1 << a.bits) * b != q.hi - q.lo:   # injective and inside: fewer elements than slots
        return "refuted", ("count",)
    return "proved", None


def _gf2_equals(a: Affine, other: Affine):
    if a.offset != other.offset:
        return "refuted", ("differ", 0)
    for j, (x, y) in enumerate(zip(a.columns, other.columns)):
        if x != y:
            return "refuted", ("differ", 1 << j)
    return "proved", None


def _gf2_inside(a: Affine, q: Question):
    """Under gf2_unmet's preconditions (the slice 2^t elements, the elements' start addresses multiples
    of b, b <= line, both powers of two): the elements of one slice are offset XOR (the columns of the
    k index's low t bits, XORed over all their subsets); they all lie in the line of the slice's first
    iff none of those t columns has a bit at or above log2(line), and then each element's last byte
    a + b - 1 is in a's line too (a is a multiple of b and b divides the line)."""
    shift = power_of_two_log(q.line)
    n0 = a.mode_bits[0]
    for bit in range(power_of_two_log(q.slice)):
        if a.columns[n0 + bit] >> shift:
            return "refuted", ("cross", 0, 0, 1 << bit)
    return "proved", None


def _gf2_map(s: Subject, q: Question) -> Union[Affine, str]:
    """The affine map GF(2) decides, or why there is none. injective only: a base that carries into the
    offsets is added before a swizzle that is a bijection (B == 0 or S != 0), so base + X(i) ==
    base + X(j) iff X(i) == X(j): the unswizzled offsets from base 0 decide it."""
    if not isinstance(s.linear, str):
        return s.linear
    if q.prop == "injective" and "base address" in s.linear and mixed_radix.swizzle_is_bijective(s.amap.swizzle):
        plain = linearize(AddressMap(s.amap.modes, s.element_bytes, 0, None))
        if isinstance(plain, Affine):
            return plain
    return s.linear


def gf2_unmet(s: Subject, q: Question, other: Optional[Subject] = None) -> Optional[str]:
    """Why GF(2)'s claims do not cover this question; None when they do."""
    a = _gf2_map(s, q)
    if isinstance(a, str):
        return a
    b = s.element_bytes
    if q.prop == "bijective" and power_of_two_log(b) is None:
        return f"{b}-byte elements: the slot test reads the low bits of a power-of-two size"
    if q.prop == "equals" and other.size == s.size and isinstance(other.linear, str):
        return f"the second layout: {other.linear}"
    if q.prop == "inside":
        if len(a.mode_bits) != 2:
            return "inside needs a rank-2 layout"
        if power_of_two_log(b) is None or b > q.line:
            return (f"{b}-byte elements are wider than the {q.line}-byte line" if b > q.line else
                    f"{b}-byte elements: not a power of two")
        if a.offset & (b - 1) or any(c & (b - 1) for c in a.columns):
            return f"element addresses that are not multiples of {b}: an element may straddle a line"
        if power_of_two_log(q.slice) is None:
            return f"a k-slice of {q.slice} elements, not a power of two"
    return None


def decide_gf2(s: Subject, q: Question, other: Optional[Subject] = None):
    """A verdict, or None when the question is outside GF(2)'s preconditions (gf2_unmet says why)."""
    if q.prop == "equals" and other.size != s.size:
        return "refuted", ("sizes",)
    if gf2_unmet(s, q, other) is not None:
        return None
    a = _gf2_map(s, q)
    if q.prop == "injective":
        return _gf2_injective(a)
    if q.prop == "bijective":
        return _gf2_bijective(a, q, s.element_bytes)
    if q.prop == "equals":
        return _gf2_equals(a, other.linear)
    return _gf2_inside(a, q)


# --- Z3 ---------------------------------------------------------------------------------------------------

def z3_width(s: Subject, q: Question, other: Optional[Subject] = None) -> int:
    """The bit-vectors' width, derived from every input so that no value of the question wraps: the
    maps' addresses (|base| + bytes * sum((extent - 1) * |stride|) + bytes), sizes and swizzle bits with
    a sign bit and headroom (solver.model.cute_layout.width, affine_width), and each constant the
    question adds (inside: the line and the k-slice; bijective: the range), with a sign bit and one bit
    of headroom, so that the difference of an address and a constant does not wrap either. Z3's answers
    hold only at such a width: a slice of 2^17 + 1 elements in 17 bits is a slice of 1."""
    from solver.model import cute_layout as model

    def width(subject):
        if subject.amap is None:
            return model.affine_width(subject.linear.columns, subject.linear.offset)
        return model.width(subject.amap)

    constants = {"inside": (q.line, q.slice), "bijective": (q.lo, q.hi)}.get(q.prop, ())
    return max([width(x) for x in (s, other) if x is not None] + [abs(c).bit_length() + 2 for c in constants])


def decide_z3(s: Subject, q: Question, other: Optional[Subject] = None, timeout: float = 30.0,
              symbolic: Optional[dict] = None):
    """symbolic: {"width": bits, "build": w -> (s, other, constraints, {name: term})} when strides or the
    base are parameters: s and other are then the maps at the parameters' largest magnitudes (so that the
    width bounds every instance) and `build` gives the maps over w-bit parameter terms; a refutation
    stores the parameters' values in symbolic["found"]."""
    import z3
    from solver.model import cute_layout as model

    m = s.amap

    def run(*constraints):
        # a fresh non-incremental QF_BV solver per query (the queries are independent): its
        # preprocessing (bit-blasting after simplification) is much faster than push/pop's
        ctx_solver = z3.SolverFor("QF_BV")
        ctx_solver.set("random_seed", 0)
        ctx_solver.set("timeout", max(1, int(timeout * 1000)))
        ctx_solver.add(*constraints)
        if symbolic:
            ctx_solver.add(*symbolic["constraints"])
        answer = ctx_solver.check()
        if answer == z3.sat and symbolic:
            found_ = ctx_solver.model()
            symbolic["found"] = {n: found_.eval(v, model_completion=True).as_signed_long()
                                 for n, v in symbolic["vars"].items()}
        result = (answer, ctx_solver.model() if answer == z3.sat else None,
                  ctx_solver.reason_unknown() if answer == z3.unknown else "")
        return result

    def value(model_, term):
        return model_.eval(term, model_completion=True).as_long()

    if q.prop == "equals" and other.size != s.size:
        return "refuted", ("sizes",)

    def addr(subject, index):
        if subject.amap is None:
            return model.affine_address(subject.linear.columns, subject.linear.offset, index, w)
        return model.address(subject.amap, index, w)

    w = z3_width(s, q, other)
    if symbolic:   # s and other are the maps at the parameters' largest magnitudes: w bounds every value
        w = max(w, symbolic["width"])
        s, other, symbolic["constraints"], symbolic["vars"] = symbolic["build"](w)
        m = s.amap
    i, i_ok = model.index_in("i", s.size, w)
    if q.prop in ("injective", "bijective"):
        j, j_ok = model.index_in("j", s.size, w)
        answer, found, why = run(i_ok, j_ok, i != j, addr(s, i) == addr(s, j))
        if answer == z3.unknown:
            return "unknown", f"z3: {why}"
        if answer == z3.sat:
            return "refuted", ("collide", value(found, i), value(found, j))
        if q.prop == "injective":
            return "proved", None
        a = addr(s, i)
        lo, hi = z3.BitVecVal(q.lo, w), z3.BitVecVal(q.hi, w)
        off_slot = (a - lo) & z3.BitVecVal(s.element_bytes - 1, w) != 0
        answer, found, why = run(i_ok, z3.Or(a < lo, a >= hi, off_slot))
        if answer == z3.unknown:
            return "unknown", f"z3: {why}"
        if answer == z3.sat:
            return "refuted", ("outside", value(found, i))
        return ("proved", None) if s.size * s.element_bytes == q.hi - q.lo else ("refuted", ("count",))
    if q.prop == "equals":
        answer, found, why = run(i_ok, addr(s, i) != addr(other, i))
        if answer == z3.unknown:
            return "unknown", f"z3: {why}"
        return ("refuted", ("differ", value(found, i))) if answer == z3.sat else ("proved", None)
    # inside
    rows, ks = m.mode_size(0), m.mode_size(1)
    r, r_ok = model.index_in("row", rows, w)
    k1, k1_ok = model.index_in("k1", ks, w)
    k2, k2_ok = model.index_in("k2", ks, w)
    n = z3.BitVecVal(q.slice, w)
    row_offset = model.mode_offset(m, 0, r, w)
    a1 = model.address_of_offset(m, row_offset + model.mode_offset(m, 1, k1, w), w)
    a2 = model.address_of_offset(m, row_offset + model.mode_offset(m, 1, k2, w), w)
    shift = z3.BitVecVal(power_of_two_log(q.line), w)
    last = a2 + z3.BitVecVal(s.element_bytes - 1, w)
    answer, found, why = run(r_ok, k1_ok, k2_ok, z3.UDiv(k1, n) == z3.UDiv(k2, n), a1 >> shift != last >> shift)
    if answer == z3.unknown:
        return "unknown", f"z3: {why}"
    if answer == z3.sat:
        return "refuted", ("cross", value(found, r), value(found, k1), value(found, k2))
    return "proved", None


# --- spec enumeration -------------------------------------------------------------------------------------

ENUMERATION_MAX = 1 << 22        # --engine enumeration: larger domains are refused before any work


def decide_enumeration(s: Subject, q: Question, other: Optional[Subject] = None):
    size = max(s.size, other.size if other is not None else 0)
    if size > ENUMERATION_MAX:
        raise SpecError("engine", "enumeration", f"the layout has {size} coordinates; enumeration lists at "
                        f"most {ENUMERATION_MAX}", "layout.notation")
    addresses = [s.address(i) for i in range(s.size)]
    if q.prop in ("injective", "bijective"):
        seen = {}
        for i, a in enumerate(addresses):
            if a in seen:
                return "refuted", ("collide", seen[a], i)
            seen[a] = i
        if q.prop == "injective":
            return "proved", None
        for i, a in enumerate(addresses):
            if not (q.lo <= a < q.hi and (a - q.lo) % s.element_bytes == 0):
                return "refuted", ("outside", i)
        return ("proved", None) if s.size * s.element_bytes == q.hi - q.lo else ("refuted", ("count",))
    if q.prop == "equals":
        if other.size != s.size:
            return "refuted", ("sizes",)
        for i, a in enumerate(addresses):
            if other.address(i) != a:
                return "refuted", ("differ", i)
        return "proved", None
    rows, ks = s.amap.mode_size(0), s.amap.mode_size(1)
    b, line = s.element_bytes, q.line
    for row in range(rows):
        for first in range(0, ks, q.k_slice):
            span = range(first, min(ks, first + q.k_slice))
            home = addresses[row + rows * first] // line
            for k in span:
                a = addresses[row + rows * k]
                if a // line != home or (a + b - 1) // line != home:
                    return "refuted", ("cross", row, first, k)
    return "proved", None


# --- replay by spec ---------------------------------------------------------------------------------------

def replay(s: Subject, q: Question, witness: tuple, other: Optional[Subject] = None):
    """(counterexample document, confirmed by spec?)."""
    kind = witness[0]
    if kind == "collide":
        i, j = witness[1], witness[2]
        a, b = s.address(i), s.address(j)
        return ({"coordinates": [s.coordinate(i), s.coordinate(j)], "indices": [i, j],
                 "addresses": [a, b]}, i != j and a == b)
    if kind == "outside":
        i = witness[1]
        a = s.address(i)
        ok = not (q.lo <= a < q.hi and (a - q.lo) % s.element_bytes == 0)
        return {"coordinate": s.coordinate(i), "index": i, "address": a, "range": [q.lo, q.hi]}, ok
    if kind == "count":
        slots = (q.hi - q.lo) // s.element_bytes
        document = {"elements": s.size, "slots": slots, "range": [q.lo, q.hi]}
        missing = _missing_slot(s, q)
        if missing is not None:
            document["unused_address"] = missing
        return document, s.size < slots
    if kind == "sizes":
        return {"sizes": [s.size, other.size]}, s.size != other.size
    if kind == "differ":
        i = witness[1]
        a, b = s.address(i), other.address(i)
        return {"coordinate": s.coordinate(i), "index": i, "addresses": [a, b]}, a != b
    row, k1, k2 = witness[1:]
    shape = s.inner.shape
    a, b = s.address((row, k1)), s.address((row, k2))
    # the two elements' bytes are [a, a + e) and [b, b + e): their ends name every line they touch
    ends = [a, a + s.element_bytes - 1, b, b + s.element_bytes - 1]
    other = next((x for x in ends if x // q.line != a // q.line), a)
    lines = [a // q.line, other // q.line]
    same_slice = k1 // q.k_slice == k2 // q.k_slice
    coordinates = [[_json(idx2crd(row, shape[0])), _json(idx2crd(k, shape[1]))] for k in (k1, k2)]
    return ({"row": row, "k": [k1, k2], "coordinates": coordinates, "addresses": [a, b], "bytes": [a, other],
             "lines": lines}, same_slice and lines[0] != lines[1])


def _missing_slot(s: Subject, q: Question) -> Optional[int]:
    """An unused slot address, when one is cheap to name (linear map: span membership; small: spec)."""
    if isinstance(s.linear, Affine):      # a few slots from each end and at powers of two: not 2^bits of them
        basis = matrix.Basis(list(s.linear.columns))
        slots = (q.hi - q.lo) // s.element_bytes
        picks = [*range(min(slots, 64)), *range(max(0, slots - 64), slots),
                 *(1 << k for k in range(slots.bit_length()))]
        for t in picks:
            a = q.lo + s.element_bytes * t
            if t < slots and basis.contains(a ^ s.linear.offset) is None:
                return a
        return None
    if s.size <= ENUMERATION_LIMIT:
        used = {s.address(i) for i in range(s.size)}
        return next((a for a in range(q.lo, q.hi, s.element_bytes) if a not in used), None)
    return None


# --- the question -----------------------------------------------------------------------------------------

def resolve(s: Subject, prop: str, range_=None, line: int = 128, k_slice: Optional[int] = None) -> Question:
    if prop not in PROPERTIES:
        raise SpecError("property", prop, "expected one of " + " ".join(PROPERTIES), "layout.notation")
    q = Question(prop, line=line)
    if isinstance(s, BasesSubject):
        if prop in ("inside", "read-by", "written-by"):
            raise SpecError("property", prop, "a bases layout takes injective, bijective or equals",
                            "layout.notation")
        if prop == "bijective" and range_ is None:
            q.lo, q.hi = 0, s.bases.out_size or s.size    # onto its output space (default: 2^bits)
            return q
    if prop == "bijective":
        if range_ is None:
            q.lo = s.amap.base
            q.hi = q.lo + s.element_bytes * s.inner.cosize()
        else:
            q.lo, q.hi = range_
            if q.lo % s.element_bytes or q.hi % s.element_bytes or q.hi < q.lo:
                raise SpecError("range", f"{q.lo},{q.hi}", f"needs lo <= hi, both multiples of the element "
                                f"size ({s.element_bytes} bytes)", "layout.notation")
    if prop == "inside":
        if s.inner.rank != 2:
            raise SpecError("layout", s.text, "inside needs a rank-2 layout (row, k)", "layout.notation")
        if power_of_two_log(line) is None:
            raise SpecError("line", line, "must be a power of two", "layout.notation")
        q.k_extent = s.amap.mode_size(1)
        q.k_slice = q.k_extent if k_slice is None else k_slice
        if q.k_slice < 1:
            raise SpecError("k_slice", q.k_slice, "must be at least 1", "layout.notation")
    return q


STATEMENTS = {
    "injective": "no two coordinates of {L} share an address",
    "bijective": "{L} maps its coordinates one-to-one onto the {b}-byte slots of [{lo:#x}, {hi:#x})",
    "equals": "{L} and {L2} give the same address at every coordinate",
    "inside": "every {n}-element k-slice of every row of {L} lies inside one aligned {line}-byte line",
}


def _one(s: Subject, q: Question, other: Optional[Subject], engine: str, timeout: float,
         cross_check: bool = True):
    """(status, engine, cross_checked_by, witness or reason) for one instance."""
    primary, name = None, engine
    if engine in ("auto", "gf2"):
        primary, name = decide_gf2(s, q, other), "gf2"
        if primary is None and engine == "gf2":
            return "unknown", "gf2", [], f"outside GF(2)'s preconditions: {gf2_unmet(s, q, other)}"
    if primary is None and engine == "auto" and q.prop == "injective" and s.amap is not None \
            and mixed_radix.proves_injective(s.amap):
        primary, name = ("proved", None), "radix"
    if primary is None and engine in ("auto", "z3"):
        primary, name = decide_z3(s, q, other, timeout), "z3"
    if primary is None:   # engine == "enumeration"
        primary, name = decide_enumeration(s, q, other), "enumeration"
    checked = []
    sizes_ok = s.size <= ENUMERATION_LIMIT and (other is None or other.size <= ENUMERATION_LIMIT)
    if name != "enumeration" and engine == "auto" and sizes_ok and cross_check and primary[0] != "unknown":
        cross = decide_enumeration(s, q, other)
        if cross[0] != primary[0]:
            return "unknown", name, [], (f"engines disagree: {name} says {primary[0]}, spec enumeration "
                                         f"says {cross[0]}")
        checked.append("enumeration")
    return primary[0], name, checked, primary[1]


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def parse_param(text: str) -> tuple:
    """NAME=lo..hi[:step] -> (NAME, range of values)."""
    found = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*(-?\w+)\s*\.\.\s*(-?\w+)\s*(?::\s*(\w+))?\s*", text)
    if not found:
        raise SpecError("param", text, "expected NAME=lo..hi or NAME=lo..hi:step (hi included)",
                        "layout.notation")
    try:
        lo, hi = int(found.group(2), 0), int(found.group(3), 0)
        step = int(found.group(4), 0) if found.group(4) else 1
    except ValueError:
        raise SpecError("param", text, "the bounds and step are integers", "layout.notation") from None
    if step < 1 or hi < lo:
        raise SpecError("param", text, "needs lo <= hi and step >= 1", "layout.notation")
    return found.group(1), range(lo, hi + 1, step)


NOTATION_WORDS = ("Sw", "Swizzle", "o")    # the words of CuTe notation (spec.cute.notation): not names


def check_param_name(name) -> None:
    """A parameter is a word of its own: letters, digits and '_' from a letter, and not a word the
    notation itself uses (a parameter `o` or `Sw` would be substituted for the composition or the
    swizzle)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise SpecError("param", name, "a name is a letter followed by letters, digits or '_'", "layout.notation")
    if name in NOTATION_WORDS:
        raise SpecError("param", name, "is a word of the layout notation (" + ", ".join(NOTATION_WORDS)
                        + "): name the parameter otherwise", "layout.notation")


def _substitute(text: str, values: dict) -> str:
    return _NAME.sub(lambda m: str(values[m.group(0)]) if m.group(0) in values else m.group(0), text)


def prove_layout(layout: str, prop: str, *, dtype: Optional[str] = None, start_address: int = 0,
                 other: Optional[str] = None, range_=None, line: int = 128, k_slice: Optional[int] = None,
                 params: Optional[dict] = None, engine: str = "auto", timeout: float = 30.0,
                 descriptor=None, arch: Optional[str] = None, major: Optional[str] = None,
                 k_steps: Optional[int] = None, tma=None, coords=None,
                 cute_swizzles_only: bool = False) -> LayoutResult:
    """Prove `prop` of `layout` (CuTe notation; with `params`, for every value of each named parameter:
    {name: iterable of ints}). read-by takes `descriptor` (word or hex text), `arch`, `major` and
    optionally `k_steps`; written-by takes `tma` (a tma check document, or its path) and optionally
    `coords`. Returns a LayoutResult; malformed input raises SpecError. cute_swizzles_only (what the
    command line and layoutproof.prove_layout ask): a swizzle C++ CuTe refuses is refused
    (refuse_non_cute_swizzle); the engines' own tests ask about such swizzles too."""
    began = time.perf_counter()
    if engine not in ENGINES:
        raise SpecError("engine", engine, "expected one of " + " ".join(ENGINES), "layout.notation")
    if cute_swizzles_only:
        for text in (layout, other):
            refuse_non_cute_swizzle(text)
    if prop in ("read-by", "written-by"):
        if bases_io.looks_like_bases(layout):
            raise SpecError("property", prop, "a bases layout takes injective, bijective or equals",
                            "layout.notation")
        if params:
            raise SpecError("param", ",".join(params), f"{prop} takes no --param", "layout.notation")
        return _prove_io(layout, prop, dtype, start_address, engine, began, descriptor, arch, major,
                         k_steps, tma, coords)
    if prop == "equals" and other is None:
        raise SpecError("property", prop, "equals needs a second layout", "layout.notation")
    if params and (bases_io.looks_like_bases(layout) or (other is not None and bases_io.looks_like_bases(other))):
        raise SpecError("param", ",".join(params), "a bases layout takes no --param", "layout.notation")
    instances = 1
    for name, values in (params or {}).items():     # counted before any list is made (ranges know their length)
        check_param_name(name)
        instances *= len(values) if hasattr(values, "__len__") else MAX_INSTANCES + 1
        if instances > MAX_INSTANCES:
            raise SpecError("param", name, f"at most {MAX_INSTANCES} value combinations in all", "layout.notation")
        texts = [t for t in (layout, other) if isinstance(t, str)]
        if not any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", t) for t in texts):
            raise SpecError("param", name, "names nothing in the layout", "layout.notation")
    params = {name: list(values) for name, values in (params or {}).items()}
    names = list(params)
    if params and engine in ("auto", "z3"):
        decided = _prove_params(layout, prop, other, dtype, start_address, range_, line, k_slice, params,
                                engine, timeout, began)
        if decided is not None:
            return decided
    engines_used: dict = {}
    result = None
    for combination in itertools.product(*(params[n] for n in names)):
        values = dict(zip(names, combination))
        text = _substitute(layout, values) if isinstance(layout, str) else layout
        s = make_subject(text, dtype, start_address)
        o = make_subject(_substitute(other, values) if isinstance(other, str) else other, dtype,
                         start_address) if prop == "equals" else None
        q = resolve(s, prop, range_, line, k_slice)
        left = timeout - (time.perf_counter() - began)     # --timeout bounds the whole range, not each value
        if left <= 0:
            done = sum(engines_used.values())
            status, name, checked, detail = "unknown", engine, [], (f"time limit: {done} of {instances} values "
                                                                     f"proved in {timeout:g} s")
        else:
            status, name, checked, detail = _one(s, q, o, engine, left, cross_check=not params)
            engines_used[name] = engines_used.get(name, 0) + 1
        counterexample, reason = None, ""
        if status == "refuted":
            counterexample, confirmed = replay(s, q, detail, o)
            if not confirmed:
                status, reason = "unknown", f"spec does not confirm the {name} counterexample: engine and spec disagree"
            elif values:
                counterexample = {"params": values, **counterexample}
        elif status == "unknown":
            reason = detail
        statement = STATEMENTS[prop].format(L=layout if isinstance(layout, str) and not isinstance(s, BasesSubject)
                                            else s.text, L2=o.text if isinstance(o, BasesSubject) else other, b=s.element_bytes, lo=q.lo, hi=q.hi,
                                            n=q.k_slice, line=q.line)
        where = f"{s.size} coordinates" + (f", {dtype} ({s.element_bytes} B)" if dtype and not isinstance(s, BasesSubject)
                                           else ", element offsets" if not isinstance(s, BasesSubject)
                                           else ", addresses as the bases give them") \
            + (f", start {start_address:#x}" if start_address else "")
        if values:
            where += "; " + ", ".join(f"{n} in {_range_text(params[n])}" for n in names) + \
                     f" ({instances} instances)"
        bases = None
        if isinstance(s, BasesSubject):
            bases = bases_io.describe(s.bases)
        elif not params and isinstance(s.linear, Affine):
            bases = _bases_document(s)
        result = LayoutResult(f"layout.{prop}", statement, where, status, name, 0.0, counterexample, reason,
                              checked, s.text if not params else layout, bases)
        if status != "proved":
            break
    if params and result.status == "proved":
        result.engine = "+".join(f"{n}" for n in engines_used)
        result.reason = "per instance: " + ", ".join(f"{k} {v}" for k, v in engines_used.items())
    result.seconds = time.perf_counter() - began
    return result


# --- symbolic parameters ----------------------------------------------------------------------------------

_SENTINELS = (1000003, 1000033, 1000037, 1000039, 1000081, 1000099, 1000117, 1000121)


def _template(text: str, names: list, dtype, start):
    """The layout's map with each parameter as a placeholder (its name) where it is a whole stride or the
    offset: ((mode leaves (extent, stride or name)), base or name, bytes, swizzle), or None when a
    parameter is anything else (an extent, a swizzle field, part of an expression)."""
    if len(names) > len(_SENTINELS) // 2:
        return None
    one = {n: _SENTINELS[k] for k, n in enumerate(names)}
    two = {n: _SENTINELS[k + len(_SENTINELS) // 2] for k, n in enumerate(names)}
    try:
        m1, m2 = (make_subject(_substitute(text, v), dtype, start).amap for v in (one, two))
    except Exception:      # a sentinel the notation refuses: the parameter is not a plain stride/offset
        return None
    if m1.swizzle != m2.swizzle or m1.element_bytes != m2.element_bytes or len(m1.modes) != len(m2.modes):
        return None

    def which(x, y, scale=1):
        return next((n for n in names if x == scale * one[n] and y == scale * two[n]), None)

    modes = []
    for mode1, mode2 in zip(m1.modes, m2.modes):
        if len(mode1) != len(mode2):
            return None
        leaves = []
        for (e1, d1), (e2, d2) in zip(mode1, mode2):
            if e1 != e2:
                return None
            name = d1 if d1 == d2 else which(d1, d2)
            if name is None:
                return None
            leaves.append((e1, name))
        modes.append(tuple(leaves))
    base = m1.base if m1.base == m2.base else which(m1.base - start, m2.base - start, m1.element_bytes)
    if base is None:
        return None
    return tuple(modes), base, m1.element_bytes, m1.swizzle


def _dominating(template, magnitude: dict, start: int) -> AddressMap:
    """A map whose every address term is at least as large in magnitude as any instance's: each
    parameter stride at its largest magnitude, and the base at |start| + bytes * the offset's largest
    magnitude (the instance maps at the largest parameters do not bound it: start + bytes * offset is
    smallest where a negative offset cancels the start)."""
    modes, base, b, swizzle = template
    dominating_base = abs(start) + b * magnitude[base] if isinstance(base, str) else base
    return AddressMap(tuple(tuple((e, magnitude[d] if isinstance(d, str) else d) for e, d in mode)
                            for mode in modes), b, dominating_base, swizzle)


def _prove_params(layout, prop, other, dtype, start, range_, line, k_slice, params, engine, timeout,
                  began) -> Optional[LayoutResult]:
    """--param over a whole range at once: every instance linear -> GF(2) once per distinct bit matrix;
    otherwise ONE Z3 query with the parameters as bounded variables (strides or offset only). None when
    neither applies (the caller then proves instance by instance)."""
    if not isinstance(layout, str) or (other is not None and not isinstance(other, str)):
        return None
    names = list(params)
    where_params = "; " + ", ".join(f"{n} in {_range_text(params[n])}" for n in names)
    instances = 1
    for n in names:
        instances *= len(params[n])

    def finish(status, name, s, o, q, detail, values, reason):
        counterexample = None
        if status == "refuted":
            counterexample, confirmed = replay(s, q, detail, o)
            if not confirmed:
                status, reason = "unknown", f"spec does not confirm the {name} counterexample: engine and spec disagree"
                counterexample = None
            else:
                counterexample = {"params": values, **counterexample}
        elif status == "unknown":
            reason = detail
        statement = STATEMENTS[prop].format(L=layout, L2=other, b=s.element_bytes, lo=q.lo, hi=q.hi,
                                            n=q.k_slice, line=q.line)
        where = f"{s.size} coordinates" + (f", {dtype} ({s.element_bytes} B)" if dtype else ", element offsets") \
            + (f", start {start:#x}" if start else "") + where_params + f" ({instances} instances)"
        result = LayoutResult(f"layout.{prop}", statement, where, status, name, 0.0, counterexample, reason,
                              [], layout, None)
        result.seconds = time.perf_counter() - began
        return result

    # 1. every instance linear over GF(2): decide each distinct bit matrix once
    if engine == "auto":
        verdicts: dict = {}
        all_linear = True
        for combination in itertools.product(*(params[n] for n in names)):
            values = dict(zip(names, combination))
            s = make_subject(_substitute(layout, values), dtype, start)
            o = make_subject(_substitute(other, values), dtype, start) if prop == "equals" else None
            q = resolve(s, prop, range_, line, k_slice)
            key = (s.linear, o.linear if o else None, o.size if o else None, q.lo, q.hi, q.k_slice)
            if key not in verdicts:
                verdicts[key] = decide_gf2(s, q, o) if isinstance(s.linear, Affine) else None
            verdict = verdicts[key]
            if verdict is None:
                all_linear = False
                continue
            if verdict[0] == "refuted":
                return finish("refuted", "gf2", s, o, q, verdict[1], values, "")
        if all_linear:
            return finish("proved", "gf2", s, o, q, None, values,
                          f"every value linear over GF(2): {len(verdicts)} distinct bit matrices decided")
    if prop == "bijective" and range_ is None:
        return None                      # the default range moves with the parameters
    templates = [_template(layout, names, dtype, start)]
    if prop == "equals":
        templates.append(_template(other, names, dtype, start))
    if any(t is None for t in templates):
        return None
    # 2. injective: the mixed-radix criterion at every value (arithmetic on the strides, no Z3)
    if engine == "auto" and prop == "injective":
        modes, _, b, swizzle = templates[0]
        if all(mixed_radix.proves_injective(AddressMap(
                tuple(tuple((e, values[d] if isinstance(d, str) else d) for e, d in mode) for mode in modes),
                b, 0, swizzle))
               for values in (dict(zip(names, c)) for c in itertools.product(*(params[n] for n in names)))):
            s = make_subject(_substitute(layout, {n: params[n][0] for n in names}), dtype, start)
            q = resolve(s, prop, range_, line, k_slice)
            return finish("proved", "radix", s, None, q, None, {}, f"mixed-radix criterion at each of the "
                          f"{instances} values: sorted by size, every stride exceeds the reach of those below it")
    # 3. one Z3 query over the parameters as bounded variables
    largest = {n: max(params[n], key=abs) for n in names}
    s = make_subject(_substitute(layout, largest), dtype, start)
    o = make_subject(_substitute(other, largest), dtype, start) if prop == "equals" else None
    q = resolve(s, prop, range_, line, k_slice)
    bound = max(max(abs(v) for v in params[n]) for n in names)

    def build(w):
        import z3
        variables = {n: z3.BitVec(n, w) for n in names}
        constraints = []
        for n in names:
            v, values = variables[n], params[n]
            lo, hi = values[0], values[-1]
            step = values[1] - values[0] if len(values) > 1 else 1
            if values == list(range(lo, hi + 1, step)):
                constraints += [v >= lo, v <= hi]
                if step > 1:
                    constraints.append(z3.URem(v - lo, z3.BitVecVal(step, w)) == 0)
            else:
                constraints.append(z3.Or([v == x for x in values]))

        def subject(template, concrete):
            modes, base, b, swizzle = template
            term = lambda x: variables[x] if isinstance(x, str) else x
            amap = AddressMap(tuple(tuple((e, term(d)) for e, d in mode) for mode in modes), b,
                              start + b * variables[base] if isinstance(base, str) else base, swizzle)
            return Subject(concrete.text, concrete.layout, concrete.element_bytes, concrete.start, amap,
                           "symbolic")
        return (subject(templates[0], s), subject(templates[1], o) if o else None, constraints, variables)

    from solver.model import cute_layout as model
    magnitude = {n: max(abs(v) for v in params[n]) for n in names}
    symbolic = {"width": max([bound.bit_length() + 3] + [model.width(_dominating(t, magnitude, start))
                                                         for t in templates]), "build": build}
    status, detail = decide_z3(s, q, o, timeout, symbolic)
    values = symbolic.get("found", {})
    if status == "refuted" and values:     # a Z3 model names the values ("count" and "sizes" hold at all)
        s = make_subject(_substitute(layout, values), dtype, start)
        o = make_subject(_substitute(other, values), dtype, start) if prop == "equals" else None
        q = resolve(s, prop, range_, line, k_slice)
    return finish(status, "z3", s, o, q, detail, values or largest,
                  "one Z3 query, " + ", ".join(names) + " symbolic" if status == "proved" else "")


def _range_text(values: list) -> str:
    if len(values) > 2 and all(b - a == values[1] - values[0] for a, b in zip(values, values[1:])):
        return f"{values[0]}..{values[-1]}:{values[1] - values[0]}"
    return ",".join(map(str, values))


def _prove_io(layout, prop, dtype, start_address, engine, began, descriptor, arch, major, k_steps, tma,
              coords) -> LayoutResult:
    """read-by / written-by (solver.prove.layout_io)."""
    from spec.mma import descriptor as spec_descriptor
    from solver.prove import layout_io as io
    if prop == "read-by":
        if descriptor is None or arch is None or major is None:
            raise SpecError("property", prop, "read-by needs a descriptor, --arch and --major", "desc.tile.reads")
        if dtype is None:
            raise SpecError("dtype", None, "read-by needs --dtype (the element type the MMA reads)",
                            "desc.tile.reads")
        word = descriptor if isinstance(descriptor, int) else spec_descriptor.parse_word(str(descriptor))
        s = make_subject(layout, dtype, start_address)
        q = io.ReadQuestion(s, word, arch, major, k_steps, dtype)
        replay_, where = io._read_replay, (f"{q.mn} x {q.k_instr * q.k_steps} elements ({q.k_steps} k-steps of "
                                            f"{q.mn} x {q.k_instr}), {dtype} ({s.element_bytes} B)")
        source, rules = io.READ_SOURCE, io.READ_RULES
    else:
        if tma is None or arch is None:
            raise SpecError("property", prop, "written-by needs --tma PARAMS.json and --arch", "tma.place.tiled")
        document = io.read_params_file(tma) if isinstance(tma, str) else tma
        probe_bytes = None
        if dtype is None:
            from spec.tma import tensormap_params
            named = tensormap_params.enumerator("dataType", document.get("dataType"), tensormap_params.DATA_TYPES) \
                if isinstance(document, dict) else None
            info = tensormap_params.DATA_TYPES.get(named)
            probe_bytes = info.bits // 8 if info is not None and info.bits % 8 == 0 else None
        s = make_subject(layout, dtype, start_address, probe_bytes)
        q = io.WriteQuestion(s, document, coords, arch)
        replay_, where = io._write_replay, (f"{q.size} box elements, {s.element_bytes} B, on {q.arch}"
                                            + (f", coordinates {q.coordinates}" if q.coordinates else ""))
        source, rules = io.WRITE_SOURCE, io.WRITE_RULES
    if start_address:
        where += f", start {start_address:#x}"
    status, name, checked, detail = io.decide(s, prop, q, engine)
    counterexample, reason = None, ""
    if status == "refuted":
        counterexample, confirmed = replay_(s, q, detail)
        if not confirmed:
            status, reason = "unknown", f"spec does not confirm the {name} counterexample: engine and spec disagree"
    elif status == "unknown":
        reason = detail
    bases = _bases_document(s) if isinstance(s.linear, Affine) else None
    result = LayoutResult(f"layout.{prop}", q.statement(layout if isinstance(layout, str) else s.text), where,
                          status, name, 0.0, counterexample, reason, checked, s.text, bases)
    result.source, result.rules = source, list(rules)
    result.seconds = time.perf_counter() - began
    return result
