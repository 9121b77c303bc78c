"""Where tcgen05.mma keeps its accumulator D in tensor memory: the data-path layouts (PTX 9.7.16.10.5 Data
Path Layout Organization, Layouts A-G), and the packing of D (9.7.16.10.4.1).

The manual's table picks the layout by M, .cta_group, A's sparsity and .ws:

    M    cta_group  sparse  .ws   organization                  layout  lane alignment
    32   ::1        either  yes   1x4                           G       0
    64   ::1        either  yes   2x2 (the table prints 2x3)    E       0
    64   ::1        either  no    4x1, half the data path       F       0 or 16
    128  ::1        either  either 4x1                          D       0
    128  ::2        dense   -     2x2                           B       0
    128  ::2        sparse  -     4x1, half the data path       C       0 or 16
    256  ::2        either  -     4x1                           A       0

The layouts themselves are figures (images); the maps here are the tensor-memory allocators CUTLASS states
for its UMMA atoms (include/cute/atom/mma_traits_sm100.hpp, UMMA::tmem_frg and UMMA::tmem_frg_ws), in
lanes and 32-bit columns relative to D's address, per CTA (with .cta_group::2 each CTA holds M/2 rows):

    A, D      row m -> lane m, column n                     (A: CTA m // 128, row m % 128)
    B, E      lane m + 64 * (n // (N/2)), column n % (N/2)   (B: CTA m // 64, row m % 64)
    F         lane (m % 16) + 32 * (m // 16) + offset, column n   (offset 0 or 16)
    G         lane m + 32 * (n // (N/4)), column n % (N/4)
    C         as F, per CTA (CTA m // 64, row m % 64): the manual's table ("4x1, 1/2 datapath"); CUTLASS
              4.2 disagrees (rule tmem.mma.d_map.sparse)

A D element of 16 bits takes the low half of its 32-bit cell (D is not packed two to a cell: CUTLASS
allocates 16-bit accumulators with a 32-bit storage type).

Matrix A may be read from tensor memory instead of shared memory (tcgen05.mma [d], [a], b-desc; PTX
9.7.16.10.1). Its row m lies in the lanes of D's row m (CUTLASS: "DP-address equivalence in TMEM-A and
TMEM-C allocations"), and its K elements of one MMA are packed along the row, 256 bits = 8 columns:
element k at bit k * w of the row, w = 32 (tf32), 16 (f16, bf16) or 8 (i8, the 8-bit .kind::f8f6f4 types,
and, read so here, the 4- and 6-bit ones in 8-bit containers, the .b8x16 format tcgen05.cp decompresses
into: CUTLASS packs 4-bit A two to a byte, rule tmem.mma.a_map.sub_byte). With
.cta_group::2 and M = 128, CUTLASS duplicates A's 64 rows of each CTA in both lane halves (lanes m and
m + 64), matching the 2x2 organization of D (`a_locations`).
"""
from __future__ import annotations

from spec.rule import SpecError, rule
from spec.tmem import address as tmem_address

LAYOUTS = ("A", "B", "C", "D", "E", "F", "G")
HALF_DATAPATH = ("C", "F")                 # 1/2 data path utilized: lane alignment 0 or 16
ROWS_PER_CTA = {"A": 128, "B": 64, "C": 64, "D": 128, "E": 64, "F": 64, "G": 32}

SELECTION = rule(
    "tmem.mma.d_layout", "PTX 9.7.16.10.5",
    "The accumulator layout is G for M=32 .ws, E for M=64 .ws, F for M=64 without .ws (cta_group::1), D for "
    "M=128 cta_group::1, B for M=128 cta_group::2 with a dense A, C with a sparse A, A for M=256 "
    "cta_group::2; .ws exists with cta_group::1 only.")
MAPS = rule(
    "tmem.mma.d_map", "PTX 9.7.16.10.5 Figures 205-218; CUTLASS include/cute/atom/mma_traits_sm100.hpp",
    "Per CTA, relative to D's address: A, D: (m, n) -> lane m, column n; B, E: lane m + 64*(n // (N/2)), "
    "column n % (N/2); F: lane m%16 + 32*(m//16) + offset, column n; G: lane m + 32*(n // (N/4)), "
    "column n % (N/4). With cta_group::2, rows 0..M/2-1 are in the issuing CTA and the rest in its peer.",
    evidence="cutlass")
LANE_ALIGNMENT = rule(
    "tmem.mma.d_lane_alignment", "PTX 9.7.16.10.5; PTX 9.7.16.10.8.5",
    "The half-data-path layouts (F, C) start at lane offset 0 (lanes 0-15 of each 32-lane quarter) or 16 "
    "(lanes 16-31); every other layout at lane 0. A, D and the sparsity metadata use the same alignment.")
PACKING = rule(
    "tmem.mma.d_packing", "PTX 9.7.16.10.4.1; CUTLASS include/cute/atom/mma_traits_sm100.hpp",
    "A 16-bit element of D occupies bits 0-15 of its 32-bit cell; a 32-bit element the whole cell.",
    evidence="cutlass",
    note="The manual draws the packing of D (an image); CUTLASS allocates 16-bit accumulators with "
         "StorageType uint32_t (tmem_frg_1sm<c_type> defaults), one element per column.")


SPARSE_MAP = rule(
    "tmem.mma.d_map.sparse", "PTX 9.7.16.10.5 (the table of data-path layouts: M=128, .cta_group::2, sparse A)",
    "Layout C (M=128, .cta_group::2, sparse A) is the 4x1 organization on half the data path: per CTA, "
    "rows 0..63 of that CTA at lane m%16 + 32*(m//16) + offset (offset 0 or 16), column n; rows 0..63 of D "
    "in the issuing CTA, 64..127 in its peer.",
    evidence="manual",
    note="CUTLASS 4.2 disagrees: its SM100_MMA_*_2x1SM_SS_SPARSE atoms with M=128 allocate D with "
         "UMMA::tmem_frg_2sm, the 2x2 organization of layout B (tests/hardware/cutlass_tmem_frg.json.gz). "
         "The figures are images; only a Blackwell GPU could decide which one the MMA writes.")
A_MAP = rule(
    "tmem.mma.a_map", "PTX 9.7.16.10.1; PTX 9.7.16.10.5; CUTLASS include/cute/atom/mma_traits_sm100.hpp",
    "Matrix A in tensor memory: row m in the lane(s) of D's row m (.cta_group::2 M=128: lanes m and m+64 of "
    "its CTA); element k at bits k*w .. k*w+w-1 of the row, 32-bit cells from A's address, w = 32 for tf32, "
    "16 for f16/bf16, 8 for i8 and the 8-bit .kind::f8f6f4 types (e4m3, e5m2); one MMA reads 256 bits "
    "(8 columns) per row.",
    evidence="cutlass",
    note="CUTLASS's TS atoms allocate A with UMMA::tmem_frg_1sm<a_type, a_type, NonInterleaved> "
         "(tmem_frg_2sm<..., Duplicated> for the 2-CTA forms), evaluated in "
         "tests/hardware/cutlass_tmem_frg.json.gz; not modelled: .ws and sparse A in tensor memory, the mxf* "
         "kinds.")
A_SUB_BYTE = rule(
    "tmem.mma.a_map.sub_byte", "PTX 9.7.16.9.1 (.b8x16 destination format); PTX 9.7.16.10.1",
    "A 4- or 6-bit .kind::f8f6f4 element of A in tensor memory takes an 8-bit container, as the 8-bit types "
    "do (K = 32 per MMA, 8 columns per row): the .b8x16 format tcgen05.cp decompresses such operands into.",
    evidence="interpretation",
    note="CUTLASS 4.2 disagrees for 4-bit types: its F8F6F4_TS atom allocates float_e2m1_t (and "
         "float_e2m1_unpacksmem_t, both 4 bits to CuTe) packed 8 to a cell, A[m][k] at bits 4k..4k+3 in 4 "
         "columns; for 6-bit types its tmem_ptr arithmetic straddles cells (tests/hardware/"
         "cutlass_tmem_frg.json.gz); likely never exercised. Which bits of the container a 4- or 6-bit value "
         "occupies is not modelled. Only a Blackwell GPU could decide.")

A_KINDS = {"tf32": 32, "f16": 16, "i8": 8, "f8f6f4": 8}          # container bits of one A element


def layout_id(M: int, cta_group: int = 1, ws: bool = False, sparse: bool = False) -> str:
    """The data-path layout of an MMA (rule tmem.mma.d_layout). SpecError for a combination with none."""
    if cta_group not in (1, 2):
        raise SpecError("cta_group", cta_group, "expected 1 or 2", SELECTION.id)
    if ws and cta_group != 1:
        raise SpecError("ws", ws, ".ws exists with .cta_group::1 only", SELECTION.id)
    table = {(32, 1, True): "G", (64, 1, True): "E", (64, 1, False): "F", (128, 1, True): "D",
             (128, 1, False): "D"}
    if cta_group == 1:
        found = table.get((M, 1, bool(ws)))
    else:                                                 # .cta_group::2: no .ws (checked above)
        found = {128: "C" if sparse else "B", 256: "A"}.get(M)
    if found is None:
        raise SpecError("M", M, f"no data-path layout for M={M}, cta_group::{cta_group}"
                        + (", .ws" if ws else ""), SELECTION.id)
    return found


def lane_offsets(layout: str) -> tuple:
    """The lane offsets a layout may start at (rule tmem.mma.d_lane_alignment)."""
    if layout not in LAYOUTS:
        raise SpecError("layout", layout, "expected one of " + " ".join(LAYOUTS), LANE_ALIGNMENT.id)
    return (0, 16) if layout in HALF_DATAPATH else (0,)


def _columns(layout: str, N: int) -> int:
    return N // {"B": 2, "E": 2, "G": 4}.get(layout, 1)


def _check(m: int, n: int, M: int, N: int, layout: str, lane_offset: int):
    if not isinstance(N, int) or N <= 0 or N % 8:
        raise SpecError("N", N, "N is a positive multiple of 8", MAPS.id)
    if _columns(layout, N) > tmem_address.COLUMNS:
        raise SpecError("N", N, f"layout {layout} needs {_columns(layout, N)} columns, more than "
                        f"{tmem_address.COLUMNS}", MAPS.id)
    if not (0 <= m < M and 0 <= n < N):
        raise SpecError("m, n", (m, n), f"outside the {M} x {N} matrix D", MAPS.id)
    if lane_offset not in lane_offsets(layout):
        raise SpecError("lane_offset", lane_offset, f"layout {layout} starts at lane offset "
                        + " or ".join(map(str, lane_offsets(layout))), LANE_ALIGNMENT.id)


def _row_part(layout: str, m_index: int, cta_group: int, lane_offset: int) -> tuple:
    """(cta, lane) of row m before the column's share: every layout adds a lane and a column that depend
    on n alone (B, E, G fold column blocks of D into lane blocks), so a row and a column part suffice."""
    cta, m = divmod(m_index, ROWS_PER_CTA[layout]) if cta_group == 2 else (0, m_index)
    if layout in ("F", "C"):                               # half the data path: 16 lanes per quarter
        return cta, m % 16 + 32 * (m // 16) + lane_offset
    return cta, m


def _column_part(layout: str, n: int, N: int) -> tuple:
    """(lanes added, column) of column n of D (rule tmem.mma.d_map)."""
    if layout in ("B", "E"):
        return 64 * (n // (N // 2)), n % (N // 2)
    if layout == "G":
        return 32 * (n // (N // 4)), n % (N // 4)
    return 0, n


def _place(layout: str, m_index: int, n: int, N: int, cta_group: int, lane_offset: int) -> tuple:
    """(cta, lane, column) of D[m_index, n] in `layout`, the indices already checked (rule tmem.mma.d_map)."""
    cta, lane = _row_part(layout, m_index, cta_group, lane_offset)
    lanes_added, column = _column_part(layout, n, N)
    return cta, lane + lanes_added, column


def d_location(m_index: int, n_index: int, M: int, N: int, cta_group: int = 1, ws: bool = False,
               lane_offset: int = 0, sparse: bool = False) -> tuple:
    """(cta, lane, column) of D[m, n]: cta 0 is the issuing CTA, 1 its peer (cta_group::2); lane and
    column relative to D's tensor-memory address (rules tmem.mma.d_layout, tmem.mma.d_map, and
    tmem.mma.d_map.sparse for layout C)."""
    layout = layout_id(M, cta_group, ws, sparse)
    _check(m_index, n_index, M, N, layout, lane_offset)
    return _place(layout, m_index, n_index, N, cta_group, lane_offset)


def d_parts(M: int, N: int, cta_group: int = 1, ws: bool = False, lane_offset: int = 0,
            sparse: bool = False) -> tuple:
    """D's map split in its two parts, checked once: (rows, columns) with rows[m] = (cta, lane) and
    columns[n] = (lanes added, column); D[m, n] is at (cta, lane + lanes added, column) (see _row_part)."""
    layout = layout_id(M, cta_group, ws, sparse)
    _check(0, 0, M, N, layout, lane_offset)
    return ([_row_part(layout, m, cta_group, lane_offset) for m in range(M)],
            [_column_part(layout, n, N) for n in range(N)])


def d_locations(M: int, N: int, cta_group: int = 1, ws: bool = False, lane_offset: int = 0,
                sparse: bool = False) -> dict:
    """{(m, n): (cta, lane, column)} for every element of D: d_location of each, checked once."""
    rows, columns = d_parts(M, N, cta_group, ws, lane_offset, sparse)
    return {(m, n): (cta, lane + lanes_added, column)
            for m, (cta, lane) in enumerate(rows) for n, (lanes_added, column) in enumerate(columns)}


def d_cell(m_index: int, n_index: int, M: int, N: int, cta_group: int = 1, ws: bool = False,
           lane_offset: int = 0, sparse: bool = False) -> tuple:
    """(lane, column) of D[m, n] in the tensor memory of the CTA that holds row m (see d_location)."""
    return d_location(m_index, n_index, M, N, cta_group, ws, lane_offset, sparse)[1:]


def d_bits(element_bits: int) -> tuple:
    """(first bit, bits) of a D element inside its 32-bit cell (rule tmem.mma.d_packing)."""
    if element_bits not in (16, 32):
        raise SpecError("element_bits", element_bits, "D elements are 16 or 32 bits", PACKING.id)
    return 0, element_bits


def lanes_used(M: int, cta_group: int = 1, ws: bool = False, lane_offset: int = 0, sparse: bool = False) -> list:
    """The lanes of one CTA that hold some element of D."""
    layout = layout_id(M, cta_group, ws, sparse)
    N = 64
    rows = ROWS_PER_CTA[layout] if cta_group == 2 else M
    return sorted({d_location(m, n, M, N, cta_group, ws, lane_offset, sparse)[1]
                   for m in range(rows) for n in range(N)})


# --- Matrix A in tensor memory (rule tmem.mma.a_map) -----------------------------------------------------
def a_k(kind: str) -> int:
    """K of one MMA with A in tensor memory: 256 bits of A per row (PTX 9.7.16.10.1, Table 39)."""
    if kind not in A_KINDS:
        raise SpecError("kind", kind, "A in tensor memory is modelled for kinds " + ", ".join(A_KINDS),
                        A_MAP.id)
    return 256 // A_KINDS[kind]


def a_locations(m_index: int, k_index: int, M: int, kind: str, cta_group: int = 1,
                lane_offset: int = 0) -> tuple:
    """Where A[m, k] of one MMA lies in tensor memory: ((cta, lane, column, first_bit, bits), ...), lane and
    column relative to A's address; two places when the layout duplicates A (.cta_group::2, M = 128).
    bits is the element's container: for a 4- or 6-bit .kind::f8f6f4 type that is rule
    tmem.mma.a_map.sub_byte's reading (8 bits), not the value's width."""
    K = a_k(kind)
    layout = layout_id(M, cta_group)                      # dense: sparse A is not modelled here
    _check(m_index, 0, M, 8, layout, lane_offset)
    if not 0 <= k_index < K:
        raise SpecError("k", k_index, f"outside one MMA's K = {K} for .kind::{kind}", A_MAP.id)
    bits = A_KINDS[kind]
    column, first_bit = divmod(k_index * bits, 32)
    cta, lane, _ = _place(layout, m_index, 0, 8, cta_group, lane_offset)
    lanes = (lane, lane + 64) if layout == "B" else (lane,)     # B: 2x2, A duplicated in both halves
    return tuple((cta, each, column, first_bit, bits) for each in lanes)
