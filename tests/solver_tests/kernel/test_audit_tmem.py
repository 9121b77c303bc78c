"""The audit's tensor-memory properties (issue 27, item 3): a Triton sm_100a GEMM as compiled, and with a bug
put in by hand. The expectations are the manual's (PTX ISA 9.0 9.7.16.8.1, 9.7.16.7.1) as spec/tmem states
them; only a Blackwell GPU could confirm them."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os

import pytest

import layoutproof as lp

CORPUS = os.path.join(TESTS_DIR, "fixtures", "ptx", "corpus")
STEM = "tut09_tma_f16_128x256x64_s3_w8_sm_100a"


@pytest.fixture(scope="module")
def kernel():
    entry = next(e for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"]
                 if e["file"].endswith(STEM + ".ptx.xz"))
    return entry, lzma.open(os.path.join(CORPUS, entry["file"]), "rt").read()


def _properties(entry: dict, text: str) -> dict:
    report = lp.audit(text, entry["tensormaps"], entry["params"], grid=entry["grid"], kernel=entry["kernel"])
    return {p.id: p for k in report.kernels for p in k.properties}


def test_the_compiled_kernel_keeps_to_its_lanes_and_frees_what_it_allocates(kernel):
    found = _properties(*kernel)
    assert found["audit.tmem.access"].status == "proved" and found["audit.tmem.access"].checked > 0
    assert found["audit.tmem.alloc"].status == "proved" and found["audit.tmem.alloc"].checked == 3


def test_a_load_from_the_next_quarter_is_refuted(kernel):
    entry, text = kernel
    load = next(line for line in text.splitlines() if line.strip().startswith("tcgen05.ld"))
    assert text.count(load) == 1
    moved = load.replace("[%r245 + 0]", "[%lp_lanes]")
    wrapped = f"{{ .reg .b32 %lp_lanes; add.s32 %lp_lanes, %r245, {32 << 16};\n{moved}\n}}"
    found = _properties(entry, text.replace(load, wrapped))
    access = found["audit.tmem.access"]
    assert access.status == "refuted" and access.witness["rule"] == "tmem.access.lane_quarter", access


DEALLOC = "@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r249, 256;"


@pytest.mark.parametrize("change, rule", [
    ("", "tmem.alloc.dealloc_all"),                              # never freed
    (DEALLOC + "\n\t" + DEALLOC, "tmem.alloc.dealloc_live"),      # freed twice
])
def test_an_allocation_not_freed_as_allocated_is_refuted(kernel, change, rule):
    entry, text = kernel
    assert text.count(DEALLOC) == 1
    changed = text.replace(DEALLOC, change)
    alloc = _properties(entry, changed)["audit.tmem.alloc"]
    assert alloc.status == "refuted" and alloc.witness["rule"] == rule, alloc


def test_the_epilogue_through_tensor_memory_is_proved_and_a_shifted_load_refuted(kernel):
    """tcgen05.mma's accumulator (spec.tmem.accumulator: layout D, row m in lane m, column n) read back by
    tcgen05.ld (spec.tmem.ld_st.fragment_map), converted, stored through shared memory and a TMA store."""
    entry, text = kernel
    lands = _properties(entry, text)["audit.epilogue.lands"]
    assert lands.status == "proved" and lands.checked == 128 * 256, lands
    load = next(line for line in text.splitlines() if line.strip().startswith("tcgen05.ld"))
    shifted = f"{{ .reg .b32 %lp_columns; add.s32 %lp_columns, %r245, 8;\n{load.replace('[%r245 + 0]', '[%lp_columns]')}\n}}"
    lands = _properties(entry, text.replace(load, shifted))["audit.epilogue.lands"]
    assert lands.status == "refuted", lands


def test_a_store_into_the_accumulator_before_the_epilogue_load_is_not_proved(kernel):
    """The kernel zeroes its accumulator with tcgen05.st before the MMAs. The same store again right before
    the epilogue's tcgen05.ld (after the MMAs completed) makes the load read zeros, not D: the epilogue must
    not be proved (commits.py: a store not after the load must come before the MMA the load reads)."""
    entry, text = kernel
    store = next(line for line in text.splitlines() if line.strip().startswith("@%p36 tcgen05.st"))
    load = next(line for line in text.splitlines() if line.strip().startswith("tcgen05.ld"))
    zeroed = text.replace(load, f"{store}\n\ttcgen05.wait::st.sync.aligned;\n{load}")
    lands = _properties(entry, zeroed)["audit.epilogue.lands"]
    assert lands.status != "proved", lands
    assert "tcgen05.st" in (lands.reason or ""), lands
