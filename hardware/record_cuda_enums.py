"""Record the CUDA driver's tensor-map enumerations (CUtensorMapDataType, CUtensorMapInterleave,
CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill, CUtensorMapIm2ColWideMode) as
cuda-bindings generates them from cuda.h, for tests/spec_tests/test_tma_enums.py: the names and values the
tensor-map documents accept (`tma check` takes the short name, the full name or the value).

    /work/venvs/cutedsl/bin/python hardware/record_cuda_enums.py tests/hardware/cuda_tensormap_enums.json

Host only (no GPU): the enumerations are Python classes of cuda.bindings.driver.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from solver import provenance  # noqa: E402  (standard library only)

ENUMS = ("CUtensorMapDataType", "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
         "CUtensorMapFloatOOBfill", "CUtensorMapIm2ColWideMode")


def main(out: str) -> None:
    from importlib import metadata
    import cuda.bindings.driver as driver
    header = provenance.header(
        what="The CUDA driver's tensor-map enumerations (" + ", ".join(ENUMS) + "): each enumerator's name and "
             "value.",
        recorded_by="hardware/record_cuda_enums.py", command=f"python3 hardware/record_cuda_enums.py {out}",
        source=f"cuda.bindings.driver (cuda-bindings {metadata.version('cuda-bindings')}), generated from cuda.h",
        date=provenance.today(), details={})
    document = {"provenance": header,
                "enums": {name: {e.name: int(e.value) for e in getattr(driver, name)} for name in ENUMS}}
    provenance.write_json(out, document, newline=True, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/hardware/cuda_tensormap_enums.json")
