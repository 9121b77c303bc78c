"""Record Triton's own LinearLayout (triton._C.libtriton.linear_layout, Triton 3.9, host only, no GPU) on
seeded random layouts and on Gluon's NVMMASharedLayout, for tests/hardware_replay/test_triton_linear_layout_replay.py.

For each random layout (input dimensions register/lane/warp/block, 0-4 bases each; 1-3 output
dimensions of power-of-two sizes; bases drawn below the sizes) it keeps what Triton says: its printout
(LinearLayout::toString), its matrix view (which output bit each input bit sets: the flattening order),
is_injective, is_surjective, and apply() at a few inputs. For NVMMASharedLayout (swizzle 0/32/64/128
bytes, 8/16/32-bit elements, transposed or not, several shapes) it keeps the shared layout's
offset_bases (element offset -> tensor coordinate), as Gluon's to_linear_layout gives them.

Run with a Python that has Triton (3.9 was used):
    /work/venvs/triton/bin/python hardware/run_triton_linear_layout.py tests/hardware/triton_linear_layout.json.gz
The output is the same bytes for the same Triton on the same day (seeded, sorted keys, gzip mtime 0; the
provenance header, solver/provenance.py, records the date).
"""
from __future__ import annotations

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from solver import provenance  # noqa: E402  (standard library only)

SEED = 16
COUNT = 400
IN_DIMS = ("register", "lane", "warp", "block")


def random_layouts(rng: random.Random):
    for _ in range(COUNT):
        out_names = [f"dim{k}" for k in range(rng.randint(1, 3))]
        out_sizes = [1 << rng.randint(0, 4) for _ in out_names]
        bases = []
        for name in IN_DIMS:
            if rng.random() < 0.25:
                continue
            n = rng.randint(0, 4)
            bases.append((name, [[rng.randrange(size) if rng.random() < 0.8 else 1 << rng.randrange(max(1, size.bit_length() - 1))
                                  if size > 1 else 0 for size in out_sizes] for _ in range(n)]))
        if not bases:
            bases.append(("register", []))
        inputs = [{name: rng.randrange(1 << len(b)) for name, b in bases} for _ in range(4)]
        yield bases, out_names, out_sizes, inputs


def record_random(ll_module) -> list:
    LinearLayout = ll_module.LinearLayout
    rng = random.Random(SEED)
    records = []
    for bases, out_names, out_sizes, inputs in random_layouts(rng):
        layout = LinearLayout.from_bases(bases, out_names, out_sizes, require_surjective=False)
        records.append({
            "bases": [[name, b] for name, b in bases],
            "out_dims": [[n, s] for n, s in zip(out_names, out_sizes)],
            "text": str(layout),
            "matrix_view": layout.get_matrix_view(),
            "is_injective": bool(layout.is_injective()),
            "is_surjective": bool(layout.is_surjective()),
            "apply": [[x, layout.apply(x)] for x in inputs],
        })
    return records


def record_nvmma() -> list:
    from triton._C.libtriton import gluon_ir, ir
    import triton.experimental.gluon.language as ttgl
    context = ir.context()
    ir.load_dialects(context)
    builder = gluon_ir.GluonOpBuilder(context)
    records = []
    for swizzle in (0, 32, 64, 128):
        for bits in (8, 16, 32):
            for transposed in (False, True):
                for shape in ([8, 64], [64, 64], [64, 128], [128, 64], [16, 256]):
                    contiguous = shape[0] if transposed else shape[1]
                    if contiguous * bits // 8 < swizzle:     # Gluon aborts (LLVM fatal error) on these
                        continue
                    layout = ttgl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=bits, rank=2,
                                                    transposed=transposed)
                    shared = builder.to_linear_layout(layout._to_ir(builder), shape)
                    records.append({"swizzle_byte_width": swizzle, "element_bitwidth": bits,
                                    "transposed": transposed, "shape": shape,
                                    "offset_bases": [list(b) for b in shared.offset_bases],
                                    "block_bases": [list(b) for b in shared.block_bases]})
    return records


def main(out: str) -> None:
    import triton
    from triton._C.libtriton import linear_layout
    header = provenance.header(
        what="What Triton's own LinearLayout says of seeded random layouts (printout, matrix view, injectivity, "
             "surjectivity, apply) and Gluon's NVMMASharedLayout offset bases.",
        recorded_by="hardware/run_triton_linear_layout.py",
        command=f"python3 hardware/run_triton_linear_layout.py {out}",
        source="triton._C.libtriton.linear_layout.LinearLayout and gluon to_linear_layout (host only, no GPU), "
               f"Triton {triton.__version__}",
        date=provenance.today(), details={"seed": SEED, "triton_version": triton.__version__})
    document = {"provenance": header, "random": record_random(linear_layout), "nvmma_shared": record_nvmma()}
    provenance.write_json(out, document, sort_keys=True, separators=(",", ":"))
    print(f"{len(document['random'])} random layouts, {len(document['nvmma_shared'])} NVMMA shared layouts "
          f"-> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/hardware/triton_linear_layout.json.gz")
