"""`layoutproof synth | check | recipe`: from a tile's layout to the descriptors that read it (docs/CLI.md
`synth`; `check` and `recipe` are additions). solver.synth is imported when a command runs."""
from __future__ import annotations

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes, readmap

from solver.cli import render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, add_arch, add_command, add_descriptor_swizzle, layout_text,
                             add_dtype, add_kind, add_major, add_mn, number)


def tile_from_args(args):
    from solver.synth import descriptor as synth
    return synth.make_tile(args.arch, args.dtype, args.major, args.mn, args.layout, args.start_address,
                           args.k, args.k_offset, args.kind)


def synth_document(tile, outcome, all_solutions: bool) -> dict:
    d = outcome.descriptor
    document = {"status": outcome.status, "descriptor": d.hex if d else None,
                "fields": d.fields_json() if d else None, "reason": outcome.reason or None,
                "ignored": outcome.ignored, "excluded": outcome.excluded}
    if all_solutions:
        document["solutions"] = outcome.solutions
    if d is not None:
        op = readmap.Operand(d, dtypes.dtype(tile.dtype), tile.major, tile.mn, tile.k, tile.kind)
        document["violations"] = [v.as_json() for v in readmap.violations(op)]
    return document


def run_synth(args) -> int:
    from solver.synth import descriptor as synth
    tile = tile_from_args(args)
    outcome = synth.synthesize(tile, all_solutions=args.all)
    document = synth_document(tile, outcome, args.all)
    render.emit(args, document, render.synth_text(tile, outcome, document.get("violations", [])))
    return EXIT_OK if outcome.status == "found" else EXIT_VIOLATION


def run_check(args) -> int:
    from solver.synth import descriptor as synth
    tile = tile_from_args(args)
    desc = desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))
    report = synth.check(tile, desc)
    render.emit(args, report, render.check_text(report))
    return EXIT_OK if report["match"] else EXIT_VIOLATION


def run_recipe(args) -> int:
    from solver.synth import recipe
    r = recipe.build(args.arch, args.dtype, args.major, args.mn, args.k_tile, args.swizzle,
                     args.smem_address, args.kind, args.allow_unaligned)
    document = recipe.as_json(r)
    render.emit(args, document, render.recipe_text(document))
    ok = not r.violations and r.proof.get("status") == "proved"
    return EXIT_OK if ok else EXIT_VIOLATION


def add_tile_arguments(p) -> None:
    """The tile of `synth` and `check`: where its elements live and which of them one instruction reads."""
    add_arch(p)
    add_dtype(p)
    add_major(p)
    add_mn(p)
    p.add_argument("--k", type=number, default=None, help="K extent (default: the instruction K)")
    p.add_argument("--k-offset", type=number, default=0, help="first K element the instruction reads")
    p.add_argument("--layout", required=True, type=layout_text,
                   help="the tile in CuTe notation, (mn, k) -> element offset, optionally "
                        "'Sw<B,M,S> o ...' with the swizzle on byte addresses")
    p.add_argument("--start-address", required=True, type=number, help="the tile's base byte address")
    add_kind(p)


def register(commands) -> None:
    synth = add_command(
        commands, "synth", run_synth, help="find the descriptor that reads a tile",
        description="Find descriptor fields whose read map equals the tile's byte addresses for every "
                    "element one instruction reads, or say which rules exclude every candidate (exit 1).")
    add_tile_arguments(synth)
    synth.add_argument("--all", action="store_true", help="list every distinct solution")

    check = add_command(
        commands, "check", run_check, help="does this descriptor read that tile?",
        description="Compare a descriptor's read map with the tile's addresses. Exit 0 when they agree; "
                    "exit 1 with the first mismatching element and the fields to change.")
    check.add_argument("descriptor", metavar="DESC", help="the descriptor, 0x-hex")
    add_tile_arguments(check)

    recipe = add_command(
        commands, "recipe", run_recipe,
        help="the whole set-up for a tile: smem layout, TMA boxes, one descriptor per MMA",
        description="Smem layout (CuTe notation), byte size and alignment, the TMA boxes and swizzle that "
                    "fill it, one descriptor per instruction along K, and the exhaustive check that what "
                    "the TMA writes is what each descriptor reads. A misaligned address is refused (exit 1).")
    add_arch(recipe)
    add_dtype(recipe)
    add_major(recipe)
    recipe.add_argument("--mn", required=True, type=number, help="M or N extent of the tile")
    recipe.add_argument("--k-tile", required=True, type=number, help="K extent of the tile")
    add_descriptor_swizzle(recipe)
    recipe.add_argument("--smem-address", required=True, type=number, help="the tile's byte address")
    add_kind(recipe)
    recipe.add_argument("--allow-unaligned", action="store_true",
                        help="build a tile off its swizzle's repeat boundary (rule recipe.swizzle_alignment)")
