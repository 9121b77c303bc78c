"""`layoutproof scales map | check`: block-scaled MMA scale factors (docs/CLI.md `scales`; spec/scales).

`scales map` says where a writer layout puts the scale of each (row, K block); `scales check` follows every
scale through the reader CUTLASS and Triton emit (bytes to shared memory unchanged, one
tcgen05.cp.32x128b.warpx4 per 128 x 4 chunk, the scale-factor id per k-step) and names the first element
that gets another scale than the writer meant."""
from __future__ import annotations

from solver.cli import render
from solver.cli.args import EXIT_OK, EXIT_VIOLATION, add_command, add_group, signed_number


def run_map(args) -> int:
    from spec.scales import layouts
    found = layouts.scale_map(args.sf_layout, args.rows, args.k, args.block)
    render.emit(args, found.as_json(), lambda: render.scales_map_text(found))
    return EXIT_OK


def run_check(args) -> int:
    from spec.scales import path
    found = path.check(args.sf_layout, args.kind, args.scale_vec, args.rows, args.k)
    render.emit(args, found.as_json(), lambda: render.scales_check_text(found))
    return EXIT_OK if found.ok else EXIT_VIOLATION


def register(commands) -> None:
    """Add `scales map` and `scales check` to the argparse subparsers object `commands`."""
    from spec.scales import layouts, vectors
    group = add_group(commands, "scales", "block-scaled MMA scale factors: writer layouts and the tensor-memory path")
    p = add_command(group, "map", run_map, help="where a writer layout puts each scale (row, K block)",
                    description="The position, in scale elements, of the scale of each row and K block for a writer "
                                "layout: interleaved (cuBLAS's 128 x 4 blocks, CUTLASS's and Triton's), linear-k "
                                "or linear-mn. Example: layoutproof scales map --sf-layout interleaved --rows 128 "
                                "--k 256 --block 16")
    p.add_argument("--sf-layout", required=True, choices=layouts.LAYOUTS, help="the writer's layout")
    p.add_argument("--rows", required=True, type=signed_number, help="rows of A (or columns of B)")
    p.add_argument("--k", required=True, type=signed_number, help="K, in elements")
    p.add_argument("--block", required=True, type=signed_number, help="elements of K one scale covers (16, 32)")
    p = add_command(group, "check", run_check,
                    help="a writer layout against the reader CUTLASS and Triton emit",
                    description="Follows every scale from the writer's layout through shared memory, "
                                "tcgen05.cp.32x128b.warpx4 and the scale-factor ids to the element the MMA "
                                "applies it to; exit 1 names the first element that gets another scale. "
                                "Example: layoutproof scales check --sf-layout linear-k --kind mxf4nvf4 "
                                "--scale-vec block16 --rows 128 --k 512")
    p.add_argument("--sf-layout", required=True, choices=layouts.LAYOUTS, help="the writer's layout")
    p.add_argument("--kind", required=True, choices=vectors.KINDS, help="the block-scaled MMA kind")
    p.add_argument("--scale-vec", default=None,
                   help="1X, 2X, 4X, block16 or block32 (default: the kind's, when it has one)")
    p.add_argument("--rows", required=True, type=signed_number, help="rows of A (or columns of B)")
    p.add_argument("--k", required=True, type=signed_number, help="K, in elements")
