"""tcgen05.ld, tcgen05.st and tcgen05.ld.red: shapes, .num, registers, and the fragment map
(PTX 9.7.16.2.3 Data Movement Shape, 9.7.16.8.2 Packing and Unpacking, 9.7.16.8.3 tcgen05.ld,
9.7.16.8.4 tcgen05.st, Tables 49/50).

A shape `L x Nb` moves N bits per lane over L lanes; .num repeats it along the columns. The destination
(ld) or source (st) is a vector of .b32 registers per thread, of length base(shape) x num (Table 49):
base 1 for .32x32b, .16x64b, .16x32bx2; 2 for .16x128b; 4 for .16x256b; at most 128 registers.
.16x32bx2 is two .16x32b accesses: threads 0-15 at taddr, threads 16-31 at taddr + immHalfSplitoff.

The fragment map (which cell each register of each thread holds) is drawn in Figures 183-187, which are
images; it is stated here as CUTLASS states it for its SM100_TMEM_LOAD_* atoms
(include/cute/atom/copy_traits_sm100.hpp), thread t, register j = base*k + i, repeat k:
  .32x32b    lane t,                            column k
  .16x64b    lane 8*(t%2) + t//4,               column 2k + (t//2)%2
  .16x128b   lane t//4 + 8i,                    column 4k + t%4
  .16x256b   lane t//4 + 8*(i//2),              column 8k + 2*(t%4) + i%2
  .16x32bx2  lane t%16,                         column k (+ immHalfSplitoff for t >= 16)
With .pack::16b (ld) / .unpack::16b (st), register column c becomes two cells: the low 16 bits of column
2c go to the register's low half, the low 16 bits of column 2c+1 to its high half; the high halves of
the cells are not accessed (CUTLASS's *_16b atoms). The register count does not change; the columns do.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from spec.rule import SpecError, check_all, rule
from spec.tmem import address as tmem_address
from spec.tmem.targets import LD_RED_TARGETS, TCGEN05_TARGETS

SHAPES = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
RED_SHAPES = ("32x32b", "16x32bx2")
NUMS = (1, 2, 4, 8, 16, 32, 64, 128)
OPS = ("ld", "st", "ld.red")
RED_OPS = ("min", "max")
RED_TYPES = ("f32", "u32", "s32")
MAX_REGISTERS = 128

SHAPE_LANES = {"16x64b": 16, "16x128b": 16, "16x256b": 16, "32x32b": 32, "16x32bx2": 16}
SHAPE_BITS = {"16x64b": 64, "16x128b": 128, "16x256b": 256, "32x32b": 32, "16x32bx2": 32}  # per lane, per access
BASE_REGISTERS = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1}
PACK_QUALIFIER = {"ld": "pack::16b", "st": "unpack::16b", "ld.red": None}

REGISTERS = rule(
    "tmem.ld.registers_per_thread", "PTX 9.7.16.8.3 Table 49; PTX 9.7.16.8.4 Table 50",
    "Registers per thread = base(shape) x num: base 1 for .32x32b/.16x64b/.16x32bx2, 2 for .16x128b, "
    "4 for .16x256b; a combination above 128 registers does not exist (NA).")
FRAGMENT = rule(
    "tmem.ld.fragment", "PTX 9.7.16.2.3.1 Figures 183-187; CUTLASS include/cute/atom/copy_traits_sm100.hpp",
    "Thread t, register j = base*k + i (repeat k): .32x32b lane t, column k; .16x64b lane 8(t%2)+t//4, "
    "column 2k+(t//2)%2; .16x128b lane t//4+8i, column 4k+t%4; .16x256b lane t//4+8(i//2), column "
    "8k+2(t%4)+i%2; .16x32bx2 lane t%16, column k, plus immHalfSplitoff for threads 16-31.",
    evidence="cutlass")
PACKING = rule(
    "tmem.ld.packing", "PTX 9.7.16.8.2 Figure 193; CUTLASS include/cute/atom/copy_traits_sm100.hpp",
    "With .pack::16b / .unpack::16b a register holds the low 16 bits of two adjacent columns: column 2c "
    "in its low half, column 2c+1 in its high half; the cells' high halves are not accessed.",
    evidence="cutlass")


def _check_shape(shape: str) -> str:
    if shape not in SHAPES:
        raise SpecError("shape", shape, "expected one of " + " ".join(SHAPES), SHAPE.id)
    return shape


def legal_nums(shape: str) -> tuple:
    """The .num values Table 49 allows for `shape` (x1 .. x128 while the vector fits 128 registers)."""
    base = BASE_REGISTERS[_check_shape(shape)]
    return tuple(n for n in NUMS if base * n <= MAX_REGISTERS)


def registers_per_thread(shape: str, num: int, pack: bool = False) -> int:
    """The length of the register vector (Table 49); .pack::16b does not change it."""
    if num not in legal_nums(shape):
        raise SpecError("num", num, f"not a .num of .{shape}; expected one of "
                        + " ".join(f"x{n}" for n in legal_nums(shape)), NUM.id)
    return BASE_REGISTERS[shape] * num


def _register_cell(shape: str, thread: int, register: int) -> tuple:
    """(lane, column, access half) of register `register` of `thread`, unpacked, split offset not added;
    access half is 1 for the second .16x32b access of .16x32bx2 (threads 16-31), else 0."""
    t, j = thread, register
    if shape == "32x32b":
        return t, j, 0
    if shape == "16x64b":
        return 8 * (t % 2) + t // 4, 2 * j + (t // 2) % 2, 0
    if shape == "16x128b":
        k, i = divmod(j, 2)
        return t // 4 + 8 * i, 4 * k + t % 4, 0
    if shape == "16x256b":
        k, i = divmod(j, 4)
        return t // 4 + 8 * (i // 2), 8 * k + 2 * (t % 4) + i % 2, 0
    return t % 16, j, t // 16           # 16x32bx2


def _check_splitoff(shape: str, half_splitoff: Optional[int]) -> int:
    if shape == "16x32bx2" and half_splitoff is None:
        raise SpecError("half_splitoff", None, ".16x32bx2 needs immHalfSplitoff", HALF_SPLITOFF.id)
    if shape != "16x32bx2" and half_splitoff is not None:
        raise SpecError("half_splitoff", half_splitoff, f".{shape} takes no immHalfSplitoff", HALF_SPLITOFF.id)
    return half_splitoff or 0


def fragment_map(shape: str, num: int, pack: bool = False, half_splitoff: Optional[int] = None) -> list:
    """32 lists, one per thread t: entry p is the 16-bit piece p of t's registers (register p // 2, its
    low half when p is even) as (lane, column, half): the cell it comes from (ld) or goes to (st),
    lane and column relative to the instruction's address, half 0 = bits 0-15 of the cell, 1 = bits 16-31.
    For .16x32bx2 the second access adds `half_splitoff` to the column (see `footprint` for the exact
    32-bit address sum)."""
    return [list(pieces) for pieces in _fragment_map(shape, num, bool(pack), half_splitoff)]


@lru_cache(maxsize=256)
def _fragment_map(shape: str, num: int, pack: bool, half_splitoff: Optional[int]) -> tuple:
    """fragment_map's answer, computed once per form (callers get fresh lists)."""
    registers = registers_per_thread(shape, num, pack)
    splitoff = _check_splitoff(shape, half_splitoff)
    threads = []
    for t in range(32):
        pieces = []
        for j in range(registers):
            lane, column, second = _register_cell(shape, t, j)
            shift = splitoff * second
            if pack:
                pieces += [(lane, 2 * column + shift, 0), (lane, 2 * column + 1 + shift, 0)]
            else:
                pieces += [(lane, column + shift, 0), (lane, column + shift, 1)]
        threads.append(tuple(pieces))
    return tuple(threads)


def columns_per_access(shape: str, num: int, pack: bool = False) -> int:
    """Columns one access spans per lane: N*num/32 (x2 with packing: 16 bits of each cell)."""
    registers_per_thread(shape, num, pack)
    return SHAPE_BITS[shape] * num // 32 * (2 if pack else 1)


@dataclass(frozen=True)
class TmemAccess:
    """One warp's tcgen05.ld / tcgen05.st / tcgen05.ld.red, as the rules about subject "tmem_access" see it.

    lane, column: the address operand taddr (absolute); warp: the issuing warp's index in the CTA;
    pack: the 16-bit qualifier as written, "pack::16b" or "unpack::16b" (True means the one that
    belongs to `op`, False none); registers: how many registers the vector names (None: the right
    number); cta_group: ld/st take none (kept so an access can say what it was given)."""
    op: str
    shape: str
    num: Optional[int]
    lane: int = 0
    column: int = 0
    warp: int = 0
    pack: object = None
    half_splitoff: Optional[int] = None
    registers: Optional[int] = None
    target: str = "sm_100a"
    red_op: Optional[str] = None
    red_type: Optional[str] = None
    abs: bool = False
    nan: bool = False
    cta_group: Optional[int] = None

    def __post_init__(self):
        if self.op not in OPS:
            raise SpecError("op", self.op, "expected ld, st or ld.red", SHAPE.id)
        if self.pack is True:
            object.__setattr__(self, "pack", PACK_QUALIFIER[self.op] or "pack::16b")
        elif self.pack is False:
            object.__setattr__(self, "pack", None)

    @property
    def packed(self) -> bool:
        return self.pack is not None

    @property
    def address(self) -> int:
        return tmem_address.encode(self.lane, self.column)

    def is_well_formed(self) -> bool:
        """Shape and .num known and legal: the fragment and footprint exist."""
        return self.shape in SHAPES and self.num in legal_nums(self.shape)

    def footprint(self) -> frozenset:
        return footprint(self)

    def footprint_extent(self) -> Optional[tuple]:
        return footprint_extent(self)


def footprint(access: TmemAccess) -> frozenset:
    """The (lane, column) cells the access touches, absolute. The second access of .16x32bx2 starts at
    the 32-bit sum taddr + immHalfSplitoff. An access whose shape or .num is illegal touches nothing."""
    if not access.is_well_formed():
        return frozenset()
    return _footprint(access.shape, access.num, access.packed, access.lane, access.column,
                      access.half_splitoff if access.shape == "16x32bx2" else None)


@lru_cache(maxsize=1024)
def _footprint(shape: str, num: int, packed: bool, lane: int, column: int, splitoff: Optional[int]) -> frozenset:
    halves = _relative_cells(shape, num, packed)
    bases = [(lane, column)]
    if shape == "16x32bx2":                   # the second half at the 32-bit sum taddr + immHalfSplitoff
        bases.append(tmem_address.decode(tmem_address.offset(tmem_address.encode(lane, column), splitoff or 0)))
    cells = set()
    for (base_lane, base_column), relative in zip(bases, halves):
        cells.update((base_lane + cell_lane, base_column + cell_column) for cell_lane, cell_column in relative)
    return frozenset(cells)


def footprint_extent(access: TmemAccess) -> Optional[tuple]:
    """(lanes, first column, last column) of the access's footprint, absolute, without listing its cells
    (the rules about lanes and ranges need no more); None for an access that touches nothing."""
    if not access.is_well_formed():
        return None
    bases = [(access.lane, access.column)]
    if access.shape == "16x32bx2":
        bases.append(tmem_address.decode(tmem_address.offset(access.address, access.half_splitoff or 0)))
    lanes, first, last = set(), None, None
    for (base_lane, base_column), (relative_lanes, low, high) in zip(
            bases, _relative_extent(access.shape, access.num, access.packed)):
        lanes.update(base_lane + lane for lane in relative_lanes)
        low, high = base_column + low, base_column + high
        first, last = (low, high) if first is None else (min(first, low), max(last, high))
    return frozenset(lanes), first, last


@lru_cache(maxsize=256)
def _relative_extent(shape: str, num: int, packed: bool) -> tuple:
    """Per half of the threads (see _relative_cells): (lanes, first column, last column), relative."""
    return tuple((frozenset(lane for lane, _ in cells), min(column for _, column in cells),
                  max(column for _, column in cells)) for cells in _relative_cells(shape, num, packed))


@lru_cache(maxsize=256)
def _relative_cells(shape: str, num: int, packed: bool) -> tuple:
    """The cells of threads 0-15 and 16-31 (one set for every shape but .16x32bx2), relative to taddr and,
    for the second half of .16x32bx2, to taddr + immHalfSplitoff."""
    split = shape == "16x32bx2"
    relative = fragment_map(shape, num, packed, 0 if split else None)
    halves = (relative[:16], relative[16:]) if split else (relative,)
    return tuple(frozenset((lane, column) for pieces in half for lane, column, _ in pieces) for half in halves)


@dataclass(frozen=True)
class MapRequest:
    """A validated request for a fragment map (`layoutproof tmem map`): pack is a bool here."""
    op: str
    shape: str
    num: int
    pack: bool = False
    half_splitoff: Optional[int] = None


def map_request(op: str, shape: str, num: int, pack: bool = False,
                half_splitoff: Optional[int] = None) -> MapRequest:
    """Check a fragment-map request (op ld or st; shape, .num, the split offset exactly for .16x32bx2):
    SpecError names the field and the rule."""
    if op not in ("ld", "st"):
        raise SpecError("op", op, "expected ld or st", PACK.id)
    shape = _check_shape(shape.lstrip("."))
    registers_per_thread(shape, num, bool(pack))
    _check_splitoff(shape, half_splitoff)
    return MapRequest(op, shape, num, bool(pack), half_splitoff)


def violations(access: TmemAccess) -> list:
    return check_all("tmem_access", access)


# --- Constraints on an access: each rule, then its check ------------------------------------------------
LD_TARGET = rule(
    "tmem.ld.target", "PTX 9.7.16.8.3, 9.7.16.8.4 (Target ISA Notes)",
    "tcgen05.ld and tcgen05.st exist on sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f only.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0 on sm_90a / sm_120a: \"Instruction 'tcgen05.ld' not supported on .target\".")


@LD_TARGET.checker
def _ld_target(access: TmemAccess):
    if access.op in ("ld", "st") and access.target not in TCGEN05_TARGETS:
        return f"tcgen05.{access.op} does not exist on {access.target}"
    return None


SHAPE = rule(
    "tmem.ld.shape", "PTX 9.7.16.2.3; PTX 9.7.16.8.3",
    "The shape of tcgen05.ld/st is one of .16x64b, .16x128b, .16x256b, .32x32b, .16x32bx2.",
    subject="tmem_access", enforced_by="ptxas")


@SHAPE.checker
def _shape(access: TmemAccess):
    if access.op != "ld.red" and access.shape not in SHAPES:
        return f"shape .{access.shape} is not a tcgen05.{access.op} shape"
    return None


NUM = rule(
    "tmem.ld.num", "PTX 9.7.16.8.3 Table 49",
    ".num is x1..x128 for .32x32b/.16x64b/.16x32bx2, x1..x64 for .16x128b, x1..x32 for .16x256b.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Modifier .x64 not allowed for instruction tcgen05.ld with shape '.16x256b'\".")


@NUM.checker
def _num(access: TmemAccess):
    if access.shape not in SHAPES:
        return None
    if access.num not in legal_nums(access.shape):
        shown = "none" if access.num is None else f"x{access.num}"
        return (f".num {shown} is not allowed with .{access.shape}; expected "
                + " ".join(f"x{n}" for n in legal_nums(access.shape)))
    return None


REGISTER_COUNT = rule(
    "tmem.ld.registers", "PTX 9.7.16.8.3 Table 49; PTX 9.7.16.8.4 Table 50",
    "The register vector has exactly base(shape) x num .b32 registers.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Argument vector size mismatch\".")


@REGISTER_COUNT.checker
def _register_count(access: TmemAccess):
    if access.registers is None or not access.is_well_formed():
        return None
    wanted = registers_per_thread(access.shape, access.num)
    if access.registers != wanted:
        return f".{access.shape}.x{access.num} needs {wanted} registers; the vector has {access.registers}"
    return None


PACK = rule(
    "tmem.ld.pack", "PTX 9.7.16.8.2; PTX 9.7.16.8.3; PTX 9.7.16.8.4",
    ".pack::16b is a qualifier of tcgen05.ld only, .unpack::16b of tcgen05.st only; tcgen05.ld.red takes "
    "neither.", subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal modifier '.pack::16b' for instruction 'tcgen05.st'\" (and for ld.red).")


@PACK.checker
def _pack(access: TmemAccess):
    if access.pack is None:
        return None
    allowed = PACK_QUALIFIER[access.op]
    if access.pack != allowed:
        return f".{access.pack} is not a qualifier of tcgen05.{access.op}"
    return None


HALF_SPLITOFF = rule(
    "tmem.ld.half_splitoff", "PTX 9.7.16.8.3; PTX 9.7.16.8.4",
    "The immediate immHalfSplitoff is given with .16x32bx2 and with no other shape.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Unexpected number of arguments specified for tcgen05.ld with shape ...\". The "
         "manual gives the offset no range and ptxas accepts 0, negative and 70000; where the second "
         "access lands is rule tmem.address.range's business.")


@HALF_SPLITOFF.checker
def _half_splitoff(access: TmemAccess):
    if access.shape == "16x32bx2" and access.half_splitoff is None:
        return ".16x32bx2 needs the immediate immHalfSplitoff"
    if access.shape != "16x32bx2" and access.half_splitoff is not None:
        return f".{access.shape} takes no immHalfSplitoff (given {access.half_splitoff})"
    return None


LANE_ALIGNMENT = rule(
    "tmem.ld.lane_alignment", "PTX 9.7.16.2.3.1 Figures 183-187; PTX 9.7.16.8.1",
    "The lane of taddr is a multiple of the shape's lane count: 32 for .32x32b, 16 for the 16-lane shapes "
    "(so a 16-lane access is the upper or the lower half of its warp's quarter).",
    subject="tmem_access", evidence="interpretation", enforced_by="nobody",
    note="The manual states no alignment for tcgen05.ld/st; its figures draw the lanes from 0 and CUTLASS "
         "only ever issues 16-lane atoms at lane 32w or 32w+16. An unaligned 32-lane access leaves its "
         "quarter (tmem.access.lane_quarter); whether a 16-lane access at lane 32w+4 works is unknown "
         "until a Blackwell GPU says.")


@LANE_ALIGNMENT.checker
def _lane_alignment(access: TmemAccess):
    if access.shape not in SHAPE_LANES:
        return None
    lanes = SHAPE_LANES[access.shape]
    if access.lane % lanes:
        return f"lane {access.lane} of a .{access.shape} access is not a multiple of {lanes}"
    return None


RED_TARGET = rule(
    "tmem.ld_red.target", "PTX 9.7.16.8.3 (Target ISA Notes)",
    "tcgen05.ld.red exists on sm_103a, sm_103f, sm_110a, sm_110f only (not on sm_100a / sm_100f).",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Instruction 'tcgen05.ld.red' not supported on .target 'sm_100a'\".")


@RED_TARGET.checker
def _red_target(access: TmemAccess):
    if access.op == "ld.red" and access.target not in LD_RED_TARGETS:
        return f"tcgen05.ld.red does not exist on {access.target}"
    return None


RED_SHAPE = rule(
    "tmem.ld_red.shape", "PTX 9.7.16.8.3",
    "tcgen05.ld.red takes the shapes .32x32b and .16x32bx2 only.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal matrix shape '.16x64b' for instruction 'tcgen05.ld.red'\".")


@RED_SHAPE.checker
def _red_shape(access: TmemAccess):
    if access.op == "ld.red" and access.shape not in RED_SHAPES:
        return f"tcgen05.ld.red takes .32x32b or .16x32bx2, not .{access.shape}"
    return None


RED_NUM = rule(
    "tmem.ld_red.num", "PTX 9.7.16.8.3",
    "With .red, .num is at least .x2.", subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal modifier '.x1' for instruction 'tcgen05.ld.red'\".")


@RED_NUM.checker
def _red_num(access: TmemAccess):
    if access.op == "ld.red" and access.num is not None and access.num < 2:
        return f"tcgen05.ld.red needs .num >= x2, not x{access.num}"
    return None


RED_OPERATION = rule(
    "tmem.ld_red.operation", "PTX 9.7.16.8.3",
    "tcgen05.ld.red reduces with .min or .max over .f32, .u32 or .s32.",
    subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal operation '.add'\", \"Unexpected instruction types\" for .b32.")


@RED_OPERATION.checker
def _red_operation(access: TmemAccess):
    if access.op != "ld.red":
        if access.red_op is not None or access.red_type is not None or access.abs or access.nan:
            return f"tcgen05.{access.op} takes no reduction (.{access.red_op}, .{access.red_type})"
        return None
    if access.red_op not in RED_OPS:
        return f"tcgen05.ld.red reduces with .min or .max, not {access.red_op}"
    if access.red_type not in RED_TYPES:
        return f"tcgen05.ld.red reduces .f32, .u32 or .s32, not {access.red_type}"
    return None


RED_ABS_NAN = rule(
    "tmem.ld_red.abs_nan", "PTX 9.7.16.8.3",
    ".abs and .NaN of tcgen05.ld.red go with .f32 only.", subject="tmem_access", enforced_by="ptxas",
    note="ptxas 13.0: \"Illegal modifier '.abs' for instruction 'tcgen05.ld.red'\" with .u32.")


@RED_ABS_NAN.checker
def _red_abs_nan(access: TmemAccess):
    if access.op == "ld.red" and (access.abs or access.nan) and access.red_type != "f32":
        named = " ".join(q for q, on in ((".abs", access.abs), (".NaN", access.nan)) if on)
        return f"{named} needs .f32, not .{access.red_type}"
    return None
