"""Synthesis of the largest legal tiled TMA box, and its swizzle, that fills a shared-memory tile.

The tile is `rows` x `inner` elements, the inner dimension contiguous (dimension 0 of the global tensor
and of the box). A box suited to an MMA operand is W bytes wide (boxDim[0] * element size = W, the
swizzle span: 32, 64, 96 or 128 bytes; 16 with no swizzle, one core-matrix row, PTX 9.7.16.3 and
solver/synth/recipe.py) and as tall as allowed: boxDim[1] is the largest divisor of `rows` that is at most 256
(CUDA Driver API cuTensorMapEncodeTiled: boxDim[i] in [1, 256]) and at most the tensor's globalDim[1].
Boxes tile the tile exactly: the inner extent must be a multiple of boxDim[0].

The search is small (one box per swizzle); each candidate's tensor map is then checked against every
rule of solver.model.tensormap (the Z3 constraints, evaluated on the concrete document). The winner
moves the most bytes per load; ties go to fewer loads, then to the earlier swizzle in the candidate list.
When no candidate is left the answer names the rules that excluded each one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError

from solver.model import tensormap as tm
from solver.model.vocab import TMA_ROW_BYTES as ROW_BYTES     # W per TMA swizzle (PTX 5.5.7)

# The swizzles an MMA descriptor reads K-major (PTX 9.7.16.3.3, 9.7.16.10.6 Tables 54-55), widest first.
DEFAULT_SWIZZLES = ("128B", "64B", "32B", "NONE")
# The TMA data type that loads each MMA operand type (8-bit floats and integers travel as UINT8).
MMA_DATA_TYPES = {"f16": "FLOAT16", "bf16": "BFLOAT16", "tf32": "TFLOAT32", "f32": "FLOAT32",
                  "e4m3": "UINT8", "e5m2": "UINT8", "s8": "UINT8", "u8": "UINT8"}
MAX_BOX = 256

TILE_FIT = "box_synth.tile_fit"        # the span-wide box does not tile the tile's inner extent
TENSOR_FIT = "box_synth.tensor_fit"    # the span-wide box is wider than the tensor's dimension 0


@dataclass
class Candidate:
    swizzle: str
    box: list
    tensor_map: dict
    reasons: list                       # rule ids that exclude it; empty when legal
    bytes_per_load: int = 0
    loads: int = 0


@dataclass
class BoxPlan:
    status: str                         # "found" | "none"
    data_type: str
    swizzle: Optional[str] = None
    box: Optional[list] = None          # boxDim, dimension 0 first
    bytes_per_load: int = 0
    loads: int = 0                      # box loads that cover the tile
    loads_along: Optional[tuple] = None  # (along the inner extent, along the rows)
    tensor_map: Optional[dict] = None   # the `tma check` document of the chosen map
    reasons: list = field(default_factory=list)    # when "none": every rule id that excluded a candidate
    rejected: dict = field(default_factory=dict)   # swizzle -> rule ids

    def as_json(self) -> dict:
        return {"status": self.status, "dataType": self.data_type, "swizzle": self.swizzle, "box": self.box,
                "bytes_per_load": self.bytes_per_load, "loads": self.loads,
                "loads_along": list(self.loads_along) if self.loads_along else None,
                "tensor_map": self.tensor_map, "reasons": self.reasons, "rejected": self.rejected}


def data_type_of(dtype: str) -> str:
    """A TMA data type name, from an MMA dtype (bf16, e4m3, ...) or a cuda.h name (BFLOAT16, ...)."""
    if dtype in tm.DATA_TYPES:
        return dtype
    if dtype in MMA_DATA_TYPES:
        return MMA_DATA_TYPES[dtype]
    raise SpecError("dtype", dtype, f"expected one of {', '.join(MMA_DATA_TYPES)} or a cuda.h data type",
                    "tma.map.params")


def _listed(values) -> str:
    return ",".join(map(str, values))


def tallest_box(rows: int, limit: int) -> int:
    """The largest divisor of `rows` that is at most `limit` (boxes tile the rows exactly)."""
    return max(d for d in range(1, min(rows, limit) + 1) if rows % d == 0)


def tensor_map(data_type: str, global_dim, global_strides, box, swizzle: str, global_address: int) -> dict:
    """The `tma check` document (docs/CLI.md) of a tiled map with unit element strides, no interleave."""
    rank = len(global_dim)
    return {"encode": "tiled", "dataType": data_type, "rank": rank, "globalAddress": global_address,
            "globalDim": list(global_dim), "globalStrides": list(global_strides), "boxDim": list(box),
            "elementStrides": [1] * rank, "interleave": "NONE", "swizzle": swizzle, "l2Promotion": "NONE",
            "oobFill": "NONE"}


def _box_for(swizzle: str, bits: int, rows: int, inner: int, global_dim) -> tuple:
    """(the span-wide box, the fit problems, the box clipped to the tile and tensor)."""
    width = ROW_BYTES[swizzle] * 8 // bits
    height = tallest_box(rows, min(MAX_BOX, global_dim[1])) if len(global_dim) > 1 else 1
    padding = [1] * (len(global_dim) - 2)
    fits = []
    if inner % width:
        fits.append(TILE_FIT)
    if width > global_dim[0]:
        fits.append(TENSOR_FIT)
    clipped = min(width, inner, global_dim[0])
    outer = [height] if len(global_dim) > 1 else []
    return [width] + outer + padding, fits, [clipped] + outer + padding


def _candidate(swizzle: str, data_type: str, rows: int, inner: int, global_dim, global_strides, arch: str,
               global_address: int) -> Candidate:
    bits = tm.STORAGE_BITS[data_type]
    box, fits, clipped = _box_for(swizzle, bits, rows, inner, global_dim)
    document = tensor_map(data_type, global_dim, global_strides, box, swizzle, global_address)
    reasons = list(fits)
    if fits:       # why no narrower box would do either: the rules the clipped box breaks
        clipped_map = tensor_map(data_type, global_dim, global_strides, clipped, swizzle, global_address)
        reasons += tm.violated(clipped_map, arch)
    else:
        reasons += tm.violated(document, arch)
    candidate = Candidate(swizzle, box, document, reasons)
    if not reasons:
        height = _height(box)
        candidate.bytes_per_load = box[0] * height * bits // 8
        candidate.loads = (inner // box[0]) * (rows // height)
    return candidate


def _height(box: list) -> int:
    """boxDim[1], the rows one load covers (1 for a rank-1 box)."""
    return box[1] if len(box) > 1 else 1


def synthesize(dtype: str, rows: int, inner: int, global_dim, global_strides, arch: str = "sm100",
               swizzles=DEFAULT_SWIZZLES, global_address: int = 0) -> BoxPlan:
    """The box and swizzle moving the most bytes per load that tile `rows` x `inner` elements with
    maps legal on `arch` (every rule of solver.model.tensormap)."""
    data_type = data_type_of(dtype)
    global_dim, global_strides = list(global_dim), list(global_strides)
    if rows <= 0:
        raise SpecError("rows", rows, "the tile's rows must be at least 1", "tma.map.box_range")
    if inner <= 0:
        raise SpecError("inner", inner, "the tile's inner extent must be at least 1", "tma.map.box_range")
    if not 1 <= len(global_dim) <= tm.MAX_RANK:
        raise SpecError("global_dim", _listed(global_dim), f"needs 1 to {tm.MAX_RANK} entries (globalDim)",
                        "tma.map.rank")
    if any(d < 1 for d in global_dim):
        raise SpecError("global_dim", _listed(global_dim), "every size must be at least 1 (globalDim[i] in "
                        "[1, 2^32])", "tma.map.global_dim_range")
    if len(global_strides) != len(global_dim) - 1:
        raise SpecError("global_strides", _listed(global_strides), f"needs {len(global_dim) - 1} entries "
                        "(globalStrides: one fewer than globalDim)", "tma.map.global_stride_range")
    if any(s < 0 for s in global_strides):
        raise SpecError("global_strides", _listed(global_strides), "a byte stride (globalStrides) is not negative",
                        "tma.map.global_stride_range")
    if len(global_dim) == 1 and rows != 1:
        raise SpecError("rows", rows, "a rank-1 tensor has one row", "tma.map.rank")
    unknown = [s for s in swizzles if s not in ROW_BYTES]
    if unknown:
        raise SpecError("swizzle", ",".join(unknown), "unknown TMA swizzles", "tma.map.params")
    candidates = [_candidate(s, data_type, rows, inner, global_dim, global_strides, arch, global_address)
                  for s in swizzles]
    legal = [c for c in candidates if not c.reasons]
    rejected = {c.swizzle: c.reasons for c in candidates if c.reasons}
    if not legal:
        reasons = sorted({r for c in candidates for r in c.reasons})
        return BoxPlan("none", data_type, reasons=reasons, rejected=rejected)
    best = min(legal, key=lambda c: (-c.bytes_per_load, c.loads, candidates.index(c)))
    return BoxPlan("found", data_type, best.swizzle, best.box, best.bytes_per_load, best.loads,
                   (inner // best.box[0], rows // _height(best.box)), best.tensor_map, rejected=rejected)
