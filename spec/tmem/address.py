"""Tensor-memory addresses and the lanes a warp may access (PTX 9.7.16.1, 9.7.16.1.1, 9.7.16.8.1).

Tensor memory is, per CTA, 128 lanes (rows) x 512 columns of 32-bit cells (9.7.16.1, on sm_100a/sm_100f
and the family). An address is 32 bits: the lane index in bits 31-16, the column index in bits 15-0
(9.7.16.1.1). A warp reaches, through tcgen05.ld/st, only the quarter of the lanes that its rank in its
warpgroup names: warp w, lanes 32*(w%4) .. 32*(w%4)+31 (9.7.16.8.1 Access restrictions).
"""
from __future__ import annotations

from spec.rule import SpecError, rule

LANES = 128                  # rows per CTA (9.7.16.1)
COLUMNS = 512                # columns per CTA (9.7.16.1)
CELL_BITS = 32               # each (lane, column) cell holds 32 bits
LANES_PER_WARP = 32          # one quarter of the lanes per warp of a warpgroup (9.7.16.8.1)
WARPS_PER_WARPGROUP = 4
FIELD_BITS = 16              # lane and column fields are 16 bits each

ADDRESS_LAYOUT = rule(
    "tmem.address.layout", "PTX 9.7.16.1.1 (Figure 182)",
    "A tensor-memory address is 32 bits: lane index in bits 31-16, column index in bits 15-0.")


def encode(lane: int, column: int) -> int:
    """The 32-bit address of cell (lane, column). Values that do not fit their 16-bit field raise
    SpecError; values that fit but lie outside 128 x 512 encode (see rule tmem.address.range)."""
    for name, value in (("lane", lane), ("column", column)):
        if not 0 <= value < 1 << FIELD_BITS:
            raise SpecError(name, value, "must fit the 16-bit field of a tensor-memory address",
                            ADDRESS_LAYOUT.id)
    return (lane << FIELD_BITS) | column


def decode(address: int) -> tuple:
    """(lane, column) of a 32-bit tensor-memory address."""
    if not 0 <= address < 1 << 32:
        raise SpecError("address", address, "a tensor-memory address is 32 bits", ADDRESS_LAYOUT.id)
    return address >> FIELD_BITS, address & ((1 << FIELD_BITS) - 1)


def offset(address: int, immediate: int) -> int:
    """taddr + imm as the instruction computes it (32-bit wrap-around): the immediate adds to the
    column field and carries into the lane field."""
    return (address + immediate) % (1 << 32)


def in_range(lane: int, column: int) -> bool:
    return 0 <= lane < LANES and 0 <= column < COLUMNS


def lane_quarter(warp: int) -> range:
    """The lanes warp `warp` (its index in the CTA; only its rank in the warpgroup, warp % 4, matters)
    may access with tcgen05.ld/st (9.7.16.8.1)."""
    if warp < 0:
        raise SpecError("warp", warp, "a warp index is >= 0", LANE_QUARTER.id)
    first = LANES_PER_WARP * (warp % WARPS_PER_WARPGROUP)
    return range(first, first + LANES_PER_WARP)


# --- Constraints: each rule, then its checks ------------------------------------------------------------
ADDRESS_RANGE = rule(
    "tmem.address.range", "PTX 9.7.16.1",
    "Every cell an address names or an access touches lies inside the CTA's 128 lanes x 512 columns.",
    subjects=("tmem_address", "tmem_access", "tmem_instruction"), enforced_by="nobody",
    note="A register address is known only at run time; ptxas 13.0 accepts immediate addresses and "
         "16x32bx2 half-split offsets that leave the 128 x 512 cells all the same (and immediate "
         "tcgen05.cp / tcgen05.shift addresses past lane 127). The check of a tcgen05.cp / tcgen05.shift "
         "(subject tmem_instruction) is in spec/tmem/instruction.py.")


@ADDRESS_RANGE.checker(subject="tmem_address")
def _address_in_range(address: int):
    lane, column = decode(address)
    if not in_range(lane, column):
        return f"address 0x{address:08x} names lane {lane}, column {column}, outside {LANES} x {COLUMNS}"
    return None


@ADDRESS_RANGE.checker(subject="tmem_access")
def _access_in_range(access):
    extent = access.footprint_extent()
    if extent is None:
        return None
    lanes, first_column, last_column = extent
    if in_range(min(lanes), first_column) and in_range(max(lanes), last_column):
        return None
    outside = sorted(cell for cell in access.footprint() if not in_range(*cell))
    if outside:
        return (f"the access touches {len(outside)} cells outside {LANES} x {COLUMNS}, "
                f"first (lane, column) = {outside[0]}")
    return None


LANE_QUARTER = rule(
    "tmem.access.lane_quarter", "PTX 9.7.16.8.1",
    "tcgen05.ld/st by warp w touches only lanes 32*(w%4) .. 32*(w%4)+31: each lane of tensor memory is "
    "accessible to a single warp of a warpgroup.",
    subject="tmem_access", enforced_by="nobody",
    note="The address is a register in real code, so ptxas cannot see the lanes; CUTLASS asserts it in "
         "debug builds (copy_traits_sm100.hpp, copy_unpack). What breaking it does: in a release build the "
         "hardware routes each warp to its own quarter whatever the address's lane bits say; a -G build "
         "turns on a strict warp tensor-memory access check that traps (deepseek-ai/DeepGEMM#341, which sets "
         "the lane bits under __CUDACC_DEBUG__ for that reason). TileLang 0.1.15's sm_100 GEMMs pass lane 0 "
         "from every warp (layoutproof audit, tests/solver_tests/kernel/test_audit_corpus.py).")


@LANE_QUARTER.checker
def _lanes_in_quarter(access):
    allowed = lane_quarter(access.warp)
    extent = access.footprint_extent()
    lanes = sorted(extent[0]) if extent else []
    stray = [lane for lane in lanes if lane not in allowed]
    if stray:
        return (f"warp {access.warp} may access lanes {allowed.start}..{allowed.stop - 1} only; the access "
                f"touches lanes {stray[0]}..{stray[-1]}")
    return None
