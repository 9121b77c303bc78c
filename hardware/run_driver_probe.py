"""Ask the CUDA driver's tensor-map encoders about the sets of hardware/driver_probe_sets.py (issue 14).

    python3 hardware/run_driver_probe.py --out DIR [--commit SHA] NAME:SEED:COUNT ...

Needs a GPU and cuda-bindings. Each set's documents are regenerated from (NAME, SEED, COUNT) and passed to
cuTensorMapEncodeTiled / Im2col / Im2colWide through solver/fuzz/adapters/driver_encode.py (the same
document -> call conversion as `layoutproof fuzz --against`; globalAddress rebased on a 64 KiB-aligned
device allocation). Written: DIR/driver_probe_<arch>.json.gz with, per set, its name, seed, count, the
SHA-256 of its documents (driver_probe_sets.digest) and one result code per document (CODES: S success,
V CUDA_ERROR_INVALID_VALUE, U a value the C API cannot take, with its reason in "unrepresentable"; any
other CUresult by name in "other"). tests/hardware_replay/test_driver_probe_replay.py replays it against spec/tma.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import driver_probe_sets  # noqa: E402
from run_probe import gpu_facts, gpu_source  # noqa: E402
from solver import provenance  # noqa: E402
from solver.fuzz.adapters.driver_encode import (BINDING_REFUSALS, SUCCESS, checked, describe, encode,  # noqa: E402
                                                open_driver, result_name)

CODES = {"S": SUCCESS, "V": "CUDA_ERROR_INVALID_VALUE", "U": "unrepresentable", "O": "other"}


def answer_set(driver, base: int, name: str, seed: int, count: int) -> dict:
    documents = driver_probe_sets.documents(name, seed, count)
    codes, unrepresentable, other = [], {}, {}
    for index, document in enumerate(documents):
        try:
            result = result_name(encode(driver, document, base)[0])
        except BINDING_REFUSALS as error:
            codes.append("U")
            unrepresentable[str(index)] = describe(error)
            continue
        if result == SUCCESS:
            codes.append("S")
        elif result == CODES["V"]:
            codes.append("V")
        else:
            codes.append("O")
            other[str(index)] = result
    return {"name": name, "seed": seed, "count": count, "sha256": driver_probe_sets.digest(documents),
            "results": "".join(codes), "unrepresentable": unrepresentable, "other": other}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("sets", nargs="+", help="NAME:SEED:COUNT")
    args = parser.parse_args()
    session = open_driver(0, allocation_bytes=1 << 22)
    driver = session.driver
    major = checked(driver, driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, session.device))
    minor = checked(driver, driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, session.device))
    arch = f"sm{major}{minor}"
    answered = []
    for text in args.sets:
        name, seed, count = text.split(":")
        began = time.time()
        answered.append(answer_set(driver, session.base_address, name, int(seed), int(count)))
        codes = answered[-1]["results"]
        print(f"{name}:{seed}: {len(codes)} calls, {codes.count('S')} accepted, {codes.count('V')} invalid, "
              f"{codes.count('U')} unrepresentable, {codes.count('O')} other, {time.time() - began:.1f} s", flush=True)
    facts = gpu_facts()
    header = provenance.header(
        what="The CUDA driver's tensor-map encoders on issue 14's probe sets (hardware/driver_probe_sets.py): per "
             "set, its name, seed, count, the SHA-256 of its documents and the driver's result code for each "
             "document.",
        recorded_by="hardware/run_driver_probe.py",
        command=f"python3 hardware/run_driver_probe.py --out OUT --commit {args.commit} " + " ".join(args.sets),
        source=gpu_source(facts), date=provenance.today(),
        details={"commit": args.commit, "sets": "hardware/driver_probe_sets.py", "arch": arch, "codes": CODES,
                 **facts})
    document = {"provenance": header, "sets": answered}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"driver_probe_{arch}.json.gz")
    provenance.write_json(path, document, separators=(",", ":"))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
