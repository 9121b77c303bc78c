"""CUTLASS's CuTe DSL (nvidia-cutlass-dsl) as the oracle of `layoutproof fuzz --against CMD`.

    /work/venvs/cutedsl/bin/python -m solver.fuzz.adapters.cute_dsl      # in the DSL's own venv

The DSL is never a dependency of layoutproof: only `build_in_dsl` and `main` import it (optional extra
`.[cutedsl]`). Everything else here is pure and tested without it (tests/solver_tests/fuzz/test_cute_dsl_against.py).

Protocol: the line protocol of solver/fuzz/adapters/driver_encode.py (one JSON record in, one JSON answer
out, in order, flushed; blank lines skipped). The records this adapter answers have target "cute_dsl"
(solver/fuzz/compilers/cute_dsl.py generates them); any other target gets {"verdict": null, "detail":
"not a cute_dsl case"}. A cute_dsl case is a set of the DSL's own parameters:

    {"arch": "sm90" | "sm100", "operand": "A" | "B", "dtype": "f16" | "bf16" | "tf32" | "e4m3" | "e5m2" |
     "s8" | "u8", "major": "K" | "MN", "atom": null (the DSL helper's heuristic) | a SmemLayoutAtomKind
     name ("K_SW128", "MN_SW128_32B", ...), "mma_tiler": [M, N, K], "cta_group": 1 | 2 (sm100),
     "smem_base": the operand tile's shared-memory byte address, "stages": n}

How the adapter builds it (a host-side `@cute.jit` with CUTE_DSL_ARCH = sm_90a / sm_100a; no GPU):
  1. the tiled MMA of the DSL's helper: sm90 `hopper_helpers.make_trivial_tiled_mma(a, b, majorA, majorB,
     f32/s32, (M/64,1,1), (64, N))`, sm100 `blackwell_helpers.make_trivial_tiled_mma(a, b, majorA, majorB,
     f32/s32, CtaGroup, (M, N))`; the other operand is K-major;
  2. the operand's smem layout from the DSL's own helper `make_smem_layout_a/b(...)` with `stages`; when
     the case names an atom, the helper's atom heuristic (`get_smem_layout_atom` / `get_smem_layout_atom_ab`)
     is replaced by that atom, so the helper still tiles it;
  3. the swizzle moved onto an smem pointer at `smem_base` (as the DSL requires), the tensor partitioned
     by the MMA (sm90: thread slice 0's partition_A/B; sm100: the helper's layout is already in MMA shape),
     then `tiled_mma.make_fragment_A/B`: a tensor of the DSL's shared-memory descriptors, one per k-block;
  4. each k-block's descriptor word (stage 0, first MN block) is printed by the jitted host code.

Answer: {"verdict": "accept" | "refuse", "detail", "version", "layout": the smem layout the helper chose
(CuTe text), "atom": the atom kind used, "partitioned": the partitioned layout (CuTe text: ((MN, K),
restMN, restK, stages) for the MMA), "swizzle": "S<B,M,S>" of the pointer, "descriptors": ["0x...", one
per k-block]}. The element->offset map is the partitioned layout: element (mn, k) of k-block kb sits at
element offset L(((mn, k), 0, kb, 0)), byte address swizzle(smem_base + offset * bits / 8).
"refuse": the DSL raised (a Python exception or an MLIR verifier error); detail is its first line.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Callable, Iterable, TextIO

from solver.fuzz.adapters import protocol

TARGET = "cute_dsl"
NOT_A_CASE = "not a cute_dsl case"
ARCHES = {"sm90": "sm_90a", "sm100": "sm_100a"}
DTYPES = {"f16": "Float16", "bf16": "BFloat16", "tf32": "TFloat32", "e4m3": "Float8E4M3FN",
          "e5m2": "Float8E5M2", "s8": "Int8", "u8": "Uint8"}
MAJORS = ("K", "MN")
OPERANDS = ("A", "B")
SM90_ATOMS = ("K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128")
SM100_ATOMS = SM90_ATOMS + ("MN_SW128_32B",)
ATOMS = {"sm90": SM90_ATOMS, "sm100": SM100_ATOMS}
MARK = "LPDESC"          # the prefix of the jitted code's printf lines


class BadCase(ValueError):
    """A case document that names no DSL call (unknown dtype, atom, ...): answered with verdict null."""


def check_case(case) -> dict:
    """The case with defaults filled in; BadCase when it is not one this adapter can express."""
    if not isinstance(case, dict):
        raise BadCase("the case is not a JSON object")
    c = {"atom": None, "cta_group": 1, "stages": 1, "smem_base": 0, "operand": "B", **case}
    named = lambda key, names: isinstance(c.get(key), str) and c[key] in names    # noqa: E731  (a list is no name)
    if not named("arch", ARCHES):
        raise BadCase(f"arch {str(c.get('arch'))[:40]!r}: expected one of {', '.join(ARCHES)}")
    if not named("dtype", DTYPES):
        raise BadCase(f"dtype {str(c.get('dtype'))[:40]!r}: expected one of {', '.join(DTYPES)}")
    if not (named("major", MAJORS) and named("operand", OPERANDS)):
        raise BadCase("major must be K or MN and operand A or B")
    if c["atom"] is not None and not named("atom", ATOMS[c["arch"]]):
        raise BadCase(f"atom {c['atom']!r} is not a {c['arch']} SmemLayoutAtomKind")
    tiler = c.get("mma_tiler")
    if not (isinstance(tiler, list) and len(tiler) == 3 and all(isinstance(v, int) and v > 0 for v in tiler)):
        raise BadCase("mma_tiler must be [M, N, K], positive integers")
    for key in ("cta_group", "stages", "smem_base"):
        if isinstance(c[key], bool) or not isinstance(c[key], int) or c[key] < 0:
            raise BadCase(f"{key} must be a non-negative integer")
    if c["arch"] == "sm90" and c["cta_group"] != 1:
        raise BadCase("wgmma (sm90) has no cta_group")
    return c


one_line = protocol.one_line


def first_error_line(error: BaseException) -> str:
    """The DSL's message, one line: the verifier's 'error:' line when there is one (its text is framed
    with ANSI colours and suggestions), else the exception's first line."""
    import re
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # the verifier's error continues on indented lines up to the next "suggestion:"
    for i, line in enumerate(lines):
        if line.startswith("error:") and "IR verification failed" in line or line.startswith("error: unknown"):
            tail = []
            for more in lines[i + 1:]:
                if more.startswith(("suggestion:", "-->", "=")):
                    break
                tail.append(more)
            return one_line(f"{type(error).__name__}: " + " ".join([line] + tail))
    chosen = next((line for line in lines if not line.startswith(("error[", "[", "-->"))), lines[0] if lines else "")
    return one_line(f"{type(error).__name__}: {chosen}")


Builder = Callable[[dict], dict]   # a checked case -> the answer's fields (verdict, detail, layout, ...)


def answer(record, build: Builder) -> dict:
    """The protocol's answer to one record."""
    if not isinstance(record, dict):
        return {"verdict": None, "detail": "not a fuzz record (a JSON object)"}
    if record.get("target") != TARGET:
        return {"verdict": None, "detail": NOT_A_CASE}
    try:
        case = check_case(record.get("case"))
    except BadCase as error:
        return {"verdict": None, "detail": one_line(error)}
    return build(case)


def answer_line(line: str, build: Builder) -> str:
    return protocol.answer_line(line, lambda record: answer(record, build))


def serve(lines: Iterable[str], output: TextIO, build: Builder) -> int:
    return protocol.serve(lines, output.write, lambda record: answer(record, build), output.flush)


def parse_printed(text: str) -> list:
    """The descriptor words the jitted code printed ("LPDESC <kb> <signed 64-bit>" lines), by k-block."""
    words = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == MARK:
            words[int(parts[1])] = int(parts[2]) & ((1 << 64) - 1)
    return [f"0x{words[k]:016x}" for k in sorted(words)]


# --- the DSL side (imported only here) -------------------------------------------------------------------

def _capture_stdout(run: Callable[[], None]) -> str:
    """Run `run`, returning what it wrote on file descriptor 1 (the jitted host code's printf)."""
    import ctypes
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        try:
            run()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode(errors="replace")


def dsl_version() -> str:
    try:
        from importlib.metadata import version
        return "nvidia-cutlass-dsl " + version("nvidia-cutlass-dsl")
    except Exception:                                          # noqa: BLE001
        return "nvidia-cutlass-dsl (version unknown)"


def build_in_dsl(case: dict) -> dict:
    """Build the case in the DSL (see the module docstring); needs nvidia-cutlass-dsl, no GPU."""
    os.environ["CUTE_DSL_ARCH"] = ARCHES[case["arch"]]
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import OperandMajorMode, tcgen05, warpgroup
    import cutlass.utils.blackwell_helpers as sm100_utils
    import cutlass.utils.hopper_helpers as sm90_utils
    from cutlass.tensor_utils import LayoutEnum
    from cutlass._mlir.dialects import builtin
    from cutlass.cutlass_dsl import T, CuTeDSL

    CuTeDSL._get_dsl().envar.arch = ARCHES[case["arch"]]   # read once per process otherwise
    dtype = getattr(cutlass, DTYPES[case["dtype"]])
    other = dtype
    acc = cutlass.Int32 if case["dtype"] in ("s8", "u8") else cutlass.Float32
    major = OperandMajorMode.K if case["major"] == "K" else OperandMajorMode.MN
    is_a = case["operand"] == "A"
    major_a, major_b = (major, OperandMajorMode.K) if is_a else (OperandMajorMode.K, major)
    M, N, K = case["mma_tiler"]
    stages, base, arch, atom_name = case["stages"], case["smem_base"], case["arch"], case["atom"]
    info: dict = {}

    sm90 = arch == "sm90"
    helpers = sm90_utils if sm90 else sm100_utils
    heuristic_name = "get_smem_layout_atom" if sm90 else "get_smem_layout_atom_ab"
    heuristic = getattr(helpers, heuristic_name)
    kinds = warpgroup.SmemLayoutAtomKind if sm90 else tcgen05.SmemLayoutAtomKind

    def chosen_atom(*args, **kwargs):
        kind = heuristic(*args, **kwargs) if atom_name is None else getattr(kinds, atom_name)
        info["atom"] = kind.name
        return kind

    @cute.jit
    def kernel():
        if cutlass.const_expr(sm90):
            # one wgmma is m64nNk: an M of 128 tiles two atoms along M (atom_layout_mnk (2,1,1))
            tiled_mma = sm90_utils.make_trivial_tiled_mma(dtype, other, major_a, major_b, acc,
                                                          (max(M // 64, 1), 1, 1), (64, N))
            enum = LayoutEnum.ROW_MAJOR if major == OperandMajorMode.K else LayoutEnum.COL_MAJOR
            make = sm90_utils.make_smem_layout_a if is_a else sm90_utils.make_smem_layout_b
            layout = make(enum, (M, N, K), dtype, stages)
        else:
            group = tcgen05.CtaGroup.ONE if case["cta_group"] == 1 else tcgen05.CtaGroup.TWO
            tiled_mma = sm100_utils.make_trivial_tiled_mma(dtype, other, major_a, major_b, acc, group, (M, N))
            make = sm100_utils.make_smem_layout_a if is_a else sm100_utils.make_smem_layout_b
            layout = make(tiled_mma, (M, N, K), dtype, stages)
        info["layout"] = str(layout)
        info["swizzle"] = str(layout.inner)
        ptr = cute.make_ptr(dtype, base, cute.AddressSpace.smem, assumed_align=16, swizzle_=layout.inner)
        tensor = cute.make_tensor(ptr, layout.outer)
        if cutlass.const_expr(sm90):
            thr = tiled_mma.get_slice(0)
            tensor = thr.partition_A(tensor) if is_a else thr.partition_B(tensor)
        info["partitioned"] = str(tensor.layout)
        frag = tiled_mma.make_fragment_A(tensor) if is_a else tiled_mma.make_fragment_B(tensor)
        for kb in cutlass.range_constexpr(cute.size(frag, mode=[2])):
            word = builtin.unrealized_conversion_cast([T.i64()], [frag[None, 0, kb, 0].iterator])
            cute.printf(MARK + " {} {}", kb, cutlass.Int64(word))

    reply = {"verdict": "accept", "detail": "built", "version": dsl_version()}
    setattr(helpers, heuristic_name, chosen_atom)
    try:
        printed = _capture_stdout(kernel)
    except Exception as error:                                 # noqa: BLE001  the DSL's refusal
        return {"verdict": "refuse", "detail": first_error_line(error), "version": reply["version"],
                **{k: info[k] for k in ("atom", "layout") if k in info}}
    finally:
        setattr(helpers, heuristic_name, heuristic)
    reply.update(info)
    reply["descriptors"] = parse_printed(printed)
    if not reply["descriptors"]:
        reply.update(verdict="refuse", detail="the DSL built no descriptor")
    return reply


def isolated(build: Builder) -> Builder:
    """`build` run in a forked child per case: the DSL aborts the process on some inputs (a C++
    std::bad_variant_access, ...); such a case is answered "refuse" with detail "crashed: ..." and the
    adapter goes on. The parent imports the DSL first so that each fork is cheap."""
    import signal

    def run(case: dict) -> dict:
        read_end, write_end = os.pipe()
        errors = tempfile.TemporaryFile(mode="w+b")
        pid = os.fork()
        if pid == 0:                                           # the child
            os.close(read_end)
            os.dup2(errors.fileno(), 2)
            try:
                text = json.dumps(build(case)).encode()
            except BaseException as error:                     # noqa: BLE001
                text = json.dumps({"verdict": "refuse", "detail": first_error_line(error)}).encode()
            with os.fdopen(write_end, "wb") as out:
                out.write(text)
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as inp:
            text = inp.read()
        _, status = os.waitpid(pid, 0)
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
        errors.close()
        if text:
            return json.loads(text)
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        name = signal.Signals(sig).name if sig else f"exit status {os.WEXITSTATUS(status)}"
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        return {"verdict": "refuse", "detail": one_line(f"crashed ({name}): " + " ".join(lines[-2:])),
                "version": dsl_version()}
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.fuzz.adapters.cute_dsl",
                                     description="CuTe DSL oracle for layoutproof fuzz --against")
    parser.add_argument("--no-isolate", action="store_true",
                        help="build every case in this process (a DSL abort then ends the adapter)")
    args = parser.parse_args(argv)
    build = build_in_dsl
    if not args.no_isolate:
        import cutlass.cute  # noqa: F401  imported before forking
        build = isolated(build_in_dsl)
    serve(iter(sys.stdin.readline, ""), sys.stdout, build)
    return 0


if __name__ == "__main__":
    sys.exit(main())
