"""Run the Triton-3.9 'misread' case on a Hopper GPU: does warpgroup_mma read an NVMMASharedLayout
(swizzle_byte_width=0, 16-bit, 32 bytes contiguous) tile that Triton itself stored?

    python3 hardware/triton_misread/run_misread.py OUTDIR          # on the GPU: run, compare with torch
    python3 hardware/triton_misread/run_misread.py OUTDIR --compile-only   # no GPU: PTX only (GPUTarget 90)

For each variant: A [64, K] and B [K, N] random bf16 in global memory are loaded into registers,
stored into shared memory with the variant's NVMMASharedLayouts (allocate_shared_memory(value=...),
Triton's own shared-memory store), fenced, multiplied by one warpgroup_mma (fp32 accumulator), and
D [64, N] written back. D is compared with torch's A.float() @ B.float(). Writes OUTDIR/results.json
and OUTDIR/<variant>.ptx.
"""
import json
import os
import sys

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma


@gluon.jit
def mma_kernel(a_ptr, b_ptr, d_ptr, M: ttgl.constexpr, N: ttgl.constexpr, K: ttgl.constexpr,
               a_layout: ttgl.constexpr, b_layout: ttgl.constexpr):
    io: ttgl.constexpr = ttgl.BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8],
                                            warps_per_cta=[4, 1], order=[1, 0])
    am = ttgl.arange(0, M, layout=ttgl.SliceLayout(1, io))
    ak = ttgl.arange(0, K, layout=ttgl.SliceLayout(0, io))
    a_regs = ttgl.load(a_ptr + am[:, None] * K + ak[None, :])
    bk = ttgl.arange(0, K, layout=ttgl.SliceLayout(1, io))
    bn = ttgl.arange(0, N, layout=ttgl.SliceLayout(0, io))
    b_regs = ttgl.load(b_ptr + bk[:, None] * N + bn[None, :])
    a = ttgl.allocate_shared_memory(ttgl.bfloat16, [M, K], a_layout, value=a_regs)
    b = ttgl.allocate_shared_memory(ttgl.bfloat16, [K, N], b_layout, value=b_regs)
    fence_async_shared()
    acc_layout: ttgl.constexpr = ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                             instr_shape=[16, N, 16])
    acc = ttgl.zeros([M, N], ttgl.float32, acc_layout)
    acc = warpgroup_mma(a, b, acc)
    dm = ttgl.arange(0, M, layout=ttgl.SliceLayout(1, acc_layout))
    dn = ttgl.arange(0, N, layout=ttgl.SliceLayout(0, acc_layout))
    ttgl.store(d_ptr + dm[:, None] * N + dn[None, :], acc)


# name -> (operand under test, shape of that operand, swizzle_byte_width, transposed); M = 64 always.
# The other operand takes NVMMASharedLayout.get_default_for (as the campaign's adapter did).
VARIANTS = {
    "B16x8_sw0_T": ("B", [16, 8], 0, True),       # the minimal 3.9 misread (sm90 bf16 B [16, 8])
    "B16x8_sw0_N": ("B", [16, 8], 0, False),      # not transposed: 16 contiguous bytes (3.9: agree)
    "B16x8_sw32_T": ("B", [16, 8], 32, True),     # control: the 32B swizzle asked for (3.9: agree)
    "B16x16_sw0_N": ("B", [16, 16], 0, False),    # MN-major, 32 contiguous bytes (3.9 f16: misread)
    "B16x16_sw32_N": ("B", [16, 16], 32, False),  # control of the above
    "A64x16_sw0_N": ("A", [64, 16], 0, False),    # A K-major, 32 contiguous bytes (3.9: misread)
}


def layouts(operand, shape, swizzle, transposed):
    M = 64
    asked = ttgl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=16, rank=2, transposed=transposed)
    if operand == "B":
        K, N = shape
        a_shape, b_shape = [M, K], [K, N]
        a_l = ttgl.NVMMASharedLayout.get_default_for(a_shape, ttgl.bfloat16)
        b_l = asked
    else:
        _, K = shape
        N = 64
        a_shape, b_shape = [M, K], [K, N]
        a_l = asked
        b_l = ttgl.NVMMASharedLayout.get_default_for(b_shape, ttgl.bfloat16)
    return M, N, K, a_l, b_l


def linear_layout(layout, shape):
    """Triton's host-side to_linear_layout of a shared layout (offset bit i -> (row, col)). Triton 3.6's
    builder aborts the process on a shared layout (an MLIR assertion: it takes distributed layouts
    only), so it is asked only on newer versions."""
    major, minor = (int(x) for x in triton.__version__.split(".")[:2])
    if (major, minor) < (3, 7):
        return {"error": "not asked: Triton < 3.7's to_linear_layout aborts on shared layouts"}
    from triton._C.libtriton import gluon_ir, ir
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx, "cuda:90")
    ll = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    return {"offset_bases": [list(b) for b in ll.offset_bases], "alignment": ll.alignment}


def describe(layout):
    return {"swizzle_byte_width": layout.swizzle_byte_width, "element_bitwidth": layout.element_bitwidth,
            "transposed": bool(layout.transposed), "rank": getattr(layout, "rank", None)}


def main(argv):
    """Each variant in its own process: a compiler abort (LLVM ERROR) ends only that one."""
    import subprocess
    out = argv[1]
    compile_only = "--compile-only" in argv
    os.makedirs(out, exist_ok=True)
    result = {"triton": triton.__version__, "variants": {}}
    if not compile_only:
        import torch
        result.update(torch=torch.__version__, device=torch.cuda.get_device_name(),
                      capability=list(torch.cuda.get_device_capability()))
    for name in VARIANTS:
        proc = subprocess.run([sys.executable, __file__, out, "--variant", name] + (["--compile-only"] if compile_only else []),
                              capture_output=True, text=True, timeout=240)
        path = os.path.join(out, f"{name}.json")
        if os.path.exists(path):
            with open(path) as handle:
                row = json.load(handle)
            os.unlink(path)
        else:
            lines = [l for l in proc.stderr.splitlines() if l.strip() and "leak" not in l and "nanobind" not in l]
            why = next((l for l in lines if "LLVM ERROR" in l or "Assertion" in l or "error" in l.lower()), lines[-1] if lines else "")
            row = {"status": "crash", "exit": proc.returncode, "error": why[:600]}
        print(name, json.dumps({k: v for k, v in row.items() if k not in ("linear_layout", "data")}), flush=True)
        result["variants"][name] = row
    with open(os.path.join(out, "results.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    return 0


def one(argv):
    out = argv[1]
    only = argv[argv.index("--variant") + 1]
    compile_only = "--compile-only" in argv
    result = {"variants": {}}
    if not compile_only:
        import torch
        result["torch"] = torch.__version__
        result["device"] = torch.cuda.get_device_name()
        result["capability"] = list(torch.cuda.get_device_capability())
        gen = torch.Generator(device="cpu").manual_seed(1234)
    for name, (operand, shape, swizzle, transposed) in VARIANTS.items():
        if name != only:
            continue
        M, N, K, a_l, b_l = layouts(operand, shape, swizzle, transposed)
        row = {"operand": operand, "shape": shape, "swizzle_byte_width": swizzle, "transposed": transposed,
               "M": M, "N": N, "K": K, "a_layout": describe(a_l), "b_layout": describe(b_l),
               "linear_layout": {"A": linear_layout(a_l, [M, K]), "B": linear_layout(b_l, [K, N])}}
        try:
            if compile_only:
                from triton.backends.compiler import GPUTarget
                src = gluon._runtime.GluonASTSource(
                    mma_kernel, signature={"a_ptr": "*bf16", "b_ptr": "*bf16", "d_ptr": "*fp32", "M": "constexpr",
                                           "N": "constexpr", "K": "constexpr", "a_layout": "constexpr",
                                           "b_layout": "constexpr"},
                    constexprs={"M": M, "N": N, "K": K, "a_layout": a_l, "b_layout": b_l})
                compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
                ptx = compiled.asm["ptx"]
            else:
                import torch
                A = torch.randn(M, K, generator=gen).to(torch.bfloat16).cuda()
                B = torch.randn(K, N, generator=gen).to(torch.bfloat16).cuda()
                D = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
                compiled = mma_kernel[(1,)](A, B, D, M, N, K, a_l, b_l, num_warps=4)
                torch.cuda.synchronize()
                ptx = compiled.asm["ptx"]
                ref = A.float() @ B.float()
                err = (D - ref).abs()
                row.update(rel_error=float((err.norm() / ref.norm()).item()),
                           max_abs_error=float(err.max().item()), ref_max_abs=float(ref.abs().max().item()),
                           wrong_elements=int((err > 1e-3 * ref.abs().max()).sum().item()),
                           elements=M * N, nan=bool(torch.isnan(D).any().item()))
                # which B (or A) matrix would explain D: try the tile permutations a 32B swizzle would make
                row["d_first_row"] = [round(x, 4) for x in D[0, :8].tolist()]
                row["ref_first_row"] = [round(x, 4) for x in ref[0, :8].tolist()]
                row["data"] = {"A": A.float().tolist(), "B": B.float().tolist(), "D": D.tolist()}
            with open(os.path.join(out, f"{name}.ptx"), "w") as handle:
                handle.write(ptx)
            ttgir = compiled.asm.get("ttgir", "")
            with open(os.path.join(out, f"{name}.ttgir"), "w") as handle:
                handle.write(ttgir)
            row["ttgir_ops"] = sorted({l.split("=", 1)[-1].strip().split(" ")[0] for l in ttgir.splitlines()
                                       if "ttg." in l or "ttng." in l})
            row["status"] = "ran" if not compile_only else "compiled"
        except Exception as error:              # noqa: BLE001
            row["status"] = "error"
            row["error"] = " ".join(f"{type(error).__name__}: {error}".split())[:600]
        with open(os.path.join(out, f"{name}.json"), "w") as handle:
            json.dump(row, handle)
    return 0


if __name__ == "__main__":
    sys.exit(one(sys.argv) if "--variant" in sys.argv else main(sys.argv))
