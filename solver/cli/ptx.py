"""`layoutproof ptx descriptors | check`: the descriptors a kernel's PTX feeds its MMAs (docs/CLI.md `ptx`)."""
from __future__ import annotations

import sys

from spec.rule import SpecError

from solver.cli.catalogue import summary
from solver.cli import render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, add_command, add_group, add_smem_address, exit_status, layout_text, number,
                             number_list, read_json_document)
from solver.shell import job_count
from solver.kernel import analysis as ptx_analysis
from solver.kernel import check as ptx_check
from solver.kernel import iterations, mma
from solver.kernel.concrete import executor
from solver.kernel.frontend import source
from solver.kernel.symbolic import evaluate


def launch_shape(args, name: str, least: int) -> tuple:
    value = getattr(args, name)
    if value is None:
        return None
    if not 1 <= len(value) <= 3 or any(v < least for v in value):
        raise SpecError(name, ",".join(map(str, value)), f"X[,Y[,Z]] with every extent at least {least}",
                        source.RULE)
    return tuple(value) + (1 if least else 0,) * (3 - len(value))


def read_input(args) -> tuple:
    """(the PTX text, the launch) of the options add_input adds, checked before any work."""
    if args.file == "-" and (sys.stdin is None or sys.stdin.closed):
        raise SpecError("ptx", "-", "standard input is closed", source.RULE)
    if not 1 <= args.max_steps <= executor.MAX_STEPS_PER_WARP * 8:
        raise SpecError("max_steps", args.max_steps, f"1 to {executor.MAX_STEPS_PER_WARP * 8} statements per warp",
                        source.RULE)
    text = source.read_text(args.file)
    params = ptx_analysis.parse_params(args.param)
    launch = executor.Launch(params=params, block=launch_shape(args, "block", 1),
                             cta=launch_shape(args, "cta", 0) or (0, 0, 0), grid=launch_shape(args, "grid", 1),
                             cluster=launch_shape(args, "cluster", 1))
    if launch.grid and any(c >= g for c, g in zip(launch.cta, launch.grid)):
        raise SpecError("cta", ",".join(map(str, launch.cta)), "a CTA inside the grid (--grid)", source.RULE)
    return text, launch


def _analyse(args) -> ptx_analysis.Analysis:
    """The analysis `ptx descriptors` and `ptx check` read; a map given with --tensormap bounds what each TMA
    load through its parameter writes (the executor's extent: memory.py)."""
    from solver.kernel import audit as kernel_audit
    from solver.kernel.audit import triton
    documents = tensormap_documents(args.tensormap, source.RULE)
    meta = triton_meta_document(args.triton_meta, source.RULE)
    text, launch = read_input(args)
    if meta is not None:
        documents = {**triton.tensormaps(text, meta, launch.params, args.kernel), **documents}
    given = kernel_audit.given_maps(documents)
    result = ptx_analysis.analyse(text, args.smem_base, args.kernel, launch.params, launch, args.max_steps,
                                  extent=kernel_audit.map_extent_of(given) if given else None, jobs=args.jobs)
    kernel_audit.check_map_names(given, [f for f in result.module.functions if f.name in result.functions],
                                 "functions read", source.RULE)
    return result


def descriptors_document(result: ptx_analysis.Analysis, with_addresses: bool = True) -> dict:
    budget = mma.Budget()
    whole = {name: isinstance(run, executor.Run) and run.incomplete() is None for name, run in result.runs.items()}
    sites = [mma.site_document(site, budget, with_addresses, result.iterations.get((site.function, site.line)),
                               result.any_launch.get((site.function, site.line)), whole.get(site.function, False))
             for site in result.sites]
    runs = {name: ({"block": None, "roles": [], "not_run": run} if isinstance(run, str) else
                   {"block": list(run.block), "roles": iterations.warp_roles(run), "not_run": None})
            for name, run in result.runs.items()}
    return {"smem_base": result.smem_base, "functions": result.functions, "shared": result.shared,
            "launch": iterations.launch_document(result.launch, None), "runs": runs, "sites": sites,
            "others": result.others, "unread": result.unread}


def run_descriptors(args) -> int:
    result = _analyse(args)
    document = descriptors_document(result, with_addresses=args.full or args.json)
    text = render.ptx_sites_text if args.full else render.ptx_sites_summary
    render.emit(args, document, lambda: text(document))
    sites = document["sites"]
    # an MMA statement not read is not known to be right: exit 1, as for a broken rule
    return exit_status([v for s in sites for v in s["violations"]]) or (EXIT_VIOLATION if result.unread else EXIT_OK)


def run_check(args) -> int:
    intended = [ptx_check.parse_intended(text) for text in args.layout]
    labels = [i.label for i in intended]
    if len(set(labels)) != len(labels):
        twice = max(labels, key=labels.count)
        raise SpecError("layout", twice, f"tile {twice} is named by two --layout options (name each tile of one "
                        "operand: A:NAME=...)")
    result = _analyse(args)
    document = ptx_check.check(result, intended)
    render.emit(args, document, lambda: render.ptx_check_text(document))
    clean = all(document["summary"][status] == 0 for status in ("mismatch", "unknown", "unread"))
    return EXIT_OK if clean else EXIT_VIOLATION


def tensormap_documents(assignments: list, rule: str) -> dict:
    """--tensormap PARAM[+OFFSET]=DOC (repeatable) -> {PARAM[+OFFSET]: the document read from DOC}."""
    from solver.kernel import audit as kernel_audit
    documents = {}
    for text in assignments or []:
        key, sep, path = text.partition("=")
        if not sep or not key.strip() or not path.strip():
            raise SpecError("tensormap", text, "expected PARAM[+OFFSET]=DOC (DOC: a tensor-map JSON file, as "
                            "`tma check --tensormap` reads it)", rule)
        kernel_audit.parse_tensormap_key(key)
        if key.strip() in documents:
            raise SpecError("tensormap", key, "given twice", rule)
        documents[key.strip()] = read_json_document(path.strip(), "tensormap", rule)
    return documents


def triton_meta_document(path, rule: str):
    """--triton-meta FILE -> Triton's tensordesc_meta (a list), or None where not given."""
    if path is None:
        return None
    meta = read_json_document(path, "triton_meta", rule)
    meta = meta.get("tensordesc_meta") if isinstance(meta, dict) else meta
    if not isinstance(meta, list):
        raise SpecError("triton_meta", path, "expected Triton's tensordesc_meta: a list, or an object with the key "
                        "tensordesc_meta", rule)
    return meta


def add_input(p, many: bool = False) -> None:
    if many:
        p.add_argument("file", metavar="FILE", nargs="+",
                       help="PTX files or folders of them ('-': standard input)")
    else:
        p.add_argument("file", metavar="FILE", help="the PTX file ('-': standard input)")
    add_smem_address(p, dest="smem_base", aliases=("--smem-base",), required=False,
                     default=evaluate.DEFAULT_SMEM_BASE, help=f"shared address of the first shared symbol (default {evaluate.DEFAULT_SMEM_BASE:#x}, "
                        "the dynamic shared-memory base the H100 harness saw)")
    p.add_argument("--kernel", default=None, help="evaluate only this .entry / .func")
    p.add_argument("--param", action="append", default=[], metavar="NAME=N",
                   help="the value ld.param of NAME reads (repeatable; otherwise unknown)")
    p.add_argument("--block", type=number_list, default=None, metavar="X[,Y,Z]",
                   help="threads per CTA (default: the kernel's .reqntid or .maxntid)")
    p.add_argument("--cta", "--ctaid", dest="cta", type=number_list, default=None, metavar="X[,Y,Z]",
                   help="the CTA whose warps are run over every iteration (default 0,0,0)")
    p.add_argument("--grid", type=number_list, default=None, metavar="X[,Y,Z]",
                   help="CTAs in the grid (%%nctaid; otherwise unknown)")
    p.add_argument("--cluster", type=number_list, default=None, metavar="X[,Y,Z]",
                   help="CTAs per cluster (%%cluster_ctarank and the like; otherwise unknown)")
    p.add_argument("--max-steps", type=number, default=executor.MAX_STEPS_PER_WARP, metavar="N",
                   help=f"statements one warp may execute (default {executor.MAX_STEPS_PER_WARP})")
    p.add_argument("--tensormap", action="append", default=[], metavar="PARAM[+OFFSET]=DOC",
                   help="the tensor map a .param holds (PARAM: its name or index from 0; +OFFSET: bytes into it, "
                        "for a map inside a struct); DOC: a JSON file as `tma check --tensormap` reads it (repeatable"
                        + ("; over a sidecar's" if many else "") + "). A TMA load through it writes its box, no more")
    p.add_argument("--triton-meta", metavar="FILE", default=None,
                   help="a Triton kernel's metadata.tensordesc_meta as JSON: its host maps are built from it and the "
                        "descriptors' shape and stride --param values (under those --tensormap gives)")
    if not many:
        p.add_argument("--jobs", type=job_count, default=1, metavar="N",
                       help="evaluate the file's functions in N local processes (same output)")


def register(commands) -> None:
    group = add_group(commands, "ptx", help=summary("ptx"))
    descriptors = add_command(
        group, "descriptors", run_descriptors,
        help="every wgmma.mma_async / tcgen05.mma with its decoded descriptors and read maps",
        description="Run the kernel for each warp of one CTA over every iteration, and evaluate each "
                    "MMA's descriptors; one line per site (--full: decoded fields and read maps). Exit 1 when a "
                    "descriptor breaks a rule or a site statement is not read.",
        epilog="example: layoutproof ptx descriptors tests/fixtures/ptx/triton_wgmma_loop.ptx --param "
               "wgmma_loop_kernel_param_3=4")
    add_input(descriptors)
    descriptors.add_argument("--full", action="store_true",
                             help="each site in full: decoded fields, instruction descriptor, read maps")
    checked = add_command(
        group, "check", run_check,
        help="does each MMA read the tile its author meant?",
        description="Check each MMA's operand descriptors against the tile layout named with --layout. Exit 0 "
                    "when every one reads it, 1 on a mismatch or a descriptor that cannot be evaluated.",
        epilog="example: layoutproof ptx check tests/fixtures/ptx/triton_wgmma_f16_sw128.ptx --layout "
               "'A=recipe(sm90,f16,K,64,64,128B)' --layout 'B=nvmma(128,16,64,64,MN)'")
    add_input(checked)
    checked.add_argument("--layout", action="append", required=True, type=layout_text,
                         metavar="OPERAND[:NAME]=LAYOUT[@ADDRESS[+STAGES*STRIDE]]",
                         help="A=<CuTe layout> or B=<CuTe layout>, the whole tile (mn, k) -> element offset, or "
                              "nvmma(W,BITS,MN,K,K|MN) (Triton's NVMMASharedLayout), or "
                              "recipe(ARCH,DTYPE,K|MN,MN,K,SWIZZLE) (the recipe command's tile); "
                              "@ADDRESS: the tile's address (default: the first MMA's start address); "
                              "+STAGES*STRIDE: one tile per pipeline stage; :NAME: one of several tiles of an "
                              "operand (repeatable)")
