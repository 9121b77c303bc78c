"""The tensor maps a Triton kernel is launched with, from what its compilation records (no Triton needed).

Triton passes each host TensorDescriptor argument as a `.param .align 64 .b8 NAME[128]` (the CUtensorMap,
__grid_constant__), followed by its shape and then its strides, one scalar .param each, outermost first
(the PTX of every corpus kernel: tests/fixtures/ptx/corpus/triton/manifest.json, `param_names`). The
compiled kernel's `metadata.tensordesc_meta` lists, in .param order, each descriptor's block shape (outermost
first), swizzle (CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B) and element type (in the device's
encoding: DEVICE_TO_HOST below).
Triton's launcher encodes the map with cuTensorMapEncodeTiled from exactly these: dimensions and box
reversed (dimension 0 innermost), strides in bytes, element strides 1, no interleave, zero fill
(triton/backends/nvidia/driver.py, make_tensordesc_arg; replayed on the H100 by
hardware/record_kernel_descriptors.py, whose kernels computed the right product with such maps).
"""
from __future__ import annotations

import re

from spec.rule import SpecError
from spec.tma.tensormap_params import DATA_TYPES

RULE = "audit.tma.maps"
SWIZZLES = {0: "NONE", 1: "32B", 2: "64B", 3: "128B"}
# tensordesc_meta's elem_type is the device's encoding (PTX's tensormap.replace .elemtype: 8 f32.ftz, 9 f64,
# 10 bf16), not cuda.h's CUtensorMapDataType (8 f64, 9 bf16, 10 f32.ftz); the launcher maps one to the
# other (triton/backends/nvidia/driver.py, TMA_DTYPE_DEVICE_TO_HOST). Found by the held-out check: a bf16
# kernel's maps came out FLOAT32_FTZ.
DEVICE_TO_HOST = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}
_DESCRIPTOR_PARAM = re.compile(r"\.param\s+\.align\s+\d+\s+\.b8\s+([\w$]+)\s*\[\s*128\s*\]")
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.DOTALL)
_PARAM_NAME = re.compile(r"\.param\b[^,]*?([\w$]+)\s*(?:\[\s*\d+\s*\])?\s*(?:,|$)")


def entry_params(ptx: str, kernel: str = None) -> list:
    """[(name, is a 128-byte descriptor)] of the .entry's parameters, in order."""
    for m in _ENTRY.finditer(ptx):
        if kernel is None or m.group(1) == kernel:
            declared = [d.strip() for d in m.group(2).split(",") if d.strip()]
            return [(_PARAM_NAME.search(d + ",").group(1), bool(_DESCRIPTOR_PARAM.search(d))) for d in declared]
    raise SpecError("kernel", kernel or "(first)", "no .entry of that name in the PTX", RULE)


def tensormaps(ptx: str, tensordesc_meta: list, params: dict, kernel: str = None) -> dict:
    """{descriptor .param name: tensor-map document (as `tma check --tensormap` reads it)} for each host
    TensorDescriptor of the kernel, its shape and strides read from `params` (.param name -> value)."""
    entries = entry_params(ptx, kernel)
    descriptors = [i for i, (_, is_descriptor) in enumerate(entries) if is_descriptor]
    if len(descriptors) != len(tensordesc_meta):
        raise SpecError("tensordesc_meta", len(tensordesc_meta), f"the kernel has {len(descriptors)} descriptor "
                        "parameters (.b8 [128])", RULE)
    by_type = {t.driver_enum: t for t in DATA_TYPES.values()}
    documents = {}
    for meta in tensordesc_meta:
        _check_meta(meta)
    for index, meta in zip(descriptors, tensordesc_meta):
        if meta.get("is_im2col") or meta.get("fp4_padded"):
            continue                    # (im2col and padded fp4 maps: not built here; audit.tma.maps names them)
        rank = len(meta["block_size"])
        scalars = [name for name, _ in entries[index + 1:index + 1 + 2 * rank]]
        missing = [name for name in scalars if name not in params]
        if len(scalars) != 2 * rank or missing:
            raise SpecError("param", ", ".join(missing) or entries[index][0],
                            f"the shape and strides of descriptor {entries[index][0]} (give --param)", RULE)
        shape, strides = [params[n] for n in scalars[:rank]], [params[n] for n in scalars[rank:]]
        data_type = by_type.get(DEVICE_TO_HOST.get(meta["elem_type"]))
        if data_type is None or meta["swizzle"] not in SWIZZLES:
            raise SpecError("tensordesc_meta", meta, "an element type or swizzle cuda.h does not name", RULE)
        size = meta["elem_size"]
        documents[entries[index][0]] = {
            "encode": "tiled", "dataType": data_type.name, "rank": rank, "globalAddress": "0x7f0000000000",
            "globalDim": shape[::-1], "globalStrides": [s * size for s in strides[::-1][1:]],
            "boxDim": list(meta["block_size"])[::-1], "elementStrides": [1] * rank, "interleave": "NONE",
            "swizzle": SWIZZLES[meta["swizzle"]], "l2Promotion": "L2_256B", "oobFill": "NONE"}
    return documents


def _check_meta(meta) -> None:
    """One tensordesc_meta entry as Triton writes it (SpecError naming what is off)."""
    fields = {"swizzle": int, "elem_size": int, "elem_type": int, "block_size": list}
    if not isinstance(meta, dict):
        raise SpecError("tensordesc_meta", meta, "each entry an object with " + ", ".join(fields), RULE)
    for key, kind in fields.items():
        value = meta.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SpecError("tensordesc_meta", f"{key}={value!r}", f"expected {kind.__name__}", RULE)
    if not 1 <= len(meta["block_size"]) <= 5 or not all(isinstance(b, int) and b > 0 for b in meta["block_size"]):
        raise SpecError("tensordesc_meta", f"block_size={meta['block_size']!r}", "1 to 5 positive sizes", RULE)
    if meta["elem_size"] not in (1, 2, 4, 8):
        raise SpecError("tensordesc_meta", f"elem_size={meta['elem_size']!r}", "1, 2, 4 or 8 bytes", RULE)
