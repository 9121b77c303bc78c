"""Where a tiled TMA box load puts each element in shared memory (PTX ISA 5.5.3 Tiled mode, 5.5.7
Swizzling Modes).

The box is written row by row from the destination address, dimension 0 fastest: boxDim[0] elements
per row (no traversal stride along dimension 0), ceil(box_i / stride_i) rows along every other
dimension i. Without a swizzle the rows are dense; with one, each row starts a new swizzle-span row
(rule tma.place.row_pitch). Then every byte goes where the swizzle mode's table sends its absolute
address (spec.tma.swizzle). Both were observed on an H100 (tests/hardware/tma_loads_sm90.json.gz,
replayed by tests/hardware_replay/test_tma_replay.py), which also showed that a load whose first element along
dimension 0 is not on a 16-byte column traps (rule tma.load.coord0_16B).
"""
from __future__ import annotations

from dataclasses import dataclass

from spec import fast
from spec.rule import SpecError, check_all, rule
from spec.tma import swizzle as tma_swizzle
from spec.tma import tensormap  # registers the box limits this module checks (tma.map.box_range, ...)

PLACEMENT = rule(
    "tma.place.tiled", "PTX ISA 5.5.3 (Tiled mode), 5.5.7 (Swizzling Modes); tests/hardware/tma_loads_sm90.json.gz",
    "A tiled box lands row by row from the destination address, dimension 0 fastest: boxDim[0] elements "
    "per row, ceil(box_i / elementStrides_i) along every other dimension i (elementStrides[0] is "
    "ignored), rows tma.place.row_pitch apart, each byte then moved by the swizzle mode's table applied "
    "to its absolute address.", evidence="hardware",
    note="H100 (tests/hardware/tma_loads_sm90.json.gz): 1198 loads, swizzle NONE/32B/64B/128B, 1/2/4-byte "
         "elements, destinations at every 128-byte offset of the 1024-byte repeat (the phase follows the "
         "absolute address, as PTX ISA 5.5.7's tables read), boxes partly out of bounds (filled with zeros, "
         "or the NaN pattern), traversal strides (elementStrides[0] = 2 or 3 loads boxDim[0] elements), "
         "rank 3. 96B and the 128B atomicity sub-modes are sm100 modes: the manual's tables, unobserved.")
ROW_PITCH = rule(
    "tma.place.row_pitch", "tests/hardware/tma_loads_sm90.json.gz (H100); PTX ISA 5.5.7",
    "With a swizzle, each row of a load (a tiled box's boxDim[0] elements, an im2col pixel's channels) "
    "starts a new swizzle-span row in shared memory: a row narrower than the span is padded to it, and "
    "the padding is left unwritten. Without a swizzle rows are dense.", evidence="hardware",
    note="The manual does not say; the H100 put 32-byte rows 64 bytes apart under 64B, 16-byte rows 32 "
         "apart under 32B, 64-byte rows (and 64-byte im2col pixels) 128 apart under 128B, and 48-byte rows "
         "48 apart with no swizzle.")
NAN_FILL = rule(
    "tma.place.oob_fill", "PTX ISA 5.5.3.3; tests/hardware/tma_loads_sm90.json.gz (H100)",
    "An out-of-bounds element of a load is written as zero, or with oobFill NAN_REQUEST_ZERO_FMA as the "
    "pattern 0x7FF7 in every 16-bit half of the element (a NaN for 16-bit floats; 0x7FF77FF7 for 32-bit).",
    evidence="hardware",
    note="PTX names the NaN fill without giving its bits; the H100 wrote 0x7FF7 (FLOAT16) and 0x7FF77FF7 "
         "(FLOAT32).")


def fill_pattern(oob_fill: str, element_bytes: int) -> int:
    """Rule tma.place.oob_fill: the bits an out-of-bounds element is written with."""
    if oob_fill == "NONE":
        return 0
    return int.from_bytes(b"\xf7\x7f" * (element_bytes // 2), "little")


def row_pitch(swizzle: str, row_bytes: int) -> int:
    """Rule tma.place.row_pitch: bytes from one row of a load to the next in shared memory."""
    span = tma_swizzle.mode_info(swizzle).span
    return row_bytes if span is None else max(row_bytes, span)


@dataclass(frozen=True)
class Box:
    swizzle: str
    element_bytes: int
    dims: tuple
    smem_address: int
    element_strides: tuple
    coord0: int = 0   # the load's tensor coordinate along dimension 0 (rule tma.load.coord0_16B)

    @property
    def counts(self) -> tuple:
        """Elements loaded along each dimension: all of boxDim[0] (TMA has no stride along dimension 0),
        ceil(box_i / stride_i) along the others."""
        return (self.dims[0],) + tuple(-(-d // s) for d, s in zip(self.dims[1:], self.element_strides[1:]))


def make_box(swizzle: str, element_bytes: int, dims, smem_address: int, element_strides=None,
             coord0: int = 0) -> Box:
    tma_swizzle.mode_info(swizzle)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise SpecError("elem_bytes", element_bytes, "expected 1, 2, 4, 8 or 16", PLACEMENT.id)
    dims = tuple(dims)
    if not 1 <= len(dims) <= 5 or any(not isinstance(d, int) or d <= 0 for d in dims):
        raise SpecError("box", ",".join(map(str, dims)), "1 to 5 positive sizes", tensormap.BOX_RANGE.id)
    strides = tuple(element_strides) if element_strides else (1,) * len(dims)
    if len(strides) != len(dims) or any(s <= 0 for s in strides):
        raise SpecError("element_strides", ",".join(map(str, strides)), "one positive stride per box dimension",
                        tensormap.ELEMENT_STRIDES_RANGE.id)
    if smem_address < 0:
        raise SpecError("smem_address", smem_address, "must be non-negative", "tma.box.destination_alignment")
    return Box(swizzle, element_bytes, dims, smem_address, strides, coord0)


# --- The size of one load: the box rules of spec/tma/tensormap.py, applied to the box as to a tiled map ------
@dataclass(frozen=True)
class _BoxAsMap(tensormap.TensorMapParams):
    """A `tma place` box as the tiled tensor map that would load it, for the map's size rules
    (tma.map.box_bytes, tma.map.box_bytes_loaded). Its element size is the box's, whatever cuda.h calls it
    (a 16-byte element has no dataType)."""
    element_bits: int = 8

    @property
    def dtype(self):
        return tensormap.TmaDataType(f"{self.element_bits // 8}-byte element", -1, self.element_bits, False)


LOAD_SIZE_RULES = (tensormap.BOX_BYTES.id, tensormap.BOX_BYTES_LOADED.id)


def as_encode_call(box: Box) -> "tensormap.EncodeCall":
    rank = len(box.dims)
    params = _BoxAsMap("tiled", "box", rank, 0, box.dims, (0,) * (rank - 1), box.element_strides, "NONE",
                       box.swizzle, "NONE", "NONE", box_dim=box.dims, element_bits=8 * box.element_bytes)
    return tensormap.EncodeCall(params, "sm90")


def load_size_violations(box: Box) -> list:
    """The 228 KiB rules of one load (tma.map.box_bytes, tma.map.box_bytes_loaded), as for a tiled map."""
    return check_all(tensormap.SUBJECT, as_encode_call(box), only=LOAD_SIZE_RULES)


def placeable(found) -> bool:
    """Whether a box with these violations is placed: not when a box dimension is over 256
    (tma.map.box_range) or the load over 228 KiB: no load that large exists, and listing it would be
    unbounded work."""
    refused = {tensormap.BOX_RANGE.id, *LOAD_SIZE_RULES}
    return not any(v.rule.id in refused for v in found)


def place(box: Box) -> list:
    """The absolute address of the first byte of every loaded element, dimension 0 fastest (a box that
    `placeable` refuses is malformed input here: SpecError)."""
    rows, per_row, pitch = row_layout(box)
    return [tma_swizzle.swizzle_byte_address(box.swizzle, box.smem_address + row * pitch + i * box.element_bytes)
            for row in range(rows) for i in range(per_row)]


def row_layout(box: Box) -> tuple:
    """(rows, elements per row, row pitch in bytes) of a box that `placeable` accepts; SpecError if not."""
    found = violations(box)
    if not placeable(found):
        bad = next(v for v in found if not placeable([v]))
        raise SpecError("box", ",".join(map(str, box.dims)), f"not placed: {bad.message}", bad.rule.id)
    rows = 1
    for c in box.counts[1:]:
        rows *= c
    return rows, box.counts[0], row_pitch(box.swizzle, box.counts[0] * box.element_bytes)


def place_rows(box: Box) -> list:
    """place(box); while fast paths are on (spec.fast), a box row at a time (spec.fast.tma_place): the same
    list, the same refusals."""
    return fast.fastest(place)(box)


def box_violations(box: Box) -> list:
    """The rules of a tiled box (subject tma_box): where it lands, its coordinate, its sizes."""
    return check_all("tma_box", box)


def violations(box: Box):
    """The rules of a tiled box (subject tma_box) and the size rules of the load that brings it."""
    return box_violations(box) + load_size_violations(box)



COORD0_ALIGNMENT = tensormap.COORD0_ALIGNMENT     # rule tma.load.coord0_16B (spec/tma/tensormap.py)


# --- The destination of a copy: rule tma.box.destination_alignment, with the copy rules of spec/tma/tensormap.py
DESTINATION = tensormap.DESTINATION
DESTINATION_ALIGNMENT = tensormap.DESTINATION_ALIGNMENT
