"""The probe's host side (hardware/run_probe.py) without a GPU: cases are encoded in the probe's
binary format, and accumulator blocks decode back to addresses. The GPU stood in for here reads what the
H100 was recorded reading (tests/hardware/wgmma_sm90_reads.json.gz), not spec's read map: the pipeline
must give back the recording, every case clean, and a GPU that reads elsewhere must decode to where it
read."""
import gzip
from repo_paths import ROOT_DIR, TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import struct
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(ROOT_DIR, "hardware"))
import probe_cases  # noqa: E402
import run_probe  # noqa: E402

SAMPLE = probe_cases.cases()[::23]
RECORDING = os.path.join(TESTS_DIR, "hardware", "wgmma_sm90_reads.json.gz")


def test_case_file_layout_matches_the_cuda_struct():
    data = run_probe.encode_runs(run_probe.runs(SAMPLE[:2]))
    count = struct.unpack_from("<I", data)[0]
    assert len(data) == 4 + 40 * count      # struct Case: 4 x u32, 2 x u64, 2 x u32


@pytest.mark.parametrize("dtype", sorted(probe_cases.CODE_BASE))
def test_codes_decode_to_themselves(dtype):
    n = np.arange(0, probe_cases.CODE_BASE[dtype], max(1, probe_cases.CODE_BASE[dtype] // 5000))
    assert (run_probe.codes_from_values(dtype, run_probe._values_of_codes(dtype, n)) == n).all()
    assert (run_probe.codes_from_values(dtype, np.zeros(3, np.float32)) == -1).all()


def _recorded() -> tuple:
    """(the H100's shared base, {case id: the recorded case}) of the recording."""
    with gzip.open(RECORDING, "rt") as handle:
        cases = {c["id"]: c for c in json.load(handle)["cases"]}
    by_id = {c["id"]: c for c in probe_cases.cases()}
    bases = {c["start_address"] - by_id[i]["start_address"] for i, c in cases.items()}
    assert len(bases) == 1
    return bases.pop(), cases


def test_the_recorded_reads_come_back_through_the_pipeline():
    base, recorded = _recorded()
    run_list = run_probe.runs(SAMPLE)
    gpu = run_probe.simulate(run_list, base, lambda case, smem_base: recorded[case["id"]]["addresses"])
    for case, seen in zip(SAMPLE, run_probe.decode(SAMPLE, run_list, gpu, base)):
        was = recorded[case["id"]]
        assert seen["clean"] and seen["addresses"] == was["addresses"]
        assert (seen["descriptor"], seen["start_address"]) == (was["descriptor"], was["start_address"])


def test_a_gpu_that_reads_elsewhere_decodes_to_where_it_read():
    base, recorded = _recorded()
    cases = SAMPLE[:6]
    moved = {}
    for case in cases:                 # the last two elements of row 0 read each other's bytes
        rows = [list(row) for row in recorded[case["id"]]["addresses"]]
        rows[0][-1], rows[0][-2] = rows[0][-2], rows[0][-1]
        moved[case["id"]] = rows
    run_list = run_probe.runs(cases)
    gpu = run_probe.simulate(run_list, base, lambda case, smem_base: moved[case["id"]])
    for case, seen in zip(cases, run_probe.decode(cases, run_list, gpu, base)):
        assert seen["addresses"] == moved[case["id"]] != recorded[case["id"]]["addresses"]
