"""Record held-out scale-factor layouts: tests/hardware/scales_heldout.json.gz (issue 28's held-out check).

Each IMPLEMENTATION is a quantizer's or kernel library's own scale swizzle, reproduced with torch from its
public source (repository, path and commit below; the reproductions are not part of this repository: pass
the directory that holds them, one module per implementation with `layout(rows, blocks) -> list`). For a
scale matrix S[r][c] = r * blocks + c the module applies the implementation's swizzle and returns the
flattened bytes in memory order, -1 where the implementation pads. The file stores, per implementation and
shape, that list; tests/hardware_replay/test_scales_heldout.py finds each S[r][c] in it and compares the position with
`layoutproof scales map` (spec.scales.layouts), which was written without these sources.

    /path/to/python-with-torch hardware/run_scales_heldout.py DIR    # writes tests/hardware/scales_heldout.json.gz
"""
from __future__ import annotations

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from solver import provenance  # noqa: E402

SHAPES = [(128, 4), (128, 8), (256, 4), (256, 8), (256, 12), (384, 16), (1, 1), (127, 3), (200, 5), (129, 7),
          (300, 10), (256, 16), (128, 12)]
IMPLEMENTATIONS = [
    {"name": "vllm", "module": "vllm_swizzle_blockscale", "function": "layout", "independent": True,
     "repository": "vllm-project/vllm", "path": "vllm/model_executor/layers/quantization/utils/nvfp4_utils.py",
     "commit": "0b70ce189816f5dbfcdd323f5b49640f97fc78c4", "upstream": "swizzle_blockscale"},
    {"name": "tensorrt-llm", "module": "trtllm_swizzle_sf_ref", "function": "layout", "independent": True,
     "repository": "NVIDIA/TensorRT-LLM", "path": "tests/unittest/_torch/thop/parallel/test_fp4_swizzle.py",
     "commit": "08d5a8132edbcd8b2390549ae58cb6d3bdac2ced", "upstream": "swizzle_sf_ref"},
    {"name": "transformer-engine", "module": "transformer_engine_mxfp8_swizzle", "function": "layout",
     "independent": True, "repository": "NVIDIA/TransformerEngine", "path": "tests/pytorch/mxfp8/mxfp8_utils.py",
     "commit": "d0067d0da6cb01811b8072a7d304f0e00344ce2b", "upstream": "_rowwise_swizzle_mxfp8_scale (on the "
     "scale buffer TE allocates padded to 128 x 4)"},
    {"name": "flashinfer", "module": "flashinfer_swizzle_block_scale", "function": "layout", "independent": True,
     "repository": "flashinfer-ai/flashinfer",
     "path": "flashinfer/fused_moe/cute_dsl/blackwell_sm12x/moe_w4a16_fp4_helpers.py",
     "commit": "fb28d7242b3506a2348265962041acc1fb56cca4", "upstream": "swizzle_block_scale"},
    {"name": "flashinfer-unswizzle", "module": "flashinfer_swizzle_block_scale",
     "function": "layout_from_unswizzle_formula", "independent": True, "repository": "flashinfer-ai/flashinfer",
     "path": "flashinfer/gemm/gemm_bf16_fp4.py", "commit": "fb28d7242b3506a2348265962041acc1fb56cca4",
     "upstream": "_unswizzle_sf_128x4 (its offset formula, inverted)"},
    {"name": "triton-kernels", "module": "triton_kernels_blackwell_scale", "function": "layout", "independent": True,
     "repository": "triton-lang/triton",
     "path": "python/triton_kernels/triton_kernels/tensor_details/layout_details/blackwell_scale.py",
     "commit": "00a287a7530fdc5fe89a2a01ac1de19f66aca85a",
     "upstream": "BlackwellMXScaleLayoutTransformation.swizzle_data (weight scales, given as K blocks x N)"},
    {"name": "deepgemm", "module": "deepgemm_packed_ue8m0_mn_major", "function": "layout", "independent": True,
     "repository": "deepseek-ai/DeepGEMM", "path": "csrc/jit_kernels/impls/smxx_layout.hpp",
     "commit": "54e22612409371d6364144b69086735beb54e98b",
     "upstream": "get_mn_major_tma_aligned_packed_ue8m0_tensor_torch (the bytes of its int32 words)"},
    {"name": "deepgemm-mega-moe", "module": "deepgemm_mega_moe_utccp", "function": "layout", "independent": True,
     "repository": "deepseek-ai/DeepGEMM", "path": "deep_gemm/mega/__init__.py",
     "commit": "54e22612409371d6364144b69086735beb54e98b", "upstream": "_transpose_sf_for_utccp"},
    {"name": "torchao", "module": "torchao_to_blocked", "function": "layout", "independent": False,
     "repository": "pytorch/ao", "path": "torchao/prototype/mx_formats/utils.py", "commit": "047c25c4",
     "upstream": "to_blocked (evidence the layout was written from, recorded beside the held-out ones)"},
    {"name": "sglang", "module": "sglang_swizzle_blockscale", "function": "layout", "independent": False,
     "repository": "sgl-project/sglang", "path": "python/sglang/srt/layers/quantization/modelopt_quant.py",
     "commit": "003ca3e5152c94c92d88fd43d5eb58e55201e895",
     "upstream": "ModelOptNvFp4FusedMoEMethod.swizzle_blockscale (\"Adapted from vllm\")"},
]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "hardware", "scales_heldout.json.gz")


def main(directory: str) -> None:
    import torch
    sys.path.insert(0, directory)
    header = provenance.header(
        what="Held-out scale-factor layouts (issue 28): per implementation (a quantizer's or kernel library's own "
             "scale swizzle, reproduced with torch from its public source) and shape, the scale bytes in memory "
             "order.",
        recorded_by="hardware/run_scales_heldout.py", command="python3 hardware/run_scales_heldout.py DIR",
        source=provenance.sentence(("torch", torch.__version__)) + "; each implementation's public source at the "
               "repository, path and commit recorded with it",
        date=provenance.today(), details={"torch": torch.__version__, "how": __doc__.split("\n\n")[0]})
    out = {"provenance": header, "implementations": []}
    for spec in IMPLEMENTATIONS:
        function = getattr(importlib.import_module(spec["module"]), spec["function"])
        layouts = []
        for rows, blocks in SHAPES:
            try:
                layouts.append({"rows": rows, "blocks": blocks, "bytes": [int(x) for x in function(rows, blocks)]})
            except Exception as error:          # the implementation refuses the shape (an assert, a reshape)
                layouts.append({"rows": rows, "blocks": blocks, "error": f"{type(error).__name__}: {error}"[:200]})
        out["implementations"].append({k: v for k, v in spec.items() if k not in ("module", "function")}
                                      | {"layouts": layouts})
    provenance.write_json(OUT, out, separators=(",", ":"))
    print(OUT)


if __name__ == "__main__":
    main(sys.argv[1])
