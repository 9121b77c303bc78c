"""tcgen05.shift: shift rows of a tensor-memory matrix down by one row (PTX 9.7.16.9.2; the implicit shape
.31x256b in 9.7.16.2.3 Data Movement Shape).

    tcgen05.shift.cta_group.down [taddr];

The shape is implicit and is not written (ptxas 13.0 refuses a written .31x256b): 31 rows of 256 bits.
In the 32 lanes from taddr's lane (a multiple of 32), the 256 bits (8 columns) from taddr's column of
lane L+i+1 move to lane L+i, i = 0..30; lane L+31 keeps its bits (a later tcgen05.cp.4x256b refills it:
the manual lets tcgen05.shift and tcgen05.cp.4x256b pipeline, 9.7.16.6). With .cta_group::2 the peer
CTA's tensor memory shifts the same way.
"""
from __future__ import annotations

from spec.rule import rule
from spec.tmem import address as tmem_address
from spec.tmem.targets import SHIFT_TARGETS

SHAPE = "31x256b"
ROWS = 31
BITS = 256
COLUMNS = BITS // tmem_address.CELL_BITS        # 8
LANE_ALIGN = 32

MOVES = rule(
    "tmem.shift.moves", "PTX 9.7.16.9.2; PTX 9.7.16.2.3",
    "tcgen05.shift.down (.31x256b): for i = 0..30, the 8 columns from taddr's column of lane L+i+1 move to "
    "lane L+i (L = taddr's lane); lane L+31 is left as it was.",
    evidence="interpretation",
    note="The manual shifts 'all the rows, except the last, by one row' downwards; we read the matrix as "
         "the 32 lanes from taddr's lane and 'down' as towards lane L (CUTLASS refreshes the last lane of "
         "each 32-lane quarter with tcgen05.cp.4x256b). Whether the shift acts on one 32-lane quarter or on "
         "each of the four, and in which direction, only a Blackwell GPU can settle.")


def moves(taddr: int) -> list:
    """[((source lane, column), (destination lane, column))] of the shift, absolute (rule tmem.shift.moves)."""
    lane, column = tmem_address.decode(taddr)
    return [((lane + i + 1, column + c), (lane + i, column + c)) for i in range(ROWS) for c in range(COLUMNS)]


def shift_footprint(taddr: int) -> set:
    """Every cell the shift reads or writes: 32 lanes x 8 columns from taddr."""
    return {cell for move in moves(taddr) for cell in move}


def written(taddr: int) -> set:
    """The cells the shift writes: lanes L .. L+30."""
    return {dst for _, dst in moves(taddr)}


# --- Constraints (subject "tmem_instruction") -----------------------------------------------------------
TARGET = rule(
    "tmem.shift.target", "PTX 9.7.16.9.2 (Target ISA Notes)",
    "tcgen05.shift exists on sm_100a, sm_103a and sm_110a only: not on the family targets sm_100f, "
    "sm_103f, sm_110f (nor on sm_90a, sm_120a).", subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Instruction 'tcgen05.shift' not supported on .target 'sm_100f'\".")


@TARGET.checker
def _target(instr):
    if instr.kind == "shift" and instr.target and instr.target not in SHIFT_TARGETS:
        return f"tcgen05.shift does not exist on {instr.target}"
    return None


LANE_ALIGNMENT = rule(
    "tmem.shift.lane_alignment", "PTX 9.7.16.9.2",
    "The lane of taddr of tcgen05.shift is a multiple of 32.",
    subject="tmem_instruction", enforced_by="nobody",
    note="ptxas 13.0 accepts an immediate address of lane 1 ([0x10000]) all the same.")


@LANE_ALIGNMENT.checker
def _lane_alignment(instr):
    if instr.kind != "shift" or instr.address_value is None:
        return None
    lane, _ = tmem_address.decode(instr.address_value)
    if lane % LANE_ALIGN:
        return f"lane {lane} of tcgen05.shift is not a multiple of {LANE_ALIGN}"
    return None
