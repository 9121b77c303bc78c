"""Layouts given as GF(2) bases (Triton's LinearLayout): reading them from JSON or from Triton's printout.

A bases layout maps the bits of its input dimensions (in order, the first dimension's bits lowest, each
dimension's bits in order) to an address: address(x) = offset XOR (XOR of the bases of x's set bits).
Each basis is a list with one value per output dimension; with several output dimensions they are
flattened into one address with the first output dimension most minor (as Triton flattens them), so
each output dimension needs its size, a power of two (`out_dims`). Accepted forms:

  JSON   {"in_dims": {"dim0": [[1], [2]], "dim1": [[4]]}, "offset": 0}     (what `prove --layout` prints
         as `bases`; a basis may be a bare int; a whole `prove --json` document is accepted too), with
         optional "out_dims": {"dim0": 16, "dim1": 64} (ordered, first most minor);
  Triton LinearLayout::toString():
          - register=1 -> (0, 1)
            register=2 -> (0, 2)
          - lane=1 -> (1, 0)
          - warp is a size 1 dimension
         where out dims are: [dim0 (size 16), dim1 (size 64)]
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from spec.rule import SpecError

from solver.gf2 import matrix

RULE = "layout.notation"


@dataclass(frozen=True)
class BasesLayout:
    in_dims: Tuple[Tuple[str, Tuple[int, ...]], ...]    # (name, flattened bases) per input dimension
    offset: int = 0
    out_dims: Optional[Tuple[Tuple[str, int], ...]] = None   # (name, size) per output dimension, if named
    in_elements: bool = False       # values are element offsets (a SharedLinearLayout): --dtype scales them

    def scaled(self, element_bytes: int) -> "BasesLayout":
        """Element offsets as byte addresses (element_bytes a power of two)."""
        shift = element_bytes.bit_length() - 1
        dims = tuple((name, tuple(c << shift for c in bases)) for name, bases in self.in_dims)
        return BasesLayout(dims, self.offset << shift, (("address", (self.out_size or self.size) << shift),))

    @property
    def out_size(self) -> Optional[int]:
        """The product of the output dimensions' sizes (None when they were not named)."""
        if self.out_dims is None:
            return None
        size = 1
        for _, n in self.out_dims:
            size *= n
        return size

    @property
    def columns(self) -> tuple:
        return tuple(c for _, bases in self.in_dims for c in bases)

    @property
    def mode_bits(self) -> tuple:
        return tuple(len(bases) for _, bases in self.in_dims)

    @property
    def size(self) -> int:
        return 1 << len(self.columns)

    def __call__(self, index: int) -> int:
        """The definition, evaluated bit by bit (independently of solver.gf2.matrix)."""
        value = self.offset
        for j, column in enumerate(self.columns):
            if index >> j & 1:
                value ^= column
        return value

    def coordinate(self, index: int) -> list:
        out, shift = [], 0
        for _, bases in self.in_dims:
            out.append(index >> shift & ((1 << len(bases)) - 1))
            shift += len(bases)
        return out

    def index(self, coordinate) -> int:
        if isinstance(coordinate, int):
            return coordinate
        index, shift = 0, 0
        for value, (_, bases) in zip(coordinate, self.in_dims):
            index |= value << shift
            shift += len(bases)
        return index

    def notation(self) -> str:
        def basis(value):
            values = self.split(value)
            return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"
        dims = ", ".join(f"{name}: [{', '.join(basis(c) for c in bases)}]" for name, bases in self.in_dims)
        return "bases {" + dims + "}" + (f" offset {self.offset:#x}" if self.offset else "")

    def as_json(self) -> dict:
        document = {"offset": self.offset, "in_dims": {name: [self.split(c) for c in bases]
                                                        for name, bases in self.in_dims}}
        if self.out_dims is not None:
            document["out_dims"] = dict(self.out_dims)
        return document

    def split(self, value: int) -> list:
        """A flattened value as one value per output dimension (first most minor), or [value]."""
        if self.out_dims is None or len(self.out_dims) == 1:
            return [value]
        values = []
        for _, size in self.out_dims:
            values.append(value & (size - 1))
            value >>= size.bit_length() - 1
        return values

    def triton_text(self) -> str:
        """The layout as Triton's LinearLayout::toString() prints it (linear part only: a Triton layout has
        no offset). Output dimensions: as given, else one, `offset`, as wide as the values reach."""
        lines = []
        for name, bases in self.in_dims:
            if not bases:
                lines.append(f" - {name} is a size 1 dimension")
                continue
            lines.append(" - " + "\n   ".join(f"{name}={1 << k} -> ({', '.join(map(str, self.split(c)))})"
                                               for k, c in enumerate(bases)))
        outs = self.out_dims
        if outs is None:
            spread = 0
            for c in self.columns:
                spread |= c
            outs = (("offset", 1 << spread.bit_length()),)
        return "\n" + "\n".join(lines) + "\nwhere out dims are: [" + \
            ", ".join(f"{n} (size {s})" for n, s in outs) + "]"


def _flatten(basis, sizes: Optional[List[int]], where: str) -> int:
    values = [basis] if isinstance(basis, int) else list(basis)
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise SpecError("bases", where, "a basis is a non-negative int or a list of them", RULE)
    if len(values) == 1 and (sizes is None or len(sizes) == 1):
        return values[0]
    if sizes is None or len(sizes) != len(values):
        raise SpecError("bases", where, f"a basis with {len(values)} output values needs the size of each "
                        "output dimension (out_dims, or Triton's 'where out dims are' line)", RULE)
    address, shift = 0, 0
    for value, size in zip(values, sizes):
        if value >= size:
            raise SpecError("bases", where, f"value {value} is outside its output dimension of size {size}", RULE)
        address |= value << shift
        shift += size.bit_length() - 1
    return address


def _out_dims(out_dims) -> Optional[Tuple[Tuple[str, int], ...]]:
    if out_dims is None:
        return None
    items = list(out_dims.items()) if isinstance(out_dims, dict) else [tuple(x) for x in out_dims]
    if not all(len(item) == 2 and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] > 0
               and not item[1] & (item[1] - 1) for item in items):
        raise SpecError("out_dims", str(out_dims)[:60], "output dimension sizes are powers of two", RULE)
    return tuple((str(n), s) for n, s in items)


def _sizes(outs) -> Optional[List[int]]:
    return None if outs is None else [s for _, s in outs]


def from_json(document) -> BasesLayout:
    if isinstance(document, dict) and "results" in document:    # a whole `prove --json` document
        results = document["results"]
        if not isinstance(results, list) or len(results) != 1 or not isinstance(results[0], dict) \
                or not isinstance(results[0].get("bases"), dict):
            raise SpecError("results", str(results)[:60], "a `prove --layout --json` document has one result, "
                            "with the layout's bases (a layout that is linear over GF(2))", RULE)
        document = results[0]["bases"]
    if isinstance(document, dict) and "bases" in document and "in_dims" not in document:
        document = document["bases"]
    if isinstance(document, dict) and "offset_bases" in document and "in_dims" not in document:
        return from_offset_bases(document["offset_bases"], document.get("block_bases", []))
    if not isinstance(document, dict) or not isinstance(document.get("in_dims"), dict):
        raise SpecError("bases", str(document)[:60], 'expected {"in_dims": {"dim0": [[...], ...], ...}, '
                        '"offset": n} or {"offset_bases": [[...], ...]}', RULE)
    outs = _out_dims(document.get("out_dims"))
    sizes = _sizes(outs)
    dims = []
    for name, bases in document["in_dims"].items():
        if not isinstance(bases, list):
            raise SpecError("bases", name, "each input dimension is a list of bases", RULE)
        dims.append((str(name), tuple(_flatten(b, sizes, f"{name}[{k}]") for k, b in enumerate(bases))))
    offset = document.get("offset", 0)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise SpecError("offset", offset, "a non-negative int", RULE)
    return BasesLayout(tuple(dims), offset, outs)


def from_offset_bases(offset_bases, block_bases=()) -> BasesLayout:
    """Gluon's SharedLinearLayout(offset_bases=...): element offset bit k -> a tensor coordinate
    (dim0, dim1, ...). The shared layout is the inverse of what prove asks about (coordinate -> offset),
    so it is inverted over GF(2): it must be a bijection of the offset bits onto the coordinate bits
    (every Triton shared layout of a whole tile is; a broadcast one is refused). The coordinate sizes are
    the powers of two the bases reach."""
    if block_bases:
        raise SpecError("block_bases", str(block_bases)[:60], "only one CTA's layout: block_bases must be "
                        "empty", RULE)
    if not isinstance(offset_bases, list) or not offset_bases or not all(isinstance(b, list) for b in offset_bases):
        raise SpecError("offset_bases", str(offset_bases)[:60], "a list of bases, one list of coordinates each",
                        RULE)
    rank = len(offset_bases[0])
    if rank == 0 or any(len(b) != rank for b in offset_bases) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for b in offset_bases for v in b):
        raise SpecError("offset_bases", str(offset_bases)[:60], "every basis has one non-negative int per "
                        "tensor dimension", RULE)
    reach = [0] * rank
    for basis in offset_bases:
        for d, v in enumerate(basis):
            reach[d] |= v
    widths = [r.bit_length() for r in reach]
    outs = tuple((f"dim{d}", 1 << w) for d, w in enumerate(widths))
    # offset bit k -> the coordinate packed with dim0 lowest; invert: coordinate bit -> offset bits
    packed = [_flatten(b, [s for _, s in outs], f"offset={1 << k}") if rank > 1 else b[0]
              for k, b in enumerate(offset_bases)]
    if sum(widths) != len(packed):
        raise SpecError("offset_bases", str(offset_bases)[:60], f"{len(packed)} offset bits onto "
                        f"{sum(widths)} coordinate bits: not a bijection, cannot be inverted", RULE)
    basis = matrix.Basis(packed)
    if basis.kernel:
        raise SpecError("offset_bases", str(offset_bases)[:60], "two offsets reach the same coordinate: not "
                        "a bijection, cannot be inverted", RULE)
    dims, shift = [], 0
    for d, w in enumerate(widths):
        dims.append((f"dim{d}", tuple(basis.contains(1 << (shift + t)) for t in range(w))))
        shift += w
    return BasesLayout(tuple(dims), 0, (("offset", 1 << len(packed)),), in_elements=True)


def from_affine(columns: tuple, offset: int, mode_bits: tuple) -> BasesLayout:
    """A CuTe layout's affine map (solver.gf2.layout.Affine) as bases: input dimension dimK is mode K,
    one output dimension `address` as wide as the values reach."""
    dims, j = [], 0
    for mode, count in enumerate(mode_bits):
        dims.append((f"dim{mode}", tuple(columns[j:j + count])))
        j += count
    spread = offset
    for c in columns:
        spread |= c
    return BasesLayout(tuple(dims), offset, (("address", 1 << spread.bit_length()),))


def describe(layout: BasesLayout, element_bytes: int = 1) -> dict:
    """The `bases` JSON of a linear layout: its bases, Triton's printout of them (`triton`) and, when its
    linear part (in elements of element_bytes) is a bijection onto [0, 2^bits), the inverse as Gluon's
    SharedLinearLayout offset_bases (element offset from the tile's start -> coordinate)."""
    document = layout.as_json()
    document["triton"] = layout.triton_text()
    shared = offset_bases(layout, element_bytes)
    if shared is not None:
        document["offset_bases"] = shared
    return document


def offset_bases(layout: BasesLayout, element_bytes: int = 1) -> Optional[list]:
    """The inverse as Gluon's SharedLinearLayout offset_bases (element offset bit k -> one value per input
    dimension), when the linear part, in elements, is a bijection onto [0, 2^bits); else None."""
    shift = element_bytes.bit_length() - 1
    if element_bytes != 1 << shift or any(c & (element_bytes - 1) for c in layout.columns):
        return None
    columns = [c >> shift for c in layout.columns]
    basis = matrix.Basis(columns)
    if basis.kernel or any(c >> len(columns) for c in columns):
        return None
    return [layout.coordinate(basis.contains(1 << k)) for k in range(len(columns))]


_LINE = re.compile(r"^\s*-?\s*([A-Za-z_][\w]*)\s*=\s*(\d+)\s*->\s*\(([^)]*)\)\s*$")
_EMPTY = re.compile(r"^\s*-?\s*([A-Za-z_][\w]*)\s+is a size 1 dimension\s*$")
_OUTS = re.compile(r"where out dims are:\s*\[(.*)\]")


def from_triton_text(text: str) -> BasesLayout:
    """Triton's LinearLayout::toString() printout."""
    outs = _OUTS.search(text)
    out_dims = None
    if outs:
        found = re.findall(r"([A-Za-z_]\w*)\s*\(size\s*(\d+)\)", outs.group(1))
        out_dims = _out_dims([(n, int(s)) for n, s in found])
    sizes = _sizes(out_dims)
    dims: dict = {}
    for line in text.splitlines():
        if _OUTS.search(line) or not line.strip():
            continue
        m = _EMPTY.match(line)
        if m:
            dims.setdefault(m.group(1), [])
            continue
        m = _LINE.match(line)
        if not m:
            raise SpecError("bases", line.strip()[:60], "not a line of Triton's LinearLayout printout "
                            "('- dim=1 -> (a, b)')", RULE)
        name, at = m.group(1), int(m.group(2))
        bases = dims.setdefault(name, [])
        if at != 1 << len(bases):
            raise SpecError("bases", line.strip(), f"expected {name}={1 << len(bases)} next", RULE)
        values = [int(v) for v in m.group(3).replace(" ", "").split(",") if v]
        bases.append(_flatten(values, sizes, f"{name}={at}"))
    if not dims:
        raise SpecError("bases", text[:60], "no bases found", RULE)
    return BasesLayout(tuple((n, tuple(b)) for n, b in dims.items()), 0, out_dims)


def load(value) -> BasesLayout:
    """A BasesLayout from a dict, JSON text, Triton printout text, or a file holding either."""
    if isinstance(value, BasesLayout):
        return value
    if isinstance(value, dict):
        return from_json(value)
    text = str(value)
    if not text.lstrip().startswith("{") and "->" not in text and os.path.exists(text):
        with open(text, encoding="utf-8") as handle:
            text = handle.read()
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise SpecError("bases", text[:60], f"not JSON: {error}", RULE) from None
        return from_json(document)
    return from_triton_text(text)


def looks_like_bases(value) -> bool:
    if isinstance(value, (dict, BasesLayout)):
        return True
    text = str(value)
    return text.lstrip().startswith("{") or "->" in text or (text.endswith((".json", ".txt")) and os.path.exists(text))
