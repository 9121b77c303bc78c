"""The read map: which shared-memory byte each operand element of one MMA is read from.

Given a decoded descriptor, the arch, the element type (and tcgen05 kind), the major-ness, the MN
extent and the instruction K, `read_addresses` returns the absolute byte address of the first byte
of operand element (mn, k). It is written at the level of bytes and 16-byte chunks, from the LBO/SBO
definitions of PTX 9.7.16.3.1-2 and the swizzle atoms of 9.7.16.10.6; `spec.mma.canonical` writes the
same thing as the manual's CuTe layouts, and the tests check the two against each other.

Two steps, as the hardware is understood to work:
1. a linear address: start + the offsets that LBO, SBO and the fixed atom strides give;
2. the swizzle: address bits [M, M+B) are XORed with a B-bit *phase* (M + S = 7 for every
   descriptor swizzle, so the phase indexes 128-byte lines; see spec.cute.swizzle): the line index of the
   absolute address less the base offset, as an H100 showed (rule readmap.swizzle_phase).

Where the manual is ambiguous, the rule below says which reading this model takes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec import fast
from spec.mma import dtypes
from spec.mma.descriptor import Descriptor
from spec.mma.dtypes import DType
from spec.rule import SpecError, check_all, rule
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows

MAJORS = ("K", "MN")
LINE = 128     # bytes: the unit the swizzle phase counts (address bit 7)
CHUNK = 16     # bytes: the unit every swizzle keeps intact (16B atomicity)

# --- Definitions ------------------------------------------------------------------------------------
K_MAJOR_NO_SWIZZLE = rule(
    "readmap.k_major.none", "PTX 9.7.16.3.1.1, 9.7.16.3.2, 9.7.16.3.3",
    "K-major, no swizzle: core matrices of 8 rows x 16 bytes, rows 16 B apart; row group g (8 rows) at "
    "g*SBO, K chunk c at c*LBO.", evidence="hardware",
    note="Confirmed on an H100 (tests/hardware/, replayed by tests/hardware_replay/test_hardware_replay.py).")
K_MAJOR_SWIZZLED = rule(
    "readmap.k_major.swizzled", "PTX 9.7.16.3.2, 9.7.16.3.3; Triton (LBO across K atoms)",
    "K-major, swizzle of W bytes: 8 rows W bytes apart; row group g at g*SBO; K chunk c at "
    "(c mod W/16)*16 + (c div W/16)*LBO.", evidence="interpretation",
    note="PTX says LBO is unused for swizzled K-major layouts ('assumed to be 1'); Triton's source "
         "says it steps between swizzle atoms when K spans more than one. One instruction's 32 bytes "
         "never span two atoms from an atom-aligned start, so the two readings differ only for "
         "--k beyond the instruction K. Within one atom the H100 confirms it, LBO ignored "
         "(tests/hardware/, strides 'lbo-ignored').")
MN_MAJOR_NO_SWIZZLE = rule(
    "readmap.mn_major.none", "PTX 9.7.16.3.1.1, 9.7.16.3.2, 9.7.16.3.3",
    "MN-major, no swizzle: core matrices of 16 bytes of MN x 8 K rows, rows 16 B apart; MN chunk j at "
    "j*SBO, K group of 8 rows at LBO.", evidence="hardware",
    note="Confirmed on an H100 (tests/hardware/, replayed by tests/hardware_replay/test_hardware_replay.py).")
MN_MAJOR_SWIZZLED = rule(
    "readmap.mn_major.swizzled", "PTX 9.7.16.3.1.1, 9.7.16.3.2, 9.7.16.3.3; 9.7.16.10.6",
    "MN-major, swizzle of W bytes: K rows W bytes apart; MN chunk j at (j mod W/16)*16 + "
    "(j div W/16)*LBO; K group of R rows at SBO, R = 8 (R = 4 for 128B_atom32B).",
    note="32B/64B/128B confirmed on an H100 (tests/hardware/). "
         "For 128B_atom32B the atom is 8 chunks x 4 K rows (PTX swizzle-atom table); that SBO steps "
         "4 K rows follows CUTLASS's make_umma_desc (SwizzleAtomKSize = 4), where PTX 9.7.16.3.2 only "
         "speaks of 8.")
SUBBYTE_BYTES = rule(
    "readmap.element_byte", "PTX ISA 9.7.16.10 (sub-byte packing: .b4x16, .b4x16_p64, .b6x16_p32)",
    "An element's address is that of its first byte: element i of a chunk starts at byte "
    "(i*bits) div 8, so two dense 4-bit elements share a byte.")
PHASE = rule(
    "readmap.swizzle_phase", "H100 observations tests/hardware/wgmma_sm90_reads.json.gz; PTX "
    "9.7.15.5.1.2.2 and 9.7.16.4.1 Table 41 (base offset)",
    "The swizzle XORs address bits [M, M+B) of each linear address a with the phase "
    "((a >> 7) - base_offset) mod 2^B: the phase follows the absolute address, less the base offset. "
    "With base offset 0 this is CuTe's swizzle on absolute addresses; with Table 41's base offset "
    "((start >> 7) & 7, start a multiple of 128) it is the swizzle of offsets from the start, the "
    "pattern beginning at the start address.",
    evidence="hardware",
    note="The manual gives the base offset's formula but not what the hardware does with it. An H100 "
         "decided it: 1398 wgmma reads (bf16, f16, tf32, e4m3; A and B; K- and MN-major; every swizzle; "
         "starts on and off the repeat boundary; base offsets 0-7) all match this rule. Two other "
         "readings are kept as phase models for comparison and are refuted by the same data: "
         "'anchored' (phase = rows from the start + base offset) and 'absolute' (base offset ignored).")
K48_SPLIT = rule(
    "readmap.k48.absolute_split", "PTX ISA 9.7.16.3.1.2",
    "Absolute LBO mode, 48-byte K: the K chunks from the start address up to the end of its 128-byte "
    "line are read there; the rest are read from the absolute address in LBO, at the same row "
    "offsets, under the same swizzle (base offset 0, so the phase is the absolute line index). Each "
    "piece is packed contiguously, chunk after chunk, whatever the swizzle and K (read so also where "
    "rules desc.lbo_mode.absolute.swizzle_128b and operand.lbo_absolute.k48 are broken).",
    evidence="interpretation",
    note="Matches CUTLASS issuing K=96 MMAs at line offsets 0/48/96 with the remainder 16/64/112 "
         "bytes into the next buffer. sm103-only: no H100 can confirm it.")

PHASE_MODELS = ("hardware", "anchored", "absolute")

# The largest read a request may ask for (input-size validation, before any work): no MMA reads an M or N
# above 256 (PTX ISA 9.7.15.5, 9.7.16.2.1) nor a K above 96 elements (48 bytes of e2m1); requests beyond
# those are kept, to list the rules they break, up to these bounds.
MAX_READ_EXTENT = 4096
MAX_READ_ELEMENTS = 1 << 20

OPERAND_MAJOR = rule(
    "operand.major", "PTX ISA 9.7.15.5.1 (K-major and MN-major shared-memory layouts), 9.7.16.3.1",
    "An operand in shared memory is K-major (K contiguous within a row) or MN-major (M or N contiguous); "
    "any other major-ness is malformed input.")
MN_EXTENT = rule(
    "operand.mn_extent", "PTX ISA 9.7.16.3.3 (core matrices of 8 rows)",
    "The M or N extent read through a descriptor is a positive multiple of 8; K is a positive number "
    "of elements. Other values are malformed input.")

@dataclass(frozen=True)
class Operand:
    """One MMA operand read through a descriptor."""
    desc: Descriptor
    dtype: DType
    major: str
    mn: int
    k: int
    kind: str

    @property
    def arch(self) -> str:
        return self.desc.arch

    @property
    def elements_per_chunk(self) -> int:
        return dtypes.elements_per_chunk(self.dtype, self.kind)

    @property
    def k_bytes(self) -> int:
        """Bytes of K per row: whole 16-byte chunks (a padded chunk counts all 16 bytes)."""
        return -(-self.k // self.elements_per_chunk) * CHUNK


def make_operand(desc: Descriptor, dtype_name: str, major: str, mn: int, k: Optional[int] = None,
                 kind: Optional[str] = None) -> Operand:
    """Validate the shape of the request (malformed input -> SpecError) and build the Operand."""
    d = dtypes.dtype(dtype_name)
    kind = dtypes.check_kind(d, kind) if kind is not None else dtypes.default_kind(d)
    if major not in MAJORS:
        raise SpecError("major", major, "expected K or MN", OPERAND_MAJOR.id)
    if isinstance(mn, bool) or not isinstance(mn, int) or mn <= 0 or mn % 8:
        raise SpecError("mn", mn, "the M or N extent must be a positive multiple of 8", MN_EXTENT.id)
    if mn > MAX_READ_EXTENT:
        raise SpecError("mn", mn, f"at most {MAX_READ_EXTENT} (no MMA reads an M or N above 256)", MN_EXTENT.id)
    if k is None:
        # The 48-byte K (dense K = 96, sm103) is the one the absolute LBO mode exists for.
        absolute = desc.lbo_mode == "absolute"
        k = dtypes.instruction_k_values(d, kind, desc.arch)[-1 if absolute else 0]
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise SpecError("k", k, "K must be a positive number of elements", INSTRUCTION_K_RULE.id)
    if k > MAX_READ_EXTENT:
        raise SpecError("k", k, f"at most {MAX_READ_EXTENT} elements (no MMA reads a K above 96)",
                        INSTRUCTION_K_RULE.id)
    if mn * k > MAX_READ_ELEMENTS:
        raise SpecError("k", k, f"mn x k = {mn * k} elements, more than the {MAX_READ_ELEMENTS} one read map "
                        f"lists (no MMA reads more than 256 x 96)", INSTRUCTION_K_RULE.id)
    if desc.swizzle.startswith("invalid"):
        raise SpecError("descriptor", desc.hex, f"swizzle code {desc.swizzle} has no layout to read",
                        "desc.sm100.swizzle_code")
    return Operand(desc, d, major, mn, k, kind)


def violations(op: Operand):
    return check_all("descriptor", op.desc) + check_all("operand", op)


# --- Step 1: linear addresses ------------------------------------------------------------------------
# W: bytes between consecutive rows of a swizzle atom (16 for no swizzle: one core-matrix row)
ROW_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_atom32B": 128}


def _row_bytes(swizzle: str) -> int:
    return ROW_BYTES[swizzle]


def _mn_major_group_rows(swizzle: str) -> int:
    """R: K rows per SBO step in MN-major swizzled layouts."""
    return 4 if swizzle == "128B_atom32B" else 8


def _element_position(op: Operand, index: int) -> tuple:
    """(chunk index, byte inside the chunk) of element `index` along the contiguous dimension."""
    per_chunk = op.elements_per_chunk
    return index // per_chunk, dtypes.byte_in_chunk(op.dtype, op.kind, index % per_chunk)


# The linear address is a sum of a part that depends on mn alone and a part that depends on k alone
# (and the origin, which depends on k alone): the LBO/SBO definitions are per dimension.
def _k_major_mn_part(op: Operand, mn: int) -> int:
    """Row group g at g*SBO; row r of the group at r*W (16 B with no swizzle)."""
    return (mn // 8) * op.desc.stride_byte_offset + (mn % 8) * _row_bytes(op.desc.swizzle)


def _k_major_k_part(op: Operand, chunk: int, lbo: int) -> int:
    """K chunk c: c*LBO with no swizzle; (c mod W/16)*16 + (c div W/16)*LBO with a swizzle."""
    if op.desc.swizzle == "none":
        return chunk * lbo
    per_row = _row_bytes(op.desc.swizzle) // CHUNK
    return (chunk % per_row) * CHUNK + (chunk // per_row) * lbo


def _mn_major_mn_part(op: Operand, mn: int) -> int:
    """MN chunk j: j*SBO with no swizzle; (j mod W/16)*16 + (j div W/16)*LBO with a swizzle."""
    desc = op.desc
    chunk, byte = _element_position(op, mn)
    if desc.swizzle == "none":
        return chunk * desc.stride_byte_offset + byte
    per_row = _row_bytes(desc.swizzle) // CHUNK
    return (chunk % per_row) * CHUNK + (chunk // per_row) * desc.leading_byte_offset + byte


def _mn_major_k_part(op: Operand, k: int) -> int:
    """K row k: (k mod 8)*16 + (k div 8)*LBO with no swizzle; (k mod R)*W + (k div R)*SBO with one."""
    desc = op.desc
    if desc.swizzle == "none":
        return (k // 8) * desc.leading_byte_offset + (k % 8) * CHUNK
    rows = _mn_major_group_rows(desc.swizzle)
    return (k % rows) * _row_bytes(desc.swizzle) + (k // rows) * desc.stride_byte_offset


def _k48_first_chunks(desc: Descriptor) -> int:
    """Absolute LBO mode: how many K chunks fit between the start address and the end of its line."""
    return (LINE - desc.start_address % LINE) // CHUNK


def mn_part(op: Operand, mn: int) -> int:
    return _k_major_mn_part(op, mn) if op.major == "K" else _mn_major_mn_part(op, mn)


def k_part(op: Operand, k: int) -> tuple:
    """(origin, offset from the origin due to k): the origin is the start address, or, for the chunks
    of a 48-byte K past the start's line, the absolute address in LBO (rule readmap.k48.absolute_split)."""
    desc = op.desc
    if op.major == "MN":
        return desc.start_address, _mn_major_k_part(op, k)
    chunk, byte = _element_position(op, k)
    if desc.lbo_mode == "absolute":
        # Each piece is packed contiguously inside its 128-byte line (9.7.16.3.1.2): chunk after chunk,
        # whatever the swizzle (only 128B is allowed; the others are read the same way, not wrapped onto
        # the piece's first chunk as a K-atom step of LBO 0 would).
        first = _k48_first_chunks(desc)
        if chunk >= first:
            return desc.leading_byte_offset, (chunk - first) * CHUNK + byte
        return desc.start_address, chunk * CHUNK + byte
    return desc.start_address, _k_major_k_part(op, chunk, desc.leading_byte_offset) + byte


def mn_parts_by_element(op: Operand) -> list:
    """[mn_part(op, mn) for mn < op.mn]."""
    return [mn_part(op, mn) for mn in range(op.mn)]


def mn_parts(op: Operand) -> list:
    """mn_parts_by_element; while fast paths are on (spec.fast), a row group or swizzle row at a time
    (spec.fast.mma_readmap)."""
    return fast.fastest(mn_parts_by_element)(op)


def k_parts_by_element(op: Operand) -> list:
    """[k_part(op, k) for k < op.k]."""
    return [k_part(op, k) for k in range(op.k)]


def k_parts(op: Operand) -> list:
    """k_parts_by_element; while fast paths are on (spec.fast), a K chunk at a time for K-major operands
    (spec.fast.mma_readmap)."""
    return fast.fastest(k_parts_by_element)(op)


def linear_address(op: Operand, mn: int, k: int) -> tuple:
    """(origin, linear address) of element (mn, k) before the swizzle."""
    origin, along_k = k_part(op, k)
    return origin, origin + mn_part(op, mn) + along_k


# --- Step 2: the swizzle ----------------------------------------------------------------------------
def swizzle_phase(swizzle: str, origin: int, address: int, base_offset: int, model: str) -> int:
    rows = pattern_rows(swizzle)
    if model == "hardware":
        return ((address // LINE) - base_offset) % rows
    if model == "anchored":      # refuted by the H100 (rule readmap.swizzle_phase)
        return ((address - origin) // LINE + base_offset) % rows
    if model == "absolute":      # refuted by the H100 whenever the base offset is not 0
        return (address // LINE) % rows
    raise SpecError("phase_model", model, "expected one of " + " ".join(PHASE_MODELS), PHASE.id)


def apply_swizzle(swizzle: str, origin: int, address: int, base_offset: int,
                  model: str = "hardware") -> int:
    sw = DESCRIPTOR_SWIZZLES[swizzle]
    return address ^ (swizzle_phase(swizzle, origin, address, base_offset, model) << sw.base)


def element_address(op: Operand, mn: int, k: int, model: str = "hardware") -> int:
    origin, linear = linear_address(op, mn, k)
    return apply_swizzle(op.desc.swizzle, origin, linear, op.desc.base_offset, model)


def swizzle_row_by_element(op: Operand, base: int, offsets: list) -> list:
    """[apply_swizzle(op's swizzle, base, base + o, op's base offset) for o in offsets] under the hardware
    phase (rule readmap.swizzle_phase, which does not read the origin)."""
    swizzle, base_offset = op.desc.swizzle, op.desc.base_offset
    return [apply_swizzle(swizzle, base, base + o, base_offset, "hardware") for o in offsets]


def swizzle_row(op: Operand, base: int, offsets: list) -> list:
    """swizzle_row_by_element; while fast paths are on (spec.fast), with the phase's formula inlined as
    read_addresses computes it (spec.fast.mma_readmap)."""
    return fast.fastest(swizzle_row_by_element)(op, base, offsets)


def read_addresses(op: Operand, model: str = "hardware") -> list:
    """addresses[mn][k]: absolute shared-memory byte address of element (mn, k). The same as
    element_address for each element, with the per-dimension parts computed once."""
    along_k = [k_part(op, k) for k in range(op.k)]
    along_mn = [mn_part(op, mn) for mn in range(op.mn)]
    swizzle, base_offset = op.desc.swizzle, op.desc.base_offset
    if model == "hardware":
        rows, shift = pattern_rows(swizzle), DESCRIPTOR_SWIZZLES[swizzle].base
        # rows is a power of two: (x mod rows) = x & (rows - 1), also for negative x; LINE = 2^7
        mask = rows - 1
        # The swizzle reads address bits [7, 7 + log2 rows) and flips bits below 7: adding a multiple of its
        # period LINE * rows to an address adds it to the swizzled one. So rows whose MN parts agree modulo
        # the period are one row moved by the difference (an MN part that is a multiple of the period
        # apart), computed once: a tile's rows repeat a few of them.
        period = LINE * rows
        patterns, addresses = {}, []
        for m in along_mn:
            low = m % period
            if low not in patterns:
                patterns[low] = [(a := origin + low + offset) ^ ((((a >> 7) - base_offset) & mask) << shift)
                                 for origin, offset in along_k]
            moved = m - low
            addresses.append([a + moved for a in patterns[low]] if moved else list(patterns[low]))
        return addresses
    return [[apply_swizzle(swizzle, origin, origin + m + offset, base_offset, model)
             for origin, offset in along_k] for m in along_mn]


def first_misread_by_element(op: Operand, expected, model: str = "hardware") -> Optional[tuple]:
    """The first (mn, k), in row order, where read_addresses(op, model)[mn][k] != expected[mn][k] (rows
    and columns past either side's end are not compared); None when every element is read where expected
    says."""
    read = read_addresses(op, model)
    for mn, (row, wanted) in enumerate(zip(read, expected)):
        for k, (a, b) in enumerate(zip(row, wanted)):
            if a != b:
                return mn, k
    return None


def first_misread(op: Operand, expected, model: str = "hardware") -> Optional[tuple]:
    """first_misread_by_element; while fast paths are on (spec.fast), from read_addresses' per-dimension
    parts, the first 8 rows (one row group) before the others (spec.fast.mma_readmap)."""
    return fast.fastest(first_misread_by_element)(op, expected, model)


# --- Constraints on one operand read: each rule, then its check ------------------------------------
SM90_TYPES = rule(
    "operand.sm90.dtype", "PTX 9.7.15.5 (wgmma.mma_async types)",
    "wgmma reads f16, bf16, tf32 (f32 storage), e4m3, e5m2, s8 and u8 from shared memory; no 6- or "
    "4-bit types.", subject="operand", enforced_by="ptxas",
    note="ptxas refuses the wgmma form (tests/hardware/ptxas_forms.json).")


@SM90_TYPES.checker
def _sm90_types(op: Operand):
    if op.arch == "sm90" and not op.dtype.sm90:
        return f"wgmma (sm90) does not read {op.dtype.name}"
    return None


# Why the operand rules below are enforced by ptxas on sm90 only.
PTXAS_SEES_WGMMA_FORMS_ONLY = (
    "ptxas refuses the sm90 wgmma form (the type, transposition and K are part of the instruction, "
    "tests/hardware/ptxas_forms.json); tcgen05.mma carries them in the run-time instruction "
    "descriptor, which ptxas does not see: not enforced on sm100/sm103.")


MN_MAJOR_TYPES = rule(
    "operand.mn_major.dtype", "PTX 9.7.15.5.1 (wgmma transpose: '.f16/.bf16 types' only); PTX "
    "9.7.16 Table 51 and Table 54 (tcgen05)",
    "MN-major (transposed) operands: on sm90 only f16/bf16; on sm100/sm103 only 8-, 16- and 32-bit "
    "types (e4m3, e5m2, s8, u8, f16, bf16, tf32), never kind::mxf4/mxf4nvf4.", subject="operand",
    enforced_by="ptxas", not_enforced_on=("sm100", "sm103"),
    note=PTXAS_SEES_WGMMA_FORMS_ONLY)


@MN_MAJOR_TYPES.checker
def _mn_major_types(op: Operand):
    if op.major != "MN":
        return None
    allowed = op.dtype.sm90_mn_major if op.arch == "sm90" else (
        op.dtype.sm100_mn_major and op.kind not in dtypes.DENSE_SUBBYTE_KINDS)
    return None if allowed else f"{op.dtype.name} (kind::{op.kind}) cannot be MN-major on {op.arch}"


TABLE54 = rule(
    "operand.swizzle.table54", "PTX 9.7.16.10.3 Table 54; 9.7.16.10.1 (transpose and 128B swizzling with "
    "32B atomicity)",
    "MN-major (transposed) operands: 8/16-bit every swizzle but 128B_atom32B; 32-bit only 128B_atom32B.",
    subject="operand")


@TABLE54.checker
def _table54(op: Operand):
    if op.major != "MN":
        return None
    swizzle = op.desc.swizzle
    if op.dtype.bits < 32:
        if swizzle == "128B_atom32B":
            return f"MN-major {op.dtype.bits}-bit operands cannot use 128B_atom32B"
        return None
    if op.arch != "sm90" and swizzle != "128B_atom32B":
        return f"32-bit MN-major operands need 128B_atom32B, not {swizzle}"
    return None


K_MAJOR_ATOM32 = rule(
    "operand.swizzle.k_major_atom32", "PTX 9.7.16.10.6 Table 55 (swizzle atoms: 128B with 32B atomicity is "
    "MN-major 8x4 only); CUTLASS cute/atom/mma_traits_sm100.hpp (make_umma_desc: static_assert "
    "'SWIZZLE_128B_BASE32B is invalid for Major-K')",
    "K-major operands do not use 128B_atom32B.", subject="operand", evidence="interpretation",
    note="Table 54 itself lists 'All swizzling modes' for K-major (Row A / Column B) operands of every "
         "size; the swizzle-atom table gives the 128B-with-32B-atomicity atom an MN-major shape only, and "
         "CUTLASS refuses it for K-major at compile time. This rule takes the atom table's reading. No "
         "hardware here can decide it (tcgen05 only), and ptxas assembles such cases: the descriptor is a "
         "run-time value (tests/hardware/desc_ptxas_agreement.json).")


@K_MAJOR_ATOM32.checker
def _k_major_atom32(op: Operand):
    if op.major == "K" and op.desc.swizzle == "128B_atom32B":
        return f"K-major {op.dtype.bits}-bit operand with 128B_atom32B (no K-major atom)"
    return None


INSTRUCTION_K_RULE = rule(
    "operand.instruction_k", "PTX 9.7.15.5 (wgmma K); PTX 9.7.16.2.1 Table 39 (tcgen05 K)",
    "K is the instruction's K: 32 bytes of K per row (16 f16, 8 tf32, 32 8-bit, 64 dense e2m1); "
    "on sm103 kind::mxf4(nvf4) also 96 (48 bytes).", subject="operand",
    enforced_by="ptxas", not_enforced_on=("sm100", "sm103"),
    note=PTXAS_SEES_WGMMA_FORMS_ONLY)


@INSTRUCTION_K_RULE.checker
def _instruction_k(op: Operand):
    allowed = dtypes.instruction_k_values(op.dtype, op.kind, op.arch)
    if op.k not in allowed:
        return f"K={op.k} is not an instruction K for {op.dtype.name} on {op.arch} (expected " \
               + " or ".join(map(str, allowed)) + ")"
    return None


ABSOLUTE_K_MAJOR = rule(
    "operand.lbo_absolute.k_major", "PTX 9.7.16.3.1.2.1 (restriction 2)",
    "Absolute LBO mode supports only K-major operands (instruction descriptor bits 15 and 16 = 0).",
    subject="operand")


@ABSOLUTE_K_MAJOR.checker
def _absolute_k_major(op: Operand):
    if op.desc.lbo_mode == "absolute" and op.major != "K":
        return "absolute LBO mode with an MN-major operand"
    return None


ABSOLUTE_K48 = rule(
    "operand.lbo_absolute.k48", "PTX 9.7.16.3.1.2",
    "Absolute LBO mode is the mode for a 48-byte K (dense K = 96 e2m1 on sm103).",
    subject="operand", evidence="interpretation",
    note="The manual introduces the mode for the 48-byte K and says nothing of other K; a 32-byte K "
         "never needs it, so using it there is flagged as a likely mistake.")


@ABSOLUTE_K48.checker
def _absolute_k48(op: Operand):
    if op.desc.lbo_mode == "absolute" and not (op.major == "K" and op.k_bytes == 48):
        return f"absolute LBO mode with {op.k_bytes} bytes of K; it is the 48-byte-K mode"
    return None


SM90_N = rule(
    "operand.sm90.n_extent", "PTX ISA 9.7.15.5 (wgmma shapes); tests/hardware/ptxas_forms.json (ptxas 13.0)",
    "On sm90 the operand's MN extent is a wgmma N: a multiple of 8 up to 256; for s8/u8 only 8, 16, 24 "
    "or a multiple of 16 up to 256.", subject="operand", evidence="ptxas", enforced_by="ptxas",
    note="ptxas refuses '.m64n40k32' for integer types ('Illegal matrix shape ... with integer types') and "
         "N above 256 ('Unknown modifier'); the desc fuzz target reads the operand as wgmma's B.")


@SM90_N.checker
def _sm90_n(op: Operand):
    if op.arch != "sm90":
        return None
    allowed = op.mn <= 256 and (op.dtype.family != "int" or op.mn <= 32 or op.mn % 16 == 0)
    return None if allowed else f"N = {op.mn} is not a wgmma N for {op.dtype.name}"


SM103_I8 = rule(
    "operand.sm103.kind_i8", "PTX ISA 9.7.16.10.9.1 (tcgen05.mma, Target ISA Notes: 'Qualifier .kind::i8 is "
    "supported on following architectures: sm_100a, sm_101a, sm_110a'); tests/hardware/ptxas_forms.json "
    "(ptxas 13.0)",
    "tcgen05.mma kind::i8 (s8/u8) is not available on sm_103a.", subject="operand", evidence="manual",
    enforced_by="ptxas",
    note="The target notes of tcgen05.mma list sm_100a and sm_101a/sm_110a for .kind::i8, not sm_103a (nor "
         "any family target); ptxas 13.0 agrees: \"Feature '.kind::i8' not supported on .target 'sm_103a'\".")


@SM103_I8.checker
def _sm103_i8(op: Operand):
    return "kind::i8 does not exist on sm_103a" if op.arch == "sm103" and op.kind == "i8" else None


ROW_CROSSING = rule(
    "operand.k_slice.inside_line", "PTX 9.7.16.3.1.2 ('would overflow the 128B shared memory "
    "boundary')",
    "In relative LBO mode a K-major swizzled row's K slice must stay inside its W-byte swizzle row "
    "(for 128B: the aligned 128-byte line); a 48-byte K from line offset 96 or 112 crosses it.",
    subject="operand")


@ROW_CROSSING.checker
def _row_crossing(op: Operand):
    if op.major != "K" or op.desc.swizzle == "none" or op.desc.lbo_mode == "absolute":
        return None
    width = _row_bytes(op.desc.swizzle)
    offset = op.desc.start_address % width
    if offset + min(op.k_bytes, width) > width:
        return (f"the {op.k_bytes}-byte K slice starts {offset} bytes into a {width}-byte swizzle row "
                f"and crosses its end")
    return None
