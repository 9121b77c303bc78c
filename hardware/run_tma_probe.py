"""Run the TMA probe on a GPU and record what each tensor load wrote to shared memory.

    python3 hardware/run_tma_probe.py --out DIR [--binary PATH] [--commit SHA] [--budget SECONDS]

Cases (tma_probe_cases): tiled 2-D loads with element sizes 1, 2, 4 bytes, swizzle NONE, 32B, 64B,
128B, inner box rows of the swizzle span and half of it, two row counts, destinations at every 128-byte
offset of the 1024-byte repeat, boxes inside the tensor, past its far corner and before its origin;
traversal strides; rank-3 boxes; the NaN fill; and im2col loads of rank 3, 4, 5 with negative and
positive corners, traversal strides and im2col offsets.

The observation of a case is raw: the status of the driver's encoder, how the load ended ("ok", the
CUDA error of a trap, or "timeout" when the mbarrier never completed), and the code found in every
element slot of shared memory the load wrote, from the lowest written slot to the highest (-1 for a
slot left untouched). A code c > 0 names global element c - 1 (linear index, dimension 0 fastest);
0 is the zero fill. tests/hardware_replay/test_tma_replay.py predicts all of it from spec/.
"""
from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tma_probe_cases  # noqa: E402
from run_probe import BUILD, gpu_facts, gpu_source  # noqa: E402
from solver import provenance  # noqa: E402

CASE_FORMAT = "<6I5I5I5I5i3i3iII3IIII"   # struct Case in tma_probe.cu (160 bytes)
WINDOW = 32 * 1024
RECORD = 12 + WINDOW
DATA_TYPES = {"UINT8": 0, "UINT16": 1, "INT32": 3, "FLOAT16": 6, "FLOAT32": 7, "BFLOAT16": 9}
SWIZZLES = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}
OOB = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}


def digits(case) -> int:
    """Runs needed so that every element's code (index + 1) fits: 1-byte elements need two."""
    return 2 if case["element_bytes"] == 1 else 1


def pack(case, digit) -> bytes:
    def five(values, fill):
        return list(values) + [fill] * (5 - len(values))

    def three(values):
        return list(values) + [0] * (3 - len(values))

    return struct.pack(
        CASE_FORMAT, 0 if case["mode"] == "tiled" else 1, len(case["global_dim"]), DATA_TYPES[case["data_type"]],
        case["element_bytes"], SWIZZLES[case["swizzle"]], OOB[case["oob_fill"]],
        *five(case["global_dim"], 1), *five(case.get("box", []), 1), *five(case["element_strides"], 1),
        *five(case["coord"], 0), *three(case.get("lower", [])), *three(case.get("upper", [])),
        case.get("channels", 0), case.get("pixels", 0), *three(case.get("offsets", [])),
        case["expect_bytes"], case["smem_offset"], digit)


def observation(case, runs) -> dict:
    """runs: (encode_status, run_status, base, window) per digit."""
    encode_status, run_status, base, _ = runs[0]
    record = {**case, "encode_status": encode_status}
    if encode_status != 0:
        return record
    statuses = {r[1] for r in runs}
    record["run"] = "ok" if statuses == {0} else ("timeout" if statuses == {-1} else
                                                  f"cuda error {max(statuses)}")
    record["smem_base"] = base
    eb = case["element_bytes"]
    codes = []
    for position in range(0, WINDOW, eb):
        slots = [w[position:position + eb] for *_, w in runs]
        if all(s == b"\xa5" * eb for s in slots):
            codes.append(-1)
            continue
        codes.append(sum(int.from_bytes(s, "little") << (8 * eb * d) for d, s in enumerate(slots)))
    written = [i for i, c in enumerate(codes) if c != -1]
    if written:
        record["written_from"] = base + written[0] * eb
        record["codes"] = codes[written[0]:written[-1] + 1]
    else:
        record["written_from"], record["codes"] = None, []
    return record


def run_all(binary, run_list, budget) -> list:
    """Run every (case, digit); restart after a trap. Returns one raw tuple per run (None: not run)."""
    case_file, out_file = "/tmp/tma_cases.bin", "/tmp/tma_out.bin"
    with open(case_file, "wb") as f:
        f.write(struct.pack("<I", len(run_list)) + b"".join(pack(c, d) for c, d in run_list))
    if os.path.exists(out_file):
        os.remove(out_file)
    started, done = time.time(), 0
    while done < len(run_list) and time.time() - started < budget:
        subprocess.run([binary, case_file, out_file, str(done)])
        done = os.path.getsize(out_file) // RECORD
    raw = open(out_file, "rb").read()
    results = []
    for n in range(len(run_list)):
        if n >= done:
            results.append(None)
            continue
        encode_status, run_status, base = struct.unpack_from("<iiI", raw, n * RECORD)
        results.append((encode_status, run_status, base, raw[n * RECORD + 12:(n + 1) * RECORD]))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", default=os.path.join(HERE, "tma_probe"))
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("--budget", type=float, default=420.0, help="seconds for all runs (restarts included)")
    args = parser.parse_args()
    all_cases = tma_probe_cases.cases()
    run_list = [(c, d) for c in all_cases for d in range(digits(c))]
    results = run_all(args.binary, run_list, args.budget)
    per_case = {}
    for (case, _), result in zip(run_list, results):
        per_case.setdefault(case["id"], []).append(result)
    observations = []
    for case in all_cases:
        runs = per_case[case["id"]]
        if any(r is None for r in runs):
            observations.append({**case, "encode_status": None, "run": "not run (time budget)"})
        else:
            observations.append(observation(case, runs))
    facts = gpu_facts()
    binary = "" if os.path.abspath(args.binary) == os.path.join(HERE, "tma_probe") else f" --binary {args.binary}"
    header = provenance.header(
        what="TMA loads (cp.async.bulk.tensor, tiled and im2col) of hardware/tma_probe_cases.py into coded shared "
             "memory: per case, the encoder's status, how the load ended and the code of every written slot.",
        recorded_by="hardware/run_tma_probe.py",
        command=BUILD.format(name="tma_probe", libs=" -lcuda") +
        f"python3 hardware/run_tma_probe.py --out OUT{binary} --commit {args.commit}",
        source=gpu_source(facts), date=provenance.today(),
        details={"commit": args.commit, "program": "hardware/tma_probe.cu", "cases": "hardware/tma_probe_cases.py",
                 **facts})
    document = {"provenance": header, "cases": observations}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "tma_loads_sm90.json.gz")
    provenance.write_json(path, document, separators=(",", ":"))
    summary = {}
    for o in observations:
        key = (o["mode"], o.get("run", f"encode {o['encode_status']}"))
        summary[key] = summary.get(key, 0) + 1
    print(f"{len(observations)} cases written to {path}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
