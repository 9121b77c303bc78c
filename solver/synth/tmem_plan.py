"""An epilogue plan: the tcgen05.ld sequence that moves an accumulator D from tensor memory to registers
(issue 13, `layoutproof tmem plan`).

Given D (M, N, element type, .cta_group, .ws, its first tensor-memory column C), the warps that read it
and a register budget per thread per instruction, choose the tcgen05.ld instructions -- shape, .num,
.pack::16b, the address of each -- that read every element of D exactly once, each warp only inside its
lane quarter.

Where D lies comes from spec.tmem.accumulator (d_cell: layouts A-G); a warp may touch lanes
32*(w%4)..+31 only (spec.tmem.address.lane_quarter, rule tmem.access.lane_quarter). Each quarter holding
D is read by the first listed warp of that rank; other warps of the same rank stay idle.

Search. Every instruction of a plan has the same shape and packing; .num varies. For each (shape, pack)
-- 5 shapes, and for a 16-bit D also with .pack::16b (a 16-bit element takes the low half of its cell,
rule tmem.mma.d_packing; .pack::16b puts two adjacent columns into one register, rule tmem.ld.packing;
a 32-bit D is never packed, that would drop the cells' high halves) -- D's cells in each quarter are cut
into bands of the shape's lanes (32 or 16, at lane 32q or 32q+16: rule tmem.ld.lane_alignment); a band
must be all D (the plan reads no cell outside D), and each run of D's columns in it is cut into
instructions with the largest legal .num (Table 49: tmem.ld.num) whose vector fits the budget, then
smaller ones (powers of two: this greedy cut is the fewest pieces). .16x32bx2 reads its two 16-lane
halves side by side: immHalfSplitoff = the columns of the first half.

Objective: the fewest instructions in all; then the fewest registers per thread in the largest vector;
then the shape order 32x32b, 16x32bx2, 16x64b, 16x128b, 16x256b (32x32b for D's 32-lane quarters; a
16-lane D, layout F, takes the first 16-lane shape, one row per thread like 32x32b); packed before
unpacked.

Check. The plan is then checked by the executable spec, not by the search: each instruction's PTX text
goes through spec.tmem.instruction.check on sm_100a with its address and warp (ptxas' rules and the
run-time ones: lane quarter, address range, lane alignment), and the cells each register piece comes
from (spec.tmem.ld_st.fragment_map, the footprint's pieces) are matched with D's map (d_cell): every
element read exactly once, whole (a 32-bit element: both halves of one register), and no cell outside D.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from spec.mma import dtypes
from spec.rule import SpecError
from spec.tmem import accumulator, instruction, ld_st
from spec.tmem import address as tmem_address

DTYPE_BITS = {"f32": 32, "s32": 32, "f16": 16, "bf16": 16}
D_DTYPE_ALIASES = {"int32": "s32"}      # D's own: the operand table has no s32
DEFAULT_WARPS = (0, 1, 2, 3)
DEFAULT_REGISTERS = ld_st.MAX_REGISTERS   # Table 49's longest vector: the default answer is the fewest instructions
SHAPE_ORDER = ("32x32b", "16x32bx2", "16x64b", "16x128b", "16x256b")
TARGET = "sm_100a"
MAX_WARPS = 32                            # 1024 threads per CTA
OBJECTIVE = ("fewest instructions; then fewest registers per thread in the largest vector; then shape "
             "order " + " ".join(SHAPE_ORDER) + "; packed before unpacked")
BUDGET = "register budget"                # not a rule of the manual: the caller's --registers
# CUDA C++ Programming Guide, Compute Capabilities (technical specifications): at most 255 32-bit registers
# per thread. A warp whose plan holds more in all must use each instruction's registers before the next.
REGISTERS_PER_THREAD = 255


@dataclass(frozen=True)
class Accumulator:
    M: int
    N: int
    dtype: str
    cta_group: int = 1
    ws: bool = False
    column: int = 0
    lane_offset: int = 0
    sparse: bool = False             # tcgen05.mma.sp: layout C with cta_group::2, M=128

    @property
    def bits(self) -> int:
        return DTYPE_BITS[self.dtype]

    @property
    def layout(self) -> str:
        return accumulator.layout_id(self.M, self.cta_group, self.ws, self.sparse)

    @property
    def rows(self) -> int:
        """Rows of D in one CTA (cta_group::2: the issuing CTA's half; its peer runs the same plan)."""
        return accumulator.ROWS_PER_CTA[self.layout] if self.cta_group == 2 else self.M

    @property
    def address(self) -> int:
        return tmem_address.encode(0, self.column)


@dataclass(frozen=True)
class Instruction:
    warp: int
    shape: str
    num: int
    pack: bool
    lane: int                        # absolute
    column: int                      # absolute
    half_splitoff: Optional[int] = None

    @property
    def registers(self) -> int:
        return ld_st.registers_per_thread(self.shape, self.num, self.pack)

    def offset(self, base_column: int) -> int:
        """The immediate added to %taddr (D's address: lane 0, column C): lane << 16 | column - C."""
        return tmem_address.encode(self.lane, self.column - base_column)

    @property
    def address(self) -> int:
        return tmem_address.encode(self.lane, self.column)

    def ptx(self, base_column: int, taddr: str = "%taddr", abbreviate: bool = False) -> str:
        n = self.registers
        if abbreviate and n > 2:
            vector = f"{{%r0, ..., %r{n - 1}}}" if n > 3 else "{%r0, %r1, %r2}"
        else:
            vector = "{" + ", ".join(f"%r{j}" for j in range(n)) + "}"
        offset = self.offset(base_column)
        where = f"[{taddr}+0x{offset:08x}]" if offset else f"[{taddr}]"
        split = f", {self.half_splitoff}" if self.half_splitoff is not None else ""
        pack = ".pack::16b" if self.pack else ""
        return f"tcgen05.ld.sync.aligned.{self.shape}.x{self.num}{pack}.b32 {vector}, {where}{split};"


@dataclass
class Plan:
    status: str                                   # "found" | "none"
    acc: Accumulator
    warps: tuple
    budget: int
    shape: Optional[str] = None
    pack: bool = False
    instructions: list = field(default_factory=list)
    readers: dict = field(default_factory=dict)   # quarter -> warp
    idle_warps: list = field(default_factory=list)
    reason: str = ""
    rules: list = field(default_factory=list)
    excluded: dict = field(default_factory=dict)  # "shape[.pack::16b]" -> why it does not fit
    reads: tuple = (0, None)                      # (width, who): see verify_plan, _readers
    cells: dict = field(default_factory=dict, repr=False)  # D's cells: (lane, column) -> (m, n)
    check: dict = field(default_factory=dict)


def accumulator_dtype(name) -> str:
    """D's element type spelled `name` in any case, with the operand types' aliases (spec.mma.dtypes:
    float32 is f32) and int32 for s32; SpecError (the field and the packing rule) if it is none of them."""
    text = name.strip().lower() if isinstance(name, str) else name
    text = D_DTYPE_ALIASES.get(text, dtypes.ALIASES.get(text, text))
    if text not in DTYPE_BITS:
        raise SpecError("dtype", name, "D's element type is one of " + " ".join(DTYPE_BITS)
                        + " (or float32, int32, float16, bfloat16, ...)", accumulator.PACKING.id)
    return text


def make_accumulator(M: int, N: int, dtype: str, cta_group: int = 1, ws: bool = False, column: int = 0,
                     lane_offset: int = 0, sparse: bool = False) -> Accumulator:
    """Validate D: SpecError (exit 2) names the field and the rule."""
    dtype = accumulator_dtype(dtype)
    acc = Accumulator(M, N, dtype, cta_group, bool(ws), column, lane_offset, bool(sparse))
    acc.layout                                                   # tmem.mma.d_layout
    # N, lane offset: tmem.mma.d_map / alignment
    accumulator.d_cell(0, 0, M, N, cta_group, ws, lane_offset, acc.sparse)
    columns = len({accumulator.d_cell(0, n, M, N, cta_group, ws, lane_offset, acc.sparse)[1] for n in range(N)})
    if not 0 <= column or column + columns > tmem_address.COLUMNS:
        raise SpecError("column", column, f"D takes columns C..C+{columns - 1}; tensor memory has "
                        f"{tmem_address.COLUMNS}", tmem_address.ADDRESS_RANGE.id)
    return acc


def check_warps(warps) -> tuple:
    warps = tuple(warps)
    if not warps:
        raise SpecError("warps", "", "at least one warp reads D", tmem_address.LANE_QUARTER.id)
    for w in warps:
        if not 0 <= w < MAX_WARPS:
            raise SpecError("warps", w, f"a warp index is 0..{MAX_WARPS - 1} (1024 threads per CTA)",
                            tmem_address.LANE_QUARTER.id)
    if len(set(warps)) != len(warps):
        raise SpecError("warps", ",".join(map(str, warps)), "a warp is listed twice", tmem_address.LANE_QUARTER.id)
    return warps


# --- D's cells --------------------------------------------------------------------------------------------
def d_cells(acc: Accumulator) -> dict:
    """(lane, column) absolute -> (m, n), for this CTA's rows (m < rows), from spec's D map."""
    rows, columns = accumulator.d_parts(acc.M, acc.N, acc.cta_group, acc.ws, acc.lane_offset, acc.sparse)
    first_column = acc.column
    return {(lane + lanes_added, column + first_column): (m, n)
            for m, (_, lane) in enumerate(rows[:acc.rows]) for n, (lanes_added, column) in enumerate(columns)}


def _quarters(cells) -> dict:
    """quarter -> {lane: sorted columns} of D's cells in it."""
    quarters = {}
    for lane, column in cells:
        quarters.setdefault(lane // tmem_address.LANES_PER_WARP, {}).setdefault(lane, []).append(column)
    for lanes in quarters.values():
        for columns in lanes.values():
            columns.sort()
    return quarters


def _runs(columns: list) -> list:
    """[(first, width)] of the contiguous runs of sorted columns."""
    runs = []
    for c in columns:
        if runs and runs[-1][0] + runs[-1][1] == c:
            runs[-1][1] += 1
        else:
            runs.append([c, 1])
    return [tuple(r) for r in runs]


def _name(shape: str, pack: bool) -> str:
    return shape + (".pack::16b" if pack else "")


def _cut(shape: str, pack: bool, budget: int, warp: int, lane: int, first: int, width: int):
    """Instructions reading `width` columns from `first` in one band, or (None, why)."""
    per_num = ld_st.columns_per_access(shape, 1, pack) * (2 if shape == "16x32bx2" else 1)
    nums = [n for n in ld_st.legal_nums(shape) if ld_st.registers_per_thread(shape, n, pack) <= budget]
    if not nums:
        return None, (f"{BUDGET}: .{shape}.x1 needs {ld_st.BASE_REGISTERS[shape]} registers per thread, "
                      f"more than {budget} (tmem.ld.num, tmem.ld.registers_per_thread)")
    if width % per_num:
        return None, (f"one .num of .{_name(shape, pack)} reads {per_num} columns per lane; D's run of "
                      f"{width} columns at column {first} is not a multiple (tmem.ld.fragment)")
    units, column, out = width // per_num, first, []
    while units:
        n = max(k for k in nums if k <= units)
        split = ld_st.columns_per_access(shape, n, pack) if shape == "16x32bx2" else None
        out.append(Instruction(warp, shape, n, pack, lane, column, split))
        units -= n
        column += n * per_num
    return out, None


def _candidate(quarters: dict, readers: dict, shape: str, pack: bool, budget: int):
    """(instructions, None) for one (shape, pack), or (None, why it does not fit)."""
    band = ld_st.SHAPE_LANES[shape]
    out = []
    for q in sorted(quarters):
        lanes = quarters[q]
        for first in range(q * tmem_address.LANES_PER_WARP, (q + 1) * tmem_address.LANES_PER_WARP, band):
            block = [lanes.get(lane) for lane in range(first, first + band)]
            if not any(block):
                continue
            if not all(block) or any(columns != block[0] for columns in block):
                held = sorted(lane for lane in range(first, first + band) if lanes.get(lane))
                return None, (f"a .{shape} access reads lanes {first}..{first + band - 1}; D holds "
                              f"{len(held)} of them with these columns (tmem.mma.d_map, tmem.ld.lane_alignment)")
            for start, width in _runs(block[0]):
                cut, why = _cut(shape, pack, budget, readers[q], first, start, width)
                if cut is None:
                    return None, why
                out += cut
    return out, None


def _cost(instructions: list, shape: str, pack: bool) -> tuple:
    return (len(instructions), max(i.registers for i in instructions), SHAPE_ORDER.index(shape), not pack)


def plan(acc: Accumulator, warps=DEFAULT_WARPS, budget: int = DEFAULT_REGISTERS, verify: bool = True) -> Plan:
    """The plan with the fewest instructions (see the module's objective), checked by spec; or "none"
    with the reason and the rules."""
    warps = check_warps(warps)
    result = Plan("none", acc, warps, budget)
    cells = d_cells(acc)
    quarters = _quarters(cells)
    for q in sorted(quarters):
        ranked = [w for w in warps if w % tmem_address.WARPS_PER_WARPGROUP == q]
        if ranked:
            result.readers[q] = ranked[0]
    result.idle_warps = [w for w in warps if w not in result.readers.values()]
    missing = [q for q in sorted(quarters) if q not in result.readers]
    if missing:
        spans = ", ".join(f"lanes {32 * q}..{32 * q + 31} (warps w with w % 4 == {q})" for q in missing)
        result.reason = (f"tmem.access.lane_quarter: D lies in {spans}; none of warps "
                         f"{','.join(map(str, warps))} may access them (warps are named by their index in the "
                         f"CTA: 0,1,2,3 is warpgroup 0, 4,5,6,7 warpgroup 1)")
        result.rules = [tmem_address.LANE_QUARTER.id]
        return result
    best = None
    for shape in SHAPE_ORDER:
        for pack in ((True, False) if acc.bits == 16 else (False,)):
            found, why = _candidate(quarters, result.readers, shape, pack, budget)
            if found is None:
                result.excluded[_name(shape, pack)] = why
            elif best is None or _cost(found, shape, pack) < _cost(*best):
                best = (found, shape, pack)
    shape_reasons = list(result.excluded.values())
    if acc.bits == 32:
        result.excluded[".pack::16b"] = ("a 32-bit element fills its cell (tmem.mma.d_packing); .pack::16b "
                                         "reads the low halves only (tmem.ld.packing)")
    if best is None:
        result.reason = "no tcgen05.ld shape fits: " + "; ".join(
            f".{k}: {v}" for k, v in result.excluded.items() if k != ".pack::16b")
        result.rules = [ld_st.NUM.id, ld_st.REGISTERS.id]
        if all(BUDGET in why for why in shape_reasons):
            least = min(ld_st.BASE_REGISTERS.values())
            result.reason = (f"{BUDGET} {budget} is below the shortest tcgen05.ld vector: .num is at least x1 "
                             f"(tmem.ld.num) and .32x32b.x1 / .16x64b.x1 / .16x32bx2.x1 take {least} register "
                             f"per thread, .16x128b.x1 2, .16x256b.x1 4 (tmem.ld.registers_per_thread)")
        else:
            result.rules += [ld_st.FRAGMENT.id, ld_st.LANE_ALIGNMENT.id]
        return result
    result.instructions, result.shape, result.pack = best
    result.instructions.sort(key=lambda i: (i.warp, i.lane, i.column))
    result.status = "found"
    result.cells = cells
    if verify:
        verify_plan(result, cells)
    return result


# --- the check by spec ------------------------------------------------------------------------------------
def _pieces(key: tuple) -> list:
    """The instruction's 16-bit pieces in register order: thread t's piece j is number t * 2R + j."""
    return [piece for pieces in ld_st.fragment_map(*key) for piece in pieces]


def _key(ins: Instruction) -> tuple:
    return ins.shape, ins.num, ins.pack, ins.half_splitoff


def _whole_registers(pieces: list) -> bool:
    """Every register holds the two halves of one cell, low half first (a 32-bit element whole)."""
    return all(low[:2] == high[:2] and (low[2], high[2]) == (0, 1) for low, high in zip(pieces[::2], pieces[1::2]))


def verify_plan(result: Plan, cells: Optional[dict] = None) -> dict:
    """Check a plan with the executable spec (module docstring); fills result.check and result.reads.
    A read is one 16-bit piece of a cell, at flat index (lane * width + column) * 2 + half. Reads that are
    all distinct, cover every element and stay inside D are checked with sets; otherwise every read is
    counted to say what is missing, read twice or stray."""
    acc = result.acc
    cells = d_cells(acc) if cells is None else cells
    problems, undefined, accepted = [], [], True
    taddr = "%r1023"                           # %taddr spelled as a .b32 register, which the checker parses
    maps = {}
    for ins in result.instructions:
        if _key(ins) not in maps:
            maps[_key(ins)] = _pieces(_key(ins))
    width = max([column for _, column in cells] + [ins.column + max(c for _, c, _ in maps[_key(ins)])
                                                   for ins in result.instructions]) + 1
    flat = {key: [(lane * width + column) * 2 + half for lane, column, half in pieces]
            for key, pieces in maps.items()}
    reads = []
    for index, ins in enumerate(result.instructions):
        verdict = instruction.check(ins.ptx(acc.column, taddr), TARGET, warp=ins.warp, address=ins.address)
        accepted &= verdict["ptxas_accepts"]
        for v in verdict["violations"] + verdict["undefined"]:
            undefined.append(f"instruction {index}: {v.rule.id}: {v.message}")
        reads.append(list(map(((ins.lane * width + ins.column) * 2).__add__, flat[_key(ins)])))
    low = [(lane * width + column) * 2 for lane, column in cells]
    inside = set(low)
    inside.update(at + 1 for at in low)                      # the high half of a D cell is no stray read
    read = set().union(*reads)
    torn = 0
    if acc.bits == 32:
        torn = sum(len(reads[i]) // 2 for i, ins in enumerate(result.instructions)
                   if not _whole_registers(maps[_key(ins)]))
    if sum(map(len, reads)) == len(read) and read <= inside and (read >= inside if acc.bits == 32 else
                                                                 read.issuperset(low)):
        missing = twice = stray = 0
    else:
        missing, twice, stray, first = _count_reads(reads, low, width, cells, acc.bits == 32)
        if stray:
            problems.append(f"{stray} reads of cells outside D, first (lane, column) = {first}")
    if missing:
        problems.insert(0, f"{missing} elements of D are read by no instruction")
    if twice:
        problems.insert(1 if missing else 0, f"{twice} elements of D are read more than once")
    if torn:
        problems.append(f"{torn} registers do not hold one 32-bit element whole")
    result.reads = (width, None)
    result.check = {"elements": len(cells), "read_exactly_once": not (missing or twice or torn or stray),
                    "ptxas_accepts": bool(accepted), "undefined": undefined, "problems": problems,
                    "target": TARGET,
                    "by": "spec.tmem.instruction.check of each instruction's PTX with its address and warp; "
                          "spec.tmem.ld_st.fragment_map; spec.tmem.accumulator.d_cell"}
    return result.check


def _count_reads(reads: list, low: list, width: int, cells: dict, whole: bool) -> tuple:
    """(missing, twice, stray, first stray cell): each read counted, for a plan that is not exact."""
    count = Counter()
    for at in reads:
        count.update(at)
    low_counts = list(map(count.__getitem__, low))
    high_counts = list(map(count.__getitem__, (at + 1 for at in low)))
    if whole:                                                # both halves of a 32-bit element
        missing = sum(1 for a, b in zip(low_counts, high_counts) if not a or not b)
        twice = sum(1 for a, b in zip(low_counts, high_counts) if a > 1 or b > 1)
    else:
        missing, twice = low_counts.count(0), len(low_counts) - low_counts.count(0) - low_counts.count(1)
    stray = sum(count.values()) - sum(low_counts) - sum(high_counts)
    outside = [divmod(at // 2, width) for at in count if divmod(at // 2, width) not in cells]
    return missing, twice, stray, min(outside) if outside else None


def _readers(result: Plan) -> dict:
    """Flat read index -> instruction index << 20 | the piece's number in it (see verify_plan), built on
    demand: only `holder` and `holders` need it."""
    width, who = result.reads
    if who is None:
        who = {}
        for index, ins in reversed(list(enumerate(result.instructions))):     # the first reader wins
            base = (ins.lane * width + ins.column) * 2
            at = [base + (lane * width + column) * 2 + half for lane, column, half in _pieces(_key(ins))]
            who.update(zip(at, range(index << 20, (index << 20) + len(at))))
        result.reads = (width, who)
    return who


def holder(result: Plan, m: int, n: int) -> Optional[list]:
    """[warp, thread, instruction index, register, half] of D[m][n] (half: 0 low / 1 high 16 bits of the
    register for a 16-bit element, None for a 32-bit element, which fills its register), from the
    checked reads; None where no instruction reads it."""
    acc = result.acc
    width, who = result.reads[0], _readers(result)
    lane, column = accumulator.d_cell(m, n, acc.M, acc.N, acc.cta_group, acc.ws, acc.lane_offset, acc.sparse)
    code = who.get(((lane * width) + column + acc.column) * 2)
    if code is None:
        return None
    index, k = code >> 20, code & 0xFFFFF
    ins = result.instructions[index]
    thread, piece = divmod(k, 2 * ins.registers)
    return [ins.warp, thread, index, piece // 2, None if acc.bits == 32 else piece % 2]


def holders(result: Plan, cells: Optional[dict] = None) -> list:
    """holders[m][n] for every row of this CTA (see holder): each instruction's low-half pieces walked
    once, the cell each reads looked up in D's map (a cell read twice keeps its first reader, as holder)."""
    acc = result.acc
    cells = d_cells(acc) if cells is None else cells
    table = [[None] * acc.N for _ in range(acc.rows)]
    whole = acc.bits == 32
    for index, ins in enumerate(result.instructions):
        for thread, pieces in enumerate(ld_st.fragment_map(*_key(ins))):
            for piece, (lane, column, half) in enumerate(pieces):
                if half:
                    continue                    # a high half holds no element of its own (16-bit D: low)
                element = cells.get((ins.lane + lane, ins.column + column))
                if element is not None and table[element[0]][element[1]] is None:
                    table[element[0]][element[1]] = [ins.warp, thread, index, piece >> 1,
                                                     None if whole else piece & 1]
    return table


def as_json(result: Plan, with_holders: bool = True) -> dict:
    """The document of `tmem plan --json` (keys: solver/cli/tmem_plan.py); holders only when asked."""
    acc = result.acc
    document = {
        "status": result.status,
        "reason": result.reason or None,
        "rules": result.rules,
        "objective": OBJECTIVE,
        "accumulator": {"M": acc.M, "N": acc.N, "dtype": acc.dtype, "element_bits": acc.bits,
                        "cta_group": acc.cta_group, "ws": acc.ws, "sparse": acc.sparse, "layout": acc.layout,
                        "column": acc.column, "lane_offset": acc.lane_offset, "address": f"0x{acc.address:08x}",
                        "rows_per_cta": acc.rows},
        "warps": list(result.warps),
        "registers": result.budget,
        "excluded": result.excluded,
        "shape": result.shape,
        "pack": result.pack if result.status == "found" else None,
        "instructions": [],
        "per_warp": [],
        "idle_warps": result.idle_warps,
        "holders": (holders(result, result.cells or None)
                    if with_holders and result.status == "found" and result.check else None),
        "check": result.check or None,
    }
    for index, ins in enumerate(result.instructions):
        document["instructions"].append({
            "index": index, "warp": ins.warp, "shape": ins.shape, "num": ins.num, "pack": ins.pack,
            "half_splitoff": ins.half_splitoff, "lane": ins.lane, "column": ins.column,
            "address": f"0x{ins.address:08x}", "offset": f"0x{ins.offset(acc.column):08x}",
            "registers": ins.registers, "ptx": ins.ptx(acc.column)})
    for q, warp in sorted(result.readers.items()):
        mine = [i for i, ins in enumerate(result.instructions) if ins.warp == warp]
        document["per_warp"].append({"warp": warp, "lanes": [32 * q, 32 * q + 31], "instructions": mine,
                                     "registers": sum(result.instructions[i].registers for i in mine)})
    largest = max((entry["registers"] for entry in document["per_warp"]), default=0)
    document["register_file"] = {"per_thread": REGISTERS_PER_THREAD, "largest_in_all": largest,
                                 "fits": largest <= REGISTERS_PER_THREAD}
    return document
