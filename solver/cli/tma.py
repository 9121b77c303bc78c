"""`layoutproof tma check | place | box`: TMA tensor maps and tiled box loads (docs/CLI.md `tma check`,
`tma place`; `tma box` is an addition)."""
from __future__ import annotations

from spec.rule import SpecError

import json

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, add_arch, add_command, add_group, add_picture, add_tma_swizzle,
                             add_element_size, add_optional_arch, add_smem_address, tma_dtype_name, exit_status, number, number_list, read_json_document)

TMA_ARCH_HELP = "sm90, sm100 or sm103"


def read_params_document(path: str):
    """The JSON document of --tensormap (a file, or stdin for '-'); unreadable or not JSON: malformed."""
    from spec.tma import tensormap
    return read_json_document(path, "tensormap", tensormap.PARAMS.id)


def run_schema(args) -> int:
    from spec.tma import schema
    print(json.dumps(schema.schema(), indent=None if args.json and not args.pretty else 1))
    return EXIT_OK


def run_check(args) -> int:
    from spec.tma import tensormap
    from spec.tma.tensormap_params import DocumentErrors
    arch = tensormap.check_arch(args.arch)
    if args.example is not None:
        import layoutproof
        args.params = layoutproof.example_path(args.example)
    try:
        params = tensormap.parse_params(read_params_document(args.params))
    except SpecError as error:
        if args.json:       # every malformed key at once, for scripts; the one line on stderr names them all
            found = error.errors if isinstance(error, DocumentErrors) else [error]
            print(render.json_text(args, {"legal": None, "malformed": [
                {"field": e.field_name, "problem": e.problem, "rule": e.rule_id} for e in found]}))
        raise
    report = tensormap.check(params, arch)
    render.emit(args, report, render.tensormap_text(params, arch, report))
    return EXIT_OK if report["legal"] else EXIT_VIOLATION


def run_place(args) -> int:
    from spec.tma import place as tma_place
    from spec.tma import tensormap
    box = tma_place.make_box(args.swizzle, args.elem_bytes, args.box, args.smem_address, args.element_strides)
    broken = tma_place.violations(box) + tensormap.swizzle_arch_violations(box.swizzle, args.arch)
    found = [v.as_json() for v in broken]
    # a box over 256 in a dimension or over 228 KiB is not placed: exit 1 with its rules, offsets null
    offsets = tma_place.place_rows(box) if tma_place.placeable(broken) else None
    document = {"swizzle": box.swizzle, "elem_bytes": box.element_bytes, "box": list(box.dims),
                "smem_address": box.smem_address, "offsets": offsets, "violations": found}
    if pictures.wanted(args) and offsets is None:
        raise SpecError("svg" if args.svg else "png", args.svg or args.png, "nothing to draw: the box breaks "
                        "its size rules and is not placed", found[0]["rule"] if found else "")
    pictures.save(args, "tma_place", f"tma place: box {'x'.join(map(str, box.dims))} of {box.element_bytes}-byte "
                  f"elements, {box.swizzle}, destination {box.smem_address:#x}",
                  [f"{len(offsets or [])} elements; violations: {', '.join(v['rule'] for v in found) or 'none'}"],
                  list(box.counts), offsets, box.element_bytes)     # offsets follow the counts (strides)
    render.emit(args, document, render.placement_text(box, offsets, found))
    return exit_status(found)


def run_box(args) -> int:
    """The largest legal box (and swizzle) for a tile; the chosen map is re-checked by spec/tensormap."""
    from spec.tma import tensormap
    from solver.synth import box as box_synth
    try:
        plan = box_synth.synthesize(args.dtype, args.rows, args.inner, args.global_dim, args.global_strides,
                                    tensormap.check_arch(args.arch))
    except SpecError:
        raise
    except ValueError as error:
        raise SpecError("tile", f"{args.rows}x{args.inner}", str(error), "tma.map.params") from None
    document = plan.as_json()
    if plan.status == "found":
        verdict = tensormap.check_document(plan.tensor_map, args.arch)
        document["spec_check"] = verdict
        if not verdict["legal"]:       # never report a map spec refuses
            document["status"] = "none"
            document["reasons"] = [v["rule"] for v in verdict["violations"]]
    render.emit(args, document, render.tma_box_text(document, args.rows, args.inner, args.arch))
    return EXIT_OK if document["status"] == "found" else EXIT_VIOLATION


def register(commands) -> None:
    tma_commands = add_group(commands, "tma", help=summary("tma"))

    check = add_command(
        tma_commands, "check", run_check,
        examples=['layoutproof tma check --example tiled_bf16 --arch sm90'],
        help="would the driver's encoder accept these tensor-map arguments?",
        description="Check the arguments of cuTensorMapEncodeTiled / Im2col / Im2colWide (a JSON document "
                    "named as in cuda.h, docs/CLI.md 'tma check'). Exit 0 when the encoder accepts them, 1 "
                    "when it refuses (violations listed), 2 when the document is malformed. Warnings list "
                    "what the encoder does not catch.")
    source = check.add_mutually_exclusive_group(required=True)
    source.add_argument("--tensormap", "--params", dest="params", metavar="FILE",
                        help="the tensor map's parameter document (JSON); '-' reads stdin")
    source.add_argument("--example", metavar="NAME",
                        help="a bundled example document by name (tiled_bf16, im2col_nhwc, ...; it travels "
                             "with the package)")
    add_arch(check, help=TMA_ARCH_HELP)

    schema = add_command(
        tma_commands, "schema", run_schema,
        examples=['layoutproof tma schema --json'],
        help="the JSON Schema of a tensor-map parameter document",
        description="Print the JSON Schema (draft 2020-12) of what `tma check --tensormap` reads, generated "
                    "from the parser's own tables: validate documents with it in your own CI. Form only "
                    "(keys, types, enumerators, C integer ranges); `tma check` decides legality.")
    del schema

    place = add_command(
        tma_commands, "place", run_place,
        examples=['layoutproof tma place --swizzle 128B --dtype bf16 --box 64,8 --smem-address 0x400'],
        help="where each element of a tiled box load lands in shared memory",
        description="offsets[i] is the absolute shared-memory byte address of box element i (d0 fastest) "
                    "after a tiled load with this swizzle (rule tma.place.tiled).")
    add_tma_swizzle(place)
    add_element_size(place)
    add_optional_arch(place, "sm90, sm100 or sm103: checks that the swizzle exists there (tma.map.swizzle_arch)")
    place.add_argument("--box", required=True, type=number_list, help="box sizes d0,d1[,...]")
    add_smem_address(place, "destination byte address")
    place.add_argument("--element-strides", type=number_list, default=None, help="traversal strides")
    add_picture(place)

    box = add_command(
        tma_commands, "box", run_box,
        examples=[
            'layoutproof tma box --dtype bf16 --rows 128 --inner 64 --global-dim 4096,4096 --global-strides 8192 --arch sm90',
        ],
        help="the largest legal TMA box and swizzle for a shared-memory tile",
        description="Pick the swizzle and boxDim that move the most bytes per load for a tile of ROWS x INNER "
                    "elements of a global tensor, legal on the architecture (solver.model.tensormap, re-checked "
                    "by spec/tensormap). Exit 1 with the excluding rules when none is legal.")
    box.add_argument("--dtype", required=True, type=tma_dtype_name,
                     help="bf16, f16, tf32, e4m3, ... (any --dtype spelling) or a cuda.h name (BFLOAT16)")
    box.add_argument("--rows", required=True, type=number, help="tile rows (the box's dimension 1)")
    box.add_argument("--inner", required=True, type=number, help="tile inner extent in elements (dimension 0)")
    box.add_argument("--global-dim", required=True, type=number_list, help="tensor sizes, dimension 0 first")
    box.add_argument("--global-strides", required=True, type=number_list, help="byte strides of dimensions 1..")
    add_arch(box, help=TMA_ARCH_HELP)
