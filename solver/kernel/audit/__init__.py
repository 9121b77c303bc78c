"""`layoutproof audit`: a compiled kernel's data movement, checked end to end without a layout written by
hand (docs/CLI.md `audit`).

    operations.py  each cp.async.bulk.tensor and mbarrier statement, read as PTX ISA 9.7.9.25 / 9.7.13.15
                   write them; the kernel parameter that holds each tensor map
    phases.py      the barriers' phases: which loads each wait stands for, from the executor's run
    compose.py     an MMA's read map (spec.mma.readmap) against the boxes its warp waited for
                   (spec.tma.place): the global element behind each element read
    properties.py  the properties (ids, statements, sources) and their deciders
    report.py      the verdicts, typed (Report, KernelAudit, Property)

The run is the concrete executor's (solver/kernel/concrete): one CTA, every warp, every iteration of the
problem the parameters give. What the proofs rest on is in ASSUMPTIONS, and every report carries it.
"""
from __future__ import annotations

import math
import re
from typing import Optional

from spec.rule import SpecError, shown
from spec.tma import tensormap

from solver.kernel import analysis as kernel_analysis
from solver.kernel.audit import operations, phases, properties, tmem, trace
from solver.kernel.audit.report import KernelAudit, Property, Report
from solver.kernel.concrete import executor
from solver.kernel.symbolic import evaluate

RULE = "audit.tma.maps"

ASSUMPTIONS = (
    {"id": "audit.assume.smem_base",
     "statement": "Dynamic shared memory starts at --smem-address (default 0x400): the swizzle phase of every box "
                  "and every read follows the absolute address.",
     "evidence": "the H100 harness's dynamic shared-memory base (tests/hardware/kernel_descriptors_sm90.json.gz, "
                 "hardware/README.md); PTX ISA 9.0 5.5.7 (the swizzle reads address bits 4-9)"},
    {"id": "audit.assume.waits_complete",
     "statement": "Each mbarrier wait returns after the phase it waits for completed; the run follows that path "
                  "(the executor leaves wait loops at once).",
     "evidence": "PTX ISA 9.0 9.7.13.15.16 (try_wait); solver/kernel/concrete/executor.py"},
    {"id": "audit.assume.stages_released",
     "statement": "A stage is refilled only after its consumers released it (the empty barriers): a phase's data "
                  "stay in place until the consumer's next wait on that barrier. Not checked in this version.",
     "evidence": "the producer-consumer pipelines of CUTLASS (PipelineTmaAsync), Triton and TileLang"},
    {"id": "audit.assume.whole_k",
     "statement": "One accumulation covers the whole K of the problem (no split-K or stream-K across CTAs): "
                  "audit.gemm.k_once refutes an accumulation that reads part of K.",
     "evidence": "the GEMMs and attention kernels of the corpus (tests/fixtures/ptx/corpus/audit.json)"},
    {"id": "audit.assume.tmem_base",
     "statement": "The CTA's first tcgen05.alloc returns lane 0, column 0 (the address the kernel reads back from "
                  "shared memory). Its lane field is 0 by the manual; the column is the allocator's: the lane "
                  "quarters (audit.tmem.access) and every comparison of tensor-memory addresses (same_tile, "
                  "k_once) are the same for any column, a column range check is not.",
     "evidence": "PTX ISA 9.0 9.7.16.7.1 (tcgen05.alloc: whole columns, all 128 lanes), 9.7.16.1.1 (the address "
                 "layout); not confirmed on a GPU (no Blackwell here)"},
    {"id": "audit.assume.one_cta",
     "statement": "The run is one CTA (--cta) of the launch; bytes other CTAs multicast into it are not counted "
                  "(such phases are unknown).",
     "evidence": "PTX ISA 9.0 9.7.9.25.5.1 (.multicast::cluster)"},
    {"id": "audit.assume.tcgen05_order",
     "statement": "A tcgen05.st is complete before the arrival or barrier that orders it before an MMA "
                  "(tcgen05.wait::st), and the tcgen05 fences around thread barriers are in place: the order the "
                  "audit reads from barriers and mbarriers is the order the tensor core sees. Not checked.",
     "evidence": "PTX ISA 9.0 9.7.16.8.5 (tcgen05.wait), 9.7.16.6 (the tcgen05 memory consistency model)"},
    {"id": "audit.assume.scales_interleaved",
     "statement": "The scale tensors of a block-scaled MMA hold, for the whole problem, the scale of each row and "
                  "K block where cuBLAS's interleaved 128 x 4 layout puts it (rows: A's extent, or B's; K blocks: K "
                  "over the block): audit.scales.path compares each scale the MMA applies with that position. "
                  "What the quantizer wrote is not in the kernel.",
     "evidence": "cuBLAS documentation, 1D Block Scaling Factors Layout; the quantizers of "
                 "tests/hardware/scales_heldout.json.gz (vLLM, TensorRT-LLM, Transformer Engine, FlashInfer)"},
)

_PARAM_KEY = re.compile(r"^([A-Za-z_$%][\w$]*|\d+)(?:\+(\d+|0x[0-9a-fA-F]+))?$")


def tma_arch(targets: list) -> Optional[str]:
    """The arch the tma rules take (sm90, sm100, sm103) from the module's .target, or None."""
    for target in targets:
        m = re.fullmatch(r"sm_(\d+)[af]?", target)
        if m:
            number = int(m.group(1))
            return "sm90" if number == 90 else "sm103" if number == 103 else "sm100" if number >= 100 else None
    return None


def parse_tensormap_key(text: str) -> tuple:
    """PARAM or PARAM+OFFSET (PARAM: the .param name, or its index from 0) -> (name or index, offset)."""
    m = _PARAM_KEY.match(text.strip())
    if m is None:
        raise SpecError("tensormap", text, "expected PARAM[+OFFSET]=DOC, PARAM a .param name or its index", RULE)
    name, offset = m.group(1), int(m.group(2), 0) if m.group(2) else 0
    return (int(name) if name.isdigit() else name), offset


def given_maps(tensormaps: Optional[dict]) -> dict:
    """{(name | index, offset): TensorMapParams} from {"PARAM" | "PARAM+OFFSET" | index: a tensor-map document
    (as `tma check --tensormap` reads it) or TensorMapParams}: the maps a user gives (`--tensormap`)."""
    given = {}
    for key, document in (tensormaps or {}).items():
        parsed = (key, 0) if isinstance(key, int) else parse_tensormap_key(key)
        given[parsed] = document if isinstance(document, tensormap.TensorMapParams) else \
            tensormap.parse_params(document)
    return given


def check_map_names(given: dict, functions: list, what: str, rule: str) -> None:
    """A map given for a parameter name that none of `functions` has is an error naming the ones they have."""
    named = {n for f in functions for n in f.params}
    for (name, _), _params in given.items():
        if isinstance(name, str) and name not in named:
            raise SpecError("tensormap", name, f"no parameter of that name in the {what} (they have: "
                            f"{shown(', '.join(sorted(named)) or 'none')})", rule)


def map_extent_of(given: dict):
    """analysis.analyse's extent(function) for the maps given: each function's TMA loads through a map
    parameter given write that map's box (map_extent)."""
    return lambda function: map_extent(function, bind_maps(function, given))


def bind_maps(function, given: dict) -> dict:
    """{ParamSource: TensorMapParams} for this function, from {(name | index, offset): params}."""
    bound = {}
    for (name, offset), params in given.items():
        if isinstance(name, int):
            if name >= len(function.params):
                continue
            name = function.params[name]
        if name in function.params:
            bound[operations.ParamSource(name, offset)] = params
    return bound


def audit(text: str, tensormaps: Optional[dict] = None, params: Optional[dict] = None,
          launch: Optional[executor.Launch] = None, kernel: Optional[str] = None,
          smem_base: int = evaluate.DEFAULT_SMEM_BASE, max_steps: int = executor.MAX_STEPS_PER_WARP) -> Report:
    """Audit every .entry of the PTX text (or `kernel`). tensormaps: {"PARAM" | "PARAM+OFFSET" | index:
    a tensor-map document (as `tma check --tensormap` reads it) or spec.tma.tensormap_params.TensorMapParams}."""
    given = given_maps(tensormaps)
    launch = launch or executor.Launch(params=dict(params or {}))
    accumulators = operations.accumulator_registers(text)
    result = kernel_analysis.analyse(text, smem_base, kernel, params, launch, max_steps, any_launch="never",
                                     record=lambda ins: operations.is_recorded(ins) or tmem.is_recorded(ins),
                                     mark=lambda ins: operations.writes_accumulator(ins, accumulators),
                                     tracer=lambda function: trace.Trace(function.statements),
                                     extent=map_extent_of(given))
    functions = [f for f in result.module.functions if f.name in result.functions and f.kind == "entry"]
    check_map_names(given, functions, "kernels audited", RULE)
    arch = tma_arch(result.module.targets)
    kernels = []
    for function in functions:
        kernels.append(_audit_function(result, function, bind_maps(function, given), arch, launch, accumulators))
    return Report(kernels, [dict(a) for a in ASSUMPTIONS])


def map_extent(function, maps: dict):
    """The executor's extent (memory.py): a tiled TMA load writes at most the product of its map's box
    dimensions, in elements of the map's type, from its destination (PTX ISA 9.0 5.5.1 tensor copies; the
    CUDA Driver API, cuTensorMapEncodeTiled boxDim), with the map given for its parameter (--tensormap:
    the audit's premise). None where that is not known."""
    sources: dict = {}

    def extent(ins, warp) -> Optional[int]:
        try:
            form = operations.tma_form(ins)
        except operations.FormError:
            return None
        if form.kind != "load" or form.mode != "tile":
            return None
        if form.tensormap not in sources:
            sources[form.tensormap] = operations.tensormap_source(function.statements, function.params,
                                                                  form.tensormap)[0]
        params = maps.get(sources[form.tensormap])
        if params is None or params.encode != "tiled" or params.dtype.bits % 8 or params.interleave != "NONE":
            return None
        return math.prod(params.box_dim) * params.dtype.bits // 8
    return extent


def _inside(function, line: int, functions: list) -> bool:
    """Whether a line of the file lies in this function (from its first line to the next function's)."""
    after = [f.line for f in functions if f.line > function.line]
    return function.line <= line < (min(after) if after else 1 << 62)


def _audit_function(result, function, maps: dict, arch: Optional[str], launch, accumulators: set) -> KernelAudit:
    run = result.runs.get(function.name)
    launch_doc = {"params": dict(launch.params), "cta": list(launch.cta),
                  "grid": list(launch.grid) if launch.grid else None, "block": None}
    if isinstance(run, str) or run is None or arch is None:
        why = run if isinstance(run, str) else "not run" if arch is None and run is None else \
            f"the module's .target ({', '.join(result.module.targets) or 'none'}) is not sm_90 or later"
        return KernelAudit(function.name, [Property(d.id, "unknown", d.statement, d.source, reason=why)
                                           for d in properties.CATALOGUE], launch_doc)
    launch_doc["block"] = list(run.block)
    sites = {s.line: s for s in result.sites if s.function == function.name}
    timeline = phases.build(run, function.statements, function.params, result.shared[function.name],
                            lambda visit: visit.line in sites)
    unread = [u for u in result.unread if _inside(function, u["line"], result.module.functions)]
    markers = {i for i, s in enumerate(function.statements)
               if s.instruction is not None and operations.writes_accumulator(s.instruction, accumulators)}
    found = properties.Kernel(function.name, arch, function.statements, function.params, run, timeline, sites, maps,
                              unread, markers, result.tracers.get(function.name), tuple(result.module.targets))
    return KernelAudit(function.name, properties.decide(found), launch_doc)


__all__ = ["audit", "ASSUMPTIONS", "Report", "KernelAudit", "Property"]
