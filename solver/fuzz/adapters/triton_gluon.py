"""Triton (Gluon) as the oracle of `layoutproof fuzz --against`, and its campaign runner.

    python -m solver.fuzz.adapters.triton_gluon              # serve the line protocol on stdin/stdout
    python -m solver.fuzz.adapters.triton_gluon campaign --arch sm90 --count 2000 --jobs 2 --out FILE

Run it with a Python that has triton (its own virtual environment, e.g. /work/venvs/triton, with this
repository on PYTHONPATH); the core never imports triton, and only `compile_case` does.

Protocol (driver_encode.py's, fixed): one JSON record per input line ({"target", "case", ...}: a line of
`layoutproof fuzz`, or just {"target": "triton-nvmma", "case": {...}}), exactly one JSON answer per
record, in order, flushed:

    {"verdict": "accept" | "refuse" | null, "detail": "<one line>", "triton": "<version>",
     "layout": {"A": {"offset_bases": [[r, c], ...], "alignment": n}, "B": {...}},
     "descriptor": {"smem_base": 0, "mmas": [{"instruction": "wgmma", "shape": [m, n, k], "a": word,
                    "b": word, "trans_a": 0|1, "trans_b": 0|1} | {"instruction": "tcgen05", "a", "b",
                    "idesc", "cta_group", "kind"}, ...]}}

  * The case is a `triton-nvmma` case (solver/fuzz/compilers/triton.py: arch, dtype, operand, shape,
    swizzle_byte_width, element_bitwidth, transposed): Triton's own layout parameters, not the `desc`
    target's descriptor-and-tile case. Records of any other target get {"verdict": null, "detail":
    "not a triton-nvmma case"}.
  * "accept": the kernel (both operands allocated in shared memory, one warpgroup_mma on sm90a /
    tcgen05_mma on sm100a, compiled to PTX with GPUTarget("cuda", 90|100, 32), no GPU) compiled;
    "layout" is to_linear_layout(NVMMASharedLayout, shape) of each tile (offset bit i -> (row, col)),
    "descriptor" the MMAs of the PTX with their descriptors evaluated at shared base 0.
  * "refuse": Triton raised while building or compiling; detail is its first line.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from typing import Optional

from solver.fuzz.adapters import protocol
from solver.fuzz.compilers import triton as judge

TARGET = "triton-nvmma"
TRITON_DTYPES = {"f16": "float16", "bf16": "bfloat16", "e4m3": "float8e4nv", "e5m2": "float8e5",
                 "f32": "float32", "s8": "int8"}


def _first_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    # MLIR diagnostics: keep the 'error:' line when there is one
    chosen = next((l for l in lines if "error:" in l), lines[0] if lines else type(error).__name__)
    return " ".join(chosen.split())[:400]


_KERNELS = {}


def _kernels():
    """The two Gluon kernels (built once per process)."""
    if _KERNELS:
        return _KERNELS
    from triton.experimental import gluon
    from triton.experimental.gluon import language as ttgl
    from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma
    from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                     tcgen05_mma)

    @gluon.jit
    def nvmma_sm90(out, M: ttgl.constexpr, N: ttgl.constexpr, K: ttgl.constexpr, KI: ttgl.constexpr,
                   dtype: ttgl.constexpr, acc_dtype: ttgl.constexpr,
                   a_layout: ttgl.constexpr, b_layout: ttgl.constexpr):
        a = ttgl.allocate_shared_memory(dtype, [M, K], a_layout)
        b = ttgl.allocate_shared_memory(dtype, [K, N], b_layout)
        acc_layout: ttgl.constexpr = ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                                 instr_shape=[16, N, KI])
        acc = ttgl.zeros([M, N], acc_dtype, acc_layout)
        acc = warpgroup_mma(a, b, acc)
        offs_m = ttgl.arange(0, M, layout=ttgl.SliceLayout(1, acc_layout))
        offs_n = ttgl.arange(0, N, layout=ttgl.SliceLayout(0, acc_layout))
        ttgl.store(out + offs_m[:, None] * N + offs_n[None, :], acc)

    @gluon.jit
    def nvmma_sm100(M: ttgl.constexpr, N: ttgl.constexpr, K: ttgl.constexpr, dtype: ttgl.constexpr,
                    acc_dtype: ttgl.constexpr, a_layout: ttgl.constexpr, b_layout: ttgl.constexpr):
        a = ttgl.allocate_shared_memory(dtype, [M, K], a_layout)
        b = ttgl.allocate_shared_memory(dtype, [K, N], b_layout)
        acc = allocate_tensor_memory(acc_dtype, [M, N], TensorMemoryLayout([M, N], col_stride=1))
        tcgen05_mma(a, b, acc, use_acc=False)

    _KERNELS.update(sm90=nvmma_sm90, sm100=nvmma_sm100, gluon=gluon, ttgl=ttgl)
    return _KERNELS


def triton_version() -> str:
    import triton
    return triton.__version__


def _linear_layout(ttgl, layout, shape) -> dict:
    from triton._C.libtriton import gluon_ir, ir
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx, "cuda:90")   # the layout does not depend on the target
    ll = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    return {"offset_bases": [list(b) for b in ll.offset_bases], "alignment": ll.alignment}


def layouts_of(case: dict):
    """(Gluon layouts {"A", "B"}, dtype) of a checked case."""
    k = _kernels()
    ttgl = k["ttgl"]
    dtype = getattr(ttgl, TRITON_DTYPES[case["dtype"]])
    shapes = judge.kernel_shapes(case)
    asked = ttgl.NVMMASharedLayout(swizzle_byte_width=case["swizzle_byte_width"],
                                   element_bitwidth=case["element_bitwidth"], rank=2,
                                   transposed=case["transposed"])
    other = "B" if case["operand"] == "A" else "A"
    # the other operand: Triton's default layout, K-major where the dtype cannot be MN-major (8- and
    # 32-bit types: wgmma transposes only f16/bf16; tcgen05 32-bit MN-major needs 128B_atom32B, which
    # NVMMASharedLayout does not have), so that the kernel's only question is the case's operand
    k_major = judge.DTYPES[case["dtype"]][0] != 16
    default = ttgl.NVMMASharedLayout.get_default_for(shapes[other], dtype, transposed=(other == "B" and k_major))
    return {case["operand"]: asked, other: default}, dtype


def compile_case(case: dict) -> dict:
    """The adapter's answer to one checked case (imports triton). MLIR writes its diagnostics to file
    descriptor 2: they are caught in a temporary file, and a refusal's detail is their first error line
    (else the exception's)."""
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.environ.get("LAYOUTPROOF_TRITON_STDERR")     # set by the campaign: read after a crash
    with (open(log, "w+b") if log else tempfile.TemporaryFile(mode="w+b")) as caught:
        os.dup2(caught.fileno(), 2)
        try:
            answer = _compile_case(case)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        if answer["verdict"] == "refuse":
            caught.seek(0)
            lines = caught.read().decode(errors="replace").splitlines()
            error = next((l for l in lines if "error:" in l or "Assertion" in l), None)
            if error:
                error = error.split("error:", 1)[-1] if "error:" in error else error.split(": ", 1)[-1]
                answer["detail"] = " ".join(error.split())[:400]
    return answer


def _compile_case(case: dict) -> dict:
    answer = {"verdict": None, "detail": "", "triton": triton_version()}
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        k = _kernels()
        ttgl, gluon = k["ttgl"], k["gluon"]
        layouts, dtype = layouts_of(case)
        shapes = judge.kernel_shapes(case)
        answer["layout"] = {w: _linear_layout(ttgl, layouts[w], shapes[w]) for w in ("A", "B")}
        M, K = shapes["A"]
        N = shapes["B"][1]
        acc = ttgl.int32 if case["dtype"] == "s8" else ttgl.float32
        if case["arch"] == "sm90":
            src = gluon._runtime.GluonASTSource(
                k["sm90"], signature={"out": "*i32" if case["dtype"] == "s8" else "*fp32", "M": "constexpr",
                                      "N": "constexpr", "K": "constexpr", "KI": "constexpr", "dtype": "constexpr",
                                      "acc_dtype": "constexpr", "a_layout": "constexpr", "b_layout": "constexpr"},
                constexprs={"M": M, "N": N, "K": K, "KI": judge.instruction_k(case["dtype"]), "dtype": dtype,
                            "acc_dtype": acc, "a_layout": layouts["A"], "b_layout": layouts["B"]})
            target = GPUTarget("cuda", 90, 32)
        else:
            src = gluon._runtime.GluonASTSource(
                k["sm100"], signature={n: "constexpr" for n in ("M", "N", "K", "dtype", "acc_dtype", "a_layout",
                                                                "b_layout")},
                constexprs={"M": M, "N": N, "K": K, "dtype": dtype, "acc_dtype": acc, "a_layout": layouts["A"],
                            "b_layout": layouts["B"]})
            target = GPUTarget("cuda", 100, 32)
        compiled = triton.compile(src, target=target)
        ptx = compiled.asm["ptx"]
    except BaseException as error:   # a refusal is any failure to build or compile the kernel
        if isinstance(error, KeyboardInterrupt):
            raise
        answer.update(verdict="refuse", detail=_first_line(error))
        return answer
    answer.update(verdict="accept", detail="compiled",
                  descriptor={"smem_base": 0, "mmas": judge.mma_descriptors(ptx)})
    return answer


def verdict(record, compile_fn=compile_case) -> dict:
    if not isinstance(record, dict) or not isinstance(record.get("case"), dict):
        return {"verdict": None, "detail": "no case object"}
    if record.get("target", TARGET) != TARGET:
        return {"verdict": None, "detail": "not a triton-nvmma case"}
    try:
        case = judge.check_case(record["case"])
    except Exception as error:
        return {"verdict": None, "detail": " ".join(f"malformed case: {error}".split())}
    return compile_fn(case)


def serve(lines, write, compile_fn=compile_case) -> int:
    """The stdin/stdout loop (solver.fuzz.adapters.protocol): one answer per non-blank input line."""
    return protocol.serve(lines, write, lambda record: verdict(record, compile_fn))


# --- Campaign ---------------------------------------------------------------------------------------
def case_key(case: dict) -> str:
    return hashlib.sha1(json.dumps(case, sort_keys=True).encode()).hexdigest()[:16]


def sample_cases(arch: str, count: int, seed: int = 0) -> list:
    """`count` distinct cases of Triton's parameters on `arch`: first the grid of every dtype x swizzle x
    transposed x operand at a small shape with element_bitwidth = the dtype's, then random draws over
    shapes (the operand's MN 8..256, K of 1 to 8 instruction steps), swizzles, element_bitwidth (one
    in five not the dtype's) and transposition."""
    rng = random.Random(f"{arch}-{seed}")
    seen, out = set(), []

    def add(case):
        key = case_key(case)
        if key not in seen:
            seen.add(key)
            out.append(case)

    m = judge.M_OF_ARCH[arch]
    for dtype in judge.DTYPES:
        for sw in judge.SWIZZLES:
            for transposed in (False, True):
                for operand in ("A", "B"):
                    kinst = judge.instruction_k(dtype)
                    shape = [m, 4 * kinst] if operand == "A" else [4 * kinst, 64]
                    add({"arch": arch, "dtype": dtype, "operand": operand, "shape": shape, "swizzle_byte_width": sw,
                         "element_bitwidth": judge.DTYPES[dtype][0], "transposed": transposed})
    while len(out) < count:
        dtype = rng.choice(list(judge.DTYPES))
        bits = judge.DTYPES[dtype][0]
        kinst = judge.instruction_k(dtype)
        operand = rng.choice(("A", "B"))
        k = kinst * rng.choice((1, 2, 4, 8))
        if operand == "A":
            shape = [m, k]
        else:
            shape = [k, rng.choice((8, 16, 24, 32, 48, 64, 96, 128, 256, 8 * rng.randint(1, 32)))]
        ebw = bits if rng.random() < 0.8 else rng.choice([b for b in (8, 16, 32) if b != bits])
        add({"arch": arch, "dtype": dtype, "operand": operand, "shape": shape,
             "swizzle_byte_width": rng.choice(tuple(judge.SWIZZLES)), "element_bitwidth": ebw,
             "transposed": rng.random() < 0.5})
    return out[:count]


def fuzz_cases(arch: str, count: int, seed: int = 0) -> list:
    """`count` cases from `layoutproof fuzz --target triton-nvmma` on `arch` (solver/fuzz/triton_nvmma.py:
    Z3-anchored and sampled), taken in turn from --valid and each rule broken alone (those with cases there)."""
    from solver.fuzz import engine
    from solver.fuzz import triton_nvmma
    asks = [frozenset()] + [frozenset({r}) for r in triton_nvmma.RULE_IDS]
    pools = [[rec["case"] for rec in engine.generate("triton-nvmma", arch, asked, count, seed)] for asked in asks]
    seen, out = set(), []
    for row in range(count):
        for pool in pools:
            if row < len(pool) and case_key(pool[row]) not in seen and len(out) < count:
                seen.add(case_key(pool[row]))
                out.append(pool[row])
    return out


class _Child:
    """One `python -m solver.fuzz.adapters.triton_gluon` serving the protocol; restarted when it dies (a
    compiler crash: an abort inside Triton's C++ ends the whole process)."""

    def __init__(self):
        import subprocess
        self._subprocess = subprocess
        self.proc = None

    def ask(self, case: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            import tempfile
            handle, self.log = tempfile.mkstemp(prefix="layoutproof-triton-", suffix=".log")
            os.close(handle)
            self.proc = self._subprocess.Popen([sys.executable, "-m", "solver.fuzz.adapters.triton_gluon"],
                                               stdin=self._subprocess.PIPE, stdout=self._subprocess.PIPE,
                                               stderr=self._subprocess.DEVNULL, text=True,
                                               env=dict(os.environ, LAYOUTPROOF_TRITON_STDERR=self.log))
        t0 = time.time()
        self.proc.stdin.write(json.dumps({"target": TARGET, "case": case}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            with open(self.log, errors="replace") as handle:
                lines = [l.strip() for l in handle.read().splitlines() if l.strip()]
            os.unlink(self.log)
            why = next((l for l in reversed(lines) if "LLVM ERROR" in l or "Assertion" in l or "error" in l),
                       lines[-1] if lines else "")
            answer = {"verdict": "refuse", "crash": True,
                      "detail": " ".join(f"compiler crashed (exit status {code}): {why}".split())[:400]}
        else:
            answer = json.loads(line)
        answer["seconds"] = round(time.time() - t0, 3)
        return answer

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
            os.unlink(self.log)


def run_campaign(cases: list, out_path: str, jobs: int, cache_path: Optional[str] = None) -> dict:
    """Compile every case (`jobs` adapter processes speaking the protocol, each restarted after a crash;
    answers cached by case in `cache_path`, JSON lines), judge each, and write one line per case to
    `out_path`: {"case", "answer", "judgement"}. A progress bar on stderr. Returns the summary."""
    import queue
    import threading
    cache = {}
    if cache_path and os.path.exists(cache_path):
        with open(cache_path) as handle:
            for line in handle:
                row = json.loads(line)
                cache[row["key"]] = row["answer"]
    todo = [c for c in cases if case_key(c) not in cache]
    t0 = time.time()
    cache_handle = open(cache_path, "a") if cache_path else None
    work, lock, state = queue.Queue(), threading.Lock(), {"done": 0}
    for case in todo:
        work.put(case)

    def drive():
        child = _Child()
        try:
            while True:
                try:
                    case = work.get_nowait()
                except queue.Empty:
                    return
                answer = child.ask(case)
                with lock:
                    cache[case_key(case)] = answer
                    state["done"] += 1
                    if cache_handle:
                        cache_handle.write(json.dumps({"key": case_key(case), "answer": answer}) + "\n")
                        cache_handle.flush()
                    progress.update(state["done"])      # on a terminal only (solver.cli.progress)
        finally:
            child.close()

    from solver.cli.progress import Progress
    progress = Progress("triton campaign", len(todo), "compiled")
    threads = [threading.Thread(target=drive) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    progress.close()
    elapsed = time.time() - t0
    summary = {"configurations": 0, "accepted": 0, "refused": 0, "elements": 0, "agree": 0, "disagree": 0,
               "not_judged": 0, "findings": {}, "compile_seconds": round(elapsed, 1), "compiled": len(todo),
               "configs_per_second": round(len(todo) / elapsed, 3) if todo and elapsed else None}
    with open(out_path, "w") as handle:
        for case in cases:
            answer = cache[case_key(case)]
            judgement = judge.compare(case, answer)
            summary["configurations"] += 1
            summary["accepted" if answer.get("verdict") == "accept" else "refused"] += 1
            summary["elements"] += judgement["elements"]
            summary[judgement["outcome"]] += 1
            for f in judgement["findings"]:
                summary["findings"][f["finding"]] = summary["findings"].get(f["finding"], 0) + 1
            handle.write(json.dumps({"case": case, "answer": answer, "judgement": judgement},
                                    separators=(",", ":")) + "\n")
    return summary


def record(results_path: str, record_path: str, summary: dict) -> None:
    """The campaign's results as the recording tests/test_triton_against.py replays."""
    import gzip
    with open(results_path) as handle:
        rows = [json.loads(line) for line in handle]
    header = dict(summary, configurations=len(rows),
                  kernel="solver/fuzz/adapters/triton_gluon.py (nvmma_sm90: warpgroup_mma, M = 64, 4 warps; "
                         "nvmma_sm100: tcgen05_mma into tensor memory, M = 128); GPUTarget cuda 90 / 100")
    with gzip.open(record_path, "wt") as handle:
        handle.write(json.dumps(header, sort_keys=True) + "\n")
        for row in rows:
            answer = {k: v for k, v in row["answer"].items() if k != "seconds"}
            handle.write(json.dumps({"case": row["case"], "answer": answer,
                                     "outcome": row["judgement"]["outcome"],
                                     "findings": [f["finding"] for f in row["judgement"]["findings"]]},
                                    separators=(",", ":")) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.fuzz.adapters.triton_gluon",
                                     description="Triton (Gluon) oracle for layoutproof fuzz --against")
    sub = parser.add_subparsers(dest="command")
    camp = sub.add_parser("campaign", help="compile and judge sampled cases")
    camp.add_argument("--arch", choices=judge.ARCHES, action="append", required=True)
    camp.add_argument("--count", type=int, default=2000)
    camp.add_argument("--seed", type=int, default=0)
    camp.add_argument("--from-fuzz", action="store_true", help="take the cases from `layoutproof fuzz --target "
                      "triton-nvmma` (Z3-anchored, valid and each rule broken alone) instead of the random sampler")
    camp.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    camp.add_argument("--out", required=True, help="JSON lines: case, answer, judgement")
    camp.add_argument("--cache", default=None, help="JSON lines cache of answers by case")
    camp.add_argument("--record", default=None, help="also write the compact replayable recording (.jsonl.gz: "
                      "a header line, then {case, answer, outcome, findings} per case)")
    args = parser.parse_args(argv)
    if args.command == "campaign":
        draw = fuzz_cases if args.from_fuzz else sample_cases
        cases = [c for arch in args.arch for c in draw(arch, args.count, args.seed)]
        summary = run_campaign(cases, args.out, args.jobs, args.cache)
        summary["triton"] = triton_version()
        if args.record:
            record(args.out, args.record, summary)
        print(json.dumps(summary, indent=1))
        return 0

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    serve(iter(sys.stdin.readline, ""), write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
