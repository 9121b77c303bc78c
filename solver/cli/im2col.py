"""`layoutproof im2col`: the pixels an im2col / im2col::w / im2col::w::128 TMA load reads, which are out
of bounds, and where each element lands in shared memory (spec.tma.im2col).

Exit status: 0 no rule broken, 1 rules broken (violations listed; pixels and placement are still given),
2 malformed input. Negative lists must be written with '=': --lower=-1,-1 (argparse reads '-1,-1' as an
option).
"""
from __future__ import annotations

from spec.rule import SpecError
from spec.tma import im2col, tensormap

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (add_command, add_element_size, add_optional_arch, add_picture, add_smem_address,
                             add_tma_swizzle, exit_status, number_list, signed_number)


def load_from_args(args) -> im2col.Im2colLoad:
    return im2col.make_load(
        args.mode, args.tensor, args.lower, args.upper, args.channels_per_pixel, args.pixels_per_column,
        args.coords, offsets=args.offsets, element_strides=args.element_strides, w_halo=args.w_halo,
        w_offset=args.w_offset, elem_bytes=args.elem_bytes, swizzle=args.swizzle,
        smem_address=args.smem_address, interleave=args.interleave, oob_fill=args.oob_fill)


def box_document(load: im2col.Im2colLoad) -> dict:
    """The box the walk wraps in, in tensor coordinates (offsets / wOffset applied), ends included:
    {"w": [low, high], "h": ..., "d": ...} for the spatial dimensions of the tensor's rank."""
    low, high = im2col.access_box(load)
    names = im2col.SPATIAL_NAMES[: load.rank - 2]
    return {name: [a, b] for name, a, b in zip(names, low, high)}


def document(load: im2col.Im2colLoad, found: list, as_text: bool = False) -> dict:
    """The load's document; a load too large to exist (im2col.listable) lists no pixels nor placement.
    With as_text the placement is a render.JSONText (for --json with no picture to draw)."""
    listed = im2col.listable(found)
    loaded = im2col.pixels(load) if listed else None
    wanted = listed and load.interleave == "NONE"
    placed = (render.im2col_placement_text(load, loaded) if as_text else im2col.placement_json(load)) if wanted else None
    return {
        "mode": im2col.MODES[load.mode], "layout": load.layout, "tensor": list(load.tensor),
        "bounding_box": box_document(load),
        "row_bytes": load.row_bytes, "smem_address": load.smem_address, "swizzle": load.swizzle,
        "pixels": None if loaded is None else [p.as_json() for p in loaded],
        "placement": placed,
        "violations": [v.as_json() for v in found],
    }


def run(args) -> int:
    load = load_from_args(args)
    found = im2col.violations(load) + tensormap.swizzle_arch_violations(load.swizzle, args.arch)
    doc = document(load, found, as_text=args.json and not pictures.wanted(args))
    if pictures.wanted(args) and (doc["pixels"] is None or doc["placement"] is None):
        raise SpecError("svg" if args.svg else "png", args.svg or args.png, "nothing to draw: the load lists no "
                        "pixels or placement (its size rules are broken, or interleave is not NONE)",
                        found[0].rule.id if found else "")
    pictures.save(args, "im2col", f"im2col ({doc['mode']}): {len(doc['pixels'] or [])} pixels into shared memory "
                  f"at {doc['smem_address']:#x}, {doc['swizzle']}",
                  [f"{doc['row_bytes']} bytes per pixel row"], doc["pixels"], doc["placement"], args.elem_bytes)
    render.emit(args, doc, lambda: render.im2col_text(load, box_document(load), found)
                if doc["pixels"] is not None else render.im2col_refused_text(load, box_document(load), found))
    return exit_status(found)


def register(commands) -> None:
    """Add the top-level `im2col` command to the argparse subparsers object `commands`."""
    p = add_command(
        commands, "im2col", run,
        examples=[
            'layoutproof im2col --mode im2col --tensor 16,4,4,1 --lower=0,0 --upper=-1,-1 --channels-per-pixel 16 --pixels-per-column 4 --coords 0,0,0,0 --dtype bf16 --swizzle NONE --smem-address 0x400',
        ],
        help=summary("im2col"),
        description="The pixels (n, d, h, w) an im2col / im2col::w / im2col::w::128 load reads, in shared-"
                    "memory row order, which are out of bounds, and the swizzled address of every element "
                    "(rules im2col.*). Lists with negative values need '=': --lower=-1,-1.")
    p.add_argument("--mode", required=True, choices=tuple(im2col.MODES),
                   help="im2col (.im2col), w (.im2col::w), w128 (.im2col::w::128)")
    p.add_argument("--tensor", required=True, type=number_list,
                   help="tensor sizes as in the tensor map, dimension 0 first: C,W[,H[,D]],N")
    p.add_argument("--lower", required=True, type=number_list,
                   help="pixelBoxLowerCorner per spatial dimension, W first (w modes: the W corner only)")
    p.add_argument("--upper", required=True, type=number_list,
                   help="pixelBoxUpperCorner per spatial dimension, W first (w modes: the W corner only)")
    p.add_argument("--channels-per-pixel", required=True, type=signed_number, help="channelsPerPixel")
    p.add_argument("--pixels-per-column", type=signed_number, default=None,
                   help="pixelsPerColumn (required except in w128, which ignores it)")
    p.add_argument("--element-strides", type=number_list, default=None,
                   help="traversal strides, one per dimension, C first (default all 1)")
    p.add_argument("--coords", required=True, type=number_list, help="tensor coordinates c,w[,h[,d]],n")
    p.add_argument("--offsets", type=number_list, default=None,
                   help="im2col offsets, one per spatial dimension, W first (im2col mode; default 0)")
    p.add_argument("--w-halo", type=signed_number, default=0, help="wHalo (w modes)")
    p.add_argument("--w-offset", type=signed_number, default=0, help="wOffset (w modes)")
    add_element_size(p, type=signed_number)
    add_tma_swizzle(p)
    add_smem_address(p, "destination byte address", type=signed_number)
    add_optional_arch(p, "sm90, sm100 or sm103: checks that the swizzle exists there (tma.map.swizzle_arch)")
    p.add_argument("--interleave", default="NONE", help="NONE (default), 16B, 32B")
    p.add_argument("--oob-fill", default="zero", choices=tuple(im2col.OOB_FILLS),
                   help="zero (default) or nan (OOB-NaN)")
    add_picture(p)
