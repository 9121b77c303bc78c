"""A stand-in for a compiler's own tensor-map check, to try `layoutproof fuzz --against` with no GPU.

docs/TUTORIALS.md ("Fuzz your compiler in CI") runs it:

    layoutproof fuzz --target tensormap --arch sm90 --violate tma.map.global_address_alignment \
        --count 10 --seed 1 --against "python3 examples/compiler_under_test_tma.py"

It speaks the line protocol of `fuzz --against` (solver/fuzz/adapters/protocol.py): it reads fuzz records,
one JSON object a line, on stdin, and answers each, before reading the next, with one JSON line on stdout:
{"verdict": "accept" | "refuse", "detail": "<one line>"}, or a null verdict for a record it does not judge.
`layoutproof` lists every record whose verdict differs from its own ("refuse" when it labels the case
"refused", "accept" otherwise).

The check below is the kind a compiler does before it calls cuTensorMapEncodeTiled / Im2col, and it has a
gap on purpose: it asks for a 16-byte aligned globalAddress and forgets that interleave 32B needs a
32-byte aligned one (rule tma.map.global_address_alignment, from the CUDA Driver API's
cuTensorMapEncodeTiled, globalAddress). Replace `verdict` with a call into your own compiler. Standard
library only: any python3 runs it.
"""
import json
import sys

ELEMENT_BYTES = {"UINT8": 1, "UINT16": 2, "UINT32": 4, "INT32": 4, "UINT64": 8, "INT64": 8, "FLOAT16": 2,
                 "FLOAT32": 4, "FLOAT64": 8, "BFLOAT16": 2, "FLOAT32_FTZ": 4, "TFLOAT32": 4,
                 "TFLOAT32_FTZ": 4}
SWIZZLE_SPAN = {"32B": 32, "64B": 64, "96B": 96, "128B": 128, "128B_ATOM_32B": 128,
                "128B_ATOM_32B_FLIP_8B": 128, "128B_ATOM_64B": 128}


def verdict(case: dict):
    """("accept" | "refuse", detail) for one tensor-map case (a `tma check` document)."""
    address = case.get("globalAddress", 0)
    address = int(address, 0) if isinstance(address, str) else int(address)
    if address % 16:
        return "refuse", f"globalAddress {address:#x} is not 16-byte aligned"
    swizzle = str(case.get("swizzle", "NONE")).upper()
    elem = ELEMENT_BYTES.get(str(case.get("dataType", "")).upper())
    if (case.get("encode") == "tiled" and str(case.get("interleave", "NONE")).upper() == "NONE"
            and swizzle in SWIZZLE_SPAN and elem and case.get("boxDim")):
        if case["boxDim"][0] * elem > SWIZZLE_SPAN[swizzle]:
            return "refuse", f"boxDim[0] spans {case['boxDim'][0] * elem} bytes, wider than the {swizzle} swizzle"
    return "accept", "tensor map built"


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            answer = {"verdict": None, "detail": f"not JSON: {error}"}
        else:
            if isinstance(record, dict) and record.get("target") == "tensormap":
                said, detail = verdict(record["case"])
                answer = {"verdict": said, "detail": detail}
            else:
                answer = {"verdict": None, "detail": "not a tensormap case"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
