"""tcgen05.cp: the asynchronous copy from shared memory into tensor memory (PTX 9.7.16.9.1, shapes in
9.7.16.2.3 Data Movement Shape, the source descriptor in 9.7.16.4.1).

    tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc;
    .shape     .128x256b  .4x256b  .128x128b  .64x128b (+ .warpx2::02_13 or .warpx2::01_23)
               .32x128b (+ .warpx4)
    .dst_fmt.src_fmt  .b8x16.b6x16_p32  .b8x16.b4x16_p64

A shape `R x Nb` copies R source rows of N bits each; a row lands in N/32 consecutive columns from taddr's
column. Where each row lands (the lanes, relative to taddr's lane) follows the CuTe layouts CUTLASS states
for its SM100_UTCCP_* atoms (include/cute/atom/copy_traits_sm100.hpp, include/cute/arch/copy_sm100.hpp):

    .128x256b, .128x128b          row r -> lane r
    .4x256b                       row r -> lane 32r (one lane in each 32-lane quarter)
    .64x128b.warpx2::02_13        row r -> lanes r, r+64 (warps 0 and 2 get rows 0-31, warps 1 and 3 rows 32-63)
    .64x128b.warpx2::01_23        row r -> lanes 64(r//32) + r%32 and that + 32 (rows 0-31 to lanes 0-63,
                                  rows 32-63 to lanes 64-127)
    .32x128b.warpx4               row r -> lanes r, r+32, r+64, r+96 (every quarter)

With .cta_group::2 the same cells are written in the tensor memory of the peer CTA too (`cp_footprints`,
tag "peer"), each CTA's copy reading its own shared memory at the descriptor's addresses (interpretation).

The source is a shared-memory matrix descriptor (9.7.16.4.1): rows in 8-row core-matrix groups SBO apart,
row r%8 of a group 16 bytes (one swizzle row with a swizzle) after the previous, 16-byte chunks of a row
LBO apart: CUTLASS numbers the copied bits [core_matrix_strided, core_matrix_leading] for the descriptor's
sake, i.e. the K-major canonical layout that spec.mma.readmap reads (`row_source`). Decompression
(.b8x16.b6x16_p32, .b8x16.b4x16_p64) turns each 16-byte source chunk (16 six-bit elements then 4 bytes of
padding, or 16 four-bit elements then 8 bytes of padding: PTX 9.7.16.10.4) into 16 destination bytes, one
element per byte, so the footprint and the source addresses do not change; only which bits of the chunk
a destination byte comes from (`byte_source`).
"""
from __future__ import annotations

from typing import Optional

from spec.mma import descriptor as mma_descriptor
from spec.mma import readmap
from spec.rule import SpecError, rule
from spec.tmem import address as tmem_address

SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
MULTICASTS = ("warpx2::02_13", "warpx2::01_23", "warpx4")
FORMATS = ("b8x16.b6x16_p32", "b8x16.b4x16_p64")
FORMAT_QUALIFIERS = ("b8x16", "b6x16_p32", "b4x16_p64")      # the qualifiers the pairs are written with
SHAPE_MULTICASTS = {"128x256b": (None,), "4x256b": (None,), "128x128b": (None,),
                    "64x128b": ("warpx2::02_13", "warpx2::01_23"), "32x128b": ("warpx4",)}
SHAPE_ROWS = {"128x256b": 128, "4x256b": 4, "128x128b": 128, "64x128b": 64, "32x128b": 32}
SHAPE_BITS = {"128x256b": 256, "4x256b": 256, "128x128b": 128, "64x128b": 128, "32x128b": 128}
CHUNK = 16                                    # bytes: one core-matrix row, one decompression unit
FORMAT_ELEMENT_BITS = {"b8x16.b6x16_p32": 6, "b8x16.b4x16_p64": 4}

LAYOUT = rule(
    "tmem.cp.layout", "PTX 9.7.16.9.1; PTX 9.7.16.2.3; CUTLASS include/cute/atom/copy_traits_sm100.hpp",
    "tcgen05.cp.R x Nb copies R rows of N bits into N/32 columns from taddr's column; row r lands at lane "
    "r (.128x256b, .128x128b), 32r (.4x256b), r and r+64 (.64x128b.warpx2::02_13), 64(r//32)+r%32 and "
    "that +32 (.64x128b.warpx2::01_23), r+32q for q = 0..3 (.32x128b.warpx4), relative to taddr's lane.",
    evidence="cutlass",
    note="The manual draws the shapes in figures; the lanes follow CUTLASS's SM100_UTCCP_* ValID layouts "
         "(4DP: Stride<32,128> over the 128 x 256 refresh view; 2x64DP 02_13: broadcast stride 64 lanes; "
         "01_23: repeat stride 64, broadcast stride 32; 4x32DP: broadcast stride 32). Only a Blackwell GPU "
         "can confirm which lanes .4x256b writes.")
PEER = rule(
    "tmem.cp.peer", "PTX 9.7.16.9.1; PTX 9.7.16.5.2",
    "With .cta_group::2 the copy writes the same cells in the tensor memory of the current and of the "
    "peer CTA; each CTA's cells come from its own shared memory at the descriptor's addresses.",
    evidence="interpretation",
    note="CUTLASS's 2cta UTCCP atoms give both CTAs the same source layout (SrcLayout Stride<_0,...> over "
         "the 2 CTAs); whether the peer reads its own or the issuing CTA's shared memory is for a "
         "Blackwell GPU to settle.")
SOURCE = rule(
    "tmem.cp.source", "PTX 9.7.16.4.1; PTX 9.7.16.3; CUTLASS include/cute/atom/copy_traits_sm100.hpp",
    "Source row r, 16-byte chunk c is read where the descriptor's K-major canonical layout puts row r, "
    "byte 16c (spec.mma.readmap: (r//8)*SBO + (r%8)*16 + c*LBO without a swizzle, then the swizzle); "
    "destination byte b of a row is byte b%4 of column b//4.",
    evidence="interpretation",
    note="CUTLASS orders the copied bits [core_matrix_strided, core_matrix_leading] (strides DP_b and 1) "
         "'for smem_desc construction'; the manual's figures of the source layout are images.")
DECOMPRESSION = rule(
    "tmem.cp.decompression", "PTX 9.7.16.9.1; PTX 9.7.16.10.4",
    ".b8x16.b6x16_p32 / .b8x16.b4x16_p64: each 16-byte source chunk holds 16 six-bit (then 32 bits of "
    "padding) or four-bit (then 64 bits of padding) elements; destination byte i of the 16 comes from "
    "bits 6i..6i+5 (4i..4i+3) of the chunk.", evidence="interpretation",
    note="Element i at bits width*i of the little-endian chunk is the packing the manual draws for "
         "mxf8f6f4 operands (Figures of 9.7.16.10.4); where in the destination byte the 4- or 6-bit value "
         "sits is not modelled (a Blackwell GPU could say).")


def _check_shape(shape: str) -> str:
    shape = shape.lstrip(".")
    if shape not in SHAPES:
        raise SpecError("shape", shape, "expected one of " + " ".join(SHAPES), SHAPE.id)
    return shape


def _check(shape: str, multicast: Optional[str]) -> tuple:
    shape = _check_shape(shape)
    multicast = multicast.lstrip(".") if multicast else None
    if multicast not in SHAPE_MULTICASTS[shape]:
        wanted = " or ".join("." + m if m else "none" for m in SHAPE_MULTICASTS[shape])
        raise SpecError("multicast", multicast, f".{shape} takes {wanted}", MULTICAST.id)
    return shape, multicast


def row_lanes(shape: str, multicast: Optional[str] = None) -> list:
    """lanes[r]: the lanes (relative to taddr's lane) that source row r is written to (rule tmem.cp.layout)."""
    shape, multicast = _check(shape, multicast)
    rows = range(SHAPE_ROWS[shape])
    if shape == "4x256b":
        return [[32 * r] for r in rows]
    if multicast == "warpx2::02_13":
        return [[r, r + 64] for r in rows]
    if multicast == "warpx2::01_23":
        return [[64 * (r // 32) + r % 32, 64 * (r // 32) + r % 32 + 32] for r in rows]
    if multicast == "warpx4":
        return [[r + 32 * q for q in range(4)] for r in rows]
    return [[r] for r in rows]


def columns(shape: str) -> int:
    """Columns one row spans: N/32."""
    return SHAPE_BITS[_check_shape(shape)] // tmem_address.CELL_BITS


def cell_rows(shape: str, multicast: Optional[str] = None) -> dict:
    """{(lane, column): source row}, relative to taddr: which row each written cell holds."""
    width = columns(shape)
    return {(lane, column): r for r, lanes in enumerate(row_lanes(shape, multicast))
            for lane in lanes for column in range(width)}


def cp_footprint(shape: str, multicast: Optional[str], taddr: int) -> set:
    """The (lane, column) cells of the issuing CTA's tensor memory that the copy writes, absolute (the
    multicast copies included). Cells past the 16-bit fields are kept as numbers; rule
    tmem.address.range says whether they lie inside 128 x 512."""
    lane, column = tmem_address.decode(taddr)
    return {(lane + dl, column + dc) for dl, dc in cell_rows(shape, multicast)}


def cp_footprints(shape: str, multicast: Optional[str], taddr: int, cta_group: int = 1) -> dict:
    """{"self": cells} and, with cta_group 2, {"peer": the same cells in the peer CTA} (rule tmem.cp.peer)."""
    if cta_group not in (1, 2):
        raise SpecError("cta_group", cta_group, "expected 1 or 2", PEER.id)
    cells = cp_footprint(shape, multicast, taddr)
    return {"self": cells, "peer": set(cells)} if cta_group == 2 else {"self": cells}


def _operand(desc, rows: int, row_bytes: int):
    if isinstance(desc, int):
        desc = mma_descriptor.decode("sm100", desc)
    return readmap.make_operand(desc, "u8", "K", max(8, -(-rows // 8) * 8), row_bytes)


def row_source(shape: str, desc, row: int, byte: int) -> int:
    """The shared-memory address of byte `byte` of source row `row` (uncompressed: the byte itself;
    with decompression: the first byte of its 16-byte chunk plus the same offset, see byte_source).
    desc: a spec.mma.descriptor.Descriptor (sm100) or its 64-bit word (rule tmem.cp.source)."""
    shape = _check_shape(shape)
    rows, row_bytes = SHAPE_ROWS[shape], SHAPE_BITS[shape] // 8
    if not (0 <= row < rows and 0 <= byte < row_bytes):
        raise SpecError("row/byte", (row, byte), f".{shape} has {rows} rows of {row_bytes} bytes", SOURCE.id)
    op = _operand(desc, rows, row_bytes)
    chunk_start = readmap.element_address(op, row, CHUNK * (byte // CHUNK))
    return chunk_start + byte % CHUNK


def byte_source(shape: str, desc, row: int, byte: int, fmt: Optional[str] = None) -> tuple:
    """(chunk address, first bit, bits): destination byte `byte` of row `row` comes from bits
    [first bit, first bit + bits) of the 16 bytes at chunk address (little-endian; rules
    tmem.cp.source and tmem.cp.decompression)."""
    fmt = fmt.lstrip(".") if fmt else None
    if fmt is not None and fmt not in FORMATS:
        raise SpecError("format", fmt, "expected one of " + " ".join(FORMATS), FORMAT.id)
    chunk = row_source(shape, desc, row, byte) - byte % CHUNK
    index = byte % CHUNK
    if fmt is None:
        return chunk, 8 * index, 8
    width = FORMAT_ELEMENT_BITS[fmt]
    return chunk, width * index, width


def source_bytes(shape: str) -> int:
    """Bytes of shared memory one copy reads: rows x N/8 (16 per 16 destination bytes, decompressed or not)."""
    shape = _check_shape(shape)
    return SHAPE_ROWS[shape] * SHAPE_BITS[shape] // 8


# --- Constraints (subject "tmem_instruction"; the instruction is spec.tmem.instruction.TmemInstruction) ---
SHAPE = rule(
    "tmem.cp.shape", "PTX 9.7.16.9.1; PTX 9.7.16.2.3",
    "tcgen05.cp has exactly one shape, one of .128x256b, .4x256b, .128x128b, .64x128b, .32x128b.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal matrix shape '.16x256b' for instruction 'tcgen05.cp'\", \"Multiple matrix "
         "shape modifiers specified\".")


@SHAPE.checker
def _shape(instr):
    if instr.kind != "cp":
        return None
    if instr.shape not in SHAPES:
        return f"tcgen05.cp takes one of .{' .'.join(SHAPES)}, not {'.' + instr.shape if instr.shape else 'none'}"
    return None


MULTICAST = rule(
    "tmem.cp.multicast", "PTX 9.7.16.9.1",
    ".64x128b needs .warpx2::02_13 or .warpx2::01_23, .32x128b needs .warpx4, and the other shapes take "
    "no multicast qualifier.", subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Modifier '.warptype' require for instruction tcgen05.cp with shape '.64x128b'\", "
         "\"Modifier .warpx4 not allowed ... with shape '.64x128b'\".")


@MULTICAST.checker
def _multicast(instr):
    if instr.kind != "cp" or instr.shape not in SHAPES:
        return None
    if instr.multicast not in SHAPE_MULTICASTS[instr.shape]:
        wanted = " or ".join("." + m if m else "no multicast" for m in SHAPE_MULTICASTS[instr.shape])
        given = "." + instr.multicast if instr.multicast else "none"
        return f".{instr.shape} takes {wanted}, not {given}"
    return None


FORMAT = rule(
    "tmem.cp.format", "PTX 9.7.16.9.1",
    "The decompression qualifier, if any, is the pair .b8x16.b6x16_p32 or .b8x16.b4x16_p64 (destination "
    "format then source format), with any shape.", subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Unexpected number of 'format conversion' modifiers specified\" for .b8x16 or "
         ".b6x16_p32 alone, \"Illegal modifier '.b6x16_p32.b8x16'\" for the reversed pair; it accepts "
         "either pair with every shape.")


@FORMAT.checker
def _format(instr):
    if instr.kind != "cp":
        return None
    if instr.format_parts:
        return f"tcgen05.cp: .{'.'.join(instr.format_parts)} is not .b8x16.b6x16_p32 or .b8x16.b4x16_p64"
    return None


FORMAT_ONLY = rule(
    "tmem.cp.format_only", "PTX 9.7.16.9.1; PTX 9.7.16.7.1; PTX 9.7.16.8.3; PTX 9.7.16.8.4; PTX 9.7.16.9.2",
    "The decompression qualifiers .b8x16, .b6x16_p32 and .b4x16_p64 are tcgen05.cp's: the syntax of no "
    "other tcgen05 instruction has them.", subject="tmem_instruction", enforced_by="nobody",
    note="ptxas 13.0 assembles one or two of them, in any order, repeated or alone, on tcgen05.ld, st, "
         "ld.red, alloc, dealloc, relinquish_alloc_permit, wait and shift (a third: \"Unexpected number of "
         "'format conversion' modifiers specified\", rule tmem.instruction.qualifiers); the manual says "
         "nothing of what they do there (tests/hardware/tmem_ptxas_heldout.json.gz).")


@FORMAT_ONLY.checker
def _format_only(instr):
    if instr.kind != "cp" and instr.format_parts:
        return f"tcgen05.{instr.kind} takes no decompression qualifier (.{'.'.join(instr.format_parts)})"
    return None


LANE_ALIGNMENT = rule(
    "tmem.cp.lane_alignment", "PTX 9.7.16.9.1; CUTLASS include/cute/atom/copy_traits_sm100.hpp",
    "The lane of taddr is 0 for .128x256b, .128x128b, .64x128b and .32x128b (the copy, with its multicast, "
    "covers all 128 lanes) and in 0..31 for .4x256b (one lane per 32-lane quarter).",
    subject="tmem_instruction", evidence="interpretation", enforced_by="nobody",
    note="ptxas 13.0 accepts immediate addresses with any lane ([0x10000]); the manual states no lane "
         "rule for tcgen05.cp that we could read; this one follows from rule tmem.cp.layout (every row "
         "inside the 128 lanes). Only a Blackwell GPU can say what a misaligned copy does.")


@LANE_ALIGNMENT.checker
def _lane_alignment(instr):
    if instr.kind != "cp" or instr.address_value is None or instr.shape not in SHAPES:
        return None
    lane, _ = tmem_address.decode(instr.address_value)
    if instr.shape == "4x256b":
        if lane >= tmem_address.LANES_PER_WARP:
            return f"lane {lane} of a .4x256b copy is not in 0..31"
    elif lane:
        return f"lane {lane} of a .{instr.shape} copy is not 0"
    return None
