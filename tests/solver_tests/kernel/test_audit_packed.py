"""Packed 4-bit operands (solver/kernel/audit/compose.py): .kind::mxf4 and ::mxf4nvf4 read e2m1 elements
two to a byte, element i of a 16-byte chunk in bits [4i, 4i + 4) (PTX ISA 9.0 9.7.16.4.1; spec.mma.dtypes
byte_in_chunk), from boxes of a UINT8 map (Triton's block-scaled tutorial). The audit counts k in elements:
byte b of the map's dimension 0 holds elements 2b (low nibble) and 2b + 1. Expectations: a box moved one
box along K (128 bytes: 256 elements) reads 256 elements further; a descriptor start 32 bytes further
(+2 in the 16-byte field) reads 64 elements further than B."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os
from types import SimpleNamespace

import layoutproof as lp
from solver.kernel.audit import compose, mutate

CORPUS = os.path.join(TESTS_DIR, "fixtures", "ptx", "corpus")
NAME = "tut10_block_scaled_nvfp4_128x256x256_s4_w4_sm_100a"
ENTRY = next(e for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"] if NAME in e["file"])


WANTED = (("coordinate", "0+128"), ("start", "A"))
_FOUND: dict = {}


def _first(kind, name_part=""):
    """The first mutant of the kind (both wanted ones found in one pass over the mutants)."""
    if not _FOUND:
        text = lzma.open(os.path.join(CORPUS, ENTRY["file"]), "rt").read()
        for m in mutate.mutants(text, ENTRY["tensormaps"], ENTRY["kernel"]):
            for wanted in WANTED:
                if wanted not in _FOUND and m.kind == wanted[0] and wanted[1] in m.name:
                    _FOUND[wanted] = m
            if len(_FOUND) == len(WANTED):
                break
    return _FOUND[(kind, name_part)]


def _statuses(mutant):
    report = lp.audit(mutant.text, mutant.tensormaps, ENTRY["params"], grid=ENTRY["grid"], kernel=ENTRY["kernel"])
    return {p.id: p for k in report.kernels for p in k.properties}


def test_a_packed_element_is_counted_in_elements_along_dimension_0():
    load = SimpleNamespace(coordinates=(128, 7))
    params = SimpleNamespace(element_strides=(1, 1))
    assert compose.global_element(load, params, (5, 3), packing=2) == (2 * 128 + 5, 10)
    assert compose.global_element(load, params, (5, 3)) == (133, 10)


def test_a_box_one_box_further_along_k_is_refuted():
    found = _statuses(_first("coordinate", "0+128"))
    same_k, k_once = found["audit.gemm.same_k"], found["audit.gemm.k_once"]
    assert same_k.status == "refuted" and same_k.witness["a_global_k"] - same_k.witness["b_global_k"] == 256
    assert k_once.status == "refuted" and k_once.witness["extent"] == 8192      # K in elements (4096 bytes)


def test_a_start_address_32_bytes_further_reads_64_elements_further():
    same_k = _statuses(_first("start", "A"))["audit.gemm.same_k"]
    assert same_k.status == "refuted", same_k.reason
    assert same_k.witness["a_global_k"] - same_k.witness["b_global_k"] == 64
