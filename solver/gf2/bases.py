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

RULE = "layout.notation"


@dataclass(frozen=True)
class BasesLayout:
    in_dims: Tuple[Tuple[str, Tuple[int, ...]], ...]    # (name, flattened bases) per input dimension
    offset: int = 0
    out_size: Optional[int] = None                      # product of the output dimensions' sizes, if named

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
        dims = ", ".join(f"{name}: {list(bases)}" for name, bases in self.in_dims)
        return "bases {" + dims + "}" + (f" offset {self.offset:#x}" if self.offset else "")

    def as_json(self) -> dict:
        return {"offset": self.offset, "in_dims": {name: [[c] for c in bases] for name, bases in self.in_dims}}


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


def _sizes(out_dims) -> Optional[List[int]]:
    if out_dims is None:
        return None
    items = list(out_dims.items()) if isinstance(out_dims, dict) else [tuple(x) for x in out_dims]
    sizes = [size for _, size in items]
    if not all(isinstance(n, int) and n > 0 and not n & (n - 1) for n in sizes):
        raise SpecError("out_dims", sizes, "output dimension sizes are powers of two", RULE)
    return sizes


def from_json(document) -> BasesLayout:
    if isinstance(document, dict) and "results" in document:
        document = document["results"][0].get("bases")
    if isinstance(document, dict) and "bases" in document and "in_dims" not in document:
        document = document["bases"]
    if not isinstance(document, dict) or not isinstance(document.get("in_dims"), dict):
        raise SpecError("bases", str(document)[:60], 'expected {"in_dims": {"dim0": [[...], ...], ...}, '
                        '"offset": n}', RULE)
    sizes = _sizes(document.get("out_dims"))
    dims = []
    for name, bases in document["in_dims"].items():
        if not isinstance(bases, list):
            raise SpecError("bases", name, "each input dimension is a list of bases", RULE)
        dims.append((str(name), tuple(_flatten(b, sizes, f"{name}[{k}]") for k, b in enumerate(bases))))
    offset = document.get("offset", 0)
    if not isinstance(offset, int) or offset < 0:
        raise SpecError("offset", offset, "a non-negative int", RULE)
    out_size = None
    if sizes is not None:
        out_size = 1
        for n in sizes:
            out_size *= n
    return BasesLayout(tuple(dims), offset, out_size)


_LINE = re.compile(r"^\s*-?\s*([A-Za-z_][\w]*)\s*=\s*(\d+)\s*->\s*\(([^)]*)\)\s*$")
_EMPTY = re.compile(r"^\s*-?\s*([A-Za-z_][\w]*)\s+is a size 1 dimension\s*$")
_OUTS = re.compile(r"where out dims are:\s*\[(.*)\]")


def from_triton_text(text: str) -> BasesLayout:
    """Triton's LinearLayout::toString() printout."""
    outs = _OUTS.search(text)
    sizes = None
    if outs:
        found = re.findall(r"([A-Za-z_]\w*)\s*\(size\s*(\d+)\)", outs.group(1))
        sizes = _sizes([(n, int(s)) for n, s in found])
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
    out_size = None
    if sizes is not None:
        out_size = 1
        for n in sizes:
            out_size *= n
    return BasesLayout(tuple((n, tuple(b)) for n, b in dims.items()), 0, out_size)


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
