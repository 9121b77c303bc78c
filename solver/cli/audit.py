"""`layoutproof audit FILE.ptx | DIR ...`: does every element each MMA reads come from the TMA load made for
it? (docs/CLI.md `audit`; the checks: solver/kernel/audit; many files: solver/kernel/audit/batch.py)."""
from __future__ import annotations

import os
import sys

from spec.rule import SpecError

from solver.cli.catalogue import summary
from solver.cli import render
from solver.cli.args import EXIT_OK, EXIT_VIOLATION, add_command, job_count
from solver.cli.ptx import add_input, launch_shape, tensormap_documents, triton_meta_document
from solver.kernel import analysis as ptx_analysis
from solver.kernel import audit as kernel_audit
from solver.kernel.audit import batch
from solver.kernel.concrete import executor


def _options(args) -> dict:
    if not 1 <= args.max_steps <= executor.MAX_STEPS_PER_WARP * 8:
        raise SpecError("max_steps", args.max_steps, f"1 to {executor.MAX_STEPS_PER_WARP * 8} statements per warp",
                        kernel_audit.RULE)
    shape = lambda name, least: (lambda v: list(v) if v else None)(launch_shape(args, name, least))
    meta = triton_meta_document(args.triton_meta, kernel_audit.RULE)
    return {"tensormaps": tensormap_documents(args.tensormap, kernel_audit.RULE),
            "params": ptx_analysis.parse_params(args.param),
            "tensordesc_meta": meta,
            "kernel": args.kernel, "grid": shape("grid", 1), "block": shape("block", 1), "cta": shape("cta", 0),
            "cluster": shape("cluster", 1), "smem_base": args.smem_base, "max_steps": args.max_steps}


def _mapper(args, count: int):
    from solver.fuzz import campaign
    if args.scheduler is not None:
        try:
            return campaign.dask_mapper(campaign.connect(args.scheduler))
        except (ImportError, ValueError, OSError) as error:
            raise SpecError("scheduler", args.scheduler, " ".join(str(error).split())[:200],
                            kernel_audit.RULE) from None
    if args.jobs > 1 and count > 1:
        return campaign.process_mapper(min(args.jobs, count))
    return None


def run_audit(args) -> int:
    if args.jobs > 1 and args.scheduler is not None:
        raise SpecError("jobs", args.jobs, "--jobs and --scheduler exclude each other", kernel_audit.RULE)
    options = _options(args)
    if "-" in args.file and (len(args.file) > 1 or sys.stdin is None or sys.stdin.closed):
        raise SpecError("file", "-", "standard input, alone and open", kernel_audit.RULE)
    files = batch.files_of(args.file)
    jobs = [batch.job(path, options) for path in files]        # (a malformed sidecar: exit 2 before any work)
    if len(args.file) == 1 and not os.path.isdir(args.file[0]):
        report = batch.audit_report(jobs[0])
        document = report.document()
        render.emit(args, document, lambda: render.audit_text(document))
        return EXIT_OK if report.ok else EXIT_VIOLATION
    results = []
    for result in batch.run(jobs, _mapper(args, len(jobs))):
        results.append(result)
        if not args.json:                                     # a line per kernel as each file is done
            sys.stdout.write(render.audit_file_lines(result) + "\n")
            sys.stdout.flush()
    summary = batch.summary(results)
    ok = summary["not_ok"] == 0 and summary["errors"] == 0 and summary["kernels"] > 0
    if args.json:
        render.emit(args, {"ok": ok, "files": results, "summary": summary,
                           "assumptions": [dict(a) for a in kernel_audit.ASSUMPTIONS]}, "")
    else:
        sys.stdout.write(render.audit_summary(summary) + "\n")
    return EXIT_OK if ok else EXIT_VIOLATION


def register(commands) -> None:
    p = add_command(
        commands, "audit", run_audit,
        help=summary("audit"),
        description="Run one CTA of the kernel over every iteration, recover each TMA load, its barrier phase "
                    "and its box, and prove that every element an MMA reads was written by a load its warp "
                    "waited for, with the descriptor's swizzle, the same global k for A and B, one output tile "
                    "per accumulation, each k once, and expect_tx equal to the bytes delivered. Several files or "
                    "a folder: one line per kernel and a summary; each FILE.ptx may have a sidecar "
                    "FILE.audit.json with its maps and launch. Exit 0 when every property is proved, 1 when one "
                    "is refuted or unknown (or a file cannot be read), 2 for malformed input.",
        epilog="example: layoutproof audit examples/audit/triton_tma_gemm_sm90.ptx "
               "--tensormap 0=examples/audit/triton_tma_gemm_a.json --tensormap 5=examples/audit/triton_tma_gemm_b.json "
               "--tensormap 10=examples/audit/triton_tma_gemm_c.json --param matmul_kernel_tma_param_15=512 "
               "--param matmul_kernel_tma_param_16=512 --param matmul_kernel_tma_param_17=256")
    add_input(p, many=True)
    p.add_argument("--jobs", type=job_count, default=1, help="audit the files in N local processes (same output)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="audit the files on a Dask distributed cluster (tcp://host:8786, or 'local'; "
                        "pip install 'layoutproof[distributed]'); same output")


