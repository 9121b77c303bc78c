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
    render.emit(args, document, lambda: render.tmem_plan_text(result, document, at))
    ok = result.status == "found" and document["check"]["read_exactly_once"] and \
        document["check"]["ptxas_accepts"] and not document["check"]["undefined"]
    return EXIT_OK if ok else EXIT_VIOLATION


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
