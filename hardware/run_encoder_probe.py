"""Ask the CUDA driver's tensor-map encoders to accept or refuse every argument set of encoder_cases.py.

    python3 hardware/run_encoder_probe.py --out DIR [--commit SHA]

Needs a GPU and cuda-bindings (cuda.bindings.driver). Each case's document gets the real address of a
64 KiB-aligned device allocation plus its globalAddressOffset as "globalAddress" (the recorded document
is exactly what was passed, a `layoutproof tma check` parameter document), then goes to
cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col or cuTensorMapEncodeIm2colWide. Recorded per case:
the CUresult name, and for accepted ones the 128-byte tensor map (hex), in
DIR/tensormap_encode_<arch>.json.gz. tests/hardware_replay/test_encoder_replay.py replays it against spec/tma/tensormap.py.
The document -> encoder-call conversion (`encode`) is solver/fuzz/adapters/driver_encode.py's, shared with
`layoutproof fuzz --against "python -m solver.fuzz.adapters.driver_encode"`.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))   # the repository root, for solver.adapters
import encoder_cases  # noqa: E402
from run_probe import gpu_facts, gpu_source  # noqa: E402
from solver import provenance  # noqa: E402
# The document -> encoder call conversion is shared with `layoutproof fuzz --against`'s driver adapter:
# it passes rank-1 maps one unused stride (cuda-bindings would pass an empty list as a null pointer,
# which a C caller never does), and arrays with exactly the entries the driver reads.
from solver.fuzz.adapters.driver_encode import checked, encode, open_driver, result_name, tensor_map_hex  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="unknown")
    args = parser.parse_args()
    session = open_driver(0, allocation_bytes=1 << 22)
    driver, device, base = session.driver, session.device, session.base_address

    def ok(result):
        return checked(driver, result)

    major = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    records = []
    for case in encoder_cases.cases():
        document = dict(case["document"])
        document["globalAddress"] = base + document.pop("globalAddressOffset")
        try:
            result = encode(driver, document)
            err, tensor_map = result[0], result[1]
            record = {"result": result_name(err)}
            if err == driver.CUresult.CUDA_SUCCESS:
                record["tensor_map"] = tensor_map_hex(tensor_map)
        except Exception as error:  # a value the bindings cannot pass to C at all
            record = {"result": f"exception: {type(error).__name__}: {error}"}
        records.append({**{k: case[k] for k in ("id", "base", "factor")}, "document": document, **record})
    arch = f"sm{major}{minor}"
    facts = gpu_facts()
    header = provenance.header(
        what="The CUDA driver's tensor-map encoders on the argument sets of hardware/encoder_cases.py: per set, the "
             "document passed, the CUresult and, when accepted, the 128-byte tensor map.",
        recorded_by="hardware/run_encoder_probe.py",
        command=f"python3 hardware/run_encoder_probe.py --out OUT --commit {args.commit}",
        source=gpu_source(facts), date=provenance.today(),
        details={"commit": args.commit, "cases": "hardware/encoder_cases.py", "arch": arch, "allocation_base": base,
                 **facts})
    document = {"provenance": header, "cases": records}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"tensormap_encode_{arch}.json.gz")
    provenance.write_json(path, document, separators=(",", ":"))
    accepted = sum(r["result"] == "CUDA_SUCCESS" for r in records)
    print(f"{len(records)} argument sets, {accepted} accepted by the driver, written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
