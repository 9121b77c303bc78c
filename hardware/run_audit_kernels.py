"""Run corpus kernels and their injected bugs on an sm90 GPU, and record which compute the right product
(issue 27: the audit's verdict must match the data).

    python3 hardware/run_audit_kernels.py --prepare DIR      # here: the variants' PTX, assembled by ptxas
    python3 hardware/run_audit_kernels.py --run DIR --out OUT   # on the device: each variant launched

--prepare writes, for each kernel of KERNELS (tests/fixtures/ptx/corpus/audit.json), the original and its
mutants (solver.kernel.audit.mutate; --per-kind of each kind, spread over the file), assembled with ptxas -arch=sm_90a (a .version ptxas refuses is lowered
to the one it names, as hardware/record_kernel_descriptors.py does), and DIR/variants.json: the launch
(grid, block, parameters), the tensor-map documents and which tensor each map and pointer holds.

--run loads each cubin with cuda-bindings, builds A and B (torch.randn, f16, seeded), C poisoned with NaN,
the tensor maps with cuTensorMapEncodeTiled from the documents (the tensor's address in globalAddress),
launches, and compares C with a float32 product: `right` (relative error < 1e-2, no NaN), `wrong` (with the
count and the first (m, n) of the elements off by more than 0.05 (1 + |ref|)), `encoder refused` (the
driver refused a map: nothing launched), `trap` (a launch error; the context is gone, so the run goes on
in a fresh process) or `hang` (no progress in --timeout seconds).
OUT/audit_kernels_sm90.json.gz is the record (its provenance header, solver/provenance.py, gives both steps'
command with the variants' folder as DIR); tests/hardware_replay/test_audit_hardware_replay.py replays the audit of every
variant against it in CI.
"""
from __future__ import annotations

import argparse
import datetime
import json
import lzma
import os
import subprocess
import sys
import time
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "fixtures", "ptx", "corpus")
sys.path.insert(0, os.path.join(HERE, "kernel_descriptors"))
sys.path.insert(0, ROOT)
from solver import provenance  # noqa: E402

SCRIPT = "hardware/run_audit_kernels.py"
# (audit.json file, the tensor each map / pointer parameter holds, how C is computed)
KERNELS = {
    "triton/tut09_tma_f16_128x256x64_s3_w8_sm_90a.ptx.xz": {
        "roles": {"matmul_kernel_tma_param_0": "A", "matmul_kernel_tma_param_5": "B",
                  "matmul_kernel_tma_param_10": "C"}, "product": "A @ B.T"},
    "tilelang/tl_sm90_gemm_f16_128x128x64_s3_kA_nB.ptx.xz": {
        "roles": {"0": "A", "1": "B", "2": "C"}, "product": "A @ B"},
    "tilelang/tl_sm90_gemm_bf16_128x128x64_s2_mA_kB.ptx.xz": {
        "roles": {"0": "A", "1": "B", "2": "C"}, "product": "A.T @ B.T"},
}
OUTPUT_NAME = "audit_kernels_sm90.json.gz"
TOLERANCE = 1e-2
MAX_DYNAMIC_SMEM = 232448            # the H100's per-block shared-memory limit (227 KiB)


def _sample(mutants: list, per_kind: int) -> list:
    """At most per_kind mutants of each kind, spread evenly over the file (first and last included)."""
    kinds: dict = {}
    for m in mutants:
        kinds.setdefault(m.kind, []).append(m)
    chosen = []
    for group in kinds.values():
        if len(group) <= per_kind:
            chosen += group
        else:
            step = (len(group) - 1) / (per_kind - 1)
            chosen += [group[round(i * step)] for i in range(per_kind)]
    return sorted(chosen, key=lambda m: (m.line or 0, m.name))


def prepare(folder: str, ptxas: str, per_kind: int, kinds: Optional[set] = None,
            command: str = f"python3 {SCRIPT} --prepare DIR") -> None:
    import record_kernel_descriptors as rkd
    import instrument as ins
    from solver.kernel.audit import mutate
    os.makedirs(folder, exist_ok=True)
    entries = {e["file"]: e for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"]}
    variants = []
    for file, how in KERNELS.items():
        entry = entries[file]
        text = lzma.open(os.path.join(CORPUS, file), "rt").read()
        candidates = [mutate.Mutant("original", "original", text, entry["tensormaps"])]
        candidates += _sample([m for m in mutate.mutants(text, entry["tensormaps"], entry["kernel"])
                               if kinds is None or m.kind in kinds], per_kind)
        block = _block_of(text)
        for number, m in enumerate(candidates):
            stem = f"{os.path.basename(file).replace('.ptx.xz', '')}.{number:03d}"
            record = {"file": file, "variant": m.name, "kind": m.kind, "stem": stem, "kernel": entry["kernel"],
                      "grid": entry["grid"], "block": block, "scalars": entry["params"], "roles": how["roles"],
                      "product": how["product"], "tensormaps": m.tensormaps, "params_ptx": ins.entry_params(m.text)}
            try:
                cubin, lowered, _ = rkd.assemble(ptxas, m.text, folder, stem)
                record["assembled"] = True
                record["version_lowered_to"] = lowered
            except RuntimeError as error:
                record["assembled"] = False
                record["ptxas"] = str(error)[-400:]
            variants.append(record)
    with open(os.path.join(folder, "variants.json"), "w") as handle:
        json.dump({"ptxas": rkd.ptxas_version(ptxas), "command": command, "variants": variants}, handle)
    print(f"{len(variants)} variants, {sum(v['assembled'] for v in variants)} assembled")


def _block_of(text: str) -> list:
    import re
    m = re.search(r"\.(?:reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", text)
    return [int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)]


# --- the device side -------------------------------------------------------------------------------------

def run_variants(folder: str, start: int, progress: str, seed: int) -> None:
    """Run variants from `start` on, in this process, writing each result as a line to `progress`."""
    import ctypes
    import torch
    from cuda.bindings import driver

    def ok(result):
        if result[0] != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA error {driver.cuGetErrorName(result[0])[1]}")
        return result[1] if len(result) == 2 else result[1:]

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.zeros(1, device="cuda")
    ok(driver.cuInit(0))
    context = ok(driver.cuDevicePrimaryCtxRetain(ok(driver.cuDeviceGet(0))))
    ok(driver.cuCtxSetCurrent(context))
    variants = json.load(open(os.path.join(folder, "variants.json")))["variants"]
    data: dict = {}
    types = {"FLOAT16": torch.float16, "BFLOAT16": torch.bfloat16}
    swizzles = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}
    enums = {"FLOAT16": 6, "BFLOAT16": 9}          # CUtensorMapDataType (cuda.h)
    for index in range(start, len(variants)):
        v = variants[index]
        with open(progress, "a") as handle:
            handle.write(json.dumps({"index": index, "started": True}) + "\n")
        if not v["assembled"]:
            result = {"status": "not assembled"}
        else:
            if v["file"] not in data:
                data.clear()
                gen = torch.Generator(device="cuda").manual_seed(seed)
                shapes = {}
                for key, role in v["roles"].items():
                    doc = v["tensormaps"].get(key)
                    if doc is not None:
                        shapes[role] = (tuple(doc["globalDim"][::-1]), types[doc["dataType"]])
                tensors = {}
                for role in ("A", "B"):
                    shape, dtype = shapes[role]
                    tensors[role] = torch.randn(shape, generator=gen, device="cuda").to(dtype)
                A, B = tensors["A"].float(), tensors["B"].float()
                reference = eval(v["product"], {"A": A, "B": B}).double()
                c_dtype = shapes.get("C", (None, tensors["A"].dtype))[1]
                tensors["C"] = torch.empty(reference.shape, device="cuda", dtype=c_dtype)
                data.update(file=v["file"], tensors=tensors, reference=reference)
            tensors, reference = data["tensors"], data["reference"]
            tensors["C"].fill_(float("nan"))
            scratch = torch.zeros(1 << 16, dtype=torch.uint8, device="cuda")
            keep, pointers, refused = [], [], None
            for position, (name, kind, nbytes) in enumerate(v["params_ptx"]):
                role = v["roles"].get(name) or v["roles"].get(str(position))
                doc = v["tensormaps"].get(name) or v["tensormaps"].get(str(position))
                if doc is not None:
                    t = tensors[role]
                    rank = doc["rank"]
                    encoded = driver.cuTensorMapEncodeTiled(
                        driver.CUtensorMapDataType(enums[doc["dataType"]]), rank, t.data_ptr(),
                        [driver.cuuint64_t(d) for d in doc["globalDim"]],
                        [driver.cuuint64_t(s) for s in doc["globalStrides"]],
                        [driver.cuuint32_t(b) for b in doc["boxDim"]],
                        [driver.cuuint32_t(e) for e in doc["elementStrides"]],
                        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                        driver.CUtensorMapSwizzle(swizzles[doc["swizzle"]]),
                        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
                    if encoded[0] != driver.CUresult.CUDA_SUCCESS:
                        refused = f"{name}: {driver.cuGetErrorName(encoded[0])[1].decode()}"
                        break
                    raw = b"".join(int(w).to_bytes(8, "little") for w in encoded[1].opaque)
                    obj = (ctypes.c_uint8 * 128).from_buffer_copy(raw)
                elif role is not None:        # (before the scalars: the audit's entry gives a stand-in address)
                    obj = ctypes.c_uint64(tensors[role].data_ptr())
                elif name in v["scalars"]:
                    obj = (ctypes.c_uint32 if kind == "u32" else ctypes.c_uint64)(int(v["scalars"][name]))
                else:
                    obj = ctypes.c_uint64(scratch.data_ptr())       # Triton's scratch pointers
                keep.append(obj)
                pointers.append(ctypes.addressof(obj))
            if refused is not None:           # the driver's encoder refused a map: nothing to launch
                with open(progress, "a") as handle:
                    handle.write(json.dumps({"index": index, "status": "encoder refused", "error": refused}) + "\n")
                continue
            try:
                with open(os.path.join(folder, v["stem"] + ".cubin"), "rb") as handle:
                    image = ctypes.create_string_buffer(handle.read())
                module = ok(driver.cuModuleLoadData(ctypes.addressof(image)))
                function = ok(driver.cuModuleGetFunction(module, v["kernel"].encode()))
                static = ok(driver.cuFuncGetAttribute(
                    driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function))
                dynamic = MAX_DYNAMIC_SMEM - static
                ok(driver.cuFuncSetAttribute(
                    function, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic))
                array = (ctypes.c_void_p * len(pointers))(*pointers)
                g, b = v["grid"], v["block"]
                torch.cuda.synchronize()
                ok(driver.cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2], dynamic, 0,
                                         ctypes.addressof(array), 0))
                ok(driver.cuCtxSynchronize())
                ok(driver.cuModuleUnload(module))
            except RuntimeError as error:
                with open(progress, "a") as handle:
                    handle.write(json.dumps({"index": index, "status": "trap", "error": str(error)}) + "\n")
                return                                  # the context is gone: a fresh process goes on
            out = tensors["C"].double()
            finite = bool(torch.isfinite(out).all().item())
            rel = float(((out - reference).norm() / reference.norm()).item()) if finite else None
            off = ~(torch.abs(out - reference) <= 0.05 * (1 + reference.abs()))
            count = int(off.sum().item())
            first = [int(x) for x in torch.nonzero(off)[0].tolist()] if count else None
            result = {"status": "right" if finite and rel < TOLERANCE else "wrong", "rel_error": rel,
                      "wrong_elements": count, "first_wrong": first}
        with open(progress, "a") as handle:
            handle.write(json.dumps({"index": index, **result}) + "\n")


def run(folder: str, out: str, timeout: float, seed: int, name: str = OUTPUT_NAME,
        command: str = f"python3 {SCRIPT} --run DIR --out OUT") -> None:
    variants = json.load(open(os.path.join(folder, "variants.json")))
    progress = os.path.join(out, "progress.jsonl")
    results: dict = {}
    start = 0
    total = len(variants["variants"])
    while start < total:
        before = os.path.getsize(progress) if os.path.exists(progress) else 0
        child = subprocess.Popen([sys.executable, __file__, "--child", folder, "--from", str(start), "--progress",
                                  progress, "--seed", str(seed)])
        last_size, last_change = before, time.time()
        while child.poll() is None:
            time.sleep(0.2)
            size = os.path.getsize(progress) if os.path.exists(progress) else 0
            if size != last_size:
                last_size, last_change = size, time.time()
            elif time.time() - last_change > timeout:
                child.kill()
                child.wait()
                break
        lines = [json.loads(l) for l in open(progress)] if os.path.exists(progress) else []
        for line in lines:
            if "status" in line:
                results[line["index"]] = line
        started = [l["index"] for l in lines if l.get("started")]
        current = max(started) if started else start
        if current not in results:
            results[current] = {"index": current, "status": "hang" if child.returncode in (None, -9) else "trap",
                                "error": f"exit {child.returncode}"}
        start = max(results) + 1
    import torch
    facts = {"gpu": torch.cuda.get_device_name(0), "driver": _driver_version(), "ptxas": variants["ptxas"],
             "seed": seed, "tolerance": TOLERANCE}
    header = provenance.header(
        what="Corpus kernels and their mutants (solver.kernel.audit.mutate) run on the GPU: each variant's launch "
             "and outcome (right, wrong, hang, trap or encoder refused).",
        recorded_by=SCRIPT,
        command=variants.get("command", f"python3 {SCRIPT} --prepare DIR") + " && " + command,
        source=provenance.sentence(("", facts["gpu"]), ("driver", facts["driver"]), ("ptxas:", facts["ptxas"])),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), details=facts)
    record = {"provenance": header, "variants": []}
    for index, v in enumerate(variants["variants"]):
        keep = {k: v[k] for k in ("file", "variant", "kind", "stem", "kernel", "grid", "block", "product")}
        keep.update({k: val for k, val in results.get(index, {"status": "not run"}).items() if k != "index"})
        record["variants"].append(keep)
    provenance.write_json(os.path.join(out, name), record)
    counts: dict = {}
    for v in record["variants"]:
        counts[(v["file"].split("/")[-1][:40], v["status"])] = counts.get((v["file"].split("/")[-1][:40], v["status"]), 0) + 1
    for (file, status), n in sorted(counts.items()):
        print(f"{file:42s} {status:14s} {n}")


def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
        return out or "unknown"
    except FileNotFoundError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prepare", metavar="DIR")
    parser.add_argument("--ptxas", default=None)
    parser.add_argument("--per-kind", type=int, default=4, help="mutants of each kind per kernel (--prepare)")
    parser.add_argument("--kinds", help="only mutants of these kinds, comma-separated (--prepare; the original "
                        "is always run)")
    parser.add_argument("--name", default=OUTPUT_NAME, help="the record's file name (--run)")
    parser.add_argument("--run", metavar="DIR")
    parser.add_argument("--out", metavar="OUT")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--child", metavar="DIR")
    parser.add_argument("--from", dest="start", type=int, default=0)
    parser.add_argument("--progress")
    args = parser.parse_args()
    if args.prepare:
        import record_kernel_descriptors as rkd
        prepare(args.prepare, rkd.find_ptxas(args.ptxas), args.per_kind,
                set(args.kinds.split(",")) if args.kinds else None,
                provenance.command_line(SCRIPT, sys.argv[1:], replace={args.prepare: "DIR"}))
    elif args.child:
        run_variants(args.child, args.start, args.progress, args.seed)
    elif args.run:
        os.makedirs(args.out, exist_ok=True)
        run(args.run, args.out, args.timeout, args.seed, args.name,
            provenance.command_line(SCRIPT, sys.argv[1:], replace={args.run: "DIR", args.out: "OUT"}))
    else:
        parser.error("give --prepare DIR or --run DIR --out OUT")


if __name__ == "__main__":
    main()
