"""Record what ptxas decides about tcgen05 tensor-memory instructions: tests/hardware/tmem_ptxas_forms.json.gz.

Every form is one tcgen05 instruction (PTX ISA 9.7.16.7 - 9.7.16.9: tcgen05.alloc, .dealloc,
.relinquish_alloc_permit, .ld, .ld.red, .st, .wait, .cp, .shift) alone in a kernel, assembled with
`ptxas -arch=<target>` under a `.version` line. The instruction text is recorded exactly as a user
passes it to `layoutproof tmem check --ptx "..."`: **without** the trailing semicolon (the kernel adds
it). Operands follow one convention: `%r<n>` are .b32 registers, `%rd<n>` .b64 registers, a bare name
(`sh`) is a `.shared .b32` variable declared in the kernel, the tensor-memory address is `%r0`.

The grid (see `full_grid` and `core_grid`):

  * ld / st: shapes .16x64b .16x128b .16x256b .32x32b .16x32bx2 (with and without the immediate
    half-split offset; the offset also on the other shapes) and a bogus .16x512b, x .num x1 .. x128
    and x256, x no / .pack::16b / .unpack::16b, x register vectors of the count
    num * (1, 2 or 4 registers per .num step: .16x128b takes 2, .16x256b 4) and one fewer / more;
  * ld.red: the shapes x .num x vector lengths with .min.f32, and at .x4 every .min/.max/missing
    x .abs/.NaN x .f32/.u32/.s32 (and .b32, .f16) combination, several redval operand forms;
  * alloc / dealloc: .cta_group::1/::2 (and none, ::3) x columns 0 16 32 33 48 64 128 256 512 1024
    2048 or a register, destinations [sh], [%r3], [%rd3], with and without .shared::cta;
    relinquish_alloc_permit; wait::ld / wait::st;
  * every op with .sync.aligned, .sync, .aligned, neither, and .aligned.sync;
  * cp: shapes .128x256b .4x256b .128x128b .64x128b .32x128b and a bogus .16x256b x no multicast /
    .warpx2::02_13 / .warpx2::01_23 / .warpx4 x no decompression / .b8x16.b6x16_p32 / .b8x16.b4x16_p64
    x .cta_group::1 / ::2, then broken qualifiers (no or a third cta_group, half or reversed format
    pairs, repeated qualifiers, .sync/.aligned, a type, other qualifier orders) and operand forms
    ([%r0+16], immediate addresses, [%rd0], [sh], s-desc %r1 / an immediate / [%rd1]);
  * shift: .cta_group::1/::2 (none, ::3) x .down (none, .up, twice), a written .31x256b, .sync, a type,
    the other qualifier order, operand forms ([%r0+4], immediate lanes 0 / 1 / 32 / 256, [%rd0], ...);
  * edge forms (`edge_forms`, issue 25): integer constants in every style (hex, octal, binary, U
    suffix, negative, above 32 bits) in st's source vector (with and without a register), in ld's
    vector, as redval, address offsets ([%r0+-4], [%r0-4]), nCols, taddr of dealloc, the half-split
    offset and s-desc; repeated and conflicting qualifiers on every op (.x2.x4, two shapes, two types,
    .pack::16b.unpack::16b, .sync.sync, .aligned.aligned, .min.max, .abs.abs, .NaN.NaN, two
    .cta_group, two .shared::cta, tcgen05.wait::ld::st, tcgen05.wait::mma); the decompression
    qualifiers on ops other than cp, and cp's pair split by other qualifiers; operands swapped,
    missing, extra, or followed by a stray comma. A core subset (the four forms of issue 25 item 6
    and a decompression qualifier on ld) goes to every pair.

The full grid runs on sm_100a under PTX 9.0, the full ld.red grid (and the ld.red edge forms) on sm_103a
under 9.0; a core subset
(legal and illegal samples of every rule) on every other (target, version) pair of sm_100a sm_100f
sm_103a sm_103f sm_110a sm_110f sm_120a x PTX 8.6 8.7 8.8 9.0 that ptxas supports, and on sm_90a
(which has no tcgen05) under 9.0; eight valid forms (SAMPLE_FORMS) on the pairs ptxas does not
support (their error is ptxas's "PTX .version X does not support .target Y") and on sm_90a under
8.6 - 8.8.

Kernels are assembled in batches of one (target, version): errors are attributed to forms by line
number; a form with an error line is refused with its first error (the location and the
"error :"/"fatal :" prefix stripped: the first non-fatal error, else the first fatal one, as
solver.fuzz.adapters.ptxas.first_error); the rest are assembled again until a batch assembles
cleanly, and only then are they accepted (ptxas prints an identical message once per file, so one run
does not flag every form that has it). A batch whose failure names no form's line, or names the
.version/.target lines, or holds a syntax error ("Parsing error ...": after one, ptxas 13.0 blames
other kernels for errors they do not have) is assembled one form at a time. A form on which ptxas crashes without a
message (13.0: SIGSEGV on tcgen05.cp / tcgen05.shift with an immediate address) is refused with the
error "crashed with signal 11 and no message". When ptxas refuses the (target, version) pair
itself, the recorded error is that refusal ("PTX .version 8.6 does not support .target sm_120a"),
even where ptxas prints an error about the instruction first. `--verify N` re-assembles N random
forms alone and checks they get the same verdict and first error (the recording was made with
`--verify 6000`: every form, no difference).

Usage (from the repository root):
  python3 hardware/run_tmem_ptxas_forms.py [--ptxas PATH] [--out tests/hardware/tmem_ptxas_forms.json.gz]
                                           [--jobs 2] [--verify 200]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

PTXAS_TIMEOUT_S = 120


# Self-contained (no import of spec/ or solver/): the recording must not depend on the model it checks. Only
# `main` imports solver/provenance.py, the standard-library helper that writes the provenance header.
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _provenance():
    """solver/provenance.py (the header's helper, no part of the model)."""
    if REPOSITORY not in sys.path:
        sys.path.insert(0, REPOSITORY)
    from solver import provenance
    return provenance


def find_ptxas(path=None):
    """The ptxas to run: PATH if given (a file or a name on $PATH), else `ptxas` on $PATH."""
    candidate = path or "ptxas"
    if os.sep in candidate:
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which(candidate)


def ptxas_version(ptxas: str) -> str:
    """'Cuda compilation tools, release 13.0, V13.0.88; Build cuda_13.0.r13.0/compiler.36424714_0'
    (as solver.fuzz.adapters.ptxas.ptxas_version)."""
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return "; ".join(line for line in lines if line.startswith(("Cuda", "Build"))) or " ".join(lines)

DEFAULT_OUT = os.path.join("tests", "hardware", "tmem_ptxas_forms.json.gz")
TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a")
PTX_VERSIONS = ("8.6", "8.7", "8.8", "9.0")
FULL_GRID_AT = ("sm_100a", "9.0")          # every form; sm_103a under 9.0: every ld.red form
LD_RED_GRID_AT = ("sm_103a", "9.0")
CORE_ONLY_UNDER = {"sm_90a": "9.0"}        # sm_90a (no tcgen05): the core grid under 9.0 only

SHAPES = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
BOGUS_SHAPE = "16x512b"
REGS_PER_NUM = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1,
                BOGUS_SHAPE: 1}
NUMS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SPLIT_OFFSET = 16                 # the immediate half-split offset used (in columns)
QUALIFIERS = (".sync.aligned", ".sync", ".aligned", "", ".aligned.sync")
ALLOC_COLUMNS = (0, 16, 32, 33, 48, 64, 128, 256, 512, 1024, 2048)
BATCH = 150
HEADER_LINES = 3                  # .version, .target, .address_size
_LINE = re.compile(r"^ptxas\s+[^,]*,\s*line\s+(\d+);\s*(error|fatal|warning)\s*:\s*(.*)$")


# --- The grid ---------------------------------------------------------------------------------------
def vector(count: int, first: int = 1) -> str:
    return "{" + ", ".join(f"%r{first + i}" for i in range(count)) + "}"


def ld(shape, num, pack=None, count=None, offset=None, qual=".sync.aligned") -> str:
    count = REGS_PER_NUM[shape] * num if count is None else count
    mods = f"tcgen05.ld{qual}.{shape}.x{num}" + (f".{pack}" if pack else "") + ".b32"
    return f"{mods} {vector(count)}, [%r0]" + (f", {offset}" if offset is not None else "")


def st(shape, num, pack=None, count=None, offset=None, qual=".sync.aligned") -> str:
    count = REGS_PER_NUM[shape] * num if count is None else count
    mods = f"tcgen05.st{qual}.{shape}.x{num}" + (f".{pack}" if pack else "") + ".b32"
    return f"{mods} [%r0]" + (f", {offset}" if offset is not None else "") + f", {vector(count)}"


def ld_red(shape, num, mods=".min.f32", count=None, redval="%r2000", offset=None,
           qual=".sync.aligned", pack=None) -> str:
    count = REGS_PER_NUM[shape] * num if count is None else count
    text = f"tcgen05.ld.red{qual}.{shape}.x{num}" + (f".{pack}" if pack else "") + mods
    return (f"{text} {vector(count)}, {redval}, [%r0]"
            + (f", {offset}" if offset is not None else ""))


def alloc(cta="::1", columns="32", dst="[sh]", space=".shared::cta", qual=".sync.aligned",
          btype=".b32") -> str:
    group = f".cta_group{cta}" if cta else ""
    return f"tcgen05.alloc{group}{qual}{space}{btype} {dst}, {columns}"


def dealloc(cta="::1", columns="32", taddr="%r0", qual=".sync.aligned") -> str:
    group = f".cta_group{cta}" if cta else ""
    return f"tcgen05.dealloc{group}{qual}.b32 {taddr}, {columns}"


def relinquish(cta="::1", qual=".sync.aligned") -> str:
    group = f".cta_group{cta}" if cta else ""
    return f"tcgen05.relinquish_alloc_permit{group}{qual}"


def wait(kind="ld", qual=".sync.aligned") -> str:
    return f"tcgen05.wait::{kind}{qual}"


def ldst_forms(core: bool) -> list:
    out = []
    nums = (1, 2, 128, 256) if core else NUMS
    for make, packs in ((ld, (None, "pack::16b", "unpack::16b")), (st, (None, "unpack::16b", "pack::16b"))):
        own_pack = packs[1]
        for shape in SHAPES + (BOGUS_SHAPE,):
            offsets = (SPLIT_OFFSET, None) if shape == "16x32bx2" else (None,)
            for num in nums:
                right = REGS_PER_NUM[shape] * num
                for offset in offsets:
                    for pack in packs:
                        for delta in (0, -1, 1):
                            if right + delta < 1:
                                continue
                            if core and (num != 2 and (delta or pack) or delta and pack
                                         or pack not in (None, own_pack) or num == 1 and delta):
                                continue
                            out.append(make(shape, num, pack, right + delta, offset))
                if right > 128 and not core:   # a vector PTX allows (<= 128) with a .num too large for the shape
                    out.append(make(shape, num, None, 128, offsets[0]))
                if shape != "16x32bx2" and (not core or num == 2):
                    out.append(make(shape, num, None, right, SPLIT_OFFSET))   # an offset it does not take
        for shape, offset in (("32x32b", None), ("16x32bx2", SPLIT_OFFSET)):
            out += [make(shape, 2, None, 2, offset, qual) for qual in QUALIFIERS[1:]]
        # other immediates as the half-split offset, and a register
        if not core:
            out += [make("16x32bx2", 2, None, 2, off) for off in (0, 1, 3, 31, 32, 64, 65536, -1, "%r5")]
        if make is ld:   # an x1 scalar destination without braces, a .b64 address
            out += ["tcgen05.ld.sync.aligned.32x32b.x1.b32 %r1, [%r0]",
                    "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%rd0]"]
        else:
            out += ["tcgen05.st.sync.aligned.32x32b.x1.b32 [%r0], %r1",
                    "tcgen05.st.sync.aligned.32x32b.x2.b32 [%rd0], {%r1, %r2}"]
    return out


def ld_red_forms(core: bool) -> list:
    out = []
    nums = (1, 2, 128, 256) if core else NUMS
    shapes = (("32x32b", None), ("16x32bx2", SPLIT_OFFSET), ("16x32bx2", None), ("16x64b", None),
              ("16x128b", None), ("16x256b", None), (BOGUS_SHAPE, None))
    for shape, offset in shapes:
        for num in nums:
            right = REGS_PER_NUM[shape] * num
            for delta in (0, -1, 1):
                if right + delta < 1 or (core and delta and (num != 2 or shape not in ("32x32b", "16x64b"))):
                    continue
                out.append(ld_red(shape, num, count=right + delta, offset=offset))
            if right > 128 and not core:
                out.append(ld_red(shape, num, count=128, offset=offset))
    types = (".f32", ".abs.f32", ".NaN.f32", ".abs.NaN.f32", ".NaN.abs.f32", ".u32", ".s32",
             ".abs.u32", ".NaN.s32", ".b32", ".f16")
    if core:
        types = (".f32", ".abs.NaN.f32", ".u32", ".abs.u32")
    for shape, offset in (("32x32b", None), ("16x32bx2", SPLIT_OFFSET)):
        for op in (".min", ".max", ""):
            if core and op == ".max":
                continue
            out += [ld_red(shape, 4, mods=op + t, offset=offset) for t in types]
        redvals = ("%r2000",) + tuple(vector(n, 2000) for n in (1, 2, 4, 8)) + ("%rd3",)
        if not core:
            out += [ld_red(shape, 4, redval=r, offset=offset) for r in redvals[1:]]
            out += [ld_red(shape, 4, qual=q, offset=offset) for q in QUALIFIERS[1:]]
        out.append(ld_red(shape, 4, pack="pack::16b", offset=offset))
    return out


def alloc_forms(core: bool) -> list:
    out = []
    columns = (16, 32, 48, 512, 1024) if core else ALLOC_COLUMNS
    for cta in ("::1", "::2"):
        out += [alloc(cta, str(c)) for c in columns] + [alloc(cta, "%r5")]
        out += [dealloc(cta, str(c)) for c in columns] + [dealloc(cta, "%r5")]
        out += [relinquish(cta)]
        if not core:
            out += [alloc(cta, "32", dst) for dst in ("[%r3]", "[%rd3]")]
            out += [alloc(cta, c, space="") for c in ("32", "48")]
            out += [dealloc(cta, "32", "%rd0"), dealloc(cta, "32", "[%r0]")]
    out += [alloc(None), alloc("::3"), alloc(btype=".b64"), dealloc(None), relinquish(None)]
    quals = QUALIFIERS[1:] if not core else (".sync", ".aligned")
    out += [alloc(qual=q) for q in quals] + [dealloc(qual=q) for q in quals]
    out += [relinquish(qual=q) for q in quals]
    return out


def wait_forms(core: bool) -> list:
    quals = QUALIFIERS if not core else (".sync.aligned", ".sync", ".aligned")
    out = [wait(kind, q) for kind in ("ld", "st") for q in quals]
    return out + ([] if core else [wait("mma")])


def full_grid() -> list:
    return (ldst_forms(False) + ld_red_forms(False) + alloc_forms(False) + wait_forms(False)
            + cp_shift_forms(False) + edge_forms(False))


def core_grid() -> list:
    return (ldst_forms(True) + ld_red_forms(True) + alloc_forms(True) + wait_forms(True)
            + cp_shift_forms(True) + edge_forms(True))


def cp(shape="128x256b", multicast=None, fmt=None, cta="::1", taddr="[%r0]", sdesc="%rd1", extra="") -> str:
    group = f".cta_group{cta}" if cta else ""
    mods = f".{shape}" + (f".{multicast}" if multicast else "") + (f".{fmt}" if fmt else "")
    return f"tcgen05.cp{group}{mods}{extra} {taddr}, {sdesc}"


def shift(cta="::1", direction=".down", taddr="[%r0]", extra="") -> str:
    group = f".cta_group{cta}" if cta else ""
    return f"tcgen05.shift{group}{direction}{extra} {taddr}"


CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b", "16x256b")
CP_MULTICASTS = (None, "warpx2::02_13", "warpx2::01_23", "warpx4")
CP_FORMATS = (None, "b8x16.b6x16_p32", "b8x16.b4x16_p64")


def cp_shift_forms(core: bool) -> list:
    out = []
    for shape in CP_SHAPES:
        for multicast in CP_MULTICASTS:
            for fmt in (CP_FORMATS if not core else (None,)):
                for cta in (("::1", "::2") if not core else ("::1",)):
                    out.append(cp(shape, multicast, fmt, cta))
    out += [cp(cta=None), cp(cta="::3"), cp(fmt="b8x16"), cp(fmt="b6x16_p32"), cp(fmt="b4x16_p64.b8x16"),
            cp(extra=".sync.aligned"), cp("64x128b", extra="")]
    if not core:
        out += [cp(fmt="b6x16_p32.b8x16"), cp(fmt="b8x16.b6x16_p32.b8x16.b4x16_p64"),
                cp("64x128b", "warpx2::02_13.warpx2::01_23"), cp(cta="::1.cta_group::2"),
                cp("128x256b.128x128b"), cp(extra=".sync"), cp(extra=".aligned"), cp(extra=".b32"),
                "tcgen05.cp.cta_group::1.b8x16.b6x16_p32.128x256b [%r0], %rd1",
                "tcgen05.cp.cta_group::1.warpx4.32x128b [%r0], %rd1",
                "tcgen05.cp.128x256b.cta_group::2 [%r0], %rd1"]
        out += [cp(taddr=t) for t in ("[%r0+16]", "[0]", "[0x10000]", "[0x2000000]", "[%rd0]", "[sh]", "%r0")]
        out += [cp(sdesc=d) for d in ("%r1", "5", "[%rd1]", "sh")]
        out += [cp("4x256b", taddr="[0x1f0000]"), cp("32x128b", "warpx4", taddr="[0x200000]")]
    out += [shift(cta) for cta in ("::1", "::2", None, "::3")]
    out += [shift(direction=d) for d in ("", ".up", ".down.down")]
    out += [shift(extra=".31x256b"), shift(extra=".sync.aligned")]
    if not core:
        out += [shift(extra=".sync"), shift(extra=".b32"), "tcgen05.shift.down.cta_group::1 [%r0]",
                "tcgen05.shift.down.cta_group::2 [%r0]"]
        out += [shift(taddr=t) for t in ("[%r0+4]", "[0]", "[0x10000]", "[0x200000]", "[0x1000000]",
                                         "[%rd0]", "[sh]", "%r0", "[%r0], %rd1")]
    return out


def edge_forms(core: bool) -> list:
    """Immediates, repeated and conflicting qualifiers, operand orders (issue 25): the forms ptxas decides
    otherwise than the manual's syntax suggests. core: the few that every (target, version) pair gets."""
    st2 = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r0], {}"
    ld2 = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {}, [%r0]"
    out = [st2.format("{%r1, 0}"), st2.format("{0, 0}"), "tcgen05.st.sync.aligned.32x32b.x2.x2.b32 [%r0], {%r1, %r2}",
           "tcgen05.st.sync.aligned.32x32b.x2.pack::16b.unpack::16b.b32 [%r0], {%r1, %r2}",
           "tcgen05.wait::mma.sync.aligned", "tcgen05.ld.sync.aligned.32x32b.x2.b8x16.b32 {%r1, %r2}, [%r0]"]
    if core:
        return out
    # immediates: in st's source vector (not all of it), in ld's, as redval, in addresses, as nCols
    out += [st2.format(v) for v in ("{0, %r2}", "{%r1, -1}", "{%r1, 0x10}", "{%r1, 4294967296}", "{%r1, 017}",
                                    "{%r1, 0b101}", "{%r1, 5U}", "{%r1, %rd2}", "{%r1, sh}")]
    out += ["tcgen05.st.sync.aligned.32x32b.x1.b32 [%r0], {5}",
            "tcgen05.st.sync.aligned.32x32b.x4.b32 [%r0], {0, 0, 0, %r1}",
            "tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r0], 16, {%r1, 7}",
            "tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32 [%r0], {%r1, -16}",
            ld2.format("{%r1, 0}"), ld2.format("{0, %r2}"),
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, 0}, %r3, [%r0]",
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, %r2}, 5, [%r0]"]
    out += [ld("32x32b", 2).replace("[%r0]", a) for a in ("[%r0+-4]", "[%r0-4]", "[%r0+040]", "[%r0+4U]",
                                                          "[%r0+0x100000000]", "[-4]", "[%r0+%r1]", "[sh]")]
    out += [ld("16x32bx2", 2, offset=o) for o in ("16U", "0x100000000", "0b10000", "020")]
    out += [alloc(columns=c) for c in ("040", "0b100000", "32U", "0x20U", "0X20", "4294967328", "-32", "08", "32u")]
    out += [dealloc(columns=c) for c in ("-32", "4294967264", "0x100000020")]
    out += [dealloc(taddr=t) for t in ("-1", "0x100000000")]
    out += [cp(sdesc=d) for d in ("0x10", "-1")]
    # repeated and conflicting qualifiers
    for mods in (".sync.aligned.32x32b.x2.x4.b32", ".sync.aligned.32x32b.32x32b.x2.b32",
                 ".sync.aligned.32x32b.16x64b.x2.b32", ".sync.aligned.32x32b.x2.b32.b32",
                 ".sync.aligned.32x32b.x2.b32.u32", ".sync.sync.aligned.32x32b.x2.b32",
                 ".sync.aligned.aligned.32x32b.x2.b32", ".x2.b32.sync.32x32b.aligned"):
        out.append(f"tcgen05.st{mods} [%r0], {{%r1, %r2}}")
    for pack in (".pack::16b.pack::16b", ".unpack::16b.pack::16b", ".pack::16b.unpack::16b"):
        out.append(f"tcgen05.ld.sync.aligned.32x32b.x2{pack}.b32 {{%r1, %r2}}, [%r0]")
    red = "tcgen05.ld.red.sync.aligned.32x32b.x2{} {{%r1, %r2}}, %r3, [%r0]"
    out += [red.format(m) for m in (".min.max.u32", ".min.min.u32", ".min.abs.abs.f32", ".min.NaN.NaN.f32",
                                    ".min.f32.u32", ".f32.min", ".min.f32.abs")]
    out += [alloc(cta="::1.cta_group::1"), alloc(cta="::1.cta_group::2"), alloc(space=".shared::cta.shared::cta"),
            alloc(qual=".sync.sync.aligned"), alloc(qual=".sync.aligned.aligned"), alloc(btype=".b32.b32"),
            dealloc(cta="::1.cta_group::1"), relinquish(cta="::1.cta_group::2"),
            relinquish(qual=".sync.aligned.sync"), wait("ld", ".sync.aligned.sync"), wait("ld", ".sync.aligned.aligned"),
            "tcgen05.wait::ld::st.sync.aligned", "tcgen05.wait::ld.wait::st.sync.aligned", "tcgen05.wait.sync.aligned"]
    # decompression qualifiers where the manual has none, and cp's pair with other qualifiers between
    out += ["tcgen05.st.sync.aligned.32x32b.x2.b6x16_p32.b8x16.b32 [%r0], {%r1, %r2}",
            "tcgen05.st.sync.aligned.32x32b.x2.b8x16.b8x16.b32 [%r0], {%r1, %r2}",
            "tcgen05.st.sync.aligned.32x32b.x2.b8x16.b6x16_p32.b8x16.b32 [%r0], {%r1, %r2}",
            "tcgen05.st.sync.aligned.32x32b.x2.b8x16 [%r0], {%r1, %r2}",
            wait("st", ".sync.aligned.b4x16_p64"), alloc(btype=".b8x16.b32"), shift(extra=".b6x16_p32"),
            "tcgen05.cp.cta_group::1.b8x16.128x256b.b6x16_p32 [%r0], %rd1",
            "tcgen05.cp.cta_group::1.128x256b.b8x16.b8x16 [%r0], %rd1"]
    # operand orders, missing and extra operands
    out += ["tcgen05.ld.sync.aligned.32x32b.x2.b32 [%r0], {%r1, %r2}",
            "tcgen05.st.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0]",
            "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, 16, [%r0]",
            "tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r0], {%r1, %r2}, 16",
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 %r3, {%r1, %r2}, [%r0]",
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, %r2}, [%r0], %r3",
            "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {}, [%r0]",
            "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0],",
            "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0], [%r0]",
            alloc(dst="32", columns="[sh]"), alloc(dst="[sh]", columns="32, 32"), dealloc(taddr="32", columns="%r0"),
            cp(taddr="%rd1", sdesc="[%r0]"), "tcgen05.cp.cta_group::1.128x256b [%r0]",
            "tcgen05.shift.cta_group::1.down", relinquish() + " %r1", wait("ld") + " %r1"]
    return out


SAMPLE_FORMS = (ld("32x32b", 2), st("32x32b", 2), ld_red("32x32b", 2), alloc(),
                dealloc(), wait("ld"), cp(), shift())


# --- Kernels ----------------------------------------------------------------------------------------
def header(target: str, version: str) -> list:
    return [f".version {version}", f".target {target}", ".address_size 64", ""]


def kernel_lines(index: int, instruction: str) -> list:
    registers = max([int(n) for n in re.findall(r"%r(\d+)", instruction)] + [8]) + 1
    return [f".visible .entry tmem_form_{index}()", "{",
            f"  .reg .b32 %r<{registers}>;", "  .reg .b64 %rd<8>;", "  .shared .b32 sh;",
            f"  {instruction};", "  ret;", "}", ""]


def module(target: str, version: str, items: list) -> tuple:
    """(text, owner): owner[line number] = the index of the form whose kernel holds that line."""
    lines = header(target, version)
    owner = {}
    for index, instruction in items:
        start = len(lines) + 1
        lines += kernel_lines(index, instruction)
        owner.update({n: index for n in range(start, len(lines) + 1)})
    return "\n".join(lines), owner


def run_ptxas(ptxas: str, target: str, text: str) -> tuple:
    with tempfile.TemporaryDirectory(prefix="layoutproof-tmem-ptxas-") as work:
        source = os.path.join(work, "forms.ptx")
        with open(source, "w") as handle:
            handle.write(text)
        result = subprocess.run([ptxas, f"-arch={target}", source, "-o", os.path.join(work, "f.cubin")],
                                capture_output=True, text=True, timeout=PTXAS_TIMEOUT_S)
    return result.returncode, result.stderr + result.stdout


def clean(message: str) -> str:
    return " ".join(message.split())


def first_error_of(entries: list) -> str:
    """entries: (severity, message) in ptxas's order; the first error, else the first fatal."""
    for severity, message in entries:
        if severity == "error":
            return clean(message)
    return clean(entries[0][1])


def assemble_alone(ptxas, target, version, index, instruction) -> tuple:
    text, _ = module(target, version, [(index, instruction)])
    rc, out = run_ptxas(ptxas, target, text)
    if rc == 0:
        return True, None
    entries, module_level = [], []
    for line in out.splitlines():
        match = _LINE.match(line.strip())
        if match and match.group(2) != "warning":
            entry = (match.group(2), match.group(3))
            (module_level if int(match.group(1)) <= HEADER_LINES else entries).append(entry)
    if module_level:      # the .version / .target pair itself is refused: that is the outcome
        return False, first_error_of(module_level)
    if entries:
        return False, first_error_of(entries)
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    if lines:
        return False, clean(lines[0])
    # ptxas 13.0 crashes (SIGSEGV, no message) on tcgen05.cp / tcgen05.shift with an immediate address
    return False, (f"crashed with signal {-rc} and no message" if rc < 0 else f"exit status {rc} and no message")


def parse_error_in(per_form: dict) -> bool:
    return any(message.startswith("Parsing error") for entries in per_form.values() for _, message in entries)


def assemble_batch(ptxas, target, version, items: list) -> dict:
    """{index: (accepted, error)} for the (index, instruction) items of one (target, version)."""
    verdicts = {}
    pending = list(items)
    while pending:
        text, owner = module(target, version, pending)
        rc, out = run_ptxas(ptxas, target, text)
        if rc == 0:
            verdicts.update({index: (True, None) for index, _ in pending})
            break
        per_form, module_level = {}, False
        for line in out.splitlines():
            match = _LINE.match(line.strip())
            module_level |= bool(match and int(match.group(1)) <= HEADER_LINES)
            if match and match.group(2) != "warning" and int(match.group(1)) in owner:
                per_form.setdefault(owner[int(match.group(1))], []).append(
                    (match.group(2), match.group(3)))
        if not per_form or module_level or parse_error_in(per_form):
            # a failure no form's line explains, or a syntax error (after which ptxas 13.0 blames other
            # kernels for errors they do not have: "Illegal modifier '.sync' for instruction 'brkpt'"):
            # one form at a time
            for index, instruction in pending:
                verdicts[index] = assemble_alone(ptxas, target, version, index, instruction)
            break
        for index, entries in per_form.items():
            verdicts[index] = (False, first_error_of(entries))
        pending = [(i, s) for i, s in pending if i not in per_form]
    return verdicts


# --- Driving ----------------------------------------------------------------------------------------
def pair_supported(ptxas: str, target: str, version: str) -> bool:
    """Does ptxas assemble an empty kernel for this target under this .version?"""
    lines = header(target, version) + [".visible .entry empty()", "{", "  ret;", "}", ""]
    rc, _ = run_ptxas(ptxas, target, "\n".join(lines))
    return rc == 0


def plan(ptxas: str) -> list:
    """[(target, version, [instruction])] of the whole run, and whether the pair is supported."""
    jobs = []
    for target in TARGETS:
        for version in PTX_VERSIONS:
            if (target, version) == FULL_GRID_AT:
                forms = full_grid()
            elif (target, version) == LD_RED_GRID_AT:
                forms = core_grid() + ld_red_forms(False) + [f for f in edge_forms(False)
                                                             if f.startswith("tcgen05.ld.red")]
            elif CORE_ONLY_UNDER.get(target, version) == version and pair_supported(ptxas, target, version):
                forms = core_grid()
            else:
                forms = list(SAMPLE_FORMS)
            seen = set()
            forms = [f for f in forms if not (f in seen or seen.add(f))]
            jobs.append((target, version, forms))
    return jobs


def run_all(ptxas: str, jobs_n: int) -> list:
    work = []
    for target, version, forms in plan(ptxas):
        items = list(enumerate(forms))
        for start in range(0, len(items), BATCH):
            work.append((target, version, items[start:start + BATCH]))
    with ThreadPoolExecutor(max_workers=jobs_n) as pool:
        answers = list(pool.map(lambda w: (w, assemble_batch(ptxas, *w)), work))
    records = []
    for (target, version, items), verdicts in answers:
        for index, instruction in items:
            accepted, error = verdicts[index]
            records.append({"instruction": instruction, "target": target, "ptx_version": version,
                            "accepted": accepted, "error": error})
    return records


def verify(ptxas: str, records: list, count: int, seed: int = 0) -> list:
    """Forms whose verdict or first error differs when assembled alone."""
    sample = random.Random(seed).sample(records, min(count, len(records)))
    bad = []
    for r in sample:
        alone = assemble_alone(ptxas, r["target"], r["ptx_version"], 0, r["instruction"])
        if alone != (r["accepted"], r["error"]):
            bad.append((r, alone))
    return bad


def dumps_one_form_a_line(document: dict) -> str:
    head = {key: value for key, value in document.items() if key != "forms"}
    lines = ["{"] + [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    forms = [f"  {json.dumps(form)}" for form in document["forms"]]
    return "\n".join(lines + [' "forms": ['] + [",\n".join(forms)] + [" ]", "}", ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", default=None)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--verify", type=int, default=0,
                        help="re-assemble this many random forms alone and compare")
    args = parser.parse_args(argv)
    ptxas = find_ptxas(args.ptxas)
    if ptxas is None:
        print("ptxas not found", file=sys.stderr)
        return 2
    began = time.time()
    records = run_all(ptxas, args.jobs)
    provenance = _provenance()
    version = ptxas_version(ptxas)
    note = ("One tcgen05 instruction per kernel (text without the trailing semicolon; %r<n> .b32, "
            "%rd<n> .b64 registers, `sh` a .shared .b32 variable, tensor-memory address %r0) "
            "assembled with ptxas -arch=<target> under .version <ptx_version>. error: ptxas's first "
            "error for the form, location and 'error :'/'fatal :' prefix stripped; null when "
            "accepted. The full grid is under sm_100a 9.0 (and the full ld.red grid under sm_103a 9.0); "
            "other supported pairs hold a core subset; pairs ptxas does not support, and sm_90a "
            "under 8.6 - 8.8, hold eight valid forms only (one per op).")
    header = provenance.header(
        what="Which tcgen05 tensor-memory instruction forms ptxas accepts: per form (instruction, target, PTX "
             "version), the verdict and ptxas's first error.",
        recorded_by="hardware/run_tmem_ptxas_forms.py",
        command=provenance.command_line("hardware/run_tmem_ptxas_forms.py",
                                        argv if argv is not None else sys.argv[1:]),
        source=provenance.sentence(("ptxas:", version)), date=provenance.today(),
        details={"ptxas": version, "note": note})
    document = {"provenance": header, "forms": records}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    provenance.write_text(args.out, dumps_one_form_a_line(document))
    accepted = sum(r["accepted"] for r in records)
    print(f"{len(records)} forms, {accepted} accepted, {len(records) - accepted} refused -> {args.out} "
          f"({time.time() - began:.0f} s)")
    if args.verify:
        bad = verify(ptxas, records, args.verify)
        print(f"verify: {args.verify} forms re-assembled alone, {len(bad)} differ")
        for record, alone in bad[:20]:
            print("  ", json.dumps(record), "alone:", alone)
        if bad:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
