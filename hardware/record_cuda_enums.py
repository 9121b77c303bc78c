"""Record the CUDA driver's tensor-map enumerations (CUtensorMapDataType, CUtensorMapInterleave,
CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill, CUtensorMapIm2ColWideMode) as
cuda-bindings generates them from cuda.h, for tests/test_tma_enums.py: the names and values the
tensor-map documents accept (`tma check` takes the short name, the full name or the value).

    /work/venvs/cutedsl/bin/python hardware/record_cuda_enums.py tests/hardware/cuda_tensormap_enums.json

Host only (no GPU): the enumerations are Python classes of cuda.bindings.driver.
"""
from __future__ import annotations

import json
import sys

ENUMS = ("CUtensorMapDataType", "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
         "CUtensorMapFloatOOBfill", "CUtensorMapIm2ColWideMode")


def main(out: str) -> None:
    from importlib import metadata
    import cuda.bindings.driver as driver
    document = {"source": "cuda.bindings.driver (cuda-bindings " + metadata.version("cuda-bindings") +
                          "), generated from cuda.h; recorded by hardware/record_cuda_enums.py",
                "enums": {name: {e.name: int(e.value) for e in getattr(driver, name)} for name in ENUMS}}
    with open(out, "w") as handle:
        json.dump(document, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/hardware/cuda_tensormap_enums.json")
