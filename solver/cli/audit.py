"""`layoutproof audit FILE.ptx`: does every element each MMA reads come from the TMA load made for it?
(docs/CLI.md `audit`; the checks: solver/kernel/audit)."""
from __future__ import annotations

from spec.rule import SpecError

from solver.cli import render
from solver.cli.args import EXIT_OK, EXIT_VIOLATION, add_command, read_json_document
from solver.cli.ptx import add_input, read_input
from solver.kernel import audit as kernel_audit


def tensormap_documents(assignments: list) -> dict:
    """--tensormap PARAM[+OFFSET]=DOC (repeatable) -> {PARAM[+OFFSET]: the document read from DOC}."""
    documents = {}
    for text in assignments or []:
        key, sep, path = text.partition("=")
        if not sep or not key.strip() or not path.strip():
            raise SpecError("tensormap", text, "expected PARAM[+OFFSET]=DOC (DOC: a tensor-map JSON file, as "
                            "`tma check --params` reads it)", kernel_audit.RULE)
        kernel_audit.parse_tensormap_key(key)
        if key.strip() in documents:
            raise SpecError("tensormap", key, "given twice", kernel_audit.RULE)
        documents[key.strip()] = read_json_document(path.strip(), "tensormap", kernel_audit.RULE)
    return documents


def run_audit(args) -> int:
    documents = tensormap_documents(args.tensormap)
    text, launch = read_input(args)
    report = kernel_audit.audit(text, documents, launch.params, launch, args.kernel, args.smem_base, args.max_steps)
    document = report.document()
    render.emit(args, document, lambda: render.audit_text(document))
    return EXIT_OK if report.ok else EXIT_VIOLATION


def register(commands) -> None:
    p = add_command(
        commands, "audit", run_audit,
        help="does every element each MMA reads come from the TMA load made for it? (PTX + tensor maps)",
        description="Run one CTA of the kernel over every iteration, recover each TMA load, its barrier phase "
                    "and its box, and prove that every element an MMA reads was written by a load its warp "
                    "waited for, with the descriptor's swizzle, the same global k for A and B, and "
                    "expect_tx equal to the bytes delivered. Exit 0 when every property is proved, 1 when one "
                    "is refuted or unknown, 2 for malformed input.",
        epilog="example: layoutproof audit examples/audit/tma_gemm_sm90.ptx --tensormap 0=examples/audit/a.json "
               "--tensormap 1=examples/audit/b.json --param tma_gemm_param_2=256")
    add_input(p)
    p.add_argument("--tensormap", action="append", default=[], metavar="PARAM[+OFFSET]=DOC",
                   help="the tensor map a .param holds (PARAM: its name or index from 0; +OFFSET: bytes into it, "
                        "for a map inside a struct); DOC: a JSON file as `tma check --params` reads it (repeatable)")
