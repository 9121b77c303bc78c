"""`layoutproof im2col`: the pixels an im2col / im2col::w / im2col::w::128 TMA load reads, which are out
of bounds, and where each element lands in shared memory (spec.tma.im2col).

Exit status: 0 no rule broken, 1 rules broken (violations listed; pixels and placement are still given),
2 malformed input. Negative lists must be written with '=': --lower=-1,-1 (argparse reads '-1,-1' as an
option).
"""
from __future__ import annotations

import json

from spec.tma import im2col, tensormap
from spec.tma import swizzle as tma_swizzle

from spec.rule import SpecError

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


def placement_text(load: im2col.Im2colLoad, loaded: list = None) -> render.JSONText:
    """json.dumps(im2col.placement_json(load)), written a row at a time from im2col.placement_rows (the
    JSON encoder would take most of the command's time on 64K elements; tests/test_fast_paths.py checks
    the text against json.dumps). `loaded`: im2col.pixels(load), when the caller has it already."""
    missing = ', "source": null, "fill": ' + json.dumps(im2col.fill_value(load)) + ', "smem_address": '
    tail = '], "fill": null, "smem_address": '
    rows, names, every = [], None, None
    for pixel, along, inside, addresses in im2col.placement_rows(load, loaded):
        if names is None:
            names = [str(channel) for channel in along]       # json.dumps of an int is its str
            every = all(inside)
        head = '{"row": %d, "channel": ' % pixel.row
        kept = ', "source": [%d, %d, %d, %d, ' % (pixel.n, pixel.d, pixel.h, pixel.w)
        if pixel.oob:
            rows.append(", ".join([f"{head}{c}{missing}{a}}}" for c, a in zip(names, addresses)]))
        elif every:
            rows.append(", ".join([f"{head}{c}{kept}{c}{tail}{a}}}" for c, a in zip(names, addresses)]))
        else:
            rows.append(", ".join([f"{head}{c}{kept}{c}{tail}{a}}}" if ok else f"{head}{c}{missing}{a}}}"
                                   for c, ok, a in zip(names, inside, addresses)]))
    return render.JSONText("[" + ", ".join(row for row in rows if row) + "]")


def load_text(load, box: dict, found: list) -> str:
    """`im2col`: one line per shared-memory row: its pixel, halo / out-of-bounds marks, the row's
    (unswizzled) start address and where its first channel lands after swizzling. `box` is the
    bounding box document {"w": [low, high], ...}."""
    loaded = im2col.pixels(load)
    starts = im2col.row_addresses(load)
    spans = ", ".join(f"{name} [{a}, {b}]" for name, (a, b) in box.items())
    lines = [f"{im2col.MODES[load.mode]} load of a {load.layout} tensor {'x'.join(map(str, load.tensor))}: "
             f"{len(loaded)} rows of {load.channels_per_pixel} channels ({load.row_bytes} bytes), "
             f"channels {load.coords[0]}..{load.coords[0] + load.channels_per_pixel - 1}, box {spans}, "
             f"swizzle {load.swizzle}, destination {load.smem_address:#x}",
             f"{'row':>5} {'n':>6} {'d':>5} {'h':>5} {'w':>6}  {'kind':<5} {'oob':<4} {'row at':>9} {'c0 at':>9}"]
    for p, row_start in zip(loaded, starts):
        first = tma_swizzle.swizzle_byte_address(load.swizzle, row_start)
        lines.append(f"{p.row:>5} {p.n:>6} {p.d:>5} {p.h:>5} {p.w:>6}  {'halo' if p.halo else 'main':<5} "
                     f"{'OOB' if p.oob else '':<4} {row_start:>#9x} {first:>#9x}")
    channels = [c for c in range(load.coords[0], load.coords[0] + load.channels_per_pixel)
                if not 0 <= c < load.tensor[0]]
    if channels:
        lines.append(f"channels {channels[0]}..{channels[-1]} are outside C = {load.tensor[0]}: "
                     f"filled ({im2col.fill_value(load)}) in every row")
    lines.append("violations: none" if not found else "violations:\n" + "\n".join(f"  {v}" for v in found))
    return "\n".join(lines)


def refused_text(load, box: dict, found: list) -> str:
    """`im2col` of a load too large to exist (spec.tma.im2col.listable): what it is, and the rules."""
    spans = ", ".join(f"{name} [{a}, {b}]" for name, (a, b) in box.items())
    return "\n".join([f"{im2col.MODES[load.mode]} load of a {load.layout} tensor {'x'.join(map(str, load.tensor))}: "
                      f"{load.channels_per_pixel} channels per pixel, box {spans}: not listed, the load breaks "
                      f"the rules below", "violations:\n" + "\n".join(f"  {v}" for v in found)])


def document(load: im2col.Im2colLoad, found: list, as_text: bool = False) -> dict:
    """The load's document; a load too large to exist (im2col.listable) lists no pixels nor placement.
    With as_text the placement is a render.JSONText (for --json with no picture to draw)."""
    listed = im2col.listable(found)
    loaded = im2col.pixels(load) if listed else None
    wanted = listed and load.interleave == "NONE"
    placed = (placement_text(load, loaded) if as_text else im2col.placement_json(load)) if wanted else None
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
    render.emit(args, doc, lambda: load_text(load, box_document(load), found)
                if doc["pixels"] is not None else refused_text(load, box_document(load), found))
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
