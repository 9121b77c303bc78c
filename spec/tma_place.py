"""Where a tiled TMA box load puts each element in shared memory (PTX 5.5.7; REFERENCE.md 5).

The box is written densely from the destination address, dimension 0 fastest, ceil(box_i / stride_i)
elements along dimension i (traversal strides); then every byte goes where the swizzle mode's table
sends its absolute address (spec.tma_swizzle). This is the manual's model; the H100 probe of
hardware/tma_probe.cu is meant to confirm or overturn it.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import tma_swizzle
from .rules import SpecError, check_all, rule

PLACEMENT = rule(
    "tma.place.tiled", "PTX 5.5.7 (seed 004); REFERENCE.md 5",
    "A tiled box lands densely from the destination address, dimension 0 fastest, ceil(box_i / "
    "elementStrides_i) elements along dimension i, each byte then moved by the swizzle mode's table "
    "applied to its absolute address.", evidence="interpretation",
    note="The seed's tables and the absolute-address phase are the manual's; whether rows narrower than "
         "the swizzle span are packed densely is not stated. Hardware evidence pending (TMA issue).")
BOX_RANGE = rule("tma.box.range", "DRV cuTensorMapEncodeTiled; REFERENCE.md 5",
                 "Every boxDim is in [1, 256].", subject="tma_box")
INNER_BYTES = rule("tma.box.inner_16B", "DRV cuTensorMapEncodeTiled; REFERENCE.md 5",
                   "Without interleave, boxDim[0] * element size is a multiple of 16 bytes.", subject="tma_box")
SWIZZLE_SPAN = rule("tma.box.swizzle_span", "DRV cuTensorMapEncodeTiled; REFERENCE.md 5",
                    "With a swizzle, boxDim[0] * element size is at most the swizzle span (32, 64, 96; 128 for "
                    "every 128B mode).", subject="tma_box")
STRIDE_RANGE = rule("tma.box.element_strides", "DRV cuTensorMapEncodeTiled; REFERENCE.md 5",
                    "elementStrides are in [1, 8].", subject="tma_box")
DESTINATION = rule("tma.box.destination_alignment", "CUDA programming guide (TMA); PTX 5.5.3.1",
                   "The shared-memory destination of a tensor copy is 128-byte aligned.", subject="tma_box")
SPAN = {"32B": 32, "64B": 64, "96B": 96}


@dataclass(frozen=True)
class Box:
    swizzle: str
    element_bytes: int
    dims: tuple
    smem_address: int
    element_strides: tuple

    @property
    def counts(self) -> tuple:
        return tuple(-(-d // s) for d, s in zip(self.dims, self.element_strides))


def make_box(swizzle: str, element_bytes: int, dims, smem_address: int, element_strides=None) -> Box:
    tma_swizzle.mode_info(swizzle)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise SpecError("elem_bytes", element_bytes, "expected 1, 2, 4, 8 or 16", PLACEMENT.id)
    dims = tuple(dims)
    if not 1 <= len(dims) <= 5 or any(not isinstance(d, int) or d <= 0 for d in dims):
        raise SpecError("box", ",".join(map(str, dims)), "1 to 5 positive sizes", BOX_RANGE.id)
    strides = tuple(element_strides) if element_strides else (1,) * len(dims)
    if len(strides) != len(dims) or any(s <= 0 for s in strides):
        raise SpecError("element_strides", ",".join(map(str, strides)), "one positive stride per box dimension",
                        STRIDE_RANGE.id)
    if smem_address < 0:
        raise SpecError("smem_address", smem_address, "must be non-negative", DESTINATION.id)
    return Box(swizzle, element_bytes, dims, smem_address, strides)


def place(box: Box) -> list:
    """The absolute address of the first byte of every loaded element, dimension 0 fastest."""
    total = 1
    for c in box.counts:
        total *= c
    return [tma_swizzle.swizzle_byte_address(box.swizzle, box.smem_address + i * box.element_bytes)
            for i in range(total)]


def violations(box: Box):
    return check_all("tma_box", box)


@BOX_RANGE.checker
def _box_range(box: Box):
    bad = [d for d in box.dims if d > 256]
    return f"boxDim {bad[0]} > 256" if bad else None


@INNER_BYTES.checker
def _inner(box: Box):
    inner = box.dims[0] * box.element_bytes
    return None if inner % 16 == 0 else f"boxDim[0] * element size = {inner} bytes, not a multiple of 16"


@SWIZZLE_SPAN.checker
def _span(box: Box):
    if box.swizzle == "NONE":
        return None
    span = SPAN.get(box.swizzle, 128)
    inner = box.dims[0] * box.element_bytes
    return None if inner <= span else f"boxDim[0] * element size = {inner} bytes > the {box.swizzle} span {span}"


@STRIDE_RANGE.checker
def _strides(box: Box):
    bad = [s for s in box.element_strides if s > 8]
    return f"element stride {bad[0]} > 8" if bad else None


@DESTINATION.checker
def _destination(box: Box):
    return None if box.smem_address % 128 == 0 else f"destination {box.smem_address:#x} is not 128-byte aligned"
