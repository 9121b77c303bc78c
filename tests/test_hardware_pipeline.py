"""The probe's host side (hardware/run_probe.py) without a GPU: cases are encoded in the probe's
binary format, and accumulator blocks decode back to addresses. A fabricated GPU that reads exactly
spec's read map must come back as exactly those addresses, every case clean."""
import os
import struct
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hardware"))
import probe_cases  # noqa: E402
import run_probe  # noqa: E402

from spec.mma import descriptor
from spec.mma import readmap  # noqa: E402

SAMPLE = probe_cases.cases()[::23]


def test_case_file_layout_matches_the_cuda_struct():
    data = run_probe.encode_runs(run_probe.runs(SAMPLE[:2]))
    count = struct.unpack_from("<I", data)[0]
    assert len(data) == 4 + 40 * count      # struct Case: 4 x u32, 2 x u64, 2 x u32


@pytest.mark.parametrize("dtype", sorted(probe_cases.CODE_BASE))
def test_codes_decode_to_themselves(dtype):
    n = np.arange(0, probe_cases.CODE_BASE[dtype], max(1, probe_cases.CODE_BASE[dtype] // 5000))
    assert (run_probe.codes_from_values(dtype, run_probe._values_of_codes(dtype, n)) == n).all()
    assert (run_probe.codes_from_values(dtype, np.zeros(3, np.float32)) == -1).all()


def test_simulated_gpu_round_trip():
    base = 1024
    run_list = run_probe.runs(SAMPLE)
    observations = run_probe.decode(SAMPLE, run_list, run_probe.simulate(run_list, base), base)
    for case, seen in zip(SAMPLE, observations):
        assert seen["clean"]
        op = readmap.make_operand(descriptor.decode("sm90", int(seen["descriptor"], 16)),
                                  case["dtype"], case["major"], case["mn"])
        assert seen["addresses"] == readmap.read_addresses(op)
