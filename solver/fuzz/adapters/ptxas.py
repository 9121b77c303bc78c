"""ptxas as the oracle of `layoutproof fuzz --against CMD`: does the case's kernel assemble?

Run as `python -m solver.fuzz.adapters.ptxas [--ptxas PATH]`.

Protocol (fixed):
  * The adapter is started once and serves every record it is sent (`fuzz --against CMD --jobs N` starts N
    of it, `--scheduler` one per worker thread, each sent the cases of its chunks), answering each line
    before it reads the next.
  * stdin: fuzz records, one JSON object per line (the `jsonl` output of `layoutproof fuzz`).
    Blank lines are skipped.
  * stdout: exactly one JSON line per record, in input order, flushed after each:
        {"verdict": "accept" | "refuse", "detail": "<one line>"}
    "accept": ptxas assembled the case's kernel; detail is "assembled".
    "refuse": ptxas refused it; detail is ptxas's first error, without the file name or line.
    A record whose target is none of "desc", "tmem" and "tmem-alloc" gets {"verdict": null, "detail":
    "not a desc, tmem or tmem-alloc case"}; a line that is not a JSON object, or a record that cannot be
    rendered, gets {"verdict": null, "detail": "<why>"}.
  * Exit status 0 at end of input; 2 if ptxas cannot be found.

For each desc record the adapter renders the case's kernel with solver.fuzz.formats.ptx.render_case (one
MMA reading the case's descriptor as B: wgmma on sm90, tcgen05.mma on sm100/sm103), for each tmem record
with solver.fuzz.formats.tmem_ptx.render_case (the case's one tcgen05 instruction in a kernel that
allocates tensor memory), for each tmem-alloc record with solver.fuzz.formats.tmem_alloc_ptx.render_case
(the case's allocation operations, each by its warp; ptxas refuses a function that mixes .cta_group::1
and ::2, and its detail then keeps the "ptxas error :" prefix: that error names no line), and runs
`ptxas -arch=<target>` on it in a temporary directory. What ptxas can refuse is only
what the instruction spells statically (type names, shape, transpose operands, kind, target); the
descriptor words are run-time values it does not inspect (see solver/fuzz/formats/ptx.py).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Optional

from solver.fuzz.adapters import protocol
from solver.fuzz.formats import ptx as fuzz_ptx
from solver.fuzz.formats import tmem_alloc_ptx, tmem_ptx

PTXAS_TIMEOUT_S = 120
_LOCATION = re.compile(r"^ptxas\s+[^,]*,\s*line\s+\d+;\s*")
_ERROR_PREFIX = re.compile(r"^error\s*:\s*")


def find_ptxas(path: Optional[str] = None) -> Optional[str]:
    """The ptxas to run: PATH if given (a file or a name on $PATH), else `ptxas` on $PATH."""
    candidate = path or "ptxas"
    if os.sep in candidate:
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which(candidate)


def first_error(stderr: str) -> str:
    """ptxas's first error as one line, without the file name, line number and 'error :', e.g.
    "Arguments mismatch for instruction 'wgmma.mma_async with FP8 types'". With no error line, the
    first fatal line ("ptxas fatal : ...")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    chosen = next((line for line in lines if "error" in line and "fatal" not in line), None)
    chosen = chosen or next((line for line in lines if "fatal" in line), None)
    chosen = chosen or (lines[0] if lines else "ptxas failed with no message")
    return " ".join(_ERROR_PREFIX.sub("", _LOCATION.sub("", chosen)).split())


def assemble(target: str, ptx_text: str, ptxas: str = "ptxas") -> tuple:
    """(accepted, detail): run `ptxas -arch=TARGET` on the text in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="layoutproof-ptxas-") as work:
        source = os.path.join(work, "case.ptx")
        with open(source, "w") as handle:
            handle.write(ptx_text)
        try:
            result = subprocess.run([ptxas, f"-arch={target}", source, "-o",
                                     os.path.join(work, "case.cubin")],
                                    capture_output=True, text=True, timeout=PTXAS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False, f"ptxas timed out after {PTXAS_TIMEOUT_S} s"
    if result.returncode == 0:
        return True, "assembled"
    return False, first_error(result.stderr + result.stdout)


def ptxas_version(ptxas: str = "ptxas") -> str:
    """The release and build lines of `ptxas --version`, joined: 'Cuda compilation tools, release
    13.0, V13.0.88; Build cuda_13.0.r13.0/compiler.36424714_0'."""
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return "; ".join(line for line in lines if line.startswith(("Cuda", "Build"))) or " ".join(lines)


def verdict(record, ptxas: str = "ptxas") -> dict:
    """The adapter's answer to one record."""
    if not isinstance(record, dict):
        return {"verdict": None, "detail": "not a JSON object"}
    renderers = {"desc": fuzz_ptx.render_case, "tmem": tmem_ptx.render_case,
                 "tmem-alloc": tmem_alloc_ptx.render_case}
    if record.get("target") not in renderers:
        return {"verdict": None, "detail": "not a desc, tmem or tmem-alloc case"}
    try:
        target, text = renderers[record["target"]](record)
    except Exception as error:   # a malformed record must not stop the stream
        return {"verdict": None, "detail": " ".join(f"cannot render the case: {error}".split())}
    accepted, detail = assemble(target, text, ptxas)
    return {"verdict": "accept" if accepted else "refuse", "detail": detail}


def serve(lines, write, ptxas: str = "ptxas") -> int:
    """The stdin/stdout loop: one answer per non-blank input line, in order."""
    return protocol.serve(lines, write, lambda record: verdict(record, ptxas))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.fuzz.adapters.ptxas",
                                     description="ptxas oracle for layoutproof fuzz --against")
    parser.add_argument("--ptxas", default=None, help="the ptxas binary (default: ptxas on PATH)")
    args = parser.parse_args(argv)
    ptxas = find_ptxas(args.ptxas)
    if ptxas is None:
        print(f"ptxas: not found ({args.ptxas or 'ptxas on PATH'})", file=sys.stderr)
        return 2

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    serve(iter(sys.stdin.readline, ""), write, ptxas)   # answers each line as it arrives
    return 0


if __name__ == "__main__":
    sys.exit(main())
