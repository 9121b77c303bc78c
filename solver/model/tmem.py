"""Tensor memory as Z3 bit-vector functions (written independently of spec.tmem): the address layout and
the tcgen05.ld / tcgen05.st fragment maps, with .num symbolic.

Sources.
  PTX ISA 9.7.16.1.1 (Figure 182): a tensor-memory address is 32 bits, lane in bits 31-16, column in
    bits 15-0; every cell is 32 bits.
  PTX ISA 9.7.16.2.3 (Data Movement Shape) and 9.7.16.8.3 Table 49: .32x32b moves 32 lanes x 32*num bits;
    .16x64b / .16x128b / .16x256b move 16 lanes x N*num bits; .16x32bx2 is two .16x32b accesses, threads
    0-15 at taddr and threads 16-31 at taddr + immHalfSplitoff. Registers per thread: 1, 1, 2, 4, 1 times
    num (at most 128 registers).
  CUTLASS 4.2 (cute/atom/copy_traits_sm100.hpp) for which cell each register piece is: the CuTe layouts of
    the SM100_TMEM_LOAD_* atoms, as the recording tests/hardware/cutlass_tmem_atoms.json.gz prints them
    per atom (ValID, DstLayout). They are transcribed below as templates in CuTe's notation with N for
    .num (a leaf "64N" is 64 * num, "_16" the constant 16); tests/solver_tests/prove/test_tmem_properties.py checks that each
    template, at every .num, is the recorded layout.

How the map is evaluated (CuTe's own reading of its TMEM atoms). Thread t's register bits are numbered
v = 32*r + b (register r, bit b). The atom's DstLayout (thread, value) -> ref takes (t, v) to an index
into the atom's ValID, and ValID(ref) is the TMEM bit address relative to taddr, in bits: lane * 2^21 +
column * 32 + bit in the cell (2^21 = 2^16 columns x 32 bits: the address layout's lane field, in bits).
The 16-bit piece (r, h) starts at v = 32r + 16h; its cell is (bit address >> 21, (bit address mod 2^21)
>> 5) and its half of the cell is bit 4 of the bit address. The *_16b atoms (.pack::16b / .unpack::16b)
have the same DstLayout and a ValID that spreads 16-bit chunks over 32-bit cells.

Every layout extent and stride is a power of two (num included: .num = 2^e), so a layout applied to an
index is a sum of bit fields moved by shifts, and e can be a bit-vector: one query covers every .num.

The .16x32bx2 atoms of CUTLASS issue the second access at immHalfSplitoff = the columns of one half
(their layout puts threads 16-31 right after threads 0-15); `piece` takes any split offset and moves
the second half's columns accordingly.
"""
from __future__ import annotations

import functools
import re

import z3

from solver.model.bitvec import bv, narrow

# --- The address layout (PTX 9.7.16.1.1) --------------------------------------------------------------
FIELD_BITS = 16            # lane in bits 31-16, column in bits 15-0
CELL_BITS = 32
LANE_BIT_STRIDE = 1 << (FIELD_BITS + 5)     # one lane, in TMEM bits: 2^16 columns x 32 bits (ValID's 2097152)


def address(lane, column):
    """The 32-bit address of (lane, column); lane and column below 2^16."""
    return (lane << FIELD_BITS) | column


def address_lane(a):
    return z3.LShR(a, FIELD_BITS) if isinstance(a, z3.ExprRef) else a >> FIELD_BITS


def address_column(a):
    return a & ((1 << FIELD_BITS) - 1)


# --- Shapes (PTX 9.7.16.2.3, Table 49) -----------------------------------------------------------------
SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
LANES = {"32x32b": 32, "16x64b": 16, "16x128b": 16, "16x256b": 16, "16x32bx2": 16}
LANE_BITS = {"32x32b": 32, "16x64b": 64, "16x128b": 128, "16x256b": 256, "16x32bx2": 32}   # per access
BASE = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
MAX_REGISTERS = 128
NUM_BITS = 3               # e = log2(.num) in [0, 7]
THREADS = 32


def max_num_log2(shape: str) -> int:
    """The largest e with BASE * 2^e <= 128 registers."""
    return (MAX_REGISTERS // BASE[shape]).bit_length() - 1


def columns_log2_factor(shape: str, pack: bool) -> int:
    """Columns one access (one half of .16x32bx2) spans per lane, divided by num: N/32, x2 with packing."""
    return LANE_BITS[shape] // CELL_BITS * (2 if pack else 1)


# --- CuTe layouts with N = .num (transcribed from the recording's per-atom layouts) ---------------------
DST_LAYOUT = {          # SM100_TMEM_LOAD_<dp>dp<bits>b<num>x: DstLayout, (thread, value bit) -> ValID index
    "32x32b": "(_32,32N):(32N,_1)",
    "16x64b": "((_2,_2,_8),(_32,N)):((512N,_32,64N),(_1,_64))",
    "16x128b": "((_4,_8),(_32,_2,N)):((_32,128N),(_1,1024N,_128))",
    "16x256b": "((_4,_8),(_64,_2,N)):((_64,256N),(_1,2048N,_256))",
    "16x32bx2": "((_16,_2),32N):((64N,32N),_1)",
}
VAL_ID = {              # ValID: index -> TMEM bit address (lane stride 2^21)
    "32x32b": "(32N,_32):(_1,_2097152)",
    "16x64b": "(64N,_16):(_1,_2097152)",
    "16x128b": "(128N,_16):(_1,_2097152)",
    "16x256b": "(256N,_16):(_1,_2097152)",
    "16x32bx2": "(64N,_16):(_1,_2097152)",
}
VAL_ID_16B = {          # the *_16b atoms: 16-bit chunks one per 32-bit cell
    "32x32b": "((_16,2N),_32):((_1,_32),_2097152)",
    "16x64b": "((_16,4N),_16):((_1,_32),_2097152)",
    "16x128b": "((_16,8N),_16):((_1,_32),_2097152)",
    "16x256b": "((_16,16N),_16):((_1,_32),_2097152)",
    "16x32bx2": "((_16,4N),_16):((_1,_32),_2097152)",
}

_LEAF = re.compile(r"^(?:_(\d+)|(\d*)N)$")


def _parse_tuple(text: str, at: int = 0):
    """A nested tuple of leaf strings from CuTe's notation, and the position after it."""
    if text[at] != "(":
        end = at
        while end < len(text) and text[end] not in ",):":
            end += 1
        return text[at:end], end
    items, at = [], at + 1
    while True:
        item, at = _parse_tuple(text, at)
        items.append(item)
        if text[at] == ")":
            return tuple(items), at + 1
        at += 1                                       # the comma


def _flatten(tree) -> list:
    return [leaf for item in tree for leaf in _flatten(item)] if isinstance(tree, tuple) else [tree]


def _log2_leaf(leaf: str) -> tuple:
    """(a, times_num): the leaf's value is 2^a * num^times_num."""
    match = _LEAF.match(leaf)
    if not match:
        raise ValueError(f"not a layout leaf: {leaf!r}")
    constant, factor = match.group(1), match.group(2)
    value = int(constant) if constant is not None else int(factor or 1)
    if value & (value - 1) or value == 0:
        raise ValueError(f"{leaf!r}: the model needs powers of two")
    return value.bit_length() - 1, constant is None


@functools.lru_cache(maxsize=None)
def parse_layout(text: str) -> tuple:
    """CuTe's "shape:stride" as a tuple of top-level modes, each a tuple of flat (extent, stride) leaves in
    colexicographic order, both as (log2 constant, times num)."""
    shape, at = _parse_tuple(text, 0)
    if text[at] != ":":
        raise ValueError(f"no ':' in {text!r}")
    stride, end = _parse_tuple(text, at + 1)
    if end != len(text):
        raise ValueError(f"trailing text in {text!r}")
    shape_modes = shape if isinstance(shape, tuple) else (shape,)
    stride_modes = stride if isinstance(stride, tuple) else (stride,)
    if len(shape_modes) != len(stride_modes):
        raise ValueError(f"shape and stride differ in rank: {text!r}")
    modes = []
    for s, d in zip(shape_modes, stride_modes):
        extents, strides = _flatten(s), _flatten(d)
        if len(extents) != len(strides):
            raise ValueError(f"shape and stride are not congruent: {text!r}")
        modes.append(tuple((_log2_leaf(x), _log2_leaf(y)) for x, y in zip(extents, strides)))
    return tuple(modes)


def format_layout(text: str, num: int) -> str:
    """The template with N replaced by `num`, in CuTe's printing (static integers as _k)."""
    def leaf(match):
        return f"_{int(match.group(1) or 1) * num}"
    return re.sub(r"(?<![_\d])(\d*)N", leaf, text)


def _is_z3(*values) -> bool:
    return any(isinstance(v, z3.ExprRef) for v in values)


def _power(log2: tuple, e):
    """The shift amount 2^(a + e*times_num) as a log2: an int, or a bit-vector when e is one."""
    a, times_num = log2
    if not times_num:
        return a
    return bv(a) + e if _is_z3(e) else a + e


def _shl(x, n):
    if _is_z3(x, n):
        return (x if _is_z3(x) else bv(x)) << (n if _is_z3(n) else bv(n))
    return x << n


def _shr(x, n):
    if _is_z3(x, n):
        return z3.LShR(x if _is_z3(x) else bv(x), n if _is_z3(n) else bv(n))
    return x >> n


def apply_mode(leaves: list, index, e):
    """One top-level mode of a layout applied to a 1-D index (colexicographic), num = 2^e."""
    total, consumed = 0, 0
    for extent, stride in leaves:
        width = _power(extent, e)
        coordinate = _shr(index, consumed) & (_shl(1, width) - 1)
        total = total + _shl(coordinate, _power(stride, e))
        consumed = consumed + width
    return total


def apply_layout(modes: list, index, e):
    """A whole layout applied to a 1-D index (every top-level mode's leaves, colexicographic)."""
    return apply_mode([leaf for mode in modes for leaf in mode], index, e)


# --- The fragment map -------------------------------------------------------------------------------------
def num_log2(name: str = "num_log2"):
    """A 3-bit unknown, zero-extended: .num = 2^e."""
    return narrow(name, NUM_BITS)


def legal_num(shape: str, e):
    return z3.ULE(e, max_num_log2(shape))


def registers(shape: str, e):
    """Registers per thread: BASE * num (Table 49)."""
    return _shl(BASE[shape], e)


def columns(shape: str, e, pack: bool = False):
    """Columns one access (one half of .16x32bx2) spans per lane: N * num / 32, x2 with packing."""
    return _shl(columns_log2_factor(shape, pack), e)


def piece(shape: str, pack: bool, t, r, h, e, splitoff=None) -> tuple:
    """(lane, column, cell half) of the 16-bit piece h of register r of thread t, relative to taddr;
    for .16x32bx2 the second access (threads 16-31) lies `splitoff` columns further (None: CUTLASS's
    atoms' offset, the columns of one half). Any argument may be a bit-vector or an int."""
    dst = parse_layout(DST_LAYOUT[shape])
    val_id = parse_layout((VAL_ID_16B if pack else VAL_ID)[shape])
    bit = _shl(r, 5) + _shl(h, 4)                           # v = 32 r + 16 h
    ref = apply_mode(dst[0], t, e) + apply_mode(dst[1], bit, e)
    tmem_bits = apply_layout(val_id, ref, e)
    lane = _shr(tmem_bits, FIELD_BITS + 5)
    within = tmem_bits & (LANE_BIT_STRIDE - 1)
    column = _shr(within, 5)
    half = _shr(within, 4) & 1
    if shape == "16x32bx2" and splitoff is not None:
        second = _shr(t, 4)                                 # threads 16-31: the second access
        column = column - second * columns(shape, e, pack) + second * splitoff
    return lane, column, half


def invert_mode(leaves: list, value, e):
    """The index a one-mode layout of disjoint power-of-two fields takes to `value` (each leaf's field of
    the value moved back to the leaf's place in the index): a right inverse, as CuTe's right_inverse."""
    index, consumed = 0, 0
    for extent, stride in leaves:
        width = _power(extent, e)
        field = _shr(value, _power(stride, e)) & (_shl(1, width) - 1)
        index = index + _shl(field, consumed)
        consumed = consumed + width
    return index


def inverse(shape: str, pack: bool, lane, column, half, e, splitoff=None) -> tuple:
    """(thread, register, half): the piece that `piece` takes to (lane, column, half), read back through
    the layouts (a witness; the properties check that `piece` of it is the cell). For .16x32bx2 with a
    split offset, a column at or past the offset is one of the second access's."""
    if shape == "16x32bx2" and splitoff is not None:
        second = z3.If(z3.UGE(column, splitoff), bv(1), bv(0)) if _is_z3(column, splitoff) \
            else int(column >= splitoff)
        column = column - second * splitoff + second * columns(shape, e, pack)
    dst = parse_layout(DST_LAYOUT[shape])
    val_id = parse_layout((VAL_ID_16B if pack else VAL_ID)[shape])
    tmem_bits = _shl(lane, FIELD_BITS + 5) + _shl(column, 5) + _shl(half, 4)
    ref = invert_mode([leaf for mode in val_id for leaf in mode], tmem_bits, e)
    t = invert_mode(dst[0], ref, e)
    v = invert_mode(dst[1], ref, e)
    return t, _shr(v, 5), _shr(v, 4) & 1


def in_domain(shape: str, t, r, h, e):
    """Thread in [0, 32), register in [0, BASE * num), half in {0, 1}, num legal."""
    return z3.And(legal_num(shape, e), z3.ULT(t, THREADS), z3.ULT(r, registers(shape, e)), z3.ULE(h, 1))


# --- tcgen05.cp: where each source bit lands (PTX 9.7.16.9, CUTLASS SM100_UTCCP_* ValID) -------------------
# Each atom as a layout of three top-level modes (source row, source bit of the row, multicast copy) ->
# TMEM bit address (lane stride DP_b = 2^21, as in copy_traits_sm100.hpp). Read off CUTLASS 4.2's
# Copy_Traits<SM100_UTCCP_*>: ValID's modes are [core_matrix_strided, core_matrix_leading, (repeat),
# broadcast]; the source row is the strided mode (with the repeat mode above it: 01_23's SrcLayout puts the
# repeat 4096 = 32 x 128 source bits on, i.e. rows 32-63), the bit the leading mode, the copy the broadcast
# mode (SrcLayout stride 0: every copy reads the same source bit). 4dp256bit is ValID (128,256):(DP_b,1)
# composed with its DstLayout (4,256):(32,128): row i is refresh row 32i, i.e. lane 32i.
CP_ATOMS = {
    ("128x256b", None): "(_128,_256,_1):(_2097152,_1,_1)",                       # SM100_UTCCP_128dp256bit
    ("4x256b", None): "(_4,_256,_1):(_67108864,_1,_1)",                          # SM100_UTCCP_4dp256bit
    ("128x128b", None): "(_128,_128,_1):(_2097152,_1,_1)",                       # SM100_UTCCP_128dp128bit
    ("64x128b", "warpx2::02_13"): "(_64,_128,_2):(_2097152,_1,_134217728)",      # 2x64dp128bitlw0213
    ("64x128b", "warpx2::01_23"):                                                # 2x64dp128bitlw0123
        "((_32,_2),_128,_2):((_2097152,_134217728),_1,_67108864)",
    ("32x128b", "warpx4"): "(_32,_128,_4):(_2097152,_1,_67108864)",              # 4x32dp128bit
}
CP_ROWS = {"128x256b": 128, "4x256b": 4, "128x128b": 128, "64x128b": 64, "32x128b": 32}
CP_BITS = {"128x256b": 256, "4x256b": 256, "128x128b": 128, "64x128b": 128, "32x128b": 128}


def cp_copies(shape: str, multicast) -> int:
    """How many lanes one source row is written to (the broadcast mode's extent)."""
    (extent, _), = [leaf for leaf in parse_layout(CP_ATOMS[(shape, multicast)])[2]]
    return 1 << extent[0]


def cp_cell(shape: str, multicast, row, bit, copy) -> tuple:
    """(lane, column, bit in the cell) that bit `bit` of source row `row` lands in, in copy `copy` of the
    multicast, relative to taddr (ints or bit-vectors)."""
    modes = parse_layout(CP_ATOMS[(shape, multicast)])
    tmem_bits = apply_mode(modes[0], row, 0) + apply_mode(modes[1], bit, 0) + apply_mode(modes[2], copy, 0)
    within = tmem_bits & (LANE_BIT_STRIDE - 1)
    return _shr(tmem_bits, FIELD_BITS + 5), _shr(within, 5), within & 31


def cp_named_lanes(shape: str, multicast, row) -> list:
    """The lanes the manual's multicast names for source row `row` (PTX 9.7.16.9.1 / 9.7.16.2.3): the
    32-lane quarter (warp) list the qualifier names, at lane row % 32 of each; .4x256b: lane 0 of quarter
    `row`; no multicast: row r in quarter r // 32. Written from the names, not from CUTLASS's strides."""
    quarter, within = _shr(row, 5), row & 31
    if shape == "4x256b":
        quarters, within = [row], 0
    elif multicast == "warpx2::02_13":           # rows 0-31 to warps 0 and 2, rows 32-63 to warps 1 and 3
        quarters = [quarter, quarter + 2]
    elif multicast == "warpx2::01_23":           # rows 0-31 to warps 0 and 1, rows 32-63 to warps 2 and 3
        quarters = [2 * quarter, 2 * quarter + 1]
    elif multicast == "warpx4":                   # every row to all four warps
        quarters = [0, 1, 2, 3]
    else:
        quarters = [quarter]
    return [_shl(q, 5) + within for q in quarters]


# --- tcgen05.cp decompression (PTX 9.7.16.9.1 .dst_fmt.src_fmt; 9.7.16.10.4) ------------------------------
# .b8x16.bWx16_pP: a 16-byte source chunk is 16 W-bit elements then P bits of padding; the destination is
# 16 bytes (b8x16), one element per byte. Numbers read off the qualifier's name.
CP_CHUNK_BITS = 128
CP_ELEMENTS = 16
CP_FORMATS = {"b8x16.b6x16_p32": (6, 32), "b8x16.b4x16_p64": (4, 64)}     # (element bits, padding bits)


def cp_element(fmt: str, chunk, index) -> tuple:
    """(first source bit, bits, destination byte) of element `index` of 16-byte chunk `chunk` of a row:
    source bits counted from the row's first chunk (128 per chunk), destination bytes from the row's first
    column (4 per column)."""
    width, _ = CP_FORMATS[fmt]
    return _shl(chunk, 7) + index * width, width, _shl(chunk, 4) + index


# --- Accumulator D in tensor memory (PTX 9.7.16.10.5 Layouts A-G; CUTLASS UMMA::tmem_frg / tmem_frg_ws) -----
# CUTLASS's tmem atoms in its "virtual addressing" (lane stride 1, column stride 128), per CTA:
#   M_MMA 128 (A per CTA, D):       (_128, N):(_1, _128)
#   M_MMA 64 2SM / ws (B, E) 2x2:   (_64, (N/2, _2)):(_1, (_128, _64))
#   M_MMA 64 1SM (F) half path:     ((_16, _4), N):((_1, _32), _128)     (+ lane offset 0 or 16, PTX)
#   M_MMA 32 (G) 1x4:               (_32, (N/4, _4)):(_1, (_128, _32))
# As (M modes [(extent, lane stride)], N split k, lane stride of the N/k-th part): n = n0 + (N/k) n1 goes
# to column n0 and lane stride * n1.
# Layout C (M=128, cta_group::2, sparse A) has no CUTLASS atom of its own (CUTLASS 4.2 gives its sparse
# 2-CTA MMAs the 2x2 atom of B); the manual's table calls it "4x1" on "1/2 datapath", lane alignment 0 or 16,
# as F is: here it is F's atom, per CTA of the pair.
ACCUMULATOR_ATOMS = {
    "A": ([(128, 1)], 1, 0), "B": ([(64, 1)], 2, 64), "C": ([(16, 1), (4, 32)], 1, 0), "D": ([(128, 1)], 1, 0),
    "E": ([(64, 1)], 2, 64), "F": ([(16, 1), (4, 32)], 1, 0), "G": ([(32, 1)], 4, 32),
}
ACCUMULATOR_ROWS = {"A": 256, "B": 128, "C": 128, "D": 128, "E": 64, "F": 64, "G": 32}   # M of the MMA
ACCUMULATOR_CTAS = {"A": 2, "B": 2, "C": 2, "D": 1, "E": 1, "F": 1, "G": 1}               # cta_group
HALF_DATAPATH_OFFSETS = {"C": (0, 16), "F": (0, 16)}                                     # PTX: lane alignment


def accumulator_columns(layout: str, N):
    return N if ACCUMULATOR_ATOMS[layout][1] == 1 else \
        (z3.UDiv(N, ACCUMULATOR_ATOMS[layout][1]) if _is_z3(N) else N // ACCUMULATOR_ATOMS[layout][1])


def _divmod(a, b):
    if _is_z3(a, b):
        a, b = (a if _is_z3(a) else bv(a)), (b if _is_z3(b) else bv(b))
        return z3.UDiv(a, b), z3.URem(a, b)
    return divmod(a, b)


def accumulator_cell(layout: str, m, n, N, offset=0) -> tuple:
    """(cta, lane, column) of D[m, n] (M x N of the MMA; with cta_group::2 CTA m // (M/2) holds row m, at
    its row m % (M/2)), lane and column relative to D's address."""
    m_modes, k, stride = ACCUMULATOR_ATOMS[layout]
    rows = ACCUMULATOR_ROWS[layout] // ACCUMULATOR_CTAS[layout]
    cta, m = (_shr(m, rows.bit_length() - 1), m & (rows - 1)) if ACCUMULATOR_CTAS[layout] == 2 else (0, m)
    lane, consumed = offset, 0
    for extent, lane_stride in m_modes:
        lane = lane + _shl(_shr(m, consumed) & (extent - 1), lane_stride.bit_length() - 1)
        consumed += extent.bit_length() - 1
    if k == 1:
        return cta, lane, n
    n1, n0 = _divmod(n, accumulator_columns(layout, N))
    return cta, lane + n1 * stride, n0


def accumulator_element(layout: str, cta, lane, column, N, offset=0) -> tuple:
    """(m, n): the D element the accumulator map puts at (cta, lane, column) (the fields read back: a
    witness that the properties check)."""
    m_modes, k, stride = ACCUMULATOR_ATOMS[layout]
    rows = ACCUMULATOR_ROWS[layout] // ACCUMULATOR_CTAS[layout]
    lane = lane - offset
    m, consumed = 0, 0
    for extent, lane_stride in m_modes:
        m = m + _shl(_shr(lane, lane_stride.bit_length() - 1) & (extent - 1), consumed)
        consumed += extent.bit_length() - 1
    if ACCUMULATOR_CTAS[layout] == 2:
        m = m + cta * rows
    n = column if k == 1 else column + (_shr(lane, stride.bit_length() - 1) & (k - 1)) * accumulator_columns(layout, N)
    return m, n


# --- A ld sequence over the accumulator ----------------------------------------------------------------------
def access_span(shape: str, e):
    """Columns one access covers per lane (both halves of .16x32bx2 at CUTLASS's split offset)."""
    width = columns(shape, e)
    return width * 2 if shape == "16x32bx2" and not _is_z3(width) else \
        (_shl(width, 1) if shape == "16x32bx2" else width)


def sequence_read(shape: str, warp, load, t, r, e, lane_base=0) -> tuple:
    """(lane, column) that register r of thread t reads in load `load` of warp `warp` of the sequence:
    warp w issues tcgen05.ld.<shape>.x(2^e) at lane 32w + lane_base, column load * span (unpacked)."""
    lane, column, _ = piece(shape, False, t, r, 0, e)
    return _shl(warp, 5) + lane_base + lane, load * access_span(shape, e) + column
