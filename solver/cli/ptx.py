"""`layoutproof ptx descriptors | check`: the descriptors a kernel's PTX feeds its MMAs (docs/CLI.md `ptx`)."""
from __future__ import annotations

import sys

from spec.rule import SpecError

from solver.cli import render
from solver.cli.args import EXIT_OK, EXIT_VIOLATION, add_command, add_group, exit_status, layout_text, number
from solver.kernel import analysis as ptx_analysis
from solver.kernel import check as ptx_check
from solver.kernel.symbolic import evaluate
from solver.kernel import mma
from solver.kernel.frontend import source


def _analyse(args) -> ptx_analysis.Analysis:
    if args.file == "-" and (sys.stdin is None or sys.stdin.closed):
        raise SpecError("ptx", "-", "standard input is closed", source.RULE)
    text = source.read_text(args.file)
    params = ptx_analysis.parse_params(args.param)
    return ptx_analysis.analyse(text, args.smem_base, args.kernel, params)


def run_descriptors(args) -> int:
    result = _analyse(args)
    budget = mma.Budget()
    sites = [mma.site_document(site, budget) for site in result.sites]
    document = {"smem_base": result.smem_base, "functions": result.functions, "shared": result.shared,
                "sites": sites, "unread": result.unread}
    render.emit(args, document, lambda: render.ptx_sites_text(document))
    # an MMA statement not read is not known to be right: exit 1, as for a broken rule
    return exit_status([v for s in sites for v in s["violations"]]) or (EXIT_VIOLATION if result.unread else EXIT_OK)


def run_check(args) -> int:
    intended = [ptx_check.parse_intended(text) for text in args.layout]
    roles = [i.role for i in intended]
    if len(set(roles)) != len(roles):
        twice = max(roles, key=roles.count).upper()
        raise SpecError("layout", twice, f"operand {twice} is named by two --layout options")
    result = _analyse(args)
    document = ptx_check.check(result, intended)
    render.emit(args, document, lambda: render.ptx_check_text(document))
    clean = all(document["summary"][status] == 0 for status in ("mismatch", "unknown", "unread"))
    return EXIT_OK if clean else EXIT_VIOLATION


def _add_input(p) -> None:
    p.add_argument("file", metavar="FILE", help="the PTX file ('-': standard input)")
    p.add_argument("--smem-base", type=number, default=evaluate.DEFAULT_SMEM_BASE,
                   help=f"shared address of the first shared symbol (default {evaluate.DEFAULT_SMEM_BASE:#x}, "
                        "the dynamic shared-memory base the H100 harness saw)")
    p.add_argument("--kernel", default=None, help="evaluate only this .entry / .func")
    p.add_argument("--param", action="append", default=[], metavar="NAME=N",
                   help="the value ld.param of NAME reads (repeatable; otherwise unknown)")


def register(commands) -> None:
    group = add_group(commands, "ptx", help="evaluate the descriptors a kernel's PTX feeds wgmma / tcgen05.mma")
    descriptors = add_command(
        group, "descriptors", run_descriptors,
        help="every wgmma.mma_async / tcgen05.mma with its decoded descriptors and read maps",
        description="Evaluate the straight-line register arithmetic that feeds each MMA's descriptors (the "
                    "first iteration of loops), decode them, and list each operand's read map. Exit 1 when a "
                    "descriptor breaks a rule.")
    _add_input(descriptors)
    checked = add_command(
        group, "check", run_check,
        help="does each MMA read the tile its author meant?",
        description="Check each MMA's operand descriptors against the tile layout named with --layout. Exit 0 "
                    "when every one reads it, 1 on a mismatch or a descriptor that cannot be evaluated.")
    _add_input(checked)
    checked.add_argument("--layout", action="append", required=True, type=layout_text, metavar="OPERAND=LAYOUT[@ADDRESS]",
                         help="A=<CuTe layout> or B=<CuTe layout>, the whole tile (mn, k) -> element offset; "
                              "@ADDRESS: the tile's address (default: the first MMA's start address)")
