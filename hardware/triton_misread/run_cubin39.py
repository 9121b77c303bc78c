"""Launch the kernels Triton 3.9.0 compiled (locally, GPUTarget cuda 90, no GPU: k39/*.cubin, and the
PTX with its .version lowered to 8.7 for the device's 13.0 driver) on the GPU through the CUDA driver
(cupy.RawModule), with the same A, B as run_misread.py, and compare D with torch.

    python3 hardware/triton_misread/run_cubin39.py OUTDIR
"""
import json
import os
import sys

import cupy
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SHAPES = {"B16x8_sw0_T": (64, 8, 16), "B16x8_sw0_N": (64, 8, 16), "B16x8_sw32_T": (64, 8, 16)}


def main(out):
    os.makedirs(out, exist_ok=True)
    meta = json.load(open(os.path.join(HERE, "k39", "meta.json")))
    result = {"compiled_by": "triton 3.9.0 (local, no GPU)", "device": torch.cuda.get_device_name(),
              "driver": cupy.cuda.runtime.driverGetVersion(), "variants": {}}
    for name, (M, N, K) in SHAPES.items():
        gen = torch.Generator(device="cpu").manual_seed(1234)
        A = torch.randn(M, K, generator=gen).to(torch.bfloat16).cuda()
        B = torch.randn(K, N, generator=gen).to(torch.bfloat16).cuda()
        ref = A.float() @ B.float()
        row = {}
        for form in ("cubin", "v87.ptx"):
            D = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
            try:
                mod = cupy.RawModule(path=os.path.join(HERE, "k39", f"{name}.{form}"))
                fn = mod.get_function("mma_kernel")
                shared = int(meta[name]["shared"])
                if shared > 48 * 1024:
                    fn.max_dynamic_shared_size_bytes = shared
                fn((1, 1, 1), (128, 1, 1), (np.uint64(A.data_ptr()), np.uint64(B.data_ptr()),
                                            np.uint64(D.data_ptr()), np.uint64(0), np.uint64(0)),
                   shared_mem=shared)
                torch.cuda.synchronize()
                err = (D - ref).abs()
                row[form] = {"rel_error": float((err.norm() / ref.norm()).item()), "max_abs_error": float(err.max().item()),
                             "wrong_elements": int((err > 1e-3 * ref.abs().max()).sum().item()), "elements": M * N,
                             "nan": bool(torch.isnan(D).any().item()), "D": D.tolist()}
            except Exception as error:   # noqa: BLE001
                row[form] = {"error": " ".join(f"{type(error).__name__}: {error}".split())[:500]}
            print(name, form, json.dumps({k: v for k, v in row[form].items() if k != "D"}), flush=True)
        row.update(A=A.float().tolist(), B=B.float().tolist(), ref=ref.tolist())
        result["variants"][name] = row
    json.dump(result, open(os.path.join(out, "results39.json"), "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
