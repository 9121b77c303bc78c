"""CuTe layouts (CuTe docs: 01_layout.md; 0z_tma_tensors.md for basis strides).

A layout is a pair of congruent IntTuples, shape:stride. It maps a coordinate to an index by the inner
product of the coordinate with the stride. A coordinate may be given at any level as a single integer,
a 1-D index into that (sub)shape, which is split colexicographically (leftmost mode fastest) into a
natural coordinate first.

Strides may also be basis elements c@m (CuTe's ScaledBasis, written `_1@0`): then the inner product is
a vector sum and the layout returns a coordinate tuple instead of an index, as TMA tensors do.

A ComposedLayout is Sw<B,M,S> o offset o layout: x -> swizzle(offset + layout(x)).

Written as text (shape:stride, Sw<B,M,S> o layout), a layout is read by spec/cute/notation.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from spec import fast
from spec.rule import SpecError, rule
from spec.cute.swizzle import Swizzle

NOTATION = rule(
    "layout.notation", "CuTe docs: 01_layout.md, 0z_tma_tensors.md (basis strides)",
    "A layout is written shape:stride, with shape and stride congruent IntTuples: an integer or a "
    "parenthesised, comma-separated list of IntTuples, e.g. ((8,2),(4,4)):((4,32),(1,64)); a 1-tuple "
    "prints as (8). Shape entries are positive integers. Integers may be negative (strides) and may carry "
    "CuTe's static prefix (_8). A stride entry may be a basis element c@m or c@m1@m0 (ScaledBasis; the "
    "outermost mode is printed last). A swizzled layout is Sw<B,M,S> o [offset o] layout, Swizzle<B,M,S> "
    "being a synonym; whitespace between tokens is free.")
COLEXICOGRAPHIC = rule(
    "layout.colexicographic", "CuTe docs: 01_layout.md",
    "An integer coordinate into a shape (s0,s1,...,sn) is the index i = c0 + s0*(c1 + s1*(c2 + ...)) of "
    "the natural coordinate (c0,...,cn), split recursively into each mode: ck = (i / (s0*...*s(k-1))) % sk "
    "for k < n and the last mode takes the rest. The layout maps a coordinate to sum(ck * dk).")
BASIS_STRIDES = rule(
    "layout.basis_strides", "CuTe docs: 0z_tma_tensors.md (TMA tensors: ArithmeticTuple, ScaledBasis)",
    "A stride may be a basis element c@m: the tuple with c at position m and 0 elsewhere (c@m1@m0 is "
    "hierarchical: c at position m1 of the tuple at position m0). Bases add elementwise (shorter tuples "
    "are padded with 0), so a layout with basis strides maps a coordinate to a coordinate tuple; "
    "strides (1@0,1@1) give (i,j) and (1@1,1@0) give (j,i). Integer 0 is the only integer that mixes with "
    "bases (CuTe's C<0> + ArithmeticTuple); no basis path may be a proper prefix of another.")


# --- IntTuple helpers ------------------------------------------------------------------------------

def is_tuple(x: Any) -> bool:
    return isinstance(x, tuple)


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def flatten(t: Any) -> tuple:
    """The leaves of t, left to right; a leaf flattens to a 1-tuple."""
    if not is_tuple(t):
        return (t,)
    return tuple(leaf for child in t for leaf in flatten(child))


def rank(t: Any) -> int:
    return len(t) if is_tuple(t) else 1


def depth(t: Any) -> int:
    if not is_tuple(t):
        return 0
    return 1 + max((depth(child) for child in t), default=0)


def product(t: Any) -> int:
    """The size of a shape: the product of its leaves."""
    result = 1
    for leaf in flatten(t):
        result *= leaf
    return result


def congruent(a: Any, b: Any) -> bool:
    """Same tree: tuples of the same lengths at the same places, leaves against leaves."""
    if is_tuple(a) != is_tuple(b):
        return False
    if not is_tuple(a):
        return True
    return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))


def weakly_congruent(a: Any, b: Any) -> bool:
    """a is b with some subtrees replaced by leaves (a coordinate may stop early with a 1-D index)."""
    if not is_tuple(a):
        return True
    return is_tuple(b) and len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def compact_col_major(shape: Any, start: int = 1) -> Any:
    """CuTe's default (LayoutLeft) strides: the exclusive prefix product of the leaves, congruent to shape."""
    if not is_tuple(shape):
        return start
    strides = []
    for child in shape:
        strides.append(compact_col_major(child, start))
        start *= product(child)
    return tuple(strides)


# --- Coordinates <-> indices (COLEXICOGRAPHIC) -----------------------------------------------------

def _coordinate_error(coord: Any, problem: str) -> SpecError:
    return SpecError("coordinate", coord, problem, COLEXICOGRAPHIC.id)


def split_index(index: int, shape: tuple) -> tuple:
    """One 1-D index per top-level mode: every mode but the last wraps; the last takes the rest."""
    parts = []
    for child in shape[:-1]:
        index, part = divmod(index, product(child))
        parts.append(part)
    return tuple(parts) + (index,)


def crd2idx(coord: Any, shape: Any, stride: Any = None) -> Any:
    """The inner product of coord (weakly congruent with shape) with stride; the colex index by default.

    With basis strides the result is a Basis or an ArithTuple (see Layout.__call__ for plain tuples).
    """
    if stride is None:
        stride = compact_col_major(shape)
    elif not congruent(shape, stride):
        raise SpecError("layout", (shape, stride), "shape and stride are not congruent", NOTATION.id)
    return _inner_product(coord, shape, stride)


def _inner_product(coord: Any, shape: Any, stride: Any) -> Any:
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise _coordinate_error(coord, f"not congruent with shape {_text(shape)}")
        return sum((_inner_product(c, s, d) for c, s, d in zip(coord, shape, stride)), 0)
    if not is_int(coord):
        raise _coordinate_error(coord, "coordinates are integers or tuples of them")
    if is_tuple(shape):
        return _inner_product(split_index(coord, shape), shape, stride)
    return coord * stride


def idx2crd(index: Any, shape: Any) -> Any:
    """The natural coordinate (congruent with shape) of a colexicographic index.

    Out of range, the last mode of each level takes the rest, exactly as crd2idx splits an integer, so
    that crd2idx(idx2crd(i, s), s, d) == crd2idx(i, s, d) for every i.
    """
    if is_tuple(index):
        if not is_tuple(shape) or len(index) != len(shape):
            raise _coordinate_error(index, f"not congruent with shape {_text(shape)}")
        return tuple(idx2crd(i, s) for i, s in zip(index, shape))
    if not is_int(index):
        raise _coordinate_error(index, "indices are integers or tuples of them")
    if not is_tuple(shape):
        return index
    return idx2crd(split_index(index, shape), shape)


# --- Basis strides (BASIS_STRIDES) -----------------------------------------------------------------

def _basis_error(value: Any, problem: str) -> SpecError:
    return SpecError("basis", value, problem, BASIS_STRIDES.id)


@dataclass(frozen=True)
class Basis:
    """c@m: the coefficient c at position m of a coordinate; mode may be a path (m0, m1, ...), outermost
    first, for hierarchical coordinates (CuTe's E<m0,m1>, printed c@m1@m0)."""
    coefficient: int
    mode: Union[int, tuple]

    def __post_init__(self):
        if not is_int(self.coefficient):
            raise _basis_error(self.coefficient, "the coefficient must be an integer")
        path = self.mode if is_tuple(self.mode) else (self.mode,)
        if not path or not all(is_int(m) and m >= 0 for m in path):
            raise _basis_error(self.mode, "the mode must be a non-negative integer or a non-empty path of them")
        object.__setattr__(self, "mode", path[0] if len(path) == 1 else path)  # one spelling per basis

    @property
    def path(self) -> tuple:
        return self.mode if is_tuple(self.mode) else (self.mode,)

    def as_tuple(self) -> tuple:
        """The coordinate this basis element stands for, e.g. 2@1 -> (0, 2); 1@0@1 -> (0, (1,))."""
        value = self.coefficient
        for m in reversed(self.path):
            value = (0,) * m + (value,)
        return value

    def notation(self) -> str:
        return f"{self.coefficient}@" + "@".join(str(m) for m in reversed(self.path))

    def __str__(self) -> str:
        return self.notation()

    def __mul__(self, k):
        return Basis(self.coefficient * k, self.mode) if is_int(k) else NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __add__(self, other):
        if is_int(other) and other == 0:  # CuTe: C<0> + ScaledBasis is the basis itself
            return self
        return ArithTuple(self.as_tuple()) + other

    __radd__ = __add__


@dataclass(frozen=True)
class ArithTuple:
    """A coordinate that adds elementwise (CuTe's ArithmeticTuple); values is a nested tuple of ints."""
    values: tuple

    def __add__(self, other):
        if isinstance(other, Basis):
            other = ArithTuple(other.as_tuple())
        if isinstance(other, ArithTuple):
            return ArithTuple(_add_coordinates(self.values, other.values))
        if is_int(other):
            return ArithTuple(_add_coordinates(self.values, other))
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, k):
        return ArithTuple(_scale_coordinate(self.values, k)) if is_int(k) else NotImplemented

    __rmul__ = __mul__


def _add_coordinates(a: Any, b: Any) -> Any:
    if is_int(a) and is_int(b):
        return a + b
    if a == 0 or b == 0:  # 0 is the zero of every tuple, as C<0> + ArithmeticTuple in CuTe
        return b if a == 0 else a
    if not (is_tuple(a) and is_tuple(b)):
        raise _basis_error((a, b), "cannot add a non-zero integer to a coordinate tuple")
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return tuple(_add_coordinates(x, y) for x, y in zip(a, b))


def _scale_coordinate(a: Any, k: int) -> Any:
    return tuple(_scale_coordinate(x, k) for x in a) if is_tuple(a) else a * k


def evaluate(layout: "Layout", *coord) -> Any:
    """layout(*coord) (Layout.__call__, the definition); while fast paths are on (spec.fast), a loop over
    each top-level mode's leaves where that applies (spec.fast.cute_layout)."""
    return fast.fastest(Layout.__call__)(layout, *coord)


def _plain(value: Any) -> Any:
    """An index as an int, a coordinate (Basis, ArithTuple) as a nested tuple of ints."""
    if isinstance(value, Basis):
        return value.as_tuple()
    if isinstance(value, ArithTuple):
        return value.values
    return value


# --- Layout ----------------------------------------------------------------------------------------

def _text(t: Any) -> str:
    """CuTe's printing of an IntTuple: no spaces, a 1-tuple as (8)."""
    if is_tuple(t):
        return "(" + ",".join(_text(x) for x in t) + ")"
    return t.notation() if isinstance(t, Basis) else str(t)


def _freeze(t: Any) -> Any:
    return tuple(_freeze(x) for x in t) if isinstance(t, (tuple, list)) else t


def _shape_problem(shape: Any) -> Optional[str]:
    if is_tuple(shape):
        if not shape:
            return "a shape cannot contain an empty tuple"
        return next(filter(None, map(_shape_problem, shape)), None)
    if not is_int(shape) or shape < 1:
        return f"shape entries must be positive integers, not {shape!r}"
    return None


def _stride_problem(shape: Any, stride: Any) -> Optional[str]:
    if not congruent(shape, stride):
        return f"shape {_text(shape)} and stride {_text(stride)} are not congruent"
    if not all(is_int(d) or isinstance(d, Basis) for d in flatten(stride)):
        return "stride entries must be integers or basis elements"
    return None


def _basis_problem(strides: tuple) -> Optional[str]:
    bases = [d for d in strides if isinstance(d, Basis)]
    if bases and any(is_int(d) and d != 0 for d in strides):
        return "an integer stride other than 0 cannot be mixed with basis strides"
    return _prefix_problem([d.path for d in bases])


def _prefix_problem(paths: list) -> Optional[str]:
    """A path that is a proper prefix of another would put an integer where a tuple is."""
    for p in paths:
        for q in paths:
            if len(p) < len(q) and q[:len(p)] == p:
                return f"basis paths {p} and {q} conflict: one is a proper prefix of the other"
    return None


@dataclass(frozen=True)
class Layout:
    shape: Any
    stride: Any = None  # None: compact column-major (CuTe's LayoutLeft)

    def __post_init__(self):
        shape = _freeze(self.shape)
        self._check(_shape_problem(shape), NOTATION)
        stride = compact_col_major(shape) if self.stride is None else _freeze(self.stride)
        self._check(_stride_problem(shape, stride), NOTATION)
        self._check(_basis_problem(flatten(stride)), BASIS_STRIDES)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    def _check(self, problem: Optional[str], broken) -> None:
        if problem:
            raise SpecError("layout", (self.shape, self.stride), problem, broken.id)

    def has_basis_strides(self) -> bool:
        return any(isinstance(d, Basis) for d in flatten(self.stride))

    def __call__(self, *coord):
        """L(i): the 1-D colexicographic index i; L(i, j, ...) or L((i, j, ...)): a coordinate."""
        if not coord:
            raise _coordinate_error(coord, "a layout takes an index or a coordinate")
        return _plain(_inner_product(coord[0] if len(coord) == 1 else coord, self.shape, self.stride))

    def size(self) -> int:
        return product(self.shape)

    def cosize(self) -> int:
        """Max image + 1. Each flat mode is independent, so the max is the sum of the per-mode maxima;
        CuTe's L(size-1)+1 is the same number when no stride is negative."""
        if self.has_basis_strides():
            raise SpecError("layout", self.notation(), "cosize is defined for integer strides only",
                            BASIS_STRIDES.id)
        return 1 + sum(max(0, (s - 1) * d) for s, d in zip(flatten(self.shape), flatten(self.stride)))

    @property
    def rank(self) -> int:
        return rank(self.shape)

    def __len__(self) -> int:
        return self.rank

    def __getitem__(self, i: int) -> "Layout":
        if is_tuple(self.shape):
            return Layout(self.shape[i], self.stride[i])
        if i not in (0, -1):
            raise IndexError(f"mode {i} of a rank-1 layout")
        return self

    def notation(self) -> str:
        return f"{_text(self.shape)}:{_text(self.stride)}"

    def __str__(self) -> str:
        return self.notation()


@dataclass(frozen=True)
class ComposedLayout:
    """x -> swizzle(offset + layout(x)), as CuTe's ComposedLayout<Swizzle, offset, Layout>."""
    swizzle: Swizzle
    offset: int = 0
    layout: Layout = field(default=None)

    def __post_init__(self):
        if not isinstance(self.swizzle, Swizzle) or not isinstance(self.layout, Layout):
            raise SpecError("layout", self, "a composed layout is a Swizzle, an offset and a Layout",
                            NOTATION.id)
        if not is_int(self.offset):
            raise SpecError("layout", self.offset, "the offset must be an integer", NOTATION.id)
        if self.layout.has_basis_strides():
            raise SpecError("layout", self.layout.notation(), "a swizzle acts on integer offsets, "
                            "not on basis-stride coordinates", BASIS_STRIDES.id)

    def __call__(self, *coord) -> int:
        return self.swizzle(self.offset + self.layout(*coord))

    def size(self) -> int:
        return self.layout.size()

    def cosize(self) -> int:
        """Max image + 1, by enumeration: the swizzle moves offsets, so no closed form is kept here."""
        return 1 + max(self(i) for i in range(self.size()))

    @property
    def rank(self) -> int:
        return self.layout.rank

    def __len__(self) -> int:
        return self.rank

    def __getitem__(self, i: int) -> "ComposedLayout":
        return ComposedLayout(self.swizzle, self.offset, self.layout[i])

    def notation(self) -> str:
        offset = f" o {self.offset}" if self.offset else ""
        return f"{self.swizzle.notation()}{offset} o {self.layout.notation()}"

    def __str__(self) -> str:
        return self.notation()
