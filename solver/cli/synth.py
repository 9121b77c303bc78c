"""`layoutproof synth | check | recipe`: from a tile's layout to the descriptors that read it (docs/CLI.md
`synth`; `check` and `recipe` are additions). solver.synth is imported when a command runs."""
from __future__ import annotations

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes, readmap

from spec.rule import SpecError

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, UsageError, add_arch, add_command, add_descriptor_swizzle,
                             add_dtype, add_kind, add_major, add_mn, add_picture, add_smem_address, layout_text, number, number_list)


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
    hint = synth.other_major_hint(tile) if outcome.status != "found" else None
    if hint:
        document["hint"] = hint
    render.emit(args, document, render.synth_text(tile, outcome, document.get("violations", []), hint))
    return EXIT_OK if outcome.status == "found" else EXIT_VIOLATION


def run_check(args) -> int:
    from solver.synth import descriptor as synth
    tile = tile_from_args(args)
    desc = desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))
    report = synth.check(tile, desc)
    if pictures.wanted(args):
        op = readmap.make_operand(desc, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
        pictures.save(args, "check", f"check: does {desc.hex} read the tile {tile.layout.notation()}?",
                      [f"{tile.arch} {tile.major}-major {tile.dtype} MN={tile.mn}, K {tile.k_offset}.."
                       f"{tile.k_offset + tile.k - 1}, tile at {tile.start_address:#x}: "
                       + ("every element matches" if report["match"] else "mismatches outlined in red")],
                      tile.targets(), readmap.read_addresses(op), tile.k_offset)
    render.emit(args, report, render.check_text(report))
    # a descriptor that reads the tile right can still break a rule (an operand swizzle the instruction
    # does not take, PTX 9.7.16.10.3 Table 54): listed and exit 1, as every command does with a violation
    return EXIT_OK if report["match"] and not report["violations"] else EXIT_VIOLATION


def run_recipe(args) -> int:
    from solver.synth import recipe, recipe_mma
    r = recipe.build(args.arch, args.dtype, args.major, args.mn, args.k_tile, args.swizzle,
                     args.smem_address, args.kind, args.allow_unaligned)
    document = recipe.as_json(r)
    if args.instr is not None and len(args.instr) not in (2, 3):
        raise UsageError("layoutproof: error: recipe: --instr takes M,N or M,N,CTA_GROUP")
    if args.instr is not None and r.arch != "sm90":
        document["instr_desc"] = recipe.instruction_descriptor(r, *args.instr)
    reads_ok = True
    if r.tma and not r.violations and all(s["status"] == "found" for s in r.instructions):
        if r.arch == "sm90":
            m, n = (args.instr[0], args.instr[1]) if args.instr is not None else (None, None)
            document["mma"] = recipe_mma.sm90_reads(r, recipe.written_addresses(r), recipe.instruction_k(r), m, n)
        elif args.instr is not None:
            document["mma"] = recipe_mma.sm100_reads(r, document["instr_desc"])
        reads_ok = "mma" not in document or recipe_mma.proved(document["mma"])
    if args.emit is not None:
        return _emit(args, r, document, reads_ok)
    if pictures.wanted(args) and (r.violations or not r.tma):
        raise SpecError("svg" if args.svg else "png", args.svg or args.png, "nothing to draw: the recipe is refused",
                        r.violations[0].rule.id if r.violations else "")
    pictures.save(args, "recipe_figure", r)
    render.emit(args, document, render.recipe_text(document))
    broken = document.get("instr_desc", {}).get("violations")
    ok = not r.violations and r.proof.get("status") == "proved" and not broken and reads_ok
    return EXIT_OK if ok else EXIT_VIOLATION


def _emit(args, r, document: dict, reads_ok: bool) -> int:
    """--emit FORM: the snippet to paste (solver.synth.recipe_emit), alone on stdout; with --json, the
    document with "emit": {"form", "text"}. A recipe with nothing right to paste (refused, a step with no
    descriptor, a misread slice) prints why instead: exit 1."""
    from solver.synth import recipe_emit
    try:
        text, refused = recipe_emit.emit(document, args.emit), None
    except ValueError as error:
        text, refused = None, str(error)
    document["emit"] = {"form": args.emit, "text": text, "refused": refused}
    render.emit(args, document, lambda: text if text is not None else
                render.recipe_text(document) + f"\nnothing to emit: {refused}")
    return EXIT_OK if text is not None and reads_ok else EXIT_VIOLATION


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
    add_smem_address(p, "the tile's base byte address", dest="start_address", aliases=("--start-address",))
    add_kind(p)


def register(commands) -> None:
    synth = add_command(
        commands, "synth", run_synth, help=summary("synth"),
        examples=[
            'layoutproof synth --arch sm90 --dtype bf16 --major K --mn 64 --layout "Sw<3,4,3> o ((8,8),64):((64,512),1)" --smem-address 0x400',
        ],
        description="Find descriptor fields whose read map equals the tile's byte addresses for every "
                    "element one instruction reads, or say which rules exclude every candidate (exit 1).")
    add_tile_arguments(synth)
    synth.add_argument("--all", action="store_true", help="list every distinct solution")

    check = add_command(
        commands, "check", run_check, help=summary("check"),
        examples=[
            'layoutproof check 0x4000004000010040 --arch sm90 --dtype bf16 --major K --mn 64 --layout "Sw<3,4,3> o ((8,8),64):((64,512),1)" --smem-address 0x400 --k-offset 16',
        ],
        description="Compare a descriptor's read map with the tile's addresses. Exit 0 when they agree; "
                    "exit 1 with the first mismatching element and the fields to change.")
    check.add_argument("descriptor", metavar="DESC", help="the descriptor, 0x-hex")
    add_tile_arguments(check)
    add_picture(check)

    recipe = add_command(
        commands, "recipe", run_recipe,
        examples=[
            'layoutproof recipe --arch sm90 --dtype bf16 --major K --mn 128 --k-tile 64 --swizzle 128B --smem-address 0x400',
            'layoutproof recipe --arch sm100 --dtype bf16 --major K --mn 128 --k-tile 64 --swizzle 128B --smem-address 0x400 --instr 128,256',
        ],
        help=summary("recipe"),
        description="Smem layout (CuTe notation), byte size and alignment, the TMA boxes and swizzle that "
                    "fill it, one descriptor per instruction along K, and the exhaustive check that what "
                    "the TMA writes is what each descriptor reads. A misaligned address is refused (exit 1).")
    add_arch(recipe)
    add_dtype(recipe)
    add_major(recipe)
    recipe.add_argument("--mn", required=True, type=number, help="M or N extent of the tile")
    recipe.add_argument("--k-tile", dest="k_tile", metavar="K", required=True, type=number,
                        help="K extent of the tile, which several instructions read (--k in synth and check is "
                             "the K one instruction reads)")
    add_descriptor_swizzle(recipe)
    add_smem_address(recipe, "the tile's byte address")
    add_kind(recipe)
    recipe.add_argument("--instr", type=number_list, default=None, metavar="M,N[,CTA_GROUP]",
                        help="also the tcgen05.mma instruction descriptor of an M x N MMA reading tiles like this "
                             "one as A and B (sm100/sm103), with the shape rules it breaks")
    recipe.add_argument("--emit", default=None, choices=("cute", "cuda", "triton"),
                        help="print instead a snippet to paste: the smem layout and descriptors in CuTe (cute), the "
                             "cuTensorMapEncodeTiled call and descriptor words (cuda), or Triton's NVMMASharedLayout "
                             "and TensorDescriptor (triton)")
    add_picture(recipe)
    recipe.add_argument("--allow-unaligned", action="store_true",
                        help="build a tile off its swizzle's repeat boundary (rule recipe.swizzle_alignment)")
