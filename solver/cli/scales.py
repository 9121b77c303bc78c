"""`layoutproof scales map | check`: block-scaled MMA scale factors (docs/CLI.md `scales`; spec/scales).

`scales map` says where a writer layout puts the scale of each (row, K block); `scales check` follows every
scale through the reader CUTLASS and Triton emit (bytes to shared memory unchanged, one
tcgen05.cp.32x128b.warpx4 per 128 x 4 chunk, the scale-factor id per k-step) and names the first element
that gets another scale than the writer meant."""
from __future__ import annotations

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, add_command, add_group, add_optional_arch, add_picture,
                             add_smem_address, signed_number)


def run_map(args) -> int:
    from spec.scales import layouts
    found = layouts.scale_map(args.sf_layout, args.rows, args.k, args.block)
    pictures.save(args, "scales_map", found)
    render.emit(args, found.as_json(), lambda: render.scales_map_text(found))
    return EXIT_OK


def run_check(args) -> int:
    from spec.scales import path
    found = path.check(args.sf_layout, args.kind, args.scale_vec, args.rows, args.k, args.copy)
    render.emit(args, found.as_json(), lambda: render.scales_check_text(found))
    return EXIT_OK if found.ok else EXIT_VIOLATION


def run_plan(args) -> int:
    from solver.synth import scales_plan
    request = scales_plan.make_request(args.kind, args.m, args.n, args.k, args.sf_layout, args.block,
                                       args.scale_vec, args.scale_type, args.cta_group, args.smem_address)
    found = scales_plan.plan(request)
    render.emit(args, found.as_json(), lambda: render.scales_plan_text(found))
    return EXIT_OK if found.found else EXIT_VIOLATION


SCALES_ARCH_HELP = "sm100 or sm103 (block-scaled tcgen05.mma exists on no other GPU)"


def _add_matrix(p) -> None:
    """The scale matrix of `map` and `check`: the writer's layout, its rows and K."""
    from spec.scales import layouts
    p.add_argument("--sf-layout", required=True, choices=layouts.LAYOUTS, help="the writer's layout")
    p.add_argument("--mn", "--rows", dest="rows", required=True, type=signed_number,
                   help="M (rows of A) or N (columns of B): one scale row each")
    p.add_argument("--k", required=True, type=signed_number, help="K, in elements")


def register(commands) -> None:
    """Add `scales map`, `scales check` and `scales plan` to the argparse subparsers object `commands`."""
    from spec.scales import layouts, vectors
    group = add_group(commands, "scales", summary("scales"))
    p = add_command(group, "map", run_map, help="where a writer layout puts each scale (row, K block)",
                    description="The position, in scale elements, of the scale of each row and K block for a writer "
                                "layout: interleaved (cuBLAS's 128 x 4 blocks, CUTLASS's and Triton's), linear-k "
                                "or linear-mn. Example: layoutproof scales map --sf-layout interleaved --mn 128 "
                                "--k 256 --sf-block 16")
    _add_matrix(p)
    p.add_argument("--sf-block", "--block", dest="block", required=True, type=signed_number,
                   help="elements of K one scale covers (16, 32)")
    add_optional_arch(p, SCALES_ARCH_HELP, tcgen05_only=True)
    add_picture(p)               # rows x K blocks, each scale's position coloured by its 16-byte chunk
    p = add_command(group, "check", run_check,
                    help="a writer layout against the reader CUTLASS and Triton emit",
                    description="Follows every scale from the writer's layout through shared memory, "
                                "tcgen05.cp.32x128b.warpx4 and the scale-factor ids to the element the MMA "
                                "applies it to; exit 1 names the first element that gets another scale. "
                                "Example: layoutproof scales check --sf-layout linear-k --kind mxf4nvf4 "
                                "--scale-vec block16 --mn 128 --k 512")
    p.add_argument("--kind", required=True, choices=vectors.KINDS, help="the block-scaled MMA kind")
    p.add_argument("--scale-vec", default=None,
                   help="1X, 2X, 4X, block16 or block32 (default: the kind's, when it has one)")
    _add_matrix(p)
    p.add_argument("--copy", default="32x128b.warpx4",
                   help="the tcgen05.cp form the reader copies each chunk with (default 32x128b.warpx4, what "
                        "CUTLASS and Triton emit; e.g. 128x128b, 64x128b.warpx2::02_13 to see what another does)")
    add_optional_arch(p, SCALES_ARCH_HELP, tcgen05_only=True)
    p = add_command(group, "plan", run_plan,
                    help="the scale loads, tcgen05.cp copies and scale-factor ids of one block-scaled tile",
                    description="Plans how a block-scaled tcgen05.mma tile gets its scales: one TMA load per "
                                "operand, one tcgen05.cp.32x128b.warpx4 per 128 x 4 chunk with its descriptor "
                                "and tensor-memory column, and each k-step's scale columns, scale-factor ids and "
                                "instruction descriptor, checked by the executable specification; exit 1 names "
                                "the rules that exclude any plan. Example: layoutproof scales plan --kind "
                                "mxf4nvf4 --m 128 --n 256 --k 256 --sf-block 16")
    p.add_argument("--kind", required=True, choices=vectors.KINDS, help="the block-scaled MMA kind")
    p.add_argument("--m", required=True, type=signed_number, help="M of the MMA (128; 256 with --cta-group 2)")
    p.add_argument("--n", required=True, type=signed_number, help="N of the MMA")
    p.add_argument("--k", required=True, type=signed_number, help="the tile's K, in elements")
    p.add_argument("--sf-block", "--block", dest="block", type=signed_number, default=None,
                   help="elements of K one scale covers: 16 or 32")
    p.add_argument("--scale-vec", default=None, help="1X, 2X, 4X, block16 or block32 (instead of --sf-block)")
    p.add_argument("--scale-type", default=None, choices=tuple(vectors.SCALE_TYPE_BIT),
                   help="ue8m0 or ue4m3 (default: ue4m3 for 4X, ue8m0 otherwise)")
    p.add_argument("--sf-layout", default="interleaved", choices=layouts.LAYOUTS,
                   help="the layout the quantizer wrote the scales in (default interleaved)")
    p.add_argument("--cta-group", type=signed_number, default=1, help="1 or 2 (default 1)")
    add_smem_address(p, "shared-memory byte address of A's scales, a multiple of 128 (default 0)", required=False,
                     default=0, type=signed_number)
    add_optional_arch(p, SCALES_ARCH_HELP, tcgen05_only=True)
