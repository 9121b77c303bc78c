"""`layoutproof tmem check | map`: tcgen05 tensor-memory instructions (docs/CLI.md `tmem`).

`tmem check` judges one tcgen05 instruction given as PTX text the way ptxas of a target would (static
forms) and names the rules it breaks that ptxas lets through (run-time: lane quarters, address ranges);
`tmem ld` / `tmem st` / `tmem cp` / `tmem shift` say which cells one warp's instruction at an address
touches, and which run-time rules that breaks; `tmem alloc` checks a kernel's sequence of allocation
operations (spec.tmem.alloc); `tmem map` prints the fragment map of a tcgen05.ld/st form: which tensor-memory cell (lane, column,
16-bit half) each piece of each thread's registers comes from or goes to (spec.tmem.ld_st)."""
from __future__ import annotations

import argparse

from spec.rule import SpecError, shown

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, add_command, add_group, add_optional_arch, add_picture, number,
                             read_json_document)
from solver.cli.tmem_plan import add_plan

# ptxas targets (docs/CLI.md `tmem`); the short names of the other commands mean the `a` variants.
TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a")
SHORT_TARGETS = {"sm90": "sm_90a", "sm100": "sm_100a", "sm103": "sm_103a", "sm110": "sm_110a", "sm120": "sm_120a"}


def target(text: str) -> str:
    """A ptxas target, from its own name or the short arch name of the other commands."""
    name = SHORT_TARGETS.get(text.strip().lower(), text.strip().lower())
    if name not in TARGETS:
        raise SpecError("arch", text, "not a ptxas target: " + " ".join(TARGETS))
    return name


def ptx_version(text: str) -> str:
    """argparse type of --ptx-version: MAJOR[.MINOR], ASCII digits (spec.tmem.targets.parse_version reads it)."""
    import re
    if not re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3})?", text):
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a PTX ISA version such as 9.0")
    return text


def num_count(text: str) -> int:
    """.num as written in PTX (x4) or as a count (4)."""
    cleaned = text.strip().lower()
    try:
        return number(cleaned[1:] if cleaned.startswith("x") else cleaned)
    except argparse.ArgumentTypeError as error:
        raise SpecError("num", text, f"expected x1, x2, ..., x128 or the count ({error})") from None


def run_check(args) -> int:
    from spec.tmem import instruction
    verdict = instruction.check(args.ptx, target(args.arch), args.ptx_version)
    document = {"ptxas_accepts": verdict["ptxas_accepts"],
                "violations": [v.as_json() for v in verdict["violations"]],
                "undefined": [v.as_json() for v in verdict["undefined"]]}
    render.emit(args, document, render.tmem_check_text(args.ptx, target(args.arch), document))
    return EXIT_VIOLATION if document["violations"] or document["undefined"] else EXIT_OK


def _cells_document(cells) -> dict:
    """Cells as sorted [lane, column] pairs, with their extent."""
    ordered = sorted(cells)
    lanes = [lane for lane, _ in ordered]
    columns = [column for _, column in ordered]
    extent = {"lanes": [min(lanes), max(lanes)], "columns": [min(columns), max(columns)]} if ordered else None
    return {"count": len(ordered), "extent": extent, "cells": [list(cell) for cell in ordered]}


def run_access(args) -> int:
    """tcgen05.ld / tcgen05.st by one warp at one address: the cells it touches and the rules it breaks."""
    from spec.tmem import ld_st
    access = ld_st.TmemAccess(args.op, args.shape.lstrip("."), num_count(args.num), lane=args.lane,
                              column=args.column, warp=args.warp, pack=args.pack,
                              half_splitoff=args.half_splitoff, target=target(args.arch))
    found = ld_st.violations(access)
    document = {"op": args.op, "shape": access.shape, "num": access.num, "lane": args.lane, "column": args.column,
                "warp": args.warp, "target": access.target, **_cells_document(access.footprint()),
                "violations": [v.as_json() for v in found]}
    render.emit(args, document, render.tmem_cells_text(f"tcgen05.{args.op}.{access.shape}.x{access.num} by warp "
                                                         f"{args.warp} at lane {args.lane}, column {args.column}",
                                                         document))
    return EXIT_VIOLATION if found else EXIT_OK


def run_cp(args) -> int:
    from spec.tmem import address, cp
    taddr = address.encode(args.lane, args.column)
    footprints = cp.cp_footprints(args.shape.lstrip("."), args.multicast, taddr, args.cta_group)
    document = {"shape": args.shape.lstrip("."), "multicast": args.multicast, "cta_group": args.cta_group,
                "lane": args.lane, "column": args.column,
                "row_lanes": cp.row_lanes(args.shape.lstrip("."), args.multicast),
                **{cta: _cells_document(cells) for cta, cells in footprints.items()}}
    multicast = f".{args.multicast}" if args.multicast else ""
    render.emit(args, document, render.tmem_cells_text(
        f"tcgen05.cp.cta_group::{args.cta_group}.{document['shape']}{multicast} at lane {args.lane}, column "
        f"{args.column}: source row r -> lanes " + render.tmem_row_lanes_text(document["row_lanes"]), document["self"]))
    return EXIT_OK


def run_shift(args) -> int:
    from spec.tmem import address, shift
    moves = shift.moves(address.encode(args.lane, args.column))
    document = {"lane": args.lane, "column": args.column,
                "moves": [[list(source), list(destination)] for source, destination in moves],
                **_cells_document(shift.written(address.encode(args.lane, args.column)))}
    render.emit(args, document, render.tmem_cells_text(
        f"tcgen05.shift.down at lane {args.lane}, column {args.column}: lane L+i+1 -> lane L+i, 31 lanes x 8 columns",
        document))
    return EXIT_OK


# A kernel's allocation operations are a handful; this bound keeps a hostile document from running away.
MAX_ALLOC_OPS = 4096


def run_alloc(args) -> int:
    from spec.tmem import alloc
    if args.example is not None:
        import layoutproof
        args.ops = layoutproof.example_path(args.example)
    document = read_json_document(args.ops, "ops", alloc.SINGLE_WARP.id)
    ops = document.get("ops") if isinstance(document, dict) else document
    if not isinstance(ops, list):
        raise SpecError("ops", args.ops, 'expected a JSON list of operations, or {"ops": [...]}', alloc.SINGLE_WARP.id)
    if len(ops) > MAX_ALLOC_OPS:
        raise SpecError("ops", f"{len(ops)} operations", f"at most {MAX_ALLOC_OPS}", alloc.SINGLE_WARP.id)
    found = alloc.check_sequence(ops)
    report = {"violations": [{"index": index, **v.as_json()} for index, v in found]}
    render.emit(args, report, render.tmem_alloc_text(len(ops), report))
    return EXIT_VIOLATION if found else EXIT_OK


def run_map(args) -> int:
    from spec.tmem import ld_st
    access = ld_st.map_request(args.op, args.shape, num_count(args.num), args.pack, args.half_splitoff)
    pieces = ld_st.fragment_map(access.shape, access.num, access.pack, access.half_splitoff)
    document = {"op": args.op, "shape": access.shape, "num": access.num, "pack": access.pack,
                "half_splitoff": access.half_splitoff,
                "registers_per_thread": ld_st.registers_per_thread(access.shape, access.num, access.pack),
                "pieces": [[list(piece) for piece in thread] for thread in pieces]}
    pictures.save(args, render.tmem_map_figure, document)
    render.emit(args, document, render.tmem_map_text(document))
    return EXIT_OK


def add_address(p) -> None:
    """--lane and --column of the instruction's tensor-memory address (default lane 0, column 0)."""
    p.add_argument("--lane", type=number, default=0, help="the address's lane (default 0)")
    p.add_argument("--column", type=number, default=0, help="the address's column (default 0)")


TCGEN05_ARCH_HELP = "sm100 or sm103 (tensor memory exists on no other GPU)"


def register(commands) -> None:
    tmem_commands = add_group(commands, "tmem", help=summary("tmem"))

    check = add_command(
        tmem_commands, "check", run_check,
        examples=[
            'layoutproof tmem check --arch sm_100a --ptx "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];"',
        ],
        help="does ptxas accept this tcgen05 instruction, and which rules does it break?",
        description="Judge one tcgen05 instruction (ld, st, ld.red, cp, shift, alloc, dealloc, "
                    "relinquish_alloc_permit, wait) given as PTX text: whether ptxas of the target assembles it, the rules that make "
                    "ptxas refuse it (violations) and the rules it breaks that ptxas lets through (undefined "
                    "at run time). Operands: %r<n> .b32, %rd<n> .b64, a bare name a .shared variable, integer "
                    "constants. Exit 0 when both lists are empty, 1 otherwise (a tcgen05 text ptxas cannot parse "
                    "included: rule tmem.instruction.syntax), 2 when the text is not a tcgen05 instruction, is "
                    "one not modelled (mma, commit, fence) or names an operand outside that convention.")
    check.add_argument("--arch", required=True, help="ptxas target: " + " ".join(TARGETS) + " (sm100 = sm_100a, ...)")
    check.add_argument("--ptx", required=True, metavar="INSTRUCTION", help="one tcgen05 instruction, as PTX text")
    check.add_argument("--ptx-version", default="9.0", type=ptx_version, help="the PTX ISA version of the module (default 9.0)")

    for op in ("ld", "st"):
        access = add_command(
            tmem_commands, op, run_access,
            examples=[f"layoutproof tmem {op} --shape 32x32b --num x4 --lane 32 --column 0 --warp 1 --arch sm_100a"],
            help=f"the cells one warp's tcgen05.{op} touches at an address, and the run-time rules it breaks",
            description=f"tcgen05.{op} of one warp at a tensor-memory address: the cells it touches (absolute) and "
                        "the rules it breaks (lane quarter, address range, lane alignment, and the static ones). "
                        "Exit 0 when none, 1 otherwise.")
        access.set_defaults(op=op)
        access.add_argument("--shape", required=True, help="16x64b, 16x128b, 16x256b, 32x32b or 16x32bx2")
        access.add_argument("--num", required=True, help=".num: x1 .. x128 (or the count)")
        access.add_argument("--pack", action="store_true", help=".pack::16b (ld) / .unpack::16b (st)")
        access.add_argument("--half-splitoff", type=number, default=None, help="16x32bx2: the half-split offset")
        access.add_argument("--lane", required=True, type=number, help="the address's lane")
        access.add_argument("--column", required=True, type=number, help="the address's column")
        access.add_argument("--warp", required=True, type=number, help="the issuing warp's index in the CTA")
        access.add_argument("--arch", required=True, help="ptxas target: " + " ".join(TARGETS) +
                            " (sm100 = sm_100a, ...; any case); required")

    copy = add_command(
        tmem_commands, "cp", run_cp,
        examples=['layoutproof tmem cp --shape 64x128b --multicast warpx2::02_13'],
        help="the cells tcgen05.cp writes from shared memory, multicast copies included",
        description="tcgen05.cp (PTX 9.7.16.9): which lanes each source row goes to (multicast) and the cells "
                    "written, in the issuing CTA and, with cta_group::2, in its peer.")
    copy.add_argument("--shape", required=True, help="128x256b, 4x256b, 128x128b, 64x128b or 32x128b")
    copy.add_argument("--multicast", default=None, help="warpx2::02_13, warpx2::01_23 (64x128b), warpx4 (32x128b)")
    copy.add_argument("--cta-group", type=int, choices=(1, 2), default=1)
    add_address(copy)
    add_optional_arch(copy, TCGEN05_ARCH_HELP, tcgen05_only=True)

    shifting = add_command(
        tmem_commands, "shift", run_shift,
        examples=['layoutproof tmem shift --lane 0'],
        help="the rows tcgen05.shift.down moves",
        description="tcgen05.shift.down (implicit shape 31x256b): each of the 31 lanes after the address's moves "
                    "one lane down, 8 columns.")
    add_address(shifting)
    add_optional_arch(shifting, TCGEN05_ARCH_HELP, tcgen05_only=True)

    sequence = add_command(
        tmem_commands, "alloc", run_alloc,
        examples=['layoutproof tmem alloc --example alloc_leak'],
        help="check a kernel's tcgen05.alloc / dealloc / relinquish_alloc_permit sequence",
        description="Check a kernel's allocation operations, in program order, against the allocation rules "
                    "(PTX 9.7.16.7.1): column counts, one allocating warp, everything freed before exit, "
                    "deallocs matching allocs, no alloc after relinquish_alloc_permit, cta_group::1 and ::2 "
                    "not mixed, at most 512 columns live. Exit 0 when none breaks, 1 with each breach and the "
                    "index of the operation, 2 when the document is malformed.")
    source = sequence.add_mutually_exclusive_group(required=True)
    source.add_argument("--ops", metavar="FILE",
                        help='JSON: [{"op": "alloc"|"dealloc"|"relinquish_alloc_permit", "warp", "columns", '
                             '"cta_group", "address"}, ...] (or {"ops": [...]}); "-" reads stdin')
    source.add_argument("--example", metavar="NAME", help="a bundled example by name (alloc_leak)")
    add_optional_arch(sequence, TCGEN05_ARCH_HELP, tcgen05_only=True)

    mapping = add_command(
        tmem_commands, "map", run_map,
        examples=['layoutproof tmem map --op ld --shape 16x64b --num x1'],
        help="which tensor-memory cell each register piece of each thread comes from or goes to",
        description="The fragment map of tcgen05.ld / tcgen05.st (PTX 9.7.16.2.3): for thread t, piece j is "
                    "the 16-bit piece j of its registers (register j // 2, low half when j is even), and the "
                    "cell it comes from or goes to: lane (within the warp's 32-lane quarter) and column "
                    "relative to the instruction's address, and which 16-bit half of the 32-bit cell.")
    mapping.add_argument("--op", required=True, choices=("ld", "st"))
    mapping.add_argument("--shape", required=True, help="16x64b, 16x128b, 16x256b, 32x32b or 16x32bx2")
    mapping.add_argument("--num", required=True, help=".num: x1, x2, ..., x128 (or the count)")
    mapping.add_argument("--pack", action="store_true", help=".pack::16b (ld) / .unpack::16b (st)")
    mapping.add_argument("--half-splitoff", type=number, default=None,
                         help="the immediate half-split offset in columns (16x32bx2 only, required there)")
    add_optional_arch(mapping, TCGEN05_ARCH_HELP, tcgen05_only=True)
    add_picture(mapping)         # lanes x columns, coloured by thread
    add_plan(tmem_commands)
