"""Replays tests/hardware/triton_misread_sm90.json (the H100 run of the Triton 3.9 'misread' case,
hardware/triton_misread/) without a GPU: the recorded PTX's B descriptor decodes to the 32B swizzle and
is the campaign's word, the recorded D is A @ (B read through that swizzle from the plain tile), and the
verdict agrees with the recorded errors."""
import gzip
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import hashlib
import json
import os

import numpy as np

from solver.fuzz.compilers import triton as judge
from spec.mma import descriptor as spec_descriptor

ROOT = ROOT_DIR
REC = json.load(open(os.path.join(ROOT, "tests", "hardware", "triton_misread_sm90.json")))
T39 = REC["triton_3_9_0"]


def test_recorded_ptx_descriptor_is_32b_swizzle_and_the_campaigns_word():
    ptx = T39["minimal_case_ptx"]
    assert hashlib.sha256(ptx.encode()).hexdigest() == T39["variants"]["B16x8_sw0_T"]["ptx_sha256"]
    mma = judge.mma_descriptors(ptx)[0]
    assert mma["shape"] == [64, 8, 16] and mma["trans_b"] == 0
    b = spec_descriptor.decode("sm90", mma["b"])
    assert b.swizzle == "32B"
    # the same word the 3.9 campaign recorded for sm90 bf16 B [16, 8] swizzle 0 transposed
    with gzip.open(os.path.join(ROOT, "tests", "hardware", "triton_gluon_campaign.jsonl.gz"), "rt") as handle:
        next(handle)
        for line in handle:
            row = json.loads(line)
            if row["case"] == {"arch": "sm90", "dtype": "bf16", "operand": "B", "shape": [16, 8],
                               "swizzle_byte_width": 0, "element_bitwidth": 16, "transposed": True}:
                assert row["answer"]["descriptor"]["mmas"][0]["b"] == mma["b"]
                assert "misread" in row["findings"]
                break
        else:
            raise AssertionError("minimal case not in the campaign recording")


def test_recorded_d_is_the_32b_swizzled_read_of_the_plain_tile():
    data = T39["minimal_case_data"]
    A, B, D = (np.array(data[k], dtype=np.float64) for k in ("A", "B", "D"))
    K, N = B.shape
    swizzled = np.empty_like(B)
    for n in range(N):
        for k in range(K):
            addr = n * 2 * K + 2 * k                        # plain K-major tile: N rows of 32 bytes
            phys = addr ^ (((addr >> 7) & 1) << 4)           # 32B swizzle: address bit 4 ^= bit 7
            swizzled[k, n] = B[(phys % (2 * K)) // 2, phys // (2 * K)]
    assert np.abs(D - A @ swizzled).max() < 1e-4
    assert np.linalg.norm(D - A @ B) / np.linalg.norm(A @ B) > 0.1


def test_verdict_matches_recorded_errors():
    tol = REC["verdict"]["tolerance_rel_error"]
    v39 = T39["variants"]
    assert REC["verdict"]["kind"] == "descriptor_wrong"
    for form in ("cubin", "v87.ptx"):
        assert v39["B16x8_sw0_T"][form]["rel_error"] > 100 * tol
        assert v39["B16x8_sw0_N"][form]["rel_error"] < tol
        assert v39["B16x8_sw32_T"][form]["rel_error"] < tol
    v36 = REC["triton_3_6_0"]["variants"]
    assert REC["triton_3_6_0"]["triton"] == "3.6.0"
    assert v36["B16x8_sw0_T"]["descriptor"]["b"]["swizzle"] == "none"   # 3.6 does not emit the pattern
    for row in v36.values():
        if row["status"] == "ran":
            assert row["rel_error"] < tol
