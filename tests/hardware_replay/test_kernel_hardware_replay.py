"""The H100 against the concrete executor (issue 26): for four sm_90a kernels of the Triton corpus, the
descriptors each warp of CTAs 0 and 1 fed every wgmma.mma_async, in issue order, as the hardware held them
(tests/hardware/kernel_descriptors_sm90.json.gz, recorded by hardware/record_kernel_descriptors.py from an
instrumented copy of each kernel, whose output was checked against A x B and the uninstrumented kernel).
The executor, given the same parameters, grid, block and CTA, must produce the same sequence per warp."""
from __future__ import annotations

import gzip
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import json
import lzma

import pytest

from solver.kernel.concrete import executor
from solver.kernel.frontend import cfg, source
from solver.kernel.symbolic import evaluate

HERE = TESTS
RECORDING = json.loads(gzip.open(HERE / "hardware" / "kernel_descriptors_sm90.json.gz").read())
CORPUS = HERE / "fixtures" / "ptx" / "corpus" / "triton"
SHARED_BASE = 0x400          # what the instrumented kernels stored as global_smem's address (the counts' smem_base)

pytestmark = pytest.mark.replay


def _scalar_params(recorded: dict) -> dict:
    return {name: value for name, value in recorded.items() if isinstance(value, int)}


@pytest.mark.parametrize("kernel", RECORDING["kernels"], ids=lambda k: k["file"].split(".")[0])
@pytest.mark.parametrize("cta", [0, 1])
def test_every_descriptor_every_warp_fed_matches_the_h100(kernel, cta):
    assert all(c["smem_base"] == SHARED_BASE and not c["truncated"] for c in kernel["counts"])
    text = lzma.open(CORPUS / kernel["file"], "rt").read()
    module = source.parse(text)
    function = next(f for f in module.functions if f.name == kernel["kernel"])
    symbols = evaluate.Context(module, function, SHARED_BASE).symbols
    launch = executor.Launch(params=_scalar_params(kernel["params"]), block=tuple(kernel["block"]),
                             cta=(cta, 0, 0), grid=tuple(kernel["grid"]))
    run = executor.run(function, symbols, launch, lambda ins: ins.opcode.startswith("wgmma.mma_async"),
                       cfg.build(function.statements))
    assert all(w.stopped is None for w in run.warps), [w.stopped for w in run.warps]
    operands = {s["line"]: (s["a"], s["b"]) for s in kernel["sites"]}
    for warp in range(kernel["warps_per_cta"]):
        recorded = [(r["line"], int(r["a"], 16), int(r["b"], 16)) for r in kernel["records"]
                    if r["cta"] == cta and r["warp"] == warp]
        assert [r["seq"] for r in kernel["records"] if r["cta"] == cta and r["warp"] == warp] == list(range(len(recorded)))
        executed = [(v.line, v.values[operands[v.line][0]], v.values[operands[v.line][1]])
                    for v in run.visits if v.warp == warp]
        assert len(executed) == len(recorded)
        first_difference = next((k for k, (x, y) in enumerate(zip(executed, recorded)) if x != y), None)
        assert first_difference is None, (warp, first_difference, executed[first_difference],
                                          recorded[first_difference])
