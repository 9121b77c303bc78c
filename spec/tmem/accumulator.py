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
    C         (sparse A) not modelled

A D element of 16 bits takes the low half of its 32-bit cell (D is not packed two to a cell: CUTLASS
allocates 16-bit accumulators with a 32-bit storage type).
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
    else:
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
    if layout == "C":
        raise SpecError("sparse", True, "layout C (sparse A, M=128, cta_group::2) is not modelled", MAPS.id)
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


def _place(layout: str, m_index: int, n: int, N: int, cta_group: int, lane_offset: int) -> tuple:
    """(cta, lane, column) of D[m_index, n] in `layout`, the indices already checked (rule tmem.mma.d_map)."""
    cta, m = divmod(m_index, ROWS_PER_CTA[layout]) if cta_group == 2 else (0, m_index)
    if layout in ("A", "D"):
        lane, column = m, n
    elif layout in ("B", "E"):
        lane, column = m + 64 * (n // (N // 2)), n % (N // 2)
    elif layout == "G":
        lane, column = m + 32 * (n // (N // 4)), n % (N // 4)
    else:                                                  # F
        lane, column = m % 16 + 32 * (m // 16) + lane_offset, n
    return cta, lane, column


def d_location(m_index: int, n_index: int, M: int, N: int, cta_group: int = 1, ws: bool = False,
               lane_offset: int = 0) -> tuple:
    """(cta, lane, column) of D[m, n]: cta 0 is the issuing CTA, 1 its peer (cta_group::2); lane and
    column relative to D's tensor-memory address (rules tmem.mma.d_layout, tmem.mma.d_map)."""
    layout = layout_id(M, cta_group, ws)
    _check(m_index, n_index, M, N, layout, lane_offset)
    return _place(layout, m_index, n_index, N, cta_group, lane_offset)


def d_locations(M: int, N: int, cta_group: int = 1, ws: bool = False, lane_offset: int = 0) -> dict:
    """{(m, n): (cta, lane, column)} for every element of D: d_location of each, checked once."""
    layout = layout_id(M, cta_group, ws)
    _check(0, 0, M, N, layout, lane_offset)
    return {(m, n): _place(layout, m, n, N, cta_group, lane_offset) for m in range(M) for n in range(N)}


def d_cell(m_index: int, n_index: int, M: int, N: int, cta_group: int = 1, ws: bool = False,
           lane_offset: int = 0) -> tuple:
    """(lane, column) of D[m, n] in the tensor memory of the CTA that holds row m (see d_location)."""
    return d_location(m_index, n_index, M, N, cta_group, ws, lane_offset)[1:]


def d_bits(element_bits: int) -> tuple:
    """(first bit, bits) of a D element inside its 32-bit cell (rule tmem.mma.d_packing)."""
    if element_bits not in (16, 32):
        raise SpecError("element_bits", element_bits, "D elements are 16 or 32 bits", PACKING.id)
    return 0, element_bits


def lanes_used(M: int, cta_group: int = 1, ws: bool = False, lane_offset: int = 0) -> list:
    """The lanes of one CTA that hold some element of D."""
    layout = layout_id(M, cta_group, ws)
    N = 64
    rows = ROWS_PER_CTA[layout] if cta_group == 2 else M
    return sorted({d_location(m, n, M, N, cta_group, ws, lane_offset)[1] for m in range(rows) for n in range(N)})
