"""Register fragments: which element of a matrix each lane's register holds.

PTX ISA 9.0:
* 9.7.15.5.1 (wgmma, "Register fragments and shared memory matrix layouts", the accumulator D of
  .m64nNk*): a warpgroup's four warps hold 16 rows each, warp r of the group rows 16r..16r+15. In a
  warp, lane t holds, in its accumulator elements d[i], the row t/4 (+8 for i mod 4 in {2, 3}) and the
  columns 8(i/4) + 2(t mod 4) + (i mod 2): two adjacent columns per pair of elements, the pairs marching
  along N by 8.
* stmatrix (the warp-level matrix store, beside ldmatrix among the warp-level mma instructions;
  .m8n8.x1/.x2/.x4 .b16): matrix j's rows come from the addresses lanes 8j..8j+7
  hold; lane t's register r_j holds matrix j's row t/4, columns 2(t mod 4) (low half) and 2(t mod 4)+1
  (high half). With .trans the matrix is stored transposed: the element at row r, column c of the
  fragment goes to the row c that the addresses give, at column r.

Both are checked on a Hopper GPU (an H200, sm_90a like the H100): through these the audit proves that the
Triton and TileLang kernels the GPU ran right store every element where it belongs, and refutes each of 15
epilogue bugs that made the GPU compute a wrong product (tests/hardware/audit_epilogue_sm90.json.gz).
"""
from __future__ import annotations

WARP = 32
WARPS_PER_GROUP = 4


def accumulator_position(warp_rank: int, lane: int, element: int) -> tuple:
    """(row, column) in the wgmma's 64 x N tile of accumulator element `element` of `lane` in the warp of
    rank `warp_rank` (0-3) in its warpgroup."""
    row = 16 * warp_rank + lane // 4 + 8 * ((element // 2) % 2)
    column = 8 * (element // 4) + 2 * (lane % 4) + element % 2
    return row, column


def accumulator_elements(n: int) -> int:
    """Elements one lane holds of a 64 x N accumulator: 64 N / 128."""
    return n // 2


def stmatrix_cells(matrices: int, transposed: bool, row_addresses: list) -> list:
    """[(lane, register, half, address of the 16-bit element)] of an stmatrix .m8n8.x{matrices}:
    row_addresses[lane] the address lane `lane` gives (lanes 8j..8j+7 give matrix j's rows)."""
    cells = []
    for lane in range(WARP):
        row, first = lane // 4, 2 * (lane % 4)
        for register in range(matrices):
            for half in range(2):
                column = first + half
                if transposed:
                    address = row_addresses[8 * register + column] + 2 * row
                else:
                    address = row_addresses[8 * register + row] + 2 * column
                cells.append((lane, register, half, address))
    return cells
