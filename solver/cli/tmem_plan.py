"""`layoutproof tmem plan`: the tcgen05.ld sequence that reads an accumulator D out of tensor memory
(issue 13, "Synthesis: an epilogue plan"; the search and its check are solver.synth.tmem_plan).

    layoutproof tmem plan --m M --n N --dtype f32|f16|bf16|s32 [--cta-group 1|2] [--ws] [--sparse] [--column C]
                          [--lane-offset 0|16] [--warps 0,1,2,3] [--registers R] [--at m,n] [--json]

Exit 0 with a plan that the spec's check passes; 1 when no plan exists (the reason names the rules:
tmem.access.lane_quarter for a warp set that misses a quarter of D's lanes, tmem.ld.num /
tmem.ld.registers_per_thread for a register budget no shape fits) or, which would be a bug, when the
check fails; 2 for malformed input (one line).

JSON keys: status ("found" | "none"), reason, rules, objective, accumulator {M, N, dtype, element_bits,
cta_group, ws, sparse, layout, column, lane_offset, address, rows_per_cta}, warps, registers (the budget),
excluded {shape: why}, shape, pack, instructions [{index, warp, shape, num, pack, half_splitoff, lane,
column, address, offset, registers, ptx}], per_warp [{warp, lanes, instructions, registers}],
register_file {per_thread: 255, largest_in_all, fits},
idle_warps, holders (holders[m][n] = [warp, thread, instruction index, register, half]: half 0/1 is
the low/high 16 bits of the register for a 16-bit D, null for a 32-bit element; rows are this CTA's,
with cta_group::2 the peer CTA's rows m + rows_per_cta have the same holders in the peer), check
{elements, read_exactly_once, ptxas_accepts, undefined, problems, target, by}, and with --at, at
{m, n, holder}.
"""
from __future__ import annotations

import argparse

from spec.rule import SpecError
from spec.tmem import ld_st

from solver.cli import render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, accumulator_dtype_name, add_command, add_optional_arch, number,
                             number_list)

DTYPES = ("f32", "f16", "bf16", "s32")           # solver.synth.tmem_plan.DTYPE_BITS (imported when it runs)
DEFAULT_WARPS = (0, 1, 2, 3)
DEFAULT_REGISTERS = ld_st.MAX_REGISTERS


def _pair(text: str) -> tuple:
    values = number_list(text)
    if len(values) != 2:
        raise argparse.ArgumentTypeError(f"{text!r}: expected m,n")
    return values


def run_plan(args) -> int:
    from solver.synth import tmem_plan
    acc = tmem_plan.make_accumulator(args.m, args.n, args.dtype, args.cta_group, args.ws, args.column,
                                     args.lane_offset, args.sparse)
    warps = tmem_plan.check_warps(args.warps)
    if args.registers > tmem_plan.REGISTERS_PER_THREAD:
        raise SpecError("registers", args.registers, f"a thread has {tmem_plan.REGISTERS_PER_THREAD} registers "
                        "(CUDA C++ Programming Guide, compute capabilities); no budget can be larger",
                        ld_st.REGISTERS.id)
    at = None
    if args.at is not None:
        m, n = args.at
        if not (0 <= m < acc.rows and 0 <= n < acc.N):
            raise SpecError("at", f"{m},{n}", f"outside this CTA's {acc.rows} x {acc.N} rows of D")
    result = tmem_plan.plan(acc, warps, args.registers)
    document = tmem_plan.as_json(result, with_holders=args.json)
    if args.at is not None:
        holder = tmem_plan.holder(result, *args.at) if result.status == "found" else None
        at = {"m": args.at[0], "n": args.at[1], "holder": holder}
        document["at"] = at
    render.emit(args, document, lambda: plan_text(result, document, at))
    ok = result.status == "found" and document["check"]["read_exactly_once"] and \
        document["check"]["ptxas_accepts"] and not document["check"]["undefined"]
    return EXIT_OK if ok else EXIT_VIOLATION


# --- text ------------------------------------------------------------------------------------------------
def _span(values) -> str:
    values = sorted(values)
    if not values:
        return "-"
    if values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}" if len(values) > 1 else str(values[0])
    return f"{len(values)} values in {values[0]}..{values[-1]}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _holder_text(holder) -> str:
    warp, thread, index, register, half = holder
    part = "" if half is None else (" low half" if half == 0 else " high half")
    return f"warp {warp}, thread {thread}, instruction {index}, register %r{register}{part}"


def _instruction_rows(result) -> list:
    """Per instruction: the D rows and columns it reads (down its first column and along its first lane)
    and its first register pieces, from its fragment map (spec.tmem.ld_st.fragment_map) and D's map."""
    from spec.tmem import ld_st
    rows, maps = [], {}
    for index, ins in enumerate(result.instructions):
        key = (ins.shape, ins.num, ins.pack, ins.half_splitoff)
        if key not in maps:
            maps[key] = ld_st.fragment_map(*key)
        pieces = maps[key]
        # rows down the first column, columns along the first lane (a band of D is lanes x columns)
        elements = {result.cells.get((ins.lane + lane, ins.column)) for lane, _, _ in pieces[0] + pieces[-1]}
        elements |= {result.cells.get((ins.lane + lane, ins.column)) for lane in range(32)}
        elements |= {result.cells.get((ins.lane, ins.column + column)) for thread in pieces
                     for _, column, _ in thread}
        elements.discard(None)

        def element(thread, piece):
            lane, column, _ = pieces[thread][piece]
            found = result.cells.get((ins.lane + lane, ins.column + column))
            return f"D[{found[0]}][{found[1]}]" if found else "-"

        rows.append([index, _span({m for m, _ in elements}), _span({n for _, n in elements}),
                     _sample(element, len(pieces[0]) // 2, ins.pack, result.acc.bits)])
    return rows


SAMPLE_REGISTERS = ((0, 0), (0, 1), (1, 0))     # (thread, register) shown per instruction: t0 %r0, t0 %r1, t1 %r0


def _sample(element, registers: int, pack: bool, bits: int) -> str:
    """What the first registers of threads 0 and 1 hold, as far as the instruction has registers (one
    register per thread, --registers 1, has no t0 %r1). Register j holds pieces 2j and 2j+1
    (spec.tmem.ld_st.fragment_map): with .pack::16b two elements of D, else one cell, whose low half is
    the element of a 16-bit D."""
    def held(thread, register):
        low = element(thread, 2 * register)
        if pack:
            return f"{low},{element(thread, 2 * register + 1)}"
        return f"{low} (low half)" if bits == 16 and (thread, register) == (0, 0) else low
    return "; ".join(f"t{thread} %r{register} = {held(thread, register)}"
                     for thread, register in SAMPLE_REGISTERS if register < registers)


def plan_text(result, document: dict, at=None) -> str:
    acc = document["accumulator"]
    head = (f"tmem plan: D {acc['M']} x {acc['N']} {acc['dtype']}, layout {acc['layout']} "
            f"(cta_group::{acc['cta_group']}{', .ws' if acc['ws'] else ''}{', sparse A' if acc['sparse'] else ''}), "
            f"{acc['rows_per_cta']} rows per CTA; "
            f"%taddr = {acc['address']} (lane 0, column {acc['column']}); warps "
            f"{','.join(map(str, document['warps']))}; budget {_count(document['registers'], 'register')} per thread "
            f"per instruction")
    lines = [head, f"objective: {document['objective']}"]
    if result.status != "found":
        lines.append(f"no plan: {document['reason']}")
        lines.append("rules: " + ", ".join(document["rules"]))
        return "\n".join(lines)
    nums = sorted({i["num"] for i in document["instructions"]}, reverse=True)
    lines.append(f"plan: {len(document['instructions'])} tcgen05.ld .{document['shape']}"
                 f"{' .pack::16b' if document['pack'] else ''}, .num "
                 + " ".join(f"x{n}" for n in nums)
                 + f"; at most {_count(max(i['registers'] for i in document['instructions']), 'register')} per thread"
                 + (f"; idle warps {','.join(map(str, document['idle_warps']))}" if document["idle_warps"] else ""))
    if acc["cta_group"] == 2:
        lines.append(f"cta_group::2: each CTA of the pair runs this plan on its own {acc['rows_per_cta']} rows "
                     f"(the peer's D rows {acc['rows_per_cta']}..{acc['M'] - 1})")
    rows = _instruction_rows(result)
    for entry in document["per_warp"]:
        lines.append("")
        lines.append(f"warp {entry['warp']} (lanes {entry['lanes'][0]}..{entry['lanes'][1]}): "
                     f"{_count(len(entry['instructions']), 'instruction')}, {entry['registers']} registers per thread in all")
        lines.append(render._table(["#", "D rows", "D columns", "thread t, register %rj"],
                                   [rows[i] for i in entry["instructions"]]))
        for i in entry["instructions"]:
            lines.append(f"  {result.instructions[i].ptx(result.acc.column, abbreviate=True)}")
    check = document["check"]
    lines.append("")
    room = document["register_file"]
    if not room["fits"]:
        lines.append(f"note: a warp holds {room['largest_in_all']} registers per thread in all, past the "
                     f"{room['per_thread']} a thread has: use each instruction's registers (tcgen05.wait::ld, then "
                     "convert or store) before the next instruction loads")
    if at is not None:
        lines.append(f"D[{at['m']}][{at['n']}]: " + (_holder_text(at["holder"]) if at["holder"] else "not read"))
    if check["read_exactly_once"] and check["ptxas_accepts"] and not check["undefined"]:
        lines.append(f"check: every element of D read exactly once ({check['elements']} elements), each warp "
                     f"inside its lane quarter, every instruction accepted on {check['target']} "
                     f"(spec.tmem: instruction check, fragment maps, d_cell)")
    else:
        lines.append("check FAILED: " + "; ".join(check["problems"] + check["undefined"]
                                                  + ([] if check["ptxas_accepts"] else ["ptxas would refuse"])))
    lines.append("(%taddr is D's tensor-memory address; the offset is lane << 16 | column - C; registers are "
                 "numbered within each instruction's vector; --json has holders[m][n] and the full PTX)")
    return "\n".join(lines)


def add_plan(tmem_commands) -> None:
    """Register `tmem plan` under the `tmem` group (called from solver.cli.tmem.register)."""
    p = add_command(
        tmem_commands, "plan", run_plan,
        examples=['layoutproof tmem plan --m 128 --n 64 --dtype f32 --at 17,3'],
        help="the tcgen05.ld sequence that reads an accumulator D into registers (an epilogue plan)",
        description="Choose the tcgen05.ld instructions (shape, .num, .pack::16b, addresses per warp) with "
                    "the fewest instructions that read every element of D exactly once, each warp only "
                    "inside its lane quarter, then the fewest registers; print which register of which "
                    "thread of which warp holds D[m][n], the PTX, and the spec's check. Exit 0 with a plan, "
                    "1 when none exists (the reason names the rules), 2 for malformed input.")
    p.add_argument("--m", required=True, type=number, help="M of the MMA: 32, 64, 128 (cta_group::1), 128, 256 (::2)")
    p.add_argument("--n", required=True, type=number, help="N of the MMA, a multiple of 8")
    p.add_argument("--dtype", required=True, type=accumulator_dtype_name, help="D's element type: " + " ".join(DTYPES) + " (any case; float32, int32, float16, "
                   "bfloat16 and the other spellings every --dtype takes)")
    p.add_argument("--cta-group", type=number, default=1, help="1 or 2 (default 1)")
    p.add_argument("--ws", action="store_true", help="tcgen05.mma.ws (cta_group::1; layouts E, G, D)")
    p.add_argument("--sparse", action="store_true",
                   help="tcgen05.mma.sp (sparse A): with cta_group::2 and M=128, layout C")
    p.add_argument("--column", type=number, default=0, help="D's first tensor-memory column C (default 0)")
    p.add_argument("--lane-offset", type=number, default=0,
                   help="layouts F and C (half the data path): D at lanes 0-15 (0) or 16-31 (16) of each quarter")
    p.add_argument("--warps", type=number_list, default=DEFAULT_WARPS,
                   help="the warps that read D, by index in the CTA (default 0,1,2,3: warpgroup 0); warp w "
                        "reaches lanes 32*(w%%4)..+31")
    p.add_argument("--registers", type=number, default=DEFAULT_REGISTERS,
                   help=f"register budget per thread per instruction (default {DEFAULT_REGISTERS}, "
                        "the longest vector tcgen05.ld has: the fewest instructions)")
    p.add_argument("--at", type=_pair, default=None, metavar="m,n", help="also print who holds D[m][n]")
    add_optional_arch(p, "sm100 or sm103 (tensor memory exists on no other GPU)", tcgen05_only=True)
