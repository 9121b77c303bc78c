"""Record where CUTLASS puts tcgen05.mma's D and tensor-memory A: tests/hardware/cutlass_tmem_frg.json.gz.

CUTLASS's SM100 UMMA atoms (cute/atom/mma_traits_sm100.hpp) say where an MMA's accumulator D lives in
tensor memory through the allocator MMA_Traits<Op>::FrgTypeC (UMMA::tmem_frg<Value, Storage, N_SM,
TmemAllocMode>), and, for the TS forms whose A operand is in tensor memory, where A lives through
FrgTypeA. UMMA::tmem_frg_ws (the .ws accumulator layouts) is defined there but named by no atom. This
script

1. reads, for every MMA_Traits<SM100_MMA_*> specialization in that header, the FrgTypeA / FrgTypeC it
   declares (so each record says which allocator its atom names, in the header's words);
2. writes the case list (CASES below: named atoms with their M, N and the tile they are made for, and
   tmem_frg_ws instantiated directly) for hardware/cutlass_tmem_frg.cpp, compiles it with nvcc (host
   code only, no GPU) and runs it;
3. writes, per case, the tensor CUTLASS makes (shape, CuTe's printing of its layout, the allocator's
   template arguments) and, for every coordinate, the (lane, column, first bit) of the 32-bit cell it
   lies in, relative to the tensor's tensor-memory address, and the element's bits (sizeof_bits of
   the value type as CUTLASS sees it).

Usage (from the repository root):
  python3 hardware/run_cutlass_tmem_frg.py [--include DIR] [--nvcc PATH]
                                           [--out tests/hardware/cutlass_tmem_frg.json.gz]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
# where the headers are and which CUTLASS / nvcc they are: the TMEM copy-atom recorder's helpers
from run_cutlass_tmem_atoms import compile_and_run, cutlass_version, default_include, nvcc_version  # noqa: E402
from solver import provenance  # noqa: E402  (run_cutlass_tmem_atoms put the repository root on the path)
DEFAULT_OUT = os.path.join("tests", "hardware", "cutlass_tmem_frg.json.gz")
SOURCE = os.path.join(HERE, "cutlass_tmem_frg.cpp")
NVCC_FLAGS = ["-std=c++17", "-x", "cu", "--expt-relaxed-constexpr", "-arch=sm_100a", "-O1"]
TRAITS_HEADER = os.path.join("cute", "atom", "mma_traits_sm100.hpp")

ALLOC_MODES = {0: "Interleaved", 1: "NonInterleaved", 2: "Duplicated",
               3: "ScaleFactorDuplicated4by1", 4: "ScaleFactorDuplicated2by2"}

# C++ spelling of the element types used below
F32, I32 = "float", "int32_t"
F16, BF16, TF32 = "cutlass::half_t", "cutlass::bfloat16_t", "cutlass::tfloat32_t"
S8, U8 = "int8_t", "uint8_t"
E4M3, E2M1, E3M2 = "cutlass::float_e4m3_t", "cutlass::float_e2m1_t", "cutlass::float_e3m2_t"
E2M1_UNPACK = "cutlass::detail::float_e2m1_unpacksmem_t"
SHORT = {F32: "f32", I32: "s32", F16: "f16", BF16: "bf16", TF32: "tf32", S8: "s8", U8: "u8",
         E4M3: "e4m3", E2M1: "e2m1", E3M2: "e3m2", E2M1_UNPACK: "e2m1_unpacksmem"}

# A's kind (tcgen05.mma .kind) for each TS family
KIND = {"TF32": "tf32", "F16BF16": "f16", "S8": "i8", "F8F6F4": "f8f6f4"}


def _atom(family: str, a: str, c: str, M: int, N: int) -> str:
    return "cute::SM100_MMA_%s<%s, %s, %s, %d, %d, cute::UMMA::Major::K, cute::UMMA::Major::K>" % (
        family, a, a, c, M, N)


def _d_case(family, a, c, M, N, tile_m=None, tile_n=None, sparse=False):
    tile_m, tile_n = tile_m or M, tile_n or N
    two = "2x1SM" in family
    cid = "D.%s.%s.M%d.N%d" % (family, SHORT[c], M, N)
    if (tile_m, tile_n) != (M, N):
        cid += ".tile%dx%d" % (tile_m, tile_n)
    return {"id": cid, "operand": "D", "family": family, "atom": _atom(family, a, c, M, N),
            "a_type": a, "value_type": c, "M": M, "N": N, "cta_group": 2 if two else 1, "ws": False,
            "sparse": sparse, "tile": [tile_m, tile_n], "mma_tiles": [tile_m // M, tile_n // N]}


def _ws_case(c, M, N, storage="uint32_t"):
    return {"id": "D.WS.%s.M%d.N%d" % (SHORT[c], M, N), "operand": "D", "family": None, "atom": None,
            "allocator": "cute::UMMA::tmem_frg_ws<%s, %s, 1>" % (c, storage), "storage_type": storage,
            "a_type": None, "value_type": c, "M": M, "N": N, "cta_group": 1, "ws": True, "sparse": False,
            "tile": [M, N], "mma_tiles": [1, 1]}


def _a_case(family, a, c, M, K, N=64):
    two = "2x1SM" in family
    return {"id": "A.%s.%s.M%d" % (family, SHORT[a], M), "operand": "A", "family": family,
            "atom": _atom(family, a, c, M, N), "a_type": a, "value_type": a, "kind": KIND[family.split("_")[0]],
            "M": M, "N": N, "K": K, "cta_group": 2 if two else 1, "ws": False, "sparse": False,
            "tile": [M, K], "mma_tiles": [1, 1]}


def cases() -> list:
    out = []
    for c in (F32, F16):
        # 1SM, A from shared memory: FrgTypeC = tmem_frg_1sm<c_type> (Interleaved)
        for M, N in ((64, 64), (64, 128), (64, 256), (128, 64), (128, 128), (128, 256)):
            out.append(_d_case("F16BF16_SS", F16, c, M, N))
        out.append(_d_case("F16BF16_SS", F16, c, 64, 64, tile_n=128))      # MMA_N = 2
        out.append(_d_case("F16BF16_SS", F16, c, 64, 64, tile_m=128))      # MMA_M = 2
        out.append(_d_case("F16BF16_SS", F16, c, 128, 64, tile_n=128))
        # 1SM, A from tensor memory: FrgTypeC = tmem_frg_1sm<c_type, int32_t, NonInterleaved>
        for M, N in ((64, 64), (64, 256), (128, 64)):
            out.append(_d_case("F16BF16_TS", F16, c, M, N))
        out.append(_d_case("F16BF16_TS", F16, c, 64, 64, tile_n=128))
        out.append(_d_case("F16BF16_TS", F16, c, 64, 64, tile_m=128))
        # 2x1SM: FrgTypeC = tmem_frg_2sm<c_type>
        for M, N in ((128, 64), (128, 128), (128, 256), (256, 64), (256, 128), (256, 256)):
            out.append(_d_case("F16BF16_2x1SM_SS", F16, c, M, N))
        out.append(_d_case("F16BF16_2x1SM_SS", F16, c, 128, 64, tile_n=128))
        out.append(_d_case("F16BF16_2x1SM_TS", F16, c, 128, 64))
        out.append(_d_case("F16BF16_2x1SM_TS", F16, c, 256, 64))
        # sparse A
        for M, N in ((128, 64), (128, 256), (256, 64)):
            out.append(_d_case("F16BF16_2x1SM_SS_SPARSE", F16, c, M, N, sparse=True))
        for M, N in ((64, 64), (128, 64)):
            out.append(_d_case("F16BF16_SS_SPARSE", F16, c, M, N, sparse=True))
        # .ws: no atom; the allocator itself
        for M, N in ((32, 64), (32, 128), (32, 256), (64, 64), (64, 128), (64, 256), (128, 64), (128, 256)):
            out.append(_ws_case(c, M, N))
    # the same FrgTypeC from other kinds
    out.append(_d_case("TF32_SS", TF32, F32, 128, 64))
    out.append(_d_case("S8_SS", S8, I32, 128, 64))
    out.append(_d_case("S8_2x1SM_SS", S8, I32, 128, 64))
    # A in tensor memory, K = one MMA's K (256 bits of A per row; 32 elements for f8f6f4)
    for family, a, c, K in (("TF32", TF32, F32, 8), ("F16BF16", F16, F32, 16), ("S8", S8, I32, 32),
                            ("F8F6F4", E4M3, F32, 32), ("F8F6F4", E2M1, F32, 32)):
        for M in (64, 128):
            out.append(_a_case(family + "_TS", a, c, M, K))
        for M in (128, 256):
            out.append(_a_case(family + "_2x1SM_TS", a, c, M, K))
    out.append(_a_case("F16BF16_TS", BF16, F32, 128, 16))
    out.append(_a_case("S8_TS", U8, I32, 128, 32))
    out.append(_a_case("F8F6F4_TS", E2M1_UNPACK, F32, 128, 32))
    # a 6-bit type: tmem_ptr's OffsetShift = log_2(32) - log_2(6) rounds 32/6 elements per word down to 8
    out.append(dict(_a_case("F8F6F4_TS", E3M2, F32, 128, 32), expect_problems=True))
    return out


def traits_allocators(include: str) -> dict:
    """{SM100_MMA_<family>: {"line": n, "FrgTypeA": text or None, "FrgTypeC": text}} from the traits header."""
    text = open(os.path.join(include, TRAITS_HEADER)).read()
    starts = list(re.finditer(r"struct\s+MMA_Traits<\s*(SM100_MMA_\w+)\s*<", text))
    out = {}
    for i, m in enumerate(starts):
        body = text[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        found = {}
        for key in ("FrgTypeA", "FrgTypeC"):
            d = re.search(r"using\s+%s\s*=\s*([^;]+);" % key, body)
            found[key] = " ".join(d.group(1).split()) if d else None
        out[m.group(1)] = {"line": text.count("\n", 0, m.start()) + 1, **found}
    return out


def ws_users(include: str) -> list:
    """The MMA_Traits specializations whose FrgType names tmem_frg_ws (none in CUTLASS 4.2)."""
    return sorted(name for name, t in traits_allocators(include).items()
                  if any("tmem_frg_ws" in (t[k] or "") for k in ("FrgTypeA", "FrgTypeC")))


def case_list_inc(case_list: list) -> str:
    lines = []
    for c in case_list:
        if c["atom"] is None:
            lines.append('D_WS("%s", %s, %s, %d, %d)' % (c["id"], c["value_type"], c["storage_type"], c["M"], c["N"]))
        elif c["operand"] == "D":
            lines.append('{ using Op = %s; D_ATOM("%s", Op, %d, %d) }' % (c["atom"], c["id"], *c["tile"]))
        else:
            lines.append('{ using Op = %s; A_ATOM("%s", Op, %d, %d) }' % (c["atom"], c["id"], c["M"], c["K"]))
    return "\n".join(lines) + "\n"


def build_and_run(include: str, nvcc: str, case_list: list, workdir: str) -> tuple:
    return compile_and_run(nvcc, NVCC_FLAGS, include, SOURCE, workdir, "cutlass_tmem_frg_list.inc",
                           case_list_inc(case_list))


def parse_output(text: str) -> dict:
    """The evaluator's stdout -> {case id: tensor record}; cells in order (tile_n, tile_m, row, col)."""
    out, cur = {}, None
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "CASE":
            f = rest.split()
            vb, sb, shift, rows, cols, tm, tn = (int(x) for x in f[1:])
            cur = out[f[0]] = {"value_bits": vb, "storage_bits": sb, "offset_shift": shift,
                               "shape": {"rows": rows, "cols": cols, "tiles_m": tm, "tiles_n": tn},
                               "lane": [], "column": [], "first_bit": [], "problems": []}
            expect = (0, 0, 0)
        elif word == "FRG":
            f = rest.split()
            mode = int(f[4])
            cur["allocator_args"] = {"template": f[0], "value_bits": int(f[1]), "storage_bits": int(f[2]),
                                     "n_sm": int(f[3]), "alloc_mode": ALLOC_MODES.get(mode) if mode >= 0 else None}
        elif word == "LAYOUT":
            cur["layout"] = rest
        elif word == "R":
            nums = [int(x) for x in rest.split()]
            r, tm, tn, cells = nums[0], nums[1], nums[2], nums[3:]
            if (tn, tm, r) != expect or len(cells) != 3 * cur["shape"]["cols"]:
                raise ValueError("row out of order: %r" % line[:80])
            shp = cur["shape"]
            expect = (tn, tm, r + 1)
            if expect[2] == shp["rows"]:
                expect = (tn, tm + 1, 0) if tm + 1 < shp["tiles_m"] else (tn + 1, 0, 0)
            cur["lane"].extend(cells[0::3])
            cur["column"].extend(cells[1::3])
            cur["first_bit"].extend(cells[2::3])
        elif word == "BAD":
            cur["problems"].append(rest)
        elif word == "END":
            shp = cur["shape"]
            if len(cur["lane"]) != shp["rows"] * shp["cols"] * shp["tiles_m"] * shp["tiles_n"]:
                raise ValueError("case %s is incomplete" % rest)
        elif word == "DONE":
            pass
        else:
            raise ValueError("unexpected output line %r" % line[:80])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--include", default=None, help="CUTLASS include directory (default: cutlass_library's)")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/bin/nvcc")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    include = args.include or default_include()

    case_list = cases()
    allocators = traits_allocators(include)
    with tempfile.TemporaryDirectory() as work:
        cmd, stdout = build_and_run(include, args.nvcc, case_list, work)
    evaluated = parse_output(stdout)

    records, unexpected = [], 0
    for case in case_list:
        rec = dict(case)
        rec.setdefault("expect_problems", False)
        if case["atom"] is not None:
            name = "SM100_MMA_" + case["family"]
            decl = allocators[name]
            rec["traits"] = {"name": name, "line": decl["line"],
                             "FrgType": decl["FrgTypeC" if case["operand"] == "D" else "FrgTypeA"]}
        rec.update(evaluated[case["id"]])
        if rec["problems"] and not rec["expect_problems"]:
            print("%s: %d problems" % (case["id"], len(rec["problems"])), file=sys.stderr)
            unexpected += 1
        records.append(rec)

    rel = lambda p: os.path.relpath(p, ROOT) if p.startswith(ROOT) else p  # noqa: E731

    def compile_words(cmd, include, work):
        """The nvcc command as run, with the include folder relative and the build folder as <build>."""
        words = [os.path.basename(cmd[0])]
        for c in cmd[1:]:
            c = c.replace(work, "<build>").replace(include, rel(include))
            words.append(rel(c) if c.startswith(ROOT) else c)
        return words
    facts = {
        "cutlass_version": cutlass_version(include),
        "traits_header": TRAITS_HEADER.replace(os.sep, "/"),
        "pointer_header": "cute/pointer.hpp",
        "allocator_header": "cute/arch/tmem_allocator_sm100.hpp",
        "include": rel(include),
        "nvcc": nvcc_version(args.nvcc),
        "compile": " ".join(compile_words(cmd, include, work)),
        "tmem_frg_ws_users": ws_users(include),
        "convention": "per case, CUTLASS's tensor has shape ((rows, cols), tiles_m, tiles_n); for D, row = "
                      "m of the CTA's M/cta_group rows and col = n of one MMA, for A row = m and col = k "
                      "(rows may exceed M/cta_group: a Duplicated allocation repeats the CTA's rows); "
                      "lane[i], column[i], first_bit[i] locate coordinate "
                      "i = ((tile_n * tiles_m + tile_m) * rows + row) * cols + col in the 32-bit cell "
                      "(lane, column) relative to the tensor's tensor-memory address, bits first_bit .. "
                      "first_bit + value_bits - 1; the address is tmem_ptr<value type>(0) + layout offset, "
                      "decoded as lane = bits 16.., column = bits 0..15, sub-word index s in the top "
                      "offset_shift bits, first_bit = s * value_bits",
    }
    header = provenance.header(
        what="CUTLASS's tensor-memory allocations of tcgen05.mma's accumulator D and of a tensor-memory A (UMMA "
             "tmem_frg): per case, the (lane, column, first bit) of every coordinate of the tensor CUTLASS builds.",
        recorded_by="hardware/run_cutlass_tmem_frg.py",
        command=provenance.command_line("hardware/run_cutlass_tmem_frg.py", sys.argv[1:] if argv is None else argv),
        source=provenance.sentence(("CUTLASS", f"{facts['cutlass_version']} ({facts['traits_header']}, "
                                               f"{facts['pointer_header']}, {facts['allocator_header']}), "
                                               "evaluated on the host"), ("nvcc", facts["nvcc"])),
        date=provenance.today(), details=facts)
    doc = {"provenance": header, "cases": records}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    provenance.write_json(args.out, doc, separators=(",", ":"))
    print("%d cases (%d D, %d A; %d elements) -> %s%s" % (
        len(records), sum(r["operand"] == "D" for r in records), sum(r["operand"] == "A" for r in records),
        sum(len(r["lane"]) for r in records), args.out,
        "; %d cases with unexpected problems" % unexpected if unexpected else ""))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
