"""Record, on an sm90 GPU, the descriptors each warp of real Triton kernels feeds its wgmma in every iteration.

    python3 hardware/record_kernel_descriptors.py --out DIR [--commit SHA] [--kernels FILE ...]
    python3 hardware/record_kernel_descriptors.py --dry-run          # instrument + ptxas only, no GPU
    python3 hardware/record_kernel_descriptors.py --from-raw DIR --out DIR2   # re-decode a run's raw buffers

Issue 26. For each corpus kernel (tests/fixtures/ptx/corpus/triton/, sm_90a), the runner
  1. writes an instrumented copy of its PTX (hardware/kernel_descriptors/instrument.py): one .u64
     parameter (the record buffer) added to the entry, and after every `wgmma.mma_async` a block in
     which lane 0 of each warp of CTAs 0 and 1 stores (descriptor a, descriptor b, original line, the
     warp's sequence number) and every lane counts the warp's MMAs;
  2. assembles it, and the uninstrumented original, with ptxas (-arch=sm_90a). Triton 3.9 writes
     `.version 9.4`, which ptxas 13.0 refuses ("current version is '9.0'"): the directive is lowered to
     the version ptxas names, and the file records that it was;
  3. loads both cubins with cuda-bindings (cuModuleLoadData), launches them with the manifest's grid,
     block, scalar parameters (a 4096^3 problem) and dynamic shared memory (Triton's `shared`, the
     manifest's shared_bytes) on random f16 A, B; TMA kernels get CUtensorMaps from
     cuTensorMapEncodeTiled built from the manifest's tensordesc_meta (block, swizzle, element type);
     Triton's two scratch pointers get a small zeroed buffer;
  4. checks the output against a float32 product (relative Frobenius error < 1e-2, no NaN left in the
     NaN-poisoned output) and that the instrumented kernel's output is bitwise the original's;
  5. decodes the record buffer: every (cta, warp)'s records 0 .. count-1 must carry the magic and their
     own sequence number, and nothing is written past count.

Each kernel runs in its own process (a kernel that traps or hangs cannot take the others with it).
Output: DIR/kernel_descriptors_sm90.json.gz (copy it to tests/hardware/) and DIR/raw_buffers.npz (the
raw record buffers and each kernel's metadata, for --from-raw).
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "kernel_descriptors"))
import instrument as ins  # noqa: E402
sys.path.insert(0, ROOT)
from solver import provenance  # noqa: E402
from solver.kernel.audit.triton import DEVICE_TO_HOST  # noqa: E402  (tensordesc_meta's element types)

CORPUS = os.path.join(ROOT, "tests", "fixtures", "ptx", "corpus", "triton")
DEFAULT_KERNELS = [
    "tut03_matmul_f16_128x256x64_s3_w8_sm_90a.ptx.xz",
    "tut03_matmul_f16_64x256x32_s4_w4_sm_90a.ptx.xz",
    "tut09_persistent_f16_128x128x64_s3_w8_sm_90a.ptx.xz",
    "tut09_tma_persistent_f16_128x128x64_s4_w4_sm_90a.ptx.xz",
]
MAX_PER_WARP = 8192
RECORD_CTAS = 2
SCRATCH_BYTES = 1 << 16
RECORD_DTYPE = np.dtype([("a", "<u8"), ("b", "<u8"), ("line", "<u4"), ("seq", "<u4"),
                         ("flags", "<u4"), ("site", "<u4")])
HEADER_DTYPE = np.dtype([("count", "<u4"), ("smem", "<u4")])
TOLERANCE = 1e-2
OUTPUT_NAME = "kernel_descriptors_sm90.json.gz"


# --- host side, no GPU -----------------------------------------------------------------------------

def manifest() -> dict:
    with open(os.path.join(CORPUS, "manifest.json")) as f:
        return json.load(f)


def kernel_entry(name: str) -> dict:
    for k in manifest()["kernels"]:
        if k["file"] == name:
            return k
    raise KeyError(name)


def read_ptx(name: str) -> str:
    with lzma.open(os.path.join(CORPUS, name), "rt") as f:
        return f.read()


def find_ptxas(explicit: str | None) -> str:
    for candidate in [explicit, os.environ.get("PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"]:
        if candidate and os.path.exists(candidate):
            return candidate
    raise FileNotFoundError("no ptxas (give --ptxas)")


def ptxas_version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-2] + "; " + out[-1] if len(out) >= 2 else " ".join(out)


_UNSUPPORTED = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'")


def assemble(ptxas: str, text: str, work: str, stem: str) -> tuple[bytes, str | None, str]:
    """Assemble `text`; when ptxas refuses its .version, lower it to the one ptxas names and retry.
    Returns (cubin, the version written instead or None, ptxas's -v report)."""
    rewritten = None
    for _ in range(2):
        src, cubin = os.path.join(work, stem + ".ptx"), os.path.join(work, stem + ".cubin")
        with open(src, "w") as f:
            f.write(text)
        p = subprocess.run([ptxas, "-arch=sm_90a", "-v", "-o", cubin, src], capture_output=True, text=True)
        if p.returncode == 0:
            with open(cubin, "rb") as f:
                return f.read(), rewritten, p.stderr.strip()
        m = _UNSUPPORTED.search(p.stderr)
        if m and rewritten is None:
            rewritten = m.group(2)
            text = re.sub(r"^\s*\.version\s+\d+\.\d+\s*$", f".version {rewritten}", text, count=1, flags=re.M)
            continue
        raise RuntimeError(f"ptxas failed on {stem}:\n{p.stderr[-3000:]}")
    raise RuntimeError("unreachable")


def _resources(report: str) -> list:
    """ptxas -v's resource lines (registers, stack, spills)."""
    return [l.strip() for l in report.splitlines() if "registers" in l or "stack frame" in l]


def tensordesc_meta(entry: dict) -> list:
    m = re.search(r"tensordesc_meta, in \.param order\): (\[.*\])", entry.get("notes", ""))
    return json.loads(m.group(1)) if m else []


def prepare(name: str, ptxas: str, work: str, max_per_warp: int, record_ctas: int) -> dict:
    """Instrument and assemble one kernel; returns what the GPU step needs (cubins as files in `work`)."""
    entry = kernel_entry(name)
    text = read_ptx(name)
    block = entry["block"]
    if block[1] != 1 or block[2] != 1 or block[0] % 32:
        raise ValueError(f"{name}: the recorder takes 1-D blocks of whole warps, not {block}")
    warps = block[0] // 32
    inst = ins.instrument(text, warps_per_cta=warps, max_per_warp=max_per_warp, record_ctas=record_ctas)
    stem = name.replace(".ptx.xz", "")
    orig_cubin, orig_rewritten, orig_report = assemble(ptxas, text, work, stem + ".orig")
    inst_cubin, inst_rewritten, inst_report = assemble(ptxas, inst.text, work, stem + ".inst")
    with open(os.path.join(work, stem + ".orig.cubin"), "wb") as f:
        f.write(orig_cubin)
    with open(os.path.join(work, stem + ".inst.cubin"), "wb") as f:
        f.write(inst_cubin)
    return {
        "file": name, "stem": stem, "kernel": inst.entry, "grid": entry["problem"]["grid"], "block": block,
        "warps_per_cta": warps, "dynamic_smem": entry["shared_bytes"], "max_per_warp": max_per_warp,
        "recorded_ctas": list(range(record_ctas)),
        "ptx_version": ins.ptx_version(text), "ptx_version_assembled": inst_rewritten or ins.ptx_version(text),
        "ptxas_report": {"original": _resources(orig_report), "instrumented": _resources(inst_report)},
        "sites": [{"index": s.index, "line": s.line, "opcode": s.opcode, "a": s.a, "b": s.b,
                   "guard": (("!" if s.guard[0] else "") + s.guard[1]) if s.guard else None} for s in inst.sites],
        "extern_shared": inst.extern_shared,
        "params_ptx": ins.entry_params(text), "record_param": inst.param,
    }


# --- GPU side (child process) ------------------------------------------------------------------------

def run_on_gpu(meta: dict, work: str, seed: int) -> tuple[dict, np.ndarray]:
    import ctypes
    import torch
    from cuda.bindings import driver

    def ok(result):
        err = result[0]
        if err != driver.CUresult.CUDA_SUCCESS:
            name = driver.cuGetErrorName(err)[1]
            raise RuntimeError(f"CUDA driver error {err} {name}")
        return result[1] if len(result) == 2 else result[1:]

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    ok(driver.cuInit(0))
    device = ok(driver.cuDeviceGet(0))
    context = ok(driver.cuDevicePrimaryCtxRetain(device))
    ok(driver.cuCtxSetCurrent(context))

    entry = kernel_entry(meta["file"])
    names = entry["param_names"]
    scalars = entry["params"]
    problem = entry["problem"]
    M, N, K = problem["M"], problem["N"], problem["K"]
    b_is_nk = "b [N,K]" in entry.get("source", "")
    gen = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.randn((M, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.float16)
    B = torch.randn(((N, K) if b_is_nk else (K, N)), generator=gen, device="cuda",
                    dtype=torch.float32).to(torch.float16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    scratch = torch.zeros(SCRATCH_BYTES, dtype=torch.uint8, device="cuda")
    header_offset = len(meta["recorded_ctas"]) * meta["warps_per_cta"] * meta["max_per_warp"] * ins.RECORD_BYTES
    buffer_bytes = header_offset + len(meta["recorded_ctas"]) * meta["warps_per_cta"] * ins.HEADER_BYTES
    record = torch.zeros(buffer_bytes, dtype=torch.uint8, device="cuda")
    tensors = {"a": A, "b": B, "c": C}

    descs = tensordesc_meta(entry)
    swizzles = {0: "CU_TENSOR_MAP_SWIZZLE_NONE", 1: "CU_TENSOR_MAP_SWIZZLE_32B",
                2: "CU_TENSOR_MAP_SWIZZLE_64B", 3: "CU_TENSOR_MAP_SWIZZLE_128B"}
    tensor_maps, desc_index = {}, 0

    def tensor_map(letter: str) -> bytes:
        nonlocal desc_index
        d = descs[desc_index]
        desc_index += 1
        t = tensors[letter]
        rows, cols = t.shape
        elem = t.element_size()
        box_rows, box_cols = d["block_size"]
        result = driver.cuTensorMapEncodeTiled(
            driver.CUtensorMapDataType(DEVICE_TO_HOST[d["elem_type"]]), 2, t.data_ptr(),
            [driver.cuuint64_t(cols), driver.cuuint64_t(rows)], [driver.cuuint64_t(cols * elem)],
            [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)], [driver.cuuint32_t(1), driver.cuuint32_t(1)],
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(driver.CUtensorMapSwizzle, swizzles[d["swizzle"]]),
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        tmap = ok(result)
        raw = b"".join(int(w).to_bytes(8, "little") for w in tmap.opaque)
        tensor_maps[letter + "_desc"] = {"globalDim": [cols, rows], "globalStrides": [cols * elem],
                                         "boxDim": [box_cols, box_rows], "swizzle": swizzles[d["swizzle"]],
                                         "elem_type": d["elem_type"], "hex": raw.hex()}
        return raw

    keep, pointers, described = [], [], {}
    for pname, kind, nbytes in meta["params_ptx"]:
        role = names.get(pname, pname)
        if pname in scalars:
            value = int(scalars[pname])
            obj = ctypes.c_uint32(value) if kind == "u32" else ctypes.c_uint64(value)
            described[pname] = value
        elif role in ("a_ptr", "b_ptr", "c_ptr"):
            obj = ctypes.c_uint64(tensors[role[0]].data_ptr())
            described[pname] = f"{role}: device {role[0].upper()} f16 {list(tensors[role[0]].shape)} row-major"
        elif role in ("a_desc", "b_desc", "c_desc"):
            if kind != "bytes" or nbytes != 128:
                raise ValueError(f"{pname} ({role}) is not a 128-byte tensor map parameter")
            obj = (ctypes.c_uint8 * 128).from_buffer_copy(tensor_map(role[0]))
            described[pname] = f"{role}: CUtensorMap of {role[0].upper()} {list(tensors[role[0]].shape)}"
        elif role in ("global_scratch", "profile_scratch"):
            obj = ctypes.c_uint64(scratch.data_ptr())
            described[pname] = f"{role}: {SCRATCH_BYTES} zeroed bytes"
        else:
            raise ValueError(f"no value for parameter {pname} ({role})")
        keep.append(obj)
        pointers.append(ctypes.addressof(obj))

    def launch(cubin_path: str, extra_param: int | None) -> None:
        with open(cubin_path, "rb") as f:
            image = ctypes.create_string_buffer(f.read())
        module = ok(driver.cuModuleLoadData(ctypes.addressof(image)))
        function = ok(driver.cuModuleGetFunction(module, meta["kernel"].encode()))
        ok(driver.cuFuncSetAttribute(
            function, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            meta["dynamic_smem"]))
        params = list(pointers)
        extra_obj = None
        if extra_param is not None:
            extra_obj = ctypes.c_uint64(extra_param)
            params.append(ctypes.addressof(extra_obj))
        array = (ctypes.c_void_p * len(params))(*params)
        g, b = meta["grid"], meta["block"]
        torch.cuda.synchronize()
        ok(driver.cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2], meta["dynamic_smem"], 0,
                                 ctypes.addressof(array), 0))
        ok(driver.cuCtxSynchronize())
        ok(driver.cuModuleUnload(module))

    stem = os.path.join(work, meta["stem"])
    launch(stem + ".orig.cubin", None)
    C_orig = C.clone()
    C.fill_(float("nan"))
    started = time.time()
    launch(stem + ".inst.cubin", record.data_ptr())
    seconds = time.time() - started

    ref = (A.float() @ (B.float().T if b_is_nk else B.float())).double()
    out = C.double()
    finite = bool(torch.isfinite(out).all().item())
    rel = float(((out - ref).norm() / ref.norm()).item()) if finite else float("nan")
    rel_orig = float(((C_orig.double() - ref).norm() / ref.norm()).item())
    same = bool(torch.equal(C.view(torch.int16), C_orig.view(torch.int16)))
    result = dict(meta)
    result.update({
        "params": described, "tensor_maps": tensor_maps, "seed": seed,
        "inputs": f"A f16 {list(A.shape)}, B f16 {list(B.shape)} ({'C = A @ B^T' if b_is_nk else 'C = A @ B'}), "
                  "torch.randn on the GPU",
        "output_finite": finite, "rel_error": rel, "rel_error_uninstrumented": rel_orig,
        "output_correct": bool(finite and rel < TOLERANCE), "output_equals_uninstrumented": same,
        "instrumented_launch_seconds": round(seconds, 4),
    })
    del result["params_ptx"]
    return result, record.cpu().numpy()


# --- decoding -----------------------------------------------------------------------------------------

def decode(meta: dict, raw: np.ndarray) -> tuple[list, list, list]:
    """(records, per-warp counts, problems) from one kernel's raw record buffer."""
    ctas, warps, cap = len(meta["recorded_ctas"]), meta["warps_per_cta"], meta["max_per_warp"]
    header_offset = ctas * warps * cap * ins.RECORD_BYTES
    recs = raw[:header_offset].view(RECORD_DTYPE).reshape(ctas, warps, cap)
    head = raw[header_offset:header_offset + ctas * warps * ins.HEADER_BYTES].view(HEADER_DTYPE).reshape(ctas, warps)
    lines = {s["line"] for s in meta["sites"]}
    records, counts, problems = [], [], []
    for cta in range(ctas):
        for warp in range(warps):
            n = int(head[cta, warp]["count"])
            counts.append({"cta": cta, "warp": warp, "count": n, "smem_base": int(head[cta, warp]["smem"]),
                           "truncated": n > cap})
            if n > cap:
                problems.append(f"cta {cta} warp {warp}: {n} MMAs, only {cap} recorded")
            r = recs[cta, warp]
            written = r["flags"] & 0xFFFF0000 == ins.RECORD_MAGIC
            upto = min(n, cap)
            if not written[:upto].all():
                problems.append(f"cta {cta} warp {warp}: {int((~written[:upto]).sum())} of {upto} records unwritten")
            if written[upto:].any():
                problems.append(f"cta {cta} warp {warp}: records written past the count {n}")
            if (r["seq"][:upto] != np.arange(upto)).any():
                problems.append(f"cta {cta} warp {warp}: sequence numbers out of order")
            for k in range(upto):
                x = r[k]
                if int(x["line"]) not in lines:
                    problems.append(f"cta {cta} warp {warp} seq {k}: line {int(x['line'])} is no wgmma site")
                a_desc = bool(int(x["flags"]) & ins.A_IS_DESCRIPTOR)
                records.append({"cta": cta, "warp": warp, "seq": int(x["seq"]), "line": int(x["line"]),
                                "a": f"0x{int(x['a']):016x}" if a_desc else None, "b": f"0x{int(x['b']):016x}"})
    return records, counts, problems


def describe_descriptor(word: int) -> str:
    start = (word & 0x3FFF) << 4
    lbo = ((word >> 16) & 0x3FFF) << 4
    sbo = ((word >> 32) & 0x3FFF) << 4
    base = (word >> 49) & 7
    swizzle = {0: "none", 1: "128B", 2: "64B", 3: "32B"}[(word >> 62) & 3]
    return f"start=0x{start:x} lbo={lbo} sbo={sbo} base={base} swizzle={swizzle}"


def assemble_document(parts: list, raws: dict, facts: dict) -> tuple[dict, list]:
    kernels, lines_out = [], []
    for meta in parts:
        if "error" in meta:
            kernels.append(meta)
            lines_out.append(f"{meta['file']}: ERROR {meta['error'].splitlines()[-1] if meta['error'] else ''}")
            continue
        records, counts, problems = decode(meta, raws[meta["stem"]])
        k = dict(meta)
        k.pop("stem", None)
        k.update({"counts": counts, "problems": problems, "records": records})
        kernels.append(k)
        per_warp = sorted({c["count"] for c in counts})
        lines_out.append(f"{meta['file']}: {len(records)} records, per-warp counts {per_warp}, "
                         f"correct={meta['output_correct']} rel={meta['rel_error']:.2e} "
                         f"same-as-original={meta['output_equals_uninstrumented']} smem_base="
                         f"{sorted({c['smem_base'] for c in counts})} problems={len(problems)}")
        for p in problems[:5]:
            lines_out.append("    problem: " + p)
        for r in records[:3] + [r for r in records if r["cta"] == 0 and r["warp"] == 0][-2:]:
            a = describe_descriptor(int(r["a"], 16)) if r["a"] else "register A"
            lines_out.append(f"    cta {r['cta']} warp {r['warp']} seq {r['seq']} line {r['line']}: a {r['a']} ({a}); "
                             f"b {r['b']} ({describe_descriptor(int(r['b'], 16))})")
    document = {"provenance": header_of(facts), "kernels": kernels}
    return document, lines_out


def header_of(facts: dict) -> dict:
    """The provenance header (solver/provenance.py) from a run's facts (main's, or those an older run's
    raw_buffers.npz kept, which have no command)."""
    details = {k: v for k, v in facts.items() if k not in ("program", "date", "command")}
    return provenance.header(
        what="The descriptors each warp of Triton sm_90a kernels fed its wgmma in every iteration, recorded by an "
             "instrumented copy of each kernel on the GPU: per kernel the launch and one record per MMA.",
        recorded_by="hardware/record_kernel_descriptors.py",
        command=facts.get("command") or f"python3 hardware/record_kernel_descriptors.py --out OUT --commit "
                                         f"{facts.get('commit', 'unknown')}",
        source=provenance.sentence(("", facts.get("device")), ("driver", facts.get("driver")),
                                   ("ptxas:", facts.get("ptxas"))),
        date=facts.get("date") or provenance.NOT_RECORDED, details=details)


def gpu_facts() -> dict:
    facts = {}
    try:
        line = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        name, drv = [x.strip() for x in line.split(",")]
        facts["device"], facts["driver"] = name, drv
    except (OSError, subprocess.CalledProcessError, IndexError) as error:
        facts["device"] = f"unknown ({error})"
    return facts


# --- main -------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("--kernels", nargs="*", default=DEFAULT_KERNELS)
    parser.add_argument("--ptxas")
    parser.add_argument("--max-per-warp", type=int, default=MAX_PER_WARP)
    parser.add_argument("--record-ctas", type=int, default=RECORD_CTAS)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--timeout", type=int, default=90)
    parser.add_argument("--dry-run", action="store_true", help="instrument and assemble only (no GPU)")
    parser.add_argument("--from-raw", help="re-decode DIR/raw_buffers.npz of an earlier run")
    parser.add_argument("--child", nargs=2, metavar=("META_JSON", "WORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        with open(args.child[0]) as f:
            meta = json.load(f)
        result, raw = run_on_gpu(meta, args.child[1], meta["seed"])
        np.save(os.path.join(args.child[1], meta["stem"] + ".raw.npy"), raw)
        with open(os.path.join(args.child[1], meta["stem"] + ".result.json"), "w") as f:
            json.dump(result, f)
        return 0

    if args.from_raw:
        data = np.load(os.path.join(args.from_raw, "raw_buffers.npz"))
        header = json.loads(bytes(data["__meta__"]).decode())
        raws = {k: data[k] for k in data.files if k != "__meta__"}
        document, summary = assemble_document(header["parts"], raws, header["facts"])
        write(args.out or args.from_raw, document, summary, None)
        return 0

    ptxas = find_ptxas(args.ptxas)
    print(f"ptxas: {ptxas} ({ptxas_version(ptxas)})", flush=True)
    work = tempfile.mkdtemp(prefix="kd_")
    kernels = [] if args.kernels == DEFAULT_KERNELS else ["--kernels"] + args.kernels
    facts = {"ptxas": ptxas_version(ptxas), "commit": args.commit, "date": provenance.today(),
             "program": "hardware/record_kernel_descriptors.py",
             "command": provenance.command_line("hardware/record_kernel_descriptors.py",
                                                ["--out", "OUT", "--commit", args.commit] + kernels),
             "instrumentation": "hardware/kernel_descriptors/instrument.py",
             "corpus": "tests/fixtures/ptx/corpus/triton/",
             "record_layout": "per (cta, warp) of CTAs 0..record_ctas-1, one record per wgmma.mma_async the "
                              "warp issued, in issue order: a/b are the 64-bit descriptor operands as the "
                              "registers held them (a null when A comes from registers), line the 1-based "
                              "line of the wgmma statement in the decompressed corpus file"}
    parts, raws = [], {}
    for name in args.kernels:
        started = time.time()
        try:
            meta = prepare(name, ptxas, work, args.max_per_warp, args.record_ctas)
        except Exception as error:  # recorded, never silent
            parts.append({"file": name, "error": f"prepare: {type(error).__name__}: {error}"})
            print(f"{name}: prepare failed: {error}", flush=True)
            continue
        meta["seed"] = args.seed
        if args.dry_run:
            print(f"{name}: {meta['kernel']} sites {[(s['line'], s['a'], s['b']) for s in meta['sites']]} "
                  f"ptx {meta['ptx_version']} -> {meta['ptx_version_assembled']}; "
                  f"{meta['ptxas_report']}", flush=True)
            continue
        meta_path = os.path.join(work, meta["stem"] + ".meta.json")
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", meta_path, work],
                               capture_output=True, text=True, timeout=args.timeout)
            if p.returncode != 0:
                raise RuntimeError(f"child exited {p.returncode}: {p.stderr[-2000:]}")
            with open(os.path.join(work, meta["stem"] + ".result.json")) as f:
                parts.append(json.load(f))
            raws[meta["stem"]] = np.load(os.path.join(work, meta["stem"] + ".raw.npy"))
        except Exception as error:
            failed = {k: v for k, v in meta.items() if k != "params_ptx"}
            failed["error"] = f"{type(error).__name__}: {error}"
            parts.append(failed)
            print(f"{name}: GPU step failed: {error}", flush=True)
        print(f"{name}: {time.time() - started:.1f} s", flush=True)
    if args.dry_run:
        return 0
    facts.update(gpu_facts())
    document, summary = assemble_document(parts, raws, facts)
    header = json.dumps({"parts": parts, "facts": facts}).encode()
    write(args.out, document, summary, (raws, header))
    return 0 if all("error" not in p for p in parts) else 1


def write(out: str, document: dict, summary: list, raw: tuple | None) -> None:
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, OUTPUT_NAME)
    provenance.write_json(path, document, separators=(",", ":"))
    if raw is not None:
        raws, header = raw
        np.savez_compressed(os.path.join(out, "raw_buffers.npz"), __meta__=np.frombuffer(header, dtype=np.uint8),
                            **raws)
    print(f"wrote {path} ({os.path.getsize(path)} bytes); {document['provenance']['source']}")
    for line in summary:
        print(line)


if __name__ == "__main__":
    sys.exit(main())
