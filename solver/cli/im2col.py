"""`layoutproof im2col`: the pixels an im2col / im2col::w / im2col::w::128 TMA load reads, which are out
of bounds, and where each element lands in shared memory (spec.tma.im2col).

solver/cli/main.py calls register(commands, Parser, add_json, emit) from build_parser. Exit status: 0 no rule
broken, 1 rules broken (violations listed; pixels and placement are still given), 2 malformed input.
Negative lists must be written with '=': --lower=-1,-1 (argparse reads '-1,-1' as an option).
"""
from __future__ import annotations

import argparse

from spec.tma import im2col
from spec.tma import swizzle as tma_swizzle
from spec.rules import parse_number

EXIT_OK, EXIT_VIOLATION = 0, 1


def signed_list(text: str) -> tuple:
    """Comma-separated decimal or 0x-hex integers, negative allowed."""
    try:
        return tuple(parse_number(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None


def signed(text: str) -> int:
    try:
        return parse_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a decimal or 0x-hex integer") from None


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


def document(load: im2col.Im2colLoad, found: list) -> dict:
    loaded = im2col.pixels(load)
    placed = im2col.placement(load) if load.interleave == "NONE" else None
    fill = im2col.fill_value(load)
    return {
        "mode": im2col.MODES[load.mode], "layout": load.layout, "tensor": list(load.tensor),
        "bounding_box": box_document(load),
        "row_bytes": load.row_bytes, "smem_address": load.smem_address, "swizzle": load.swizzle,
        "pixels": [p.as_json() for p in loaded],
        "placement": None if placed is None else [e.as_json(fill) for e in placed],
        "violations": [v.as_json() for v in found],
    }


def human_text(load: im2col.Im2colLoad, found: list) -> str:
    """One line per shared-memory row: its pixel, halo / out-of-bounds marks, the row's (unswizzled)
    start address and where its first channel lands after swizzling."""
    loaded = im2col.pixels(load)
    starts = im2col.row_addresses(load)
    box = ", ".join(f"{name} [{a}, {b}]" for name, (a, b) in box_document(load).items())
    lines = [f"{im2col.MODES[load.mode]} load of a {load.layout} tensor {'x'.join(map(str, load.tensor))}: "
             f"{len(loaded)} rows of {load.channels_per_pixel} channels ({load.row_bytes} bytes), "
             f"channels {load.coords[0]}..{load.coords[0] + load.channels_per_pixel - 1}, box {box}, "
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


def cmd_im2col(args, emit) -> int:
    load = load_from_args(args)
    found = im2col.violations(load)
    emit(args, document(load, found), human_text(load, found))
    return EXIT_VIOLATION if found else EXIT_OK


def register(commands, Parser, add_json, emit) -> None:
    """Add the top-level `im2col` command to the argparse subparsers object `commands`."""
    p = commands.add_parser(
        "im2col", help="pixels and shared-memory placement of an im2col-family TMA load",
        description="The pixels (n, d, h, w) an im2col / im2col::w / im2col::w::128 load reads, in shared-"
                    "memory row order, which are out of bounds, and the swizzled address of every element "
                    "(rules im2col.*). Lists with negative values need '=': --lower=-1,-1.")
    p.add_argument("--mode", required=True, choices=tuple(im2col.MODES),
                   help="im2col (.im2col), w (.im2col::w), w128 (.im2col::w::128)")
    p.add_argument("--tensor", required=True, type=signed_list,
                   help="tensor sizes as in the tensor map, dimension 0 first: C,W[,H[,D]],N")
    p.add_argument("--lower", required=True, type=signed_list,
                   help="pixelBoxLowerCorner per spatial dimension, W first (w modes: the W corner only)")
    p.add_argument("--upper", required=True, type=signed_list,
                   help="pixelBoxUpperCorner per spatial dimension, W first (w modes: the W corner only)")
    p.add_argument("--channels-per-pixel", required=True, type=signed, help="channelsPerPixel")
    p.add_argument("--pixels-per-column", type=signed, default=None,
                   help="pixelsPerColumn (required except in w128, which ignores it)")
    p.add_argument("--element-strides", type=signed_list, default=None,
                   help="traversal strides, one per dimension, C first (default all 1)")
    p.add_argument("--coords", required=True, type=signed_list, help="tensor coordinates c,w[,h[,d]],n")
    p.add_argument("--offsets", type=signed_list, default=None,
                   help="im2col offsets, one per spatial dimension, W first (im2col mode; default 0)")
    p.add_argument("--w-halo", type=signed, default=0, help="wHalo (w modes)")
    p.add_argument("--w-offset", type=signed, default=0, help="wOffset (w modes)")
    p.add_argument("--elem-bytes", required=True, type=signed, help="element size in bytes: 1, 2, 4, 8")
    p.add_argument("--swizzle", required=True,
                   help="NONE 32B 64B 96B 128B 128B_ATOM_32B 128B_ATOM_32B_FLIP_8B 128B_ATOM_64B")
    p.add_argument("--smem-address", required=True, type=signed, help="destination byte address")
    p.add_argument("--interleave", default="NONE", help="NONE (default), 16B, 32B")
    p.add_argument("--oob-fill", default="zero", choices=tuple(im2col.OOB_FILLS),
                   help="zero (default) or nan (OOB-NaN)")
    add_json(p)
    p.set_defaults(run=lambda args: cmd_im2col(args, emit))
