"""Record CUTLASS's SM100 tensor-memory copy atoms: tests/hardware/cutlass_tmem_atoms.json.gz.

CUTLASS states, for each SM100_TMEM_LOAD_* / SM100_TMEM_STORE_* copy atom, which tensor-memory bit
each bit of each thread's registers is (cute/atom/copy_traits_sm100.hpp: ThrID, ValID, SrcLayout,
DstLayout, with TMEM::DP_b the lane stride in bits). This script

1. lists every Copy_Traits<SM100_TMEM_LOAD_*|SM100_TMEM_STORE_*> specialization in that header;
2. reads, for each, the PTX the atom issues from cute/arch/copy_sm100.hpp (shape, .num, the
   .pack::16b / .unpack::16b qualifier and, for .16x32bx2, the immediate half-split offset CUTLASS
   passes);
3. compiles hardware/cutlass_tmem_atoms.cpp (host-only evaluation of the CuTe layouts; nvcc, no GPU
   needed) with the atom list and runs it;
4. writes, per atom and thread, the (lane, column, half) of every 16-bit piece j of the thread's
   registers (register j // 2, its low half when j is even), lane and column relative to the
   instruction's address, half = which 16-bit half of the 32-bit cell.

Usage (from the repository root):
  python3 hardware/run_cutlass_tmem_atoms.py [--include DIR] [--nvcc PATH]
                                             [--out tests/hardware/cutlass_tmem_atoms.json.gz]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from solver import provenance  # noqa: E402

DEFAULT_OUT = os.path.join("tests", "hardware", "cutlass_tmem_atoms.json.gz")
SOURCE = os.path.join(HERE, "cutlass_tmem_atoms.cpp")
NVCC_FLAGS = ["-std=c++17", "-x", "cu", "--expt-relaxed-constexpr", "-arch=sm_100a", "-O1"]

TRAITS_RE = re.compile(r"struct\s+Copy_Traits<\s*(SM100_TMEM_(LOAD|STORE)_\w+)\s*>")
NAME_RE = re.compile(r"^SM100_TMEM_(LOAD|STORE)_(16|32)dp(\d+)b(\d+)x(_16b)?$")
PTX_RE = re.compile(r"^tcgen05\.(ld|st)\.sync\.aligned\.(16x64b|16x128b|16x256b|32x32b|16x32bx2)"
                    r"\.x(\d+)(\.pack::16b|\.unpack::16b)?\.b32$")


def default_include() -> str:
    try:
        import cutlass_library
    except ImportError:
        sys.exit("cutlass_library is not installed; pass --include")
    return os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include")


def cutlass_version(include: str) -> str:
    text = open(os.path.join(include, "cutlass", "version.h")).read()
    parts = [re.search(r"#define CUTLASS_%s (\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def traits_atoms(include: str) -> list:
    """Every (name, op) with a Copy_Traits specialization in copy_traits_sm100.hpp, header order."""
    text = open(os.path.join(include, "cute", "atom", "copy_traits_sm100.hpp")).read()
    seen, atoms = set(), []
    for m in TRAITS_RE.finditer(text):
        if m.group(1) not in seen:
            seen.add(m.group(1))
            atoms.append((m.group(1), m.group(2)))
    return atoms


def asm_text(body: str) -> str:
    """The concatenated string literals of the first `asm volatile (...)` template in body."""
    start = body.index("asm volatile")
    i = body.index("(", start) + 1
    out = []
    while True:
        while body[i].isspace():
            i += 1
        if body[i] != '"':
            break
        j = i + 1
        while body[j] != '"':
            j += 2 if body[j] == "\\" else 1
        out.append(body[i + 1:j])
        i = j + 1
    return "".join(out).replace("\\n", "").strip()


def arch_ops(include: str) -> dict:
    """struct name -> its PTX template, from cute/arch/copy_sm100.hpp."""
    text = open(os.path.join(include, "cute", "arch", "copy_sm100.hpp")).read()
    ops = {}
    for m in re.finditer(r"^struct\s+(SM100_TMEM_(?:LOAD|STORE)_\w+)\s*\n\{(.*?)\n\};", text, re.S | re.M):
        if "asm volatile" in m.group(2):
            ops[m.group(1)] = asm_text(m.group(2))
    return ops


def parse_ptx(template: str) -> dict:
    """Split one tcgen05.ld/st template into its instruction fields and operands."""
    opcode = re.match(r"[^\[{]*", template).group(0)
    operands = template[len(opcode):]
    opcode = opcode.strip()
    m = PTX_RE.match(opcode)
    if not m:
        raise ValueError("unexpected TMEM instruction %r" % template)
    operands = operands.strip().rstrip(";")
    # ld: {regs}, [taddr] (, imm)   st: [taddr] (, imm), {regs}
    no_regs = re.sub(r"\{[^}]*\}", "", operands)
    fields = [f.strip() for f in no_regs.split(",") if f.strip()]
    imm = [int(f) for f in fields if re.fullmatch(r"\d+", f)]
    nregs = len(re.findall(r"%\d+", re.search(r"\{([^}]*)\}", operands).group(1)))
    return {"instruction": opcode, "op": m.group(1), "shape": m.group(2), "num": int(m.group(3)),
            "pack": bool(m.group(4)), "half_splitoff": imm[0] if imm else None, "registers": nregs,
            "template": template}


def build_and_run(include: str, nvcc: str, atoms: list, workdir: str) -> tuple:
    listed = "".join("ATOM(%s, %s)\n" % (name, "true" if op == "STORE" else "false") for name, op in atoms)
    return compile_and_run(nvcc, NVCC_FLAGS, include, SOURCE, workdir, "cutlass_tmem_atoms_list.inc", listed)


def compile_and_run(nvcc: str, flags: list, include: str, source: str, workdir: str, list_name: str,
                    list_text: str) -> tuple:
    """Write the case list the evaluator #includes, compile it host-side with nvcc against CUTLASS's
    headers and run it: (the compile command, its stdout). Exit 1 is the evaluator reporting BAD lines."""
    with open(os.path.join(workdir, list_name), "w") as f:
        f.write(list_text)
    binary = os.path.join(workdir, os.path.splitext(os.path.basename(source))[0])
    cmd = [nvcc] + flags + ["-I" + include, "-I" + workdir, "-o", binary, source]
    subprocess.run(cmd, check=True)
    run = subprocess.run([binary], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit("evaluation failed (%d): %s" % (run.returncode, run.stderr))
    return cmd, run.stdout


def parse_output(text: str) -> dict:
    atoms, cur = {}, None
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "ATOM":
            name, op, threads, bits = rest.split()
            cur = atoms[name] = {"name": name, "op": op, "threads_in_atom": int(threads),
                                 "register_bits": int(bits), "layouts": {}, "threads": [], "thread_index": [],
                                 "problems": []}
        elif word == "LAYOUT":
            key, _, value = rest.partition(" ")
            cur["layouts"][key] = value
        elif word == "T":
            nums = [int(x) for x in rest.split()]
            t, tid, flat = nums[0], nums[1], nums[2:]
            assert t == len(cur["threads"])
            cur["thread_index"].append(tid)
            cur["threads"].append([flat[i:i + 3] for i in range(0, len(flat), 3)])
        elif word == "BAD":
            cur["problems"].append(rest)
        elif word in ("END", "DONE"):
            pass
        else:
            raise ValueError("unexpected output line %r" % line)
    return atoms


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if l.strip()][-1].strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--include", default=None, help="CUTLASS include directory (default: cutlass_library's)")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/bin/nvcc")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    include = args.include or default_include()

    atoms = traits_atoms(include)
    ops = arch_ops(include)
    with tempfile.TemporaryDirectory() as work:
        cmd, stdout = build_and_run(include, args.nvcc, atoms, work)
    evaluated = parse_output(stdout)

    records = []
    for name, op in atoms:
        rec = evaluated[name]
        m = NAME_RE.match(name)
        ptx = parse_ptx(ops[name])
        assert ptx["op"] == ("ld" if op == "LOAD" else "st"), name
        assert ptx["registers"] * 32 == rec["register_bits"], name
        rec.update({
            "name_fields": {"dp": int(m.group(2)), "bits": int(m.group(3)), "repeat": int(m.group(4)),
                            "pack16b": bool(m.group(5))},
            "ptx": ptx,
        })
        if rec["problems"]:
            print("%s: %d pieces are not one 16-bit half of a cell" % (name, len(rec["problems"])), file=sys.stderr)
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
        "traits_header": "cute/atom/copy_traits_sm100.hpp",
        "instruction_header": "cute/arch/copy_sm100.hpp",
        "include": rel(include),
        "nvcc": nvcc_version(args.nvcc),
        "compile": " ".join(compile_words(cmd, include, work)),
        "convention": "threads[t][j] = [lane, column, half] of the 16-bit piece j of thread t's registers "
                      "(register j // 2, its low half when j is even); lane and column relative to the "
                      "instruction's TMEM address; half = which 16-bit half of the 32-bit cell (0 = bits 0..15)",
    }
    header = provenance.header(
        what="CUTLASS's SM100 tensor-memory copy atoms (SM100_TMEM_LOAD_* / SM100_TMEM_STORE_*): each atom's CuTe "
             "layouts, the PTX it issues and the (lane, column, half) of every 16-bit piece of every thread's "
             "registers.",
        recorded_by="hardware/run_cutlass_tmem_atoms.py",
        command=provenance.command_line("hardware/run_cutlass_tmem_atoms.py", sys.argv[1:] if argv is None else argv),
        source=provenance.sentence(("CUTLASS", f"{facts['cutlass_version']} ({facts['traits_header']}, "
                                               f"{facts['instruction_header']}), evaluated on the host"),
                                   ("nvcc", facts["nvcc"])),
        date=provenance.today(), details=facts)
    doc = {"provenance": header, "atoms": records}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    provenance.write_json(args.out, doc, separators=(",", ":"))
    bad = sum(len(r["problems"]) for r in records)
    print("%d atoms (%d LOAD, %d STORE) -> %s%s" % (
        len(records), sum(r["op"] == "LOAD" for r in records), sum(r["op"] == "STORE" for r in records),
        args.out, "; %d bad pieces" % bad if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
