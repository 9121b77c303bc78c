"""Triton (Gluon) as the oracle of `layoutproof fuzz --against`, and its campaign runner.

    python -m solver.fuzz.adapters.triton_gluon              # serve the line protocol on stdin/stdout
    python -m solver.fuzz.adapters.triton_gluon campaign --arch sm90 --count 2000 --jobs 2 --out FILE
    python -m solver.fuzz.adapters.triton_gluon campaign --arch sm90 --count 100000 --scheduler tcp://host:8786
        --python /venvs/triton/bin/python --out FILE --cache CACHE --record REC.jsonl.gz --counterexamples CE.json
    python -m solver.fuzz.compiler_campaign merge --compiler triton --record REC.jsonl.gz OUT...   # runs made elsewhere

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

import hashlib
import json
import os
import random
import sys
from typing import Callable, Optional

from solver import provenance
from solver.fuzz import compiler_campaign
from solver.fuzz.compiler_campaign import COUNT, Checked, ListOf, MapOf, fields
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


# --- Campaign (solver/fuzz/compiler_campaign.py runs it: here, or on a Dask cluster) ------------------------
def case_key(case: dict) -> str:
    """A short key of a case (the older campaign cache's; compiler_campaign.case_key is the canonical one)."""
    return hashlib.sha1(json.dumps(case, sort_keys=True).encode()).hexdigest()[:16]


def sample_cases(arch: str, count: int, seed: int = 0) -> list:
    """`count` distinct cases of Triton's parameters on `arch` (fewer when they run out): first the grid of
    every dtype x swizzle x transposed x operand at a small shape with element_bitwidth = the dtype's, then
    random draws over shapes (the operand's MN 8..256, K of 1 to 8 instruction steps), swizzles,
    element_bitwidth (one in five not the dtype's) and transposition."""
    rng = random.Random(f"{arch}-{seed}")
    m = judge.M_OF_ARCH[arch]

    def draws():
        for dtype in judge.DTYPES:
            for sw in judge.SWIZZLES:
                for transposed in (False, True):
                    for operand in ("A", "B"):
                        kinst = judge.instruction_k(dtype)
                        shape = [m, 4 * kinst] if operand == "A" else [4 * kinst, 64]
                        yield {"arch": arch, "dtype": dtype, "operand": operand, "shape": shape,
                               "swizzle_byte_width": sw, "element_bitwidth": judge.DTYPES[dtype][0],
                               "transposed": transposed}
        while True:
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
            yield {"arch": arch, "dtype": dtype, "operand": operand, "shape": shape,
                   "swizzle_byte_width": rng.choice(tuple(judge.SWIZZLES)), "element_bitwidth": ebw,
                   "transposed": rng.random() < 0.5}
    return compiler_campaign.distinct(draws(), count)


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


def protocol_record(case: dict) -> dict:
    return {"target": TARGET, "case": case}


def crashed(code: int, lines: list) -> dict:
    """The answer for a compiler that ended the adapter's process (an abort inside Triton's C++): refused,
    with the diagnostic it left in the log (LAYOUTPROOF_TRITON_STDERR)."""
    why = next((l for l in reversed(lines) if "LLVM ERROR" in l or "Assertion" in l or "error" in l),
               lines[-1] if lines else "")
    return {"verdict": "refuse", "crash": True,
            "detail": " ".join(f"compiler crashed (exit status {code}): {why}".split())[:400]}


COMPILER = compiler_campaign.Compiler("triton", "solver.fuzz.adapters.triton_gluon", protocol_record, crashed,
                                      judge.compare, log_env="LAYOUTPROOF_TRITON_STDERR")
SUMMARY = ("configurations", "accepted", "refused", "elements", "agree", "disagree", "not_judged", "findings")
KERNEL = ("solver/fuzz/adapters/triton_gluon.py (nvmma_sm90: warpgroup_mma, M = 64, 4 warps; nvmma_sm100: "
          "tcgen05_mma into tensor memory, M = 128); GPUTarget cuda 90 / 100")


def tally(summary: dict, row: dict) -> None:
    """Count one {"case", "answer", "judgement"} row into `summary` (SUMMARY's figures, and per_arch)."""
    answer, judgement = row["answer"], row["judgement"]
    side = "accepted" if answer.get("verdict") == "accept" else "refused"
    findings: dict = {}
    for f in judgement["findings"]:
        findings[f["finding"]] = findings.get(f["finding"], 0) + 1
    arch = {"configurations": 1, side: 1, judgement["outcome"]: 1, **findings}
    counts = {"configurations": 1, side: 1, "elements": judgement["elements"], judgement["outcome"]: 1,
              "findings": findings, "per_arch": {row["case"]["arch"]: arch}}
    start = summary or {**{k: 0 for k in SUMMARY}, "findings": {}}
    summary.update(compiler_campaign.add_counts(start, counts))


def campaign_cases(args) -> list:
    draw = fuzz_cases if args.from_fuzz else sample_cases
    return [c for arch in args.arch for c in draw(arch, args.count, args.seed)]


# --- The recording (tests/hardware/triton_gluon_campaign.jsonl.gz) and its counterexamples ------------------
def recording_row(row: dict) -> dict:
    """A campaign row as the recording keeps it: the answer, the outcome and the findings' names."""
    return {"case": row["case"], "answer": compiler_campaign.plain_answer(row["answer"]),
            "outcome": row["judgement"]["outcome"], "findings": [f["finding"] for f in row["judgement"]["findings"]]}


# What a merge reads of each file (compiler_campaign.conform): anything else is one line naming the file and
# the field, exit 2. The answer's other fields (layout, descriptor) are the judge's to read (`_example`).
def _recorded_case(case) -> None:
    """A case as the campaign writes it: judge.check_case's fields (SpecError, a ValueError, naming the one
    that is not), and `transposed` given (the breakdowns read it)."""
    judge.check_case(case)
    if not isinstance(case.get("transposed"), bool):
        raise ValueError("transposed: expected true or false")


CASE = Checked(_recorded_case)
ANSWER = fields(optional={"verdict": (str, type(None)), "detail": str, "triton": (str, type(None)), "crash": bool})
ROW = fields(case=CASE, answer=ANSWER, judgement=fields(outcome=str, elements=COUNT,
                                                         findings=ListOf(fields(finding=str))))
_FIGURES = {k: COUNT for k in SUMMARY if k != "findings"}
_SUMMARY = fields(optional={**_FIGURES, "findings": MapOf(COUNT), "per_arch": MapOf(MapOf(COUNT))})
RECORDING_HEADER = fields(**_FIGURES, findings=MapOf(COUNT),
                          provenance=compiler_campaign.provenance_shape(triton=(str, type(None))),
                          optional={"per_arch": MapOf(MapOf(COUNT))})
RECORDING_ROW = fields(case=CASE, answer=ANSWER, outcome=str, findings=ListOf(str))


def _counterexamples_shape():
    """What a merge reads of a counterexample file (the breakdowns are defined below)."""
    breakdowns = {name: MapOf(COUNT) for name in BREAKDOWNS}
    return fields(summary=fields(configurations=COUNT, optional=dict(_SUMMARY.optional)),
                  classes=ListOf(fields(finding=str, count=COUNT, optional=breakdowns)))


def recording_provenance(version: Optional[str], command: str, run: Optional[dict] = None) -> dict:
    """The provenance header of a new recording (solver/provenance.py): `command` the campaign's or merge's,
    `run` its figures (compile_seconds, compiled, configs_per_second, jobs)."""
    return provenance.header(
        what="A Triton (Gluon) campaign (fuzz --against Triton's NVMMASharedLayout): after this header line, one "
             "line per configuration with its case, Triton's answer, the outcome and the findings; this line also "
             "holds the campaign's counts.",
        recorded_by="solver/fuzz/adapters/triton_gluon.py", command=command or provenance.NOT_RECORDED,
        source=f"Triton {version} (Gluon), no GPU: GPUTarget cuda 90 / 100" if version else provenance.NOT_RECORDED,
        date=provenance.today(), details={"kernel": KERNEL, "triton": version, **(run or {})})


def recording_lines(path: str) -> tuple:
    """(header, [(where, row)]) of a recording, each checked (RECORDING_HEADER, RECORDING_ROW); where names
    the file and line (CampaignUsage when a line is not what a recording holds)."""
    shown = f"--record {compiler_campaign.file_name(path)}"
    lines = compiler_campaign.read_json(path, shown, gzipped=True, lines=True)
    if not lines:
        raise compiler_campaign.CampaignUsage(f"{shown}: empty: a recording starts with its header line")
    (first, header), rows = lines[0], lines[1:]
    compiler_campaign.conform(header, RECORDING_HEADER, f"{shown}, line {first} (the header)")
    return header, [(f"{shown}, line {n}", compiler_campaign.conform(row, RECORDING_ROW, f"{shown}, line {n}"))
                    for n, row in rows]


def read_recording(path: str) -> tuple:
    """(header, rows) of a recording: a header line ({"provenance": {...}} and the campaign's counts), then
    {case, answer, outcome, findings} per case."""
    header, rows = recording_lines(path)
    return header, [row for _, row in rows]


def read_counterexamples(path: str) -> dict:
    shown = f"--counterexamples {compiler_campaign.file_name(path)}"
    return compiler_campaign.conform(compiler_campaign.read_json(path, shown), _counterexamples_shape(), shown)


def write_recording(path: str, header: dict, rows: list) -> None:
    def write(handle):
        handle.write(json.dumps(header, sort_keys=True) + "\n")
        for row in rows:
            handle.write(json.dumps(row, separators=(",", ":")) + "\n")
    compiler_campaign.write_atomically(path, write, binary_gzip=True)


def _contiguous(case: dict) -> int:
    return case["shape"][0 if case["transposed"] else 1] * judge.DTYPES[case["dtype"]][0] // 8


# the counts a class of the counterexample file may break its cases down by (a field name -> a case's bin)
BREAKDOWNS = {
    "by_arch": lambda row: row["case"]["arch"],
    "by_arch_and_swizzle_byte_width": lambda row: f"{row['case']['arch']}/{row['case']['swizzle_byte_width']}",
    "contiguous_bytes": lambda row: str(_contiguous(row["case"])),
    "by_arch_dtype_n": lambda row: f"{row['case']['arch']}/{row['case']['dtype']}/N="
                                   f"{judge.kernel_shapes(row['case'])['B'][1]}",
    "by_message": lambda row: str(row["answer"].get("detail", "")).split("): ", 1)[-1][:90],
}


def _bins(field: str, rows: list) -> dict:
    out: dict = {}
    for row in rows:
        b = BREAKDOWNS[field](row)
        out[b] = out.get(b, 0) + 1
    return out


def _example(row: dict, finding: str, where: str) -> dict:
    """The class's example: the case, the judge's finding on it and the line that reproduces it. `where`
    names the row's file and line: a row the judge cannot read, or whose finding the judge does not find
    again, is one line naming it."""
    judged = compiler_campaign.judged(lambda: judge.compare(row["case"], row["answer"]), f"{where}: answer")
    found = next((f for f in judged["findings"] if f["finding"] == finding), None)
    if found is None:
        raise compiler_campaign.CampaignUsage(f"{where}: findings: {finding!r:.40}, which the judge does not find "
                                              f"in its answer")
    return {"case": row["case"], "finding": found, "spec": judged["spec"],
            "reproduce": f"echo '{json.dumps(protocol_record(row['case']))}' | python -m solver.fuzz.adapters.triton_gluon"}


def _smallest_per_arch(rows: list) -> list:
    best: dict = {}
    for row in rows:
        c = row["case"]
        size = (c["shape"][0] * c["shape"][1], compiler_campaign.case_key(c))
        if c["arch"] not in best or size < best[c["arch"]][0]:
            best[c["arch"]] = (size, row)
    return [best[arch][1] for arch in sorted(best)]


def _grow(entry: dict, rows: list) -> dict:
    """An existing class with new members: its count and breakdowns grow; notes and examples stay."""
    grown = dict(entry, count=entry["count"] + len(rows))
    for field in BREAKDOWNS:
        if field in entry:
            grown[field] = compiler_campaign.add_counts(entry[field], _bins(field, rows))
    return grown


def _make(key: tuple, rows: list, where: Callable[[dict], str]) -> dict:
    (finding,) = key
    return {"finding": finding, "side": "undecided", "count": len(rows), "by_arch": _bins("by_arch", rows),
            "examples": [_example(row, finding, where(row)) for row in _smallest_per_arch(rows)],
            "note": "no note yet: a new class"}


def merge(results: list, record: str, counterexamples: Optional[str] = None, found_by: str = "",
          run: Optional[dict] = None, origins: Optional[list] = None) -> dict:
    """Merge campaign rows ({"case", "answer", "judgement"}, from any number of runs and machines) into the
    recording `record` (made if missing; a case already there is kept as it is) and, given, into the
    counterexample file `counterexamples`: a class per finding, counting each recorded case once, its
    notes kept. Returns what changed. `origins`: where each result row comes from (its file and line), for
    the messages; the files read here are checked (CampaignUsage naming the file and field)."""
    origins = origins or [f"campaign row {i + 1}" for i in range(len(results))]
    results = [compiler_campaign.conform(r, ROW, w) for r, w in zip(results, origins)]
    where = {compiler_campaign.case_key(r["case"]): w for r, w in zip(results, origins)}
    version, version_from = next(((r["answer"]["triton"], w) for r, w in zip(results, origins)
                                  if r["answer"].get("triton")), (None, None))
    shown = compiler_campaign.file_name(record)
    if os.path.exists(record):
        header, lines = recording_lines(record)
        rows = [row for _, row in lines]
        where.update((compiler_campaign.case_key(row["case"]), w) for w, row in lines)
        recorded = header["provenance"]["details"].get("triton")
        if version and recorded and recorded != version:
            raise compiler_campaign.CampaignUsage(
                f"--record {shown}, line 1: provenance.details.triton: {recorded!r:.40}; {version_from}: "
                f"answer.triton: {version!r:.40}: one Triton version per recording")
    else:
        header, rows = {"provenance": recording_provenance(version, found_by, run), **{k: 0 for k in SUMMARY},
                        "findings": {}, "per_arch": {}}, []
    before = len(rows)
    old = None
    if counterexamples and os.path.exists(counterexamples):
        old = read_counterexamples(counterexamples)
        if old["summary"]["configurations"] != before:
            raise compiler_campaign.CampaignUsage(
                f"--counterexamples {compiler_campaign.file_name(counterexamples)}: summary.configurations: "
                f"{old['summary']['configurations']} cases; --record {shown} holds {before}: not its recording")
    merged, added, conflicts = compiler_campaign.merge_rows(rows, results)
    header = compiler_campaign.added_counts(header, added, tally)
    header["configurations"] = len(merged)
    merged = rows + [recording_row(r) for r in added]
    write_recording(record, header, merged)
    report = {"record": record, "cases": len(merged), "added": len(added), "already_there": len(results) - len(added),
              "other_answer_kept": conflicts}
    if counterexamples:
        members: dict = {}
        for row in (merged[before:] if old is not None else merged):
            for name in dict.fromkeys(row["findings"]):
                members.setdefault((name,), []).append(row)
        if old is None:
            old = {"compiler": "triton", "version": version or header["provenance"]["details"].get("triton"),
                   "recording": record,
                   "found_by": found_by, "summary": {k: header[k] for k in SUMMARY}, "classes": []}
        else:
            old = dict(old, summary=compiler_campaign.added_counts(old["summary"], added, tally))
        old["summary"]["configurations"] = len(merged)
        origin = lambda row: where.get(compiler_campaign.case_key(row["case"]), "a merged row")  # noqa: E731
        old["classes"] = compiler_campaign.merge_classes(old["classes"], members, lambda c: (c["finding"],),
                                                         _grow, lambda key, rows: _make(key, rows, origin))
        compiler_campaign.write_atomically(counterexamples, lambda h: h.write(json.dumps(old, indent=1) + "\n"))
        report["counterexamples"] = {c["finding"]: c["count"] for c in old["classes"]}
    return report


def main(argv=None) -> int:
    return compiler_campaign.main_guard(lambda: _main(argv), "python -m solver.fuzz.adapters.triton_gluon")


def _main(argv=None) -> int:
    from solver.shell import Parser
    parser = Parser(prog="python -m solver.fuzz.adapters.triton_gluon",
                    description="Triton (Gluon) oracle for layoutproof fuzz --against; without a command it "
                                "serves the line protocol on stdin/stdout")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    camp = sub.add_parser("campaign", help="compile and judge sampled cases (here or on a Dask cluster)")
    camp.add_argument("--arch", choices=judge.ARCHES, action="append", required=True)
    camp.add_argument("--count", type=compiler_campaign.count_argument, default=2000,
                      help=f"cases per arch (default 2000, at most {compiler_campaign.MAX_CASES})")
    camp.add_argument("--seed", type=int, default=0)
    camp.add_argument("--from-fuzz", action="store_true", help="take the cases from `layoutproof fuzz --target "
                      "triton-nvmma` (Z3-anchored, valid and each rule broken alone) instead of the random sampler")
    camp.add_argument("--python", default=None, help="the interpreter that has triton, for the adapter processes "
                      "(default: the one running the campaign, on a cluster each worker's own)")
    camp.add_argument("--out", required=True, help="JSON lines: case, answer, judgement (in case order)")
    compiler_campaign.add_arguments(
        camp, "merge the campaign into this replayable recording (.jsonl.gz: a header line, then {case, answer, "
              "outcome, findings} per case; created if missing, each case kept once)",
        "counterexamples/against/triton/triton_3.9.0.json")
    args = parser.parse_args(argv)
    if args.command == "campaign":
        if args.from_fuzz and args.count > 10_000:
            raise compiler_campaign.CampaignUsage("--from-fuzz: --count at most 10000 (fuzz's --count cap)")
        compiler_campaign.check_files(args)
        command = compiler_campaign.adapter_argument(args)
        client = compiler_campaign.connect(args)
        cases = campaign_cases(args)
        try:
            result = compiler_campaign.run(COMPILER, cases, args.out, tally, jobs=args.jobs, client=client,
                                           cache_path=args.cache, python=args.python, command=command, legacy_key=case_key)
        finally:
            compiler_campaign.disconnect(client)
        summary = dict(result.pop("summary"), **result, jobs=args.jobs if client is None else args.scheduler)
        if args.record:
            run = {k: summary[k] for k in ("compile_seconds", "compiled", "configs_per_second", "jobs")}
            summary["merged"] = merge(compiler_campaign.read_results(args.out), args.record, args.counterexamples,
                                      "python -m solver.fuzz.adapters.triton_gluon " + " ".join(argv or sys.argv[1:]),
                                      run)
        print(json.dumps(summary, indent=1))
        return 0

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    serve(iter(sys.stdin.readline, ""), write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
