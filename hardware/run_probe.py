"""Run the wgmma probe on a GPU and record what it read, as tests/hardware/ observation files.

    python3 hardware/run_probe.py --out DIR [--binary PATH] [--commit SHA] [--simulate]

Builds the case list (probe_cases.py), writes it in the probe's binary format, runs wgmma_probe,
and turns each accumulator block back into the address of every operand element:
    probing A: element (m, k) = D[m][k];  probing B: element (n, k) = D[k][n]
    (the other operand is the identity block). Each D value is a code; codes of all digit runs of a
    case combine into the element slot, and slot * element_bytes is the absolute address.
A value that is no code, or a non-zero value where the identity block must give zero, marks the
case as not clean (a harness problem, never silently dropped).

--simulate fabricates D from spec's read map instead of running the GPU: it checks this pipeline
(encode cases, decode D) on a machine without one, and is what tests/hardware_replay/test_hardware_pipeline.py runs.
"""
from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import probe_cases as pc  # noqa: E402
from solver import provenance  # noqa: E402

N_MAX = 128
CASE_FORMAT = "<IIIIQQII"     # struct Case in wgmma_probe.cu (40 bytes)


# --- codes (must match code_bits() in wgmma_probe.cu) -------------------------------------------------
def e4m3_value(bits: int) -> float:
    sign, exponent, mantissa = bits >> 7, (bits >> 3) & 15, bits & 7
    return (-1.0) ** sign * 2.0 ** (exponent - 7) * (1 + mantissa / 8)


def e4m3_code_bits(n: int) -> int:
    sign, rest = n & 1, n >> 1
    return (sign << 7) | ((1 + rest // 8) << 3) | (rest % 8)


E4M3_VALUE_TO_CODE = {e4m3_value(e4m3_code_bits(n)): n for n in range(pc.CODE_BASE["e4m3"])}


def codes_from_values(dtype: str, values: np.ndarray) -> np.ndarray:
    """Inverse of code_bits(): the code n of each accumulator value, -1 where it is no code."""
    values = values.astype(np.float32)
    bits = values.view(np.uint32).astype(np.int64)
    sign = bits >> 31
    if dtype in ("bf16", "tf32"):
        exponent = (bits >> 23) & 0xFF
        if dtype == "bf16":
            mantissa, extra = (bits >> 16) & 0x7F, bits & 0xFFFF
            n = sign + 2 * ((exponent - 1) * 128 + mantissa)
        else:
            mantissa, extra = (bits >> 13) & 0x3FF, bits & 0x1FFF
            n = sign + 2 * ((exponent - 1) * 1024 + mantissa)
        ok = (extra == 0) & (exponent >= 1) & (exponent <= 254)
    elif dtype == "f16":
        half = values.astype(np.float16)
        ok = half.astype(np.float32) == values
        hb = half.view(np.uint16).astype(np.int64)
        exponent, mantissa = (hb >> 10) & 31, hb & 1023
        n = (hb >> 15) + 2 * ((exponent - 1) * 1024 + mantissa)
        ok &= (exponent >= 1) & (exponent <= 30)
    else:
        n = np.array([E4M3_VALUE_TO_CODE.get(float(v), -1) for v in values.ravel()],
                     dtype=np.int64).reshape(values.shape)
        ok = n >= 0
    ok &= (n >= 0) & (n < pc.CODE_BASE[dtype])
    return np.where(ok, n, -1)


# --- the binary case file -------------------------------------------------------------------------
def runs(cases: list) -> list:
    """One probe run per (case, digit)."""
    return [(case, digit) for case in cases for digit in range(pc.digits_needed(case["dtype"]))]


def encode_runs(run_list: list) -> bytes:
    out = [struct.pack("<I", len(run_list))]
    for case, digit in run_list:
        probed, onehot = case["descriptor"], pc.ONEHOT_DESCRIPTOR
        if case["operand"] == "A":
            desc_a, desc_b, n, trans = probed, onehot, 64, int(case["major"] == "MN")
        else:
            desc_a, desc_b, n, trans = onehot, probed, 128, 2 * int(case["major"] == "MN")
        out.append(struct.pack(CASE_FORMAT, pc.DTYPE_ID[case["dtype"]], trans, n, digit,
                               desc_a, desc_b, int(case["operand"] == "B"), 0))
    return b"".join(out)


# --- D -> addresses ---------------------------------------------------------------------------------
def element_values(case: dict, block: np.ndarray) -> tuple:
    """(values of the probed elements [mn][k], the values that must be zero)."""
    mn, k = case["mn"], case["k"]
    if case["operand"] == "A":
        return block[:mn, :k], block[:, k:64]
    return block[:k, :mn].T, block[k:, :mn]


def decode(cases: list, run_list: list, blocks: np.ndarray, smem_base: int) -> list:
    by_case = {}
    for (case, digit), block in zip(run_list, blocks):
        by_case.setdefault(case["id"], []).append((digit, block))
    observations = []
    for case in cases:
        slot = np.zeros((case["mn"], case["k"]), dtype=np.int64)
        clean = True
        for digit, block in by_case[case["id"]]:
            values, zeros = element_values(case, block)
            codes = codes_from_values(case["dtype"], values)
            clean &= bool((codes >= 0).all()) and bool((zeros == 0).all())
            slot += np.where(codes >= 0, codes, 0) * pc.CODE_BASE[case["dtype"]] ** digit
        addresses = (slot * pc.ELEMENT_BYTES[case["dtype"]]).tolist()
        record = {key: case[key] for key in ("id", "operand", "dtype", "major", "swizzle", "strides",
                                            "lbo", "sbo", "base_offset", "mn", "k")}
        record["descriptor"] = "0x%016x" % (case["descriptor"] + (smem_base >> 4))
        record["start_address"] = case["start_address"] + smem_base
        record["clean"] = clean
        record["addresses"] = addresses
        observations.append(record)
    return observations


def spec_addresses(case: dict, smem_base: int) -> list:
    """addresses[mn][k] spec's read map (anchored phase model) gives the case at that shared base."""
    from spec.mma import descriptor
    from spec.mma import readmap
    d = descriptor.decode("sm90", case["descriptor"] + (smem_base >> 4))
    return readmap.read_addresses(readmap.make_operand(d, case["dtype"], case["major"], case["mn"]))


def simulate(run_list: list, smem_base: int, addresses_of=spec_addresses) -> np.ndarray:
    """D blocks as a GPU would produce them whose wgmma reads element (mn, k) of each case from
    addresses_of(case, smem_base)[mn][k] (by default spec's read map; tests/hardware_replay replays the
    H100's recorded addresses through it, to test the encoding and decoding apart from spec)."""
    blocks = np.zeros((len(run_list), 64, N_MAX), dtype=np.float32)
    for i, (case, digit) in enumerate(run_list):
        slots = np.array(addresses_of(case, smem_base)) // pc.ELEMENT_BYTES[case["dtype"]]
        n = (slots // pc.CODE_BASE[case["dtype"]] ** digit) % pc.CODE_BASE[case["dtype"]]
        values = _values_of_codes(case["dtype"], n)
        if case["operand"] == "A":
            blocks[i, :case["mn"], :case["k"]] = values
        else:
            blocks[i, :case["k"], :case["mn"]] = values.T
    return blocks


def _values_of_codes(dtype: str, n: np.ndarray) -> np.ndarray:
    sign, rest = n & 1, n >> 1
    if dtype == "bf16":
        bits = (sign << 31) | ((1 + rest // 128) << 23) | ((rest % 128) << 16)
    elif dtype == "tf32":
        bits = (sign << 31) | ((1 + rest // 1024) << 23) | ((rest % 1024) << 13)
    elif dtype == "f16":
        half = ((sign << 15) | ((1 + rest // 1024) << 10) | (rest % 1024)).astype(np.uint16)
        return half.view(np.float16).astype(np.float32)
    else:
        return np.vectorize(lambda x: e4m3_value(e4m3_code_bits(int(x))))(n).astype(np.float32)
    return bits.astype(np.uint32).view(np.float32)


def gpu_facts() -> dict:
    facts = {}
    try:
        line = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        facts["gpu"], facts["driver"] = [x.strip() for x in line.split(",")]
        version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
        facts["nvcc"] = version.strip().splitlines()[-1]
    except (OSError, subprocess.CalledProcessError, IndexError) as error:
        facts["error"] = str(error)
    return facts


def gpu_source(facts: dict) -> str:
    """The provenance header's source sentence of gpu_facts(): the GPU, its driver, the CUDA compiler."""
    return provenance.sentence(("", facts.get("gpu")), ("driver", facts.get("driver")), ("nvcc:", facts.get("nvcc")))


BUILD = ("cd hardware && nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o {name} {name}.cu{libs} "
         "&& cd .. && ")       # the probe's build, as the README gives it (the recorded command starts with it)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", default=os.path.join(HERE, "wgmma_probe"))
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("--simulate", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = pc.cases()
    run_list = runs(cases)
    if args.simulate:
        smem_base, blocks = 0, simulate(run_list, 0)
        facts = {"gpu": "simulated from spec (anchored phase model)"}
    else:
        case_file, out_file = os.path.join(args.out, "cases.bin"), "/tmp/wgmma_probe_out.bin"
        with open(case_file, "wb") as f:
            f.write(encode_runs(run_list))
        subprocess.run([args.binary, case_file, out_file], check=True)
        raw = open(out_file, "rb").read()
        smem_base, count = struct.unpack_from("<II", raw)
        assert count == len(run_list), (count, len(run_list))
        blocks = np.frombuffer(raw, dtype=np.float32, offset=8).reshape(count, 64, N_MAX)
        os.remove(case_file)
        facts = gpu_facts()
    observations = decode(cases, run_list, blocks, smem_base)
    if args.simulate:
        command = f"python3 hardware/run_probe.py --out OUT --simulate --commit {args.commit}"
    else:
        binary = "" if os.path.abspath(args.binary) == os.path.join(HERE, "wgmma_probe") else f" --binary {args.binary}"
        command = (BUILD.format(name="wgmma_probe", libs="") +
                   f"python3 hardware/run_probe.py --out OUT{binary} --commit {args.commit}")
    header = provenance.header(
        what="What wgmma read through each sm90 descriptor of hardware/probe_cases.py: per case, the descriptor and "
             "the absolute shared-memory address of every operand element.",
        recorded_by="hardware/run_probe.py", command=command, source=gpu_source(facts), date=provenance.today(),
        details={"commit": args.commit, "program": "hardware/wgmma_probe.cu", "cases": "hardware/probe_cases.py",
                 "smem_base": smem_base, **facts})
    document = {"provenance": header, "cases": observations}
    path = os.path.join(args.out, "wgmma_sm90_reads.json.gz")
    provenance.write_json(path, document, separators=(",", ":"))
    clean = sum(o["clean"] for o in observations)
    print(f"{len(observations)} cases, {clean} clean, smem base {smem_base}, written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
