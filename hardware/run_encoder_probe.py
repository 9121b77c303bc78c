"""Ask the CUDA driver's tensor-map encoders to accept or refuse every argument set of encoder_cases.py.

    python3 hardware/run_encoder_probe.py --out DIR [--commit SHA]

Needs a GPU and cuda-bindings (cuda.bindings.driver). Each case's document gets the real address of a
64 KiB-aligned device allocation plus its globalAddressOffset as "globalAddress" (the recorded document
is exactly what was passed, a `layoutproof tma check` parameter document), then goes to
cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col or cuTensorMapEncodeIm2colWide. Recorded per case:
the CUresult name, and for accepted ones the 128-byte tensor map (hex), in
DIR/tensormap_encode_<arch>.json.gz. tests/test_encoder_replay.py replays it against spec/tensormap.py.
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import encoder_cases  # noqa: E402
from run_probe import gpu_facts  # noqa: E402


def encode(driver, document):
    d = document
    dtype = getattr(driver.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + d["dataType"])
    interleave = getattr(driver.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_" + d["interleave"])
    swizzle = getattr(driver.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + d["swizzle"])
    l2 = getattr(driver.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_" + d["l2Promotion"])
    oob = getattr(driver.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_" + d["oobFill"])
    u64 = lambda values: [driver.cuuint64_t(v) for v in values]  # noqa: E731
    u32 = lambda values: [driver.cuuint32_t(v) for v in values]  # noqa: E731
    # A rank-1 map has no strides; cuda-bindings would pass an empty list as a null pointer, which a C
    # caller never does, so one unused stride goes along.
    strides = d["globalStrides"] or [0]
    common = (dtype, d["rank"], d["globalAddress"], u64(d["globalDim"]), u64(strides))
    element_strides = u32(d["elementStrides"])
    if d["encode"] == "tiled":
        return driver.cuTensorMapEncodeTiled(*common, u32(d["boxDim"]), element_strides, interleave, swizzle, l2, oob)
    if d["encode"] == "im2col":
        return driver.cuTensorMapEncodeIm2col(*common, d["pixelBoxLowerCorner"], d["pixelBoxUpperCorner"],
                                              d["channelsPerPixel"], d["pixelsPerColumn"], element_strides,
                                              interleave, swizzle, l2, oob)
    mode = getattr(driver.CUtensorMapIm2ColWideMode, "CU_TENSOR_MAP_IM2COL_WIDE_MODE_" + d["mode"])
    return driver.cuTensorMapEncodeIm2colWide(*common, d["pixelBoxLowerCornerWidth"], d["pixelBoxUpperCornerWidth"],
                                              d["channelsPerPixel"], d["pixelsPerColumn"], element_strides,
                                              interleave, mode, swizzle, l2, oob)


def tensor_map_hex(tensor_map) -> str:
    words = getattr(tensor_map, "opaque", None)
    if words is None:
        return ""
    return "".join(int(w).to_bytes(8, "little").hex() for w in words)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="unknown")
    args = parser.parse_args()
    from cuda.bindings import driver

    def ok(result):
        err = result[0] if isinstance(result, tuple) else result
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"driver setup failed: {err}")
        return result[1] if isinstance(result, tuple) and len(result) > 1 else None

    ok(driver.cuInit(0))
    device = ok(driver.cuDeviceGet(0))
    context = ok(driver.cuDevicePrimaryCtxRetain(device))
    ok(driver.cuCtxSetCurrent(context))
    major = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = ok(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    allocation = int(ok(driver.cuMemAlloc(1 << 22)))
    base = (allocation + 0xFFFF) & ~0xFFFF
    records = []
    for case in encoder_cases.cases():
        document = dict(case["document"])
        document["globalAddress"] = base + document.pop("globalAddressOffset")
        try:
            result = encode(driver, document)
            err, tensor_map = result[0], result[1]
            record = {"result": err.name if hasattr(err, "name") else str(err)}
            if err == driver.CUresult.CUDA_SUCCESS:
                record["tensor_map"] = tensor_map_hex(tensor_map)
        except Exception as error:  # a value the bindings cannot pass to C at all
            record = {"result": f"exception: {type(error).__name__}: {error}"}
        records.append({**{k: case[k] for k in ("id", "base", "factor")}, "document": document, **record})
    arch = f"sm{major}{minor}"
    document = {"harness": {"commit": args.commit, "program": "hardware/run_encoder_probe.py",
                            "cases": "hardware/encoder_cases.py", "date": datetime.date.today().isoformat(),
                            "arch": arch, "allocation_base": base, **gpu_facts()},
                "cases": records}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"tensormap_encode_{arch}.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump(document, f, separators=(",", ":"))
    accepted = sum(r["result"] == "CUDA_SUCCESS" for r in records)
    print(f"{len(records)} argument sets, {accepted} accepted by the driver, written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
