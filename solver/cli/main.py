"""The `layoutproof` command line (../shared/CLI.md is the contract).

Every command takes --json and then prints one JSON document on stdout. Exit status: 0 valid / as
expected, 1 well-formed but breaks a rule, 2 malformed input (one line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes
from spec.mma import readmap
from spec.rules import SpecError, all_rules, parse_number

from solver.cli import render

EXIT_OK, EXIT_VIOLATION, EXIT_MALFORMED, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (CLI contract)."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def number(text: str) -> int:
    """Decimal or 0x-hex, non-negative."""
    try:
        value = parse_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a decimal or 0x-hex number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def emit(args, document: dict, human: str) -> None:
    if args.json:
        json.dump(document, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(human.rstrip("\n") + "\n")


# --- desc decode / encode ---------------------------------------------------------------------------
def descriptor_document(d: desc_mod.Descriptor) -> dict:
    return {"arch": d.arch, "descriptor": d.hex, "fields": d.fields_json(),
            "violations": [v.as_json() for v in desc_mod.violations(d)]}


def cmd_desc_decode(args) -> int:
    d = desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))
    document = descriptor_document(d)
    emit(args, document, render.descriptor_table(d, document["violations"]))
    return EXIT_VIOLATION if document["violations"] else EXIT_OK


def cmd_desc_encode(args) -> int:
    d = desc_mod.encode(args.arch, args.start_address, args.lbo, args.sbo, args.swizzle,
                        args.base_offset, args.lbo_mode)
    document = descriptor_document(d)
    emit(args, document, render.descriptor_table(d, document["violations"]))
    return EXIT_VIOLATION if document["violations"] else EXIT_OK


# --- desc addresses ---------------------------------------------------------------------------------
def cmd_desc_addresses(args) -> int:
    d = desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))
    op = readmap.make_operand(d, args.dtype, args.major, args.mn, args.k, args.kind)
    addresses = readmap.read_addresses(op, args.phase_model)
    found = [v.as_json() for v in readmap.violations(op)]
    document = {"arch": d.arch, "descriptor": d.hex, "fields": d.fields_json(), "dtype": op.dtype.name,
                "kind": op.kind, "major": op.major, "mn": op.mn, "k": op.k,
                "phase_model": args.phase_model, "addresses": addresses, "violations": found}
    human = render.address_table(op, addresses, found, full=args.full)
    if args.map:
        human += "\n" + render.chunk_map(op, addresses)
    emit(args, document, human)
    return EXIT_VIOLATION if found else EXIT_OK


# --- rules ------------------------------------------------------------------------------------------
def cmd_rules(args) -> int:
    from solver.synth import recipe  # noqa: F401  (registers the recipe rules, which live with the recipe)
    rules = all_rules()
    if args.subject:
        rules = [r for r in rules if r.subject == args.subject]
    document = {"rules": [r.as_json() for r in rules]}
    emit(args, document, render.rules_table(rules))
    return EXIT_OK


# --- synth / check -------------------------------------------------------------------------------
def tile_from_args(args):
    from solver.synth import descriptor as synth
    return synth.make_tile(args.arch, args.dtype, args.major, args.mn, args.layout, args.start_address,
                           args.k, args.k_offset, args.kind)


def cmd_synth(args) -> int:
    from solver.synth import descriptor as synth
    tile = tile_from_args(args)
    outcome = synth.synthesize(tile, all_solutions=args.all)
    d = outcome.descriptor
    document = {"status": outcome.status, "descriptor": d.hex if d else None,
                "fields": d.fields_json() if d else None, "reason": outcome.reason or None,
                "ignored": outcome.ignored, "excluded": outcome.excluded}
    if args.all:
        document["solutions"] = outcome.solutions
    if d is not None:
        op = readmap.Operand(d, dtypes.dtype(tile.dtype), tile.major, tile.mn, tile.k, tile.kind)
        document["violations"] = [v.as_json() for v in readmap.violations(op)]
    emit(args, document, render.synth_text(tile, outcome, document.get("violations", [])))
    return EXIT_OK if outcome.status == "found" else EXIT_VIOLATION


def cmd_check(args) -> int:
    from solver.synth import descriptor as synth
    tile = tile_from_args(args)
    desc = desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))
    report = synth.check(tile, desc)
    emit(args, report, render.check_text(report))
    return EXIT_OK if report["match"] else EXIT_VIOLATION


def cmd_recipe(args) -> int:
    from solver.synth import recipe
    r = recipe.build(args.arch, args.dtype, args.major, args.mn, args.k_tile, args.swizzle,
                     args.smem_address, args.kind, args.allow_unaligned)
    document = recipe.as_json(r)
    emit(args, document, render.recipe_text(document))
    ok = not r.violations and r.proof.get("status") == "proved"
    return EXIT_OK if ok else EXIT_VIOLATION


def number_list(text: str) -> tuple:
    try:
        return tuple(parse_number(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def cmd_tma_box(args) -> int:
    """The largest legal box (and swizzle) for a tile; the chosen map is re-checked by spec/tensormap."""
    from spec.tma import tensormap
    from solver.synth import box as box_synth
    try:
        plan = box_synth.synthesize(args.dtype, args.rows, args.inner, args.global_dim, args.global_strides,
                                    tensormap.check_arch(args.arch))
    except ValueError as error:
        raise SpecError("tile", f"{args.rows}x{args.inner}", str(error), "tma.map.params") from None
    document = plan.as_json()
    if plan.status == "found":
        verdict = tensormap.check_document(plan.tensor_map, args.arch)
        document["spec_check"] = verdict
        if not verdict["legal"]:       # never report a map spec refuses
            document["status"] = "none"
            document["reasons"] = [v["rule"] for v in verdict["violations"]]
    if document["status"] == "found":
        rows, inner = document["loads_along"] or (None, None)
        human = (f"{document['dataType']} tile {args.rows} x {args.inner} on {args.arch}: swizzle "
                 f"{document['swizzle']}, box {document['box']} ({document['bytes_per_load']} bytes per load), "
                 f"{document['loads']} loads ({rows} along the inner extent x {inner} along the rows)")
    else:
        human = f"no legal box: {', '.join(document['reasons']) or 'see --json'}"
    emit(args, document, human)
    return EXIT_OK if document["status"] == "found" else EXIT_VIOLATION


def cmd_tma_place(args) -> int:
    from spec.tma import place as tma_place
    box = tma_place.make_box(args.swizzle, args.elem_bytes, args.box, args.smem_address, args.element_strides)
    found = [v.as_json() for v in tma_place.violations(box)]
    offsets = tma_place.place(box)
    document = {"swizzle": box.swizzle, "elem_bytes": box.element_bytes, "box": list(box.dims),
                "smem_address": box.smem_address, "offsets": offsets, "violations": found}
    emit(args, document, render.placement_text(box, offsets, found))
    return EXIT_VIOLATION if found else EXIT_OK


def read_params_document(path: str):
    """The JSON document of --params (a file, or stdin for '-'); unreadable or not JSON: malformed."""
    from spec.tma import tensormap
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise SpecError("params", path, f"cannot read: {reason}", tensormap.PARAMS.id) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SpecError("params", path, f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})",
                        tensormap.PARAMS.id) from None


def cmd_tma_check(args) -> int:
    from spec.tma import tensormap
    arch = tensormap.check_arch(args.arch)
    params = tensormap.parse_params(read_params_document(args.params))
    report = tensormap.check(params, arch)
    emit(args, report, render.tensormap_text(params, arch, report))
    return EXIT_OK if report["legal"] else EXIT_VIOLATION


# --- prove ------------------------------------------------------------------------------------------
def select_properties(args) -> list:
    from solver.prove.catalogue import all_properties
    catalogue = all_properties()
    if args.all or not args.ids:
        if args.ids:
            raise UsageError("layoutproof prove: give --all or property ids, not both")
        return catalogue
    by_id = {p.id: p for p in catalogue}
    chosen = []
    for wanted in args.ids:
        matches = [by_id[wanted]] if wanted in by_id else [p for p in catalogue if p.id.startswith(wanted + ".")]
        if not matches:
            raise SpecError("property", wanted, "no property has this id or id prefix "
                            "(layoutproof prove --list shows them)")
        chosen += [p for p in matches if p not in chosen]
    return chosen


def cmd_prove(args) -> int:
    from solver.prove import prover
    chosen = select_properties(args)
    if args.list:
        document = {"properties": [p.as_json() for p in chosen]}
        emit(args, document, render.property_list(chosen))
        return EXIT_OK
    if args.timeout <= 0:
        raise SpecError("timeout", args.timeout, "must be a positive number of seconds")
    progress = sys.stderr.isatty() and not args.json
    results = []
    for number, p in enumerate(chosen, 1):
        if progress:
            sys.stderr.write(f"\r[{number}/{len(chosen)}] {p.id} ...")
            sys.stderr.flush()
        result = prover.prove(p, timeout=args.timeout, save=not args.no_save,
                              root=args.counterexamples)
        results.append(result)
        if progress:
            mark = "" if result.as_expected else f"  (expected {p.expected})"
            sys.stderr.write(f"\r[{number}/{len(chosen)}] {p.id}: {result.status} "
                             f"{result.seconds:.2f}s{mark}\033[K\n")
    document = {"results": [r.as_json() for r in results]}
    emit(args, document, render.prove_table(results))
    return EXIT_OK if all(r.as_expected for r in results) else EXIT_VIOLATION


# --- argument parsing -------------------------------------------------------------------------------
def add_json(p):
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def build_parser() -> Parser:
    top = Parser(prog="layoutproof", description=(
        "Formal model and constraint checker for NVIDIA tensor-core shared-memory layouts: "
        "descriptors, swizzles, canonical layouts. Exit 0 valid, 1 breaks a rule, 2 malformed input."))
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)

    desc = commands.add_parser("desc", help="shared-memory matrix descriptors (wgmma / tcgen05)")
    desc_commands = desc.add_subparsers(dest="desc_command", required=True, parser_class=Parser)

    arch_help = "sm90 (wgmma), sm100 (tcgen05), sm103 (tcgen05 + absolute LBO mode / K=96)"
    decode = desc_commands.add_parser("decode", help="decode a 64-bit descriptor into its fields",
                                      description="Decode a 64-bit descriptor; list the rules it breaks.")
    decode.add_argument("--arch", required=True, help=arch_help)
    decode.add_argument("descriptor", metavar="HEX", help="the descriptor, 0x-hex (or decimal)")
    add_json(decode)
    decode.set_defaults(run=cmd_desc_decode)

    encode = desc_commands.add_parser(
        "encode", help="encode fields into a 64-bit descriptor",
        description="Encode a descriptor. Unrepresentable values exit 2; encodable but illegal "
                    "combinations are encoded anyway and listed as violations (exit 1).")
    encode.add_argument("--arch", required=True, help=arch_help)
    encode.add_argument("--start-address", required=True, type=number, help="bytes, multiple of 16")
    encode.add_argument("--lbo", required=True, type=number,
                        help="leading dimension byte offset (or, in absolute mode, byte address)")
    encode.add_argument("--sbo", required=True, type=number, help="stride dimension byte offset")
    encode.add_argument("--swizzle", required=True,
                        help="none 32B 64B 128B 128B_atom32B (the last only on sm100/sm103)")
    encode.add_argument("--base-offset", type=number, default=0, help="0..7 (default 0)")
    encode.add_argument("--lbo-mode", choices=("relative", "absolute"), default=None,
                        help="sm100/sm103 bit 52 (default relative)")
    add_json(encode)
    encode.set_defaults(run=cmd_desc_encode)

    addresses = desc_commands.add_parser(
        "addresses", help="the shared-memory byte address of every operand element one MMA reads",
        description="addresses[i][j] is the absolute shared-memory byte address of the first byte of "
                    "operand element (mn=i, k=j) read through this descriptor.")
    addresses.add_argument("--arch", required=True, help=arch_help)
    addresses.add_argument("descriptor", metavar="HEX", help="the descriptor, 0x-hex (or decimal)")
    addresses.add_argument("--dtype", required=True,
                           help="f16 bf16 tf32 f32 e4m3 e5m2 e2m3 e3m2 e2m1 s8 u8")
    addresses.add_argument("--major", required=True, help="K or MN")
    addresses.add_argument("--mn", required=True, type=number, help="M or N extent, a multiple of 8")
    addresses.add_argument("--k", type=number, default=None,
                           help="K extent in elements (default: the instruction K, 32 bytes of K)")
    addresses.add_argument("--kind", default=None,
                           help="tcgen05 kind, which decides sub-byte packing (default: e2m1 -> mxf4 "
                                "dense, e2m3/e3m2 -> f8f6f4 padded)")
    addresses.add_argument("--phase-model", choices=readmap.PHASE_MODELS, default="hardware",
                           help="how the swizzle phase is found: 'hardware' (default, what an H100 "
                                "does: rule readmap.swizzle_phase) or a refuted reading, for comparison")
    addresses.add_argument("--full", action="store_true",
                           help="table of every element (default: one column per 16-byte chunk)")
    addresses.add_argument("--map", action="store_true",
                           help="also draw shared memory: which operand chunk each 16-byte chunk holds")
    add_json(addresses)
    addresses.set_defaults(run=cmd_desc_addresses)

    def tile_arguments(p):
        p.add_argument("--arch", required=True, help=arch_help)
        p.add_argument("--dtype", required=True, help="f16 bf16 tf32 f32 e4m3 e5m2 e2m3 e3m2 e2m1 s8 u8")
        p.add_argument("--major", required=True, help="K or MN")
        p.add_argument("--mn", required=True, type=number, help="M or N extent, a multiple of 8")
        p.add_argument("--k", type=number, default=None, help="K extent (default: the instruction K)")
        p.add_argument("--k-offset", type=number, default=0, help="first K element the instruction reads")
        p.add_argument("--layout", required=True,
                       help="the tile in CuTe notation, (mn, k) -> element offset, optionally "
                            "'Sw<B,M,S> o ...' with the swizzle on byte addresses")
        p.add_argument("--start-address", required=True, type=number, help="the tile's base byte address")
        p.add_argument("--kind", default=None, help="tcgen05 kind (sub-byte packing)")
        add_json(p)

    synth_parser = commands.add_parser(
        "synth", help="find the descriptor that reads a tile",
        description="Find descriptor fields whose read map equals the tile's byte addresses for every "
                    "element one instruction reads, or say which rules exclude every candidate (exit 1).")
    tile_arguments(synth_parser)
    synth_parser.add_argument("--all", action="store_true", help="list every distinct solution")
    synth_parser.set_defaults(run=cmd_synth)

    check_parser = commands.add_parser(
        "check", help="does this descriptor read that tile?",
        description="Compare a descriptor's read map with the tile's addresses. Exit 0 when they agree; "
                    "exit 1 with the first mismatching element and the fields to change.")
    check_parser.add_argument("descriptor", metavar="DESC", help="the descriptor, 0x-hex")
    tile_arguments(check_parser)
    check_parser.set_defaults(run=cmd_check)

    recipe_parser = commands.add_parser(
        "recipe", help="the whole set-up for a tile: smem layout, TMA boxes, one descriptor per MMA",
        description="Smem layout (CuTe notation), byte size and alignment, the TMA boxes and swizzle that "
                    "fill it, one descriptor per instruction along K, and the exhaustive check that what "
                    "the TMA writes is what each descriptor reads. A misaligned address is refused (exit 1).")
    recipe_parser.add_argument("--arch", required=True, help=arch_help)
    recipe_parser.add_argument("--dtype", required=True, help="f16 bf16 tf32 f32 e4m3 e5m2 s8 u8 e2m1")
    recipe_parser.add_argument("--major", required=True, help="K or MN")
    recipe_parser.add_argument("--mn", required=True, type=number, help="M or N extent of the tile")
    recipe_parser.add_argument("--k-tile", required=True, type=number, help="K extent of the tile")
    recipe_parser.add_argument("--swizzle", required=True, help="none 32B 64B 128B 128B_atom32B")
    recipe_parser.add_argument("--smem-address", required=True, type=number, help="the tile's byte address")
    recipe_parser.add_argument("--kind", default=None, help="tcgen05 kind")
    recipe_parser.add_argument("--allow-unaligned", action="store_true",
                               help="build a tile off its swizzle's repeat boundary (rule recipe.swizzle_alignment)")
    add_json(recipe_parser)
    recipe_parser.set_defaults(run=cmd_recipe)

    tma = commands.add_parser("tma", help="TMA tensor copies")
    tma_commands = tma.add_subparsers(dest="tma_command", required=True, parser_class=Parser)
    place = tma_commands.add_parser(
        "place", help="where each element of a tiled box load lands in shared memory",
        description="offsets[i] is the absolute shared-memory byte address of box element i (d0 fastest) "
                    "after a tiled load with this swizzle (rule tma.place.tiled).")
    place.add_argument("--swizzle", required=True,
                       help="NONE 32B 64B 96B 128B 128B_ATOM_32B 128B_ATOM_32B_FLIP_8B 128B_ATOM_64B")
    place.add_argument("--elem-bytes", required=True, type=number, help="element size in bytes")
    place.add_argument("--box", required=True, type=number_list, help="box sizes d0,d1[,...]")
    place.add_argument("--smem-address", required=True, type=number, help="destination byte address")
    place.add_argument("--element-strides", type=number_list, default=None, help="traversal strides")
    add_json(place)
    place.set_defaults(run=cmd_tma_place)

    box = tma_commands.add_parser(
        "box", help="the largest legal TMA box and swizzle for a shared-memory tile",
        description="Pick the swizzle and boxDim that move the most bytes per load for a tile of ROWS x INNER "
                    "elements of a global tensor, legal on the architecture (solver.model.tensormap, re-checked "
                    "by spec/tensormap). Exit 1 with the excluding rules when none is legal.")
    box.add_argument("--dtype", required=True, help="bf16, f16, tf32, e4m3, ... or a cuda.h name (BFLOAT16)")
    box.add_argument("--rows", required=True, type=number, help="tile rows (the box's dimension 1)")
    box.add_argument("--inner", required=True, type=number, help="tile inner extent in elements (dimension 0)")
    box.add_argument("--global-dim", required=True, type=number_list, help="tensor sizes, dimension 0 first")
    box.add_argument("--global-strides", required=True, type=number_list, help="byte strides of dimensions 1..")
    box.add_argument("--arch", default="sm100", help="sm90, sm100, sm103 (default sm100)")
    add_json(box)
    box.set_defaults(run=cmd_tma_box)

    tma_check = tma_commands.add_parser(
        "check", help="would the driver's encoder accept these tensor-map arguments?",
        description="Check the arguments of cuTensorMapEncodeTiled / Im2col / Im2colWide (a JSON document "
                    "named as in cuda.h, CLI.md 'tma check'). Exit 0 when the encoder accepts them, 1 when it "
                    "refuses (violations listed), 2 when the document is malformed. Warnings list what the "
                    "encoder does not catch.")
    tma_check.add_argument("--params", required=True, metavar="FILE",
                           help="the parameter document (JSON); '-' reads stdin")
    tma_check.add_argument("--arch", default="sm100", help="sm90, sm100 (default) or sm103")
    add_json(tma_check)
    tma_check.set_defaults(run=cmd_tma_check)

    prove = commands.add_parser(
        "prove", help="prove or refute the property catalogue with Z3",
        description="Prove or refute properties over their whole parameter ranges. Each result is "
                    "proved, refuted (with a counterexample that spec/ replays) or unknown (a timeout "
                    "is never 'proved'). Exit 0 when every status equals its expected status.")
    prove.add_argument("ids", nargs="*", metavar="ID", help="property ids, or id prefixes such as "
                                                            "canonical.injective")
    prove.add_argument("--all", action="store_true", help="every property (the default with no ID)")
    prove.add_argument("--timeout", type=float, default=30.0, help="seconds per property (default 30)")
    prove.add_argument("--list", action="store_true", help="list the properties instead of proving")
    prove.add_argument("--no-save", action="store_true",
                       help="do not write counterexamples to the counterexamples folder")
    prove.add_argument("--counterexamples", default="counterexamples",
                       help="folder for counterexamples/<id>/<n>.json (default ./counterexamples)")
    add_json(prove)
    prove.set_defaults(run=cmd_prove)

    from solver.cli import im2col as cli_im2col
    cli_im2col.register(commands, Parser, add_json, emit)
    from solver.cli import fuzz as cli_fuzz
    cli_fuzz.add_parser(commands, add_json, number)

    rules = commands.add_parser("rules", help="the rule catalogue",
                                description="Every rule: id, source, statement.")
    rules.add_argument("--subject", default=None,
                       help="only rules whose check looks at this subject (descriptor, operand, ...)")
    add_json(rules)
    rules.set_defaults(run=cmd_rules)
    return top


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.run(args)
    except UsageError as error:
        print(str(error), file=sys.stderr)
        return EXIT_MALFORMED
    except SpecError as error:
        print(f"layoutproof: error: {error}", file=sys.stderr)
        return EXIT_MALFORMED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # never a traceback for users; LAYOUTPROOF_DEBUG=1 shows it
        if os.environ.get("LAYOUTPROOF_DEBUG"):
            raise
        print(f"layoutproof: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
