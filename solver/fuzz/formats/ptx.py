"""PTX kernels for fuzzed desc cases: one MMA that reads the case's descriptor as its B operand.

A desc case (`layoutproof fuzz --target desc`) is a shared-memory matrix descriptor together with the
operand tile it is meant to read: dtype, major-ness, the N extent (`mn`), K and, on sm100/sm103, the
tcgen05 kind. Each case becomes one `.entry` kernel, `fuzz_case_<index>`, that issues exactly one MMA
with

* B = the case's descriptor, a 64-bit immediate moved into a register (used verbatim: its start
  address is an absolute shared-memory address);
* A = a fixed, valid descriptor: K-major, no swizzle, at shared address A_START (`a_descriptor`);
* the instruction spelled from the case's values, so that what ptxas can check statically is checked:

  sm90 (`sm_90a`, PTX 9.7.15.5): `wgmma.mma_async.sync.aligned.m64n{mn}k{k}.{f32|s32}.{T}.{T}` with the
  case's N and K in the shape, the case's element type name (types wgmma lacks keep their natural
  spelling, e.g. `.e2m1`, so ptxas refuses them), and imm-trans-b = 1 for an MN-major B. wgmma takes
  transpose immediates for .f16/.bf16 only (PTX 9.7.15.5.1), so an MN-major B of any other type is an
  operand list ptxas refuses.

  sm100/sm103 (`sm_100a`/`sm_103a`, PTX 9.7.16, tcgen05.mma): `tcgen05.mma.cta_group::{1|2}.kind::{kind}`
  (block-scaled kinds with `.block_scale.scale_vec::{1X|2X}` and scale factors of 1.0 in tensor
  memory) into a tensor-memory accumulator, with the case's .cta_group ("cta_group", default 1) and M
  ("m", default 128). M, N (mn, twice mn for a CTA pair: rule desc.tile.cta_pair_split), K = 96, the types
  and the major-ness live in the 32-bit *instruction descriptor* (PTX 9.7.16.4.2, built with
  spec.mma.instr_desc.encode) -- a run-time operand that ptxas does not inspect, so on these targets ptxas
  can refuse only what the opcode spells: the kind, its scale-vector form, the target, and a function
  mixing .cta_group::1 and ::2 (the kernel's alloc, MMA, commit and dealloc all take the case's).

  With .cta_group::2 the kernel runs as a CTA pair (`.reqnctapercluster 2, 1, 1`): both CTAs allocate
  tensor memory and hold their half of A (M/2 rows) and of B (the case's descriptor, at the same shared
  addresses in each); thread 0 of the even CTA (%cluster_ctarank 0) issues the MMA, and its commit
  multicasts to the mbarrier of both CTAs (ctaMask 0b11); cluster barriers order the pair's setup before
  the MMA and its end before the CTAs free their tensor memory. Each CTA stores its 128 lanes of D.

The descriptors too are run-time values to ptxas: reserved or bad descriptor bits assemble. What
ptxas refuses is recorded in tests/hardware/ptxas_forms.json (hardware/run_ptxas_forms.py).

Each kernel is ready for a GPU run: one block of 128 threads, `.param .u64 out` (a global pointer),
dynamic shared memory holding the tiles. The kernel does not fill shared memory: the caller fills it
where the kernel says so (a comment marks the place; a `fence.proxy.async.shared::cta` and a barrier
follow: PTX fence.proxy.async, tcgen05.fence). D is stored as 32-bit words to `out`: sm90 as a row-major 64 x N
matrix (the wgmma D fragment layout, PTX 9.7.15.5.1), sm100/sm103 as 128 tensor-memory lanes x N
columns (row = lane: the tcgen05 data-path layouts of PTX 9.7.16; with M = 64 the rows sit in the lanes that layout
gives them).
"""
from __future__ import annotations

import json
import re
from string import Template
from typing import Optional

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes
from spec.mma import instr_desc
from spec.rules import SpecError

PTX_VERSION = "8.8"    # PTX ISA 8.8 (CUDA 12.9+): the first with sm_103a; tcgen05 needs 8.6
TARGETS = {"sm90": "sm_90a", "sm100": "sm_100a", "sm103": "sm_103a"}
THREADS = 128          # one warpgroup (wgmma) / four warps covering the 128 tensor-memory lanes
A_START = 192 * 1024   # absolute shared address of the fixed A tile (below 227 KiB, fits 14 bits >> 4)
A_LBO = 128            # A, K-major no swizzle: K chunk c at c*128 (one 8 x 16-byte core matrix)
SM100_M = 128          # the desc case's M when it names none (spec.cases.desc_case.DEFAULT_M)
PAIR_CTA_MASK = 0b11   # tcgen05.commit multicast to both CTAs of the pair
FILL_MARKER = "// --- the caller fills shared memory here (A and B tiles) ---"   # one line per kernel

# wgmma's element type names (PTX 9.7.15.5); f32 storage is read as .tf32. The sub-byte types have no
# wgmma spelling: they keep their natural one, which ptxas refuses.
WGMMA_TYPE_NAMES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f32": "tf32", "e4m3": "e4m3",
                    "e5m2": "e5m2", "s8": "s8", "u8": "u8", "e2m3": "e2m3", "e3m2": "e3m2",
                    "e2m1": "e2m1"}
WGMMA_TRANSPOSABLE = ("f16", "bf16")     # PTX 9.7.15.5.1: imm-trans-a/b for .f16/.bf16 only

# tcgen05 block-scaled kinds: the scale-vector size of the form emitted (PTX tcgen05.mma: mxf8f6f4 1X,
# mxf4 2X, mxf4nvf4 2X or 4X) and the scale-factor type bit of Tables 43/44 (1 = UE8M0, as CUTLASS's
# UMMA::InstrDescriptorBlockScaled scale_format_).
BLOCK_SCALE_VEC = {"mxf8f6f4": "1X", "mxf4": "2X", "mxf4nvf4": "2X"}
SCALE_TYPE_UE8M0 = 1
UE8M0_ONES = 0x7F7F7F7F               # four E8M0 scale factors of 2^0 = 1.0
SCALE_COLUMNS = 4                      # tensor-memory columns given to each scale-factor matrix
INVALID_TYPE_CODE = {3: 7, 2: 3}      # field width -> a code no kind defines (types a kind lacks)


# --- Reading a record -------------------------------------------------------------------------------
def case_of(record: dict) -> dict:
    if record.get("target") != "desc":
        raise ValueError("not a desc case")
    return record["case"]


def target_arch(arch: str) -> str:
    """The ptxas target of a case's arch: sm90 -> sm_90a, sm100 -> sm_100a, sm103 -> sm_103a."""
    try:
        return TARGETS[arch]
    except KeyError:
        raise ValueError(f"unknown arch {arch!r}; expected one of " + " ".join(TARGETS)) from None


def case_kind(arch: str, case: dict) -> Optional[str]:
    """The tcgen05 kind a case uses: its own, else the dtype's default (None on sm90)."""
    if arch == "sm90":
        return None
    return case.get("kind") or dtypes.default_kind(dtypes.dtype(case["dtype"]))


def k_chunks(dtype_name: str, kind: Optional[str], k: int) -> int:
    """16-byte chunks of K per row that K elements take (PTX 9.7.16.3.3: T elements per chunk)."""
    d = dtypes.dtype(dtype_name)
    per_chunk = dtypes.elements_per_chunk(d, kind or dtypes.default_kind(d))
    return max(1, -(-k // per_chunk))


# --- Operands ---------------------------------------------------------------------------------------
def a_descriptor(arch: str, rows: int, chunks: int) -> desc_mod.Descriptor:
    """The fixed A operand: K-major, no swizzle, dense at A_START (PTX 9.7.15.5.1.2 / 9.7.16.3.1):
    core matrices of 8 rows x 16 bytes; K chunk c at c*LBO (LBO = 128), row group g at g*SBO
    (SBO = 128 * chunks), so the tile fills [A_START, A_START + rows * 16 * chunks)."""
    return desc_mod.encode(arch, A_START, A_LBO, A_LBO * chunks, "none")


def a_tile_bytes(rows: int, chunks: int) -> int:
    return rows * 16 * chunks


def parse_descriptor(text) -> int:
    return desc_mod.parse_word(text)


def tcgen05_type_code(kind: str, dtype_name: str) -> int:
    """atype/btype code of Tables 42-44; a type the kind does not read gets a code no kind defines."""
    try:
        return instr_desc.type_code(kind, dtype_name)
    except SpecError:
        width = {f.name: f.width for f in instr_desc.LAYOUTS[kind]}["btype"]
        return INVALID_TYPE_CODE[width]


def instruction_descriptor(arch: str, kind: str, dtype_name: str, major: str, mn: int, k: int,
                           m: int = SM100_M) -> tuple:
    """(32-bit word, notes) of the tcgen05 instruction descriptor, PTX 9.7.16.4.2 Tables 42-44, built
    with spec.mma.instr_desc.encode. A is K-major, B's transpose bit says MN-major. Values a field cannot
    hold (N not a multiple of 8 or above 504) are truncated to the field, and a note says so."""
    notes = []
    layout = {f.name: f for f in instr_desc.LAYOUTS[kind]}
    code = tcgen05_type_code(kind, dtype_name)
    if code != dtypes.AB_TYPE_CODES.get(kind, {}).get(dtype_name):
        notes.append(f"kind::{kind} has no type code for {dtype_name}: atype/btype = {code} (undefined)")
    n_field = (mn >> 3) & ((1 << layout["n_shr3"].width) - 1)
    if n_field << 3 != mn:
        notes.append(f"N = {mn} does not fit the N >> 3 field: it holds {n_field} (N = {n_field << 3})")
    values = {"atype": code, "btype": code, "transpose_b": int(major == "MN"), "n_shr3": n_field}
    if "dtype" in layout:
        values["dtype"] = dtypes.D_TYPE_CODES["s32" if kind == "i8" else "f32"]
    if "scale_type" in layout:
        values["scale_type"] = SCALE_TYPE_UE8M0
    if "k96" in layout and k_chunks(dtype_name, kind, k) == 3:
        values["k96"] = 1
    if "m_shr4" in layout:
        values["m_shr4"] = m >> 4
    elif m % 128 == 0:
        values["m_shr7"] = m >> 7
    else:
        notes.append(f"M = {m} cannot be encoded for kind::{kind} (M >> 7): M field left 0")
    if major == "MN" and "k96" in layout:
        notes.append(f"kind::{kind} has no transpose: transpose_b set anyway")
    return instr_desc.encode(kind, arch, **values).word, notes


# --- PTX text pieces --------------------------------------------------------------------------------
# The kernels and the module are PTX text templates (string.Template: `$name` or `${name}`; PTX's own `%`
# register names pass through untouched; a literal `$` would be written `$$`). `fill` substitutes them.
_BLOCK_LINE = re.compile(r"(\s*)\$\{?(\w+)\}?\s*")


def fill(template: Template, **values) -> str:
    """`template` with its placeholders substituted. A placeholder alone on its line whose value is a
    list stands for that many lines, each indented like the placeholder (an empty list: no line)."""
    lines = []
    for line in template.template.split("\n"):
        block = _BLOCK_LINE.fullmatch(line)
        if block and isinstance(values.get(block.group(2)), list):
            lines += [block.group(1) + item for item in values[block.group(2)]]
        else:
            lines.append(Template(line).substitute(values))
    return "\n".join(lines)


def comment_block(record: dict, lines_after: list) -> list:
    """`//` lines naming the violated rules and the case values."""
    case = record.get("case", {})
    out = [f"// fuzz case {record.get('index')} ({record.get('arch')}): "
           f"violates {', '.join(record.get('violates') or []) or 'nothing (valid case)'}",
           f"// expected outcome: {record.get('outcome')}"]
    for key in ("descriptor", "dtype", "major", "mn", "k", "kind", "cta_group", "m", "start_address", "layout"):
        if case.get(key) is not None or (key in case and key not in ("cta_group", "m")):
            value = case[key]
            out.append(f"//   {key} = {value if isinstance(value, str) else json.dumps(value)}")
    return [_one_line(line) for line in out + [f"// {note}" for note in lines_after]]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def describe_descriptor(arch: str, word: int) -> str:
    d = desc_mod.decode(arch, word)
    return (f"start {d.start_address}, LBO {d.leading_byte_offset}, SBO {d.stride_byte_offset}, "
            f"base offset {d.base_offset}, swizzle {d.swizzle}"
            + (f", LBO mode {d.lbo_mode}" if d.lbo_mode else ""))


def register_list(prefix: str, count: int) -> str:
    return "{" + ", ".join(f"%{prefix}{i}" for i in range(count)) + "}"


# One module per ptxas target: the header, then the kernels, a blank line between two.
MODULE = Template("""\
.version $version
.target $target
.address_size 64

// Dynamic shared memory: the caller fills the tiles (absolute shared addresses in the
// descriptors) before the MMA; see each kernel's fill point.
.extern .shared .align 1024 .b8 fuzz_dynamic_smem[];

$kernels
""")


# --- sm90: wgmma ------------------------------------------------------------------------------------
# One warpgroup (PTX 9.7.15.5): zero D, issue one wgmma.mma_async with A and B from descriptors, wait for
# it (commit_group / wait_group 0), store D. The fence.proxy.async makes the caller's generic-proxy writes
# to shared memory visible to wgmma's async proxy (PTX fence.proxy.async). D fragment: PTX 9.7.15.5.1.
#   $d_reg: f32 | b32 (s32 D)   $zero_d, $store_d: one line per D register   $mma: wgmma_instruction
SM90_KERNEL = Template("""\
$comments
.visible .entry $name(.param .u64 out)
.maxntid $threads, 1, 1
{
  .reg .b64 %desc_a, %desc_b, %out, %addr;
  .reg .b32 %thread, %warp, %lane, %row, %col, %elem;
  .reg .pred %scale_d;
  .reg .$d_reg %d<$accumulators>;
  ld.param.u64 %out, [out];
  cvta.to.global.u64 %out, %out;
  $fill_marker
  fence.proxy.async.shared::cta;   // generic-proxy writes -> wgmma's async proxy
  bar.sync 0;
  mov.b64 %desc_a, $desc_a;
  mov.b64 %desc_b, $desc_b;
  setp.ne.b32 %scale_d, 0, 0;      // scale-d false: D = A x B
  $zero_d
  wgmma.fence.sync.aligned;
  $mma
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  // D fragment: row 16*warp + lane/4 (+8), column 2*(lane%4) (+8j, +1)
  mov.u32 %thread, %tid.x;
  shr.u32 %warp, %thread, 5;
  and.b32 %lane, %thread, 31;
  shr.u32 %row, %lane, 2;
  mad.lo.u32 %row, %warp, 16, %row;
  and.b32 %col, %lane, 3;
  shl.b32 %col, %col, 1;
  mad.lo.u32 %elem, %row, $mn, %col;
  mad.wide.u32 %addr, %elem, 4, %out;
  $store_d
  ret;
}""")


def wgmma_instruction(dtype_name: str, major: str, mn: int, k: int, a_major: str = "K") -> str:
    """`wgmma.mma_async` with both operands from descriptors (PTX 9.7.15.5.2). Operand list:
    d, a-desc, b-desc, scale-d, then imm-scale-a, imm-scale-b for floating types (the integer form has
    none), then imm-trans-a, imm-trans-b for .f16/.bf16, and for any type whose B is MN-major. `major`
    is B's major-ness, `a_major` A's (imm-trans-a is 1 for an MN-major A)."""
    t = WGMMA_TYPE_NAMES[dtype_name]
    is_int = dtypes.dtype(dtype_name).family == "int"
    d_type = "s32" if is_int else "f32"
    operands = [register_list("d", wgmma_accumulators(mn)), "%desc_a", "%desc_b", "%scale_d"]
    if not is_int:
        operands += ["1", "1"]
    if dtype_name in WGMMA_TRANSPOSABLE or major == "MN" or a_major == "MN":
        operands += ["1" if a_major == "MN" else "0", "1" if major == "MN" else "0"]
    return (f"wgmma.mma_async.sync.aligned.m64n{mn}k{k}.{d_type}.{t}.{t} " + ", ".join(operands) + ";")


def wgmma_accumulators(mn: int) -> int:
    """f32/s32 D of m64nN: N/2 registers per thread (PTX 9.7.15.5.1, wgmma D fragment)."""
    return max(1, mn // 2)


def wgmma_store_offsets(mn: int) -> list:
    """Byte offset of register i from the thread's first D element in a row-major 64 x N matrix: the
    D fragment (PTX 9.7.15.5.1) puts register i at row 16*warp + lane/4 + 8*((i/2)%2), column
    8*(i/4) + 2*(lane%4) + i%2."""
    return [4 * (8 * ((i // 2) % 2) * mn + 8 * (i // 4) + i % 2) for i in range(wgmma_accumulators(mn))]


def wgmma_zero_d(is_int: bool, mn: int) -> list:
    """`mov` of 0 into each D register (scale-d is false, but D is still read as an operand)."""
    if is_int:
        return [f"mov.b32 %d{i}, 0;" for i in range(wgmma_accumulators(mn))]
    return [f"mov.f32 %d{i}, 0f00000000;" for i in range(wgmma_accumulators(mn))]


def wgmma_store_d(is_int: bool, mn: int) -> list:
    """`st.global` of each D register to its place in the row-major 64 x N output."""
    store = "s32" if is_int else "f32"
    return [f"st.global.{store} [%addr+{offset}], %d{i};" for i, offset in enumerate(wgmma_store_offsets(mn))]


def sm90_notes(dtype_name: str, mn: int, word_b: int, a: desc_mod.Descriptor, chunks: int) -> list:
    """The kernel's comment lines after the case values: the operands and the launch."""
    is_int = dtypes.dtype(dtype_name).family == "int"
    notes = [f"B (the case's descriptor): {describe_descriptor('sm90', word_b)}",
             f"A (fixed): K-major, no swizzle, 64 rows x {chunks * 16} bytes at shared address "
             f"{A_START} ({a_tile_bytes(64, chunks)} bytes), descriptor {a.hex}",
             f"launch: 1 block of {THREADS} threads; out: 64 x {mn} {'s32' if is_int else 'f32'}, "
             "row-major"]
    if dtype_name == "f32":
        notes.append("f32 storage is read by wgmma as .tf32")
    return notes


def sm90_kernel(record: dict) -> str:
    case = case_of(record)
    dtype_name, major, mn, k = case["dtype"], case["major"], int(case["mn"]), int(case["k"])
    word_b = parse_descriptor(case["descriptor"])
    chunks = k_chunks(dtype_name, None, k)
    a = a_descriptor("sm90", 64, chunks)
    is_int = dtypes.dtype(dtype_name).family == "int"
    return fill(SM90_KERNEL,
                comments=comment_block(record, sm90_notes(dtype_name, mn, word_b, a, chunks)),
                name=f"fuzz_case_{int(record['index'])}", threads=THREADS, fill_marker=FILL_MARKER,
                d_reg="b32" if is_int else "f32", accumulators=wgmma_accumulators(mn),
                desc_a=a.hex, desc_b=desc_mod.format_hex(word_b), zero_d=wgmma_zero_d(is_int, mn),
                mma=wgmma_instruction(dtype_name, major, mn, k), mn=mn, store_d=wgmma_store_d(is_int, mn))


# --- sm100 / sm103: tcgen05 -------------------------------------------------------------------------
READ_COLUMNS = 8   # tensor-memory columns each tcgen05.ld of D reads (.x8 of the 32x32b shape)

# Four warps, one thread per tensor-memory lane (PTX 9.7.16): warp 0 allocates tensor memory
# (tcgen05.alloc); thread 0 issues one tcgen05.mma with A and B from descriptors and the instruction
# descriptor in a register, and tcgen05.commit arrives on the mbarrier mma_done when it completes; every
# thread waits there, reads its lane of D (tcgen05.ld) and stores it; warp 0 frees the tensor memory.
# tcgen05.fence::before/after_thread_sync order the tcgen05 operations around each bar.sync.
#   $scale_factors: SM100_SCALE_FACTORS for block-scaled kinds, else no line   $mma: tcgen05_instruction
#   $read_d: SM100_READ_CHUNK for each READ_COLUMNS columns of D
SM100_KERNEL = Template("""\
$comments
.visible .entry $name(.param .u64 out)
.maxntid $threads, 1, 1
$cluster
{
  .reg .b64 %desc_a, %desc_b, %out, %addr;
  .reg .b32 %idesc, %tmem, %tmem_row, %tmem_sfa, %tmem_sfb, %thread, %warp, %lane_base, %ones;
  .reg .b32 %v<$read_columns>;
  .reg .pred %is_warp0, %leader, %accumulate, %done;
  $pair_registers
  .shared .align 8 .b64 mma_done;
  .shared .align 4 .b32 tmem_base;
  ld.param.u64 %out, [out];
  cvta.to.global.u64 %out, %out;
  mov.u32 %thread, %tid.x;
  shr.u32 %warp, %thread, 5;
  setp.eq.u32 %is_warp0, %warp, 0;
  setp.eq.u32 %leader, %thread, 0;
  $pair_setup
  // tensor memory (PTX tcgen05.alloc): warp 0 allocates, writes the address to tmem_base
$allocate
  @%leader mbarrier.init.shared::cta.b64 [mma_done], 1;
  fence.mbarrier_init.release.cluster;   // the init before tcgen05.commit arrives on it
  $fill_marker
  fence.proxy.async.shared::cta;   // generic-proxy writes -> tcgen05's async proxy
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %tmem, [tmem_base];
  shl.b32 %lane_base, %warp, 21;   // (32 * warp) << 16: this warp's lane quarter
  add.u32 %tmem_row, %tmem, %lane_base;
  $scale_factors
  $pair_sync
  mov.b64 %desc_a, $desc_a;
  mov.b64 %desc_b, $desc_b;
  mov.b32 %idesc, $idesc;
  setp.ne.b32 %accumulate, 0, 0;   // enable-input-d false: D = A x B
  @!%$issuer bra ISSUED;
  $mma
  $commit
ISSUED:
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %done, [mma_done], 0;
  @!%done bra WAIT;
  tcgen05.fence::after_thread_sync;
  // D: thread t reads tensor-memory lane t (32x32b shape), 8 columns at a time
  mul.wide.u32 %addr, %thread, $row_bytes;
  add.u64 %addr, %addr, %out;
  $read_d
  $pair_end
$free
  ret;
}""")

# Block-scaled kinds (.block_scale, PTX tcgen05.mma): the scale factors of A and B, all 1.0 (UE8M0), written
# to tensor memory by every warp for its lanes (tcgen05.st, 32x32b) and made visible to the MMA before it
# issues (tcgen05.wait::st, then the fences around a barrier).
SM100_SCALE_FACTORS = Template("""\
add.u32 %tmem_sfa, %tmem, $sfa_column;
add.u32 %tmem_sfb, %tmem, $sfb_column;
mov.b32 %ones, $ones;
tcgen05.st.sync.aligned.32x32b.x${scale_columns}.b32 [%tmem_row+$sfa_column], $ones_regs;
tcgen05.st.sync.aligned.32x32b.x${scale_columns}.b32 [%tmem_row+$sfb_column], $ones_regs;
tcgen05.wait::st.sync.aligned;
tcgen05.fence::before_thread_sync;
bar.sync 0;
tcgen05.fence::after_thread_sync;""")

# Columns [$first, $first + $shape) of the thread's lane of D into %v0.. (tcgen05.ld, 32x32b), then to
# `out`: $stores, one st.global.b32 per column.
SM100_READ_CHUNK = Template("""\
tcgen05.ld.sync.aligned.32x32b.x${shape}.b32 $regs, [%tmem_row+$first];
tcgen05.wait::ld.sync.aligned;
$stores""")


def tmem_allocate(cta_group: int, columns: int) -> list:
    """Kernel lines: warp 0 (%is_warp0) allocates `columns` columns, tcgen05.alloc writing the address to the
    .shared variable tmem_base, and gives up the permit to allocate more (PTX 9.7.16.7.1)."""
    return ["  @!%is_warp0 bra ALLOCATED;",
            f"  tcgen05.alloc.cta_group::{cta_group}.sync.aligned.shared::cta.b32 [tmem_base], {columns};",
            f"  tcgen05.relinquish_alloc_permit.cta_group::{cta_group}.sync.aligned;",
            "ALLOCATED:"]


def tmem_free(cta_group: int, columns: int) -> list:
    """Kernel lines: every warp's tcgen05 work is ordered before the barrier, then warp 0 frees the columns
    (%tmem holds the address) before the kernel exits, as PTX 9.7.16.7.1 requires; the label DONE ends it."""
    return ["  tcgen05.fence::before_thread_sync;",
            "  bar.sync 0;",
            "  @!%is_warp0 bra DONE;",
            "  tcgen05.fence::after_thread_sync;",
            f"  tcgen05.dealloc.cta_group::{cta_group}.sync.aligned.b32 %tmem, {columns};",
            "DONE:"]


def tmem_columns(mn: int, block_scaled: bool) -> int:
    """Columns to allocate: a power of 2 in [32, 512] (PTX 9.7.16, tcgen05.alloc) holding N f32/s32
    accumulator columns and, for block-scaled kinds, two scale-factor matrices."""
    need = mn + (2 * SCALE_COLUMNS if block_scaled else 0)
    columns = 32
    while columns < need and columns < 512:
        columns *= 2
    return columns


def tcgen05_instruction(kind: str, cta_group: int = 1) -> str:
    """tcgen05.mma with descriptors for A and B (PTX 9.7.16, tcgen05.mma): `[d-tmem], a-desc, b-desc, idesc,
    enable-input-d`; block-scaled kinds add `[scale-A-tmem], [scale-B-tmem]` before enable-input-d."""
    if kind in BLOCK_SCALE_VEC:
        return (f"tcgen05.mma.cta_group::{cta_group}.kind::{kind}.block_scale.scale_vec::{BLOCK_SCALE_VEC[kind]} "
                "[%tmem], %desc_a, %desc_b, %idesc, [%tmem_sfa], [%tmem_sfb], %accumulate;")
    return f"tcgen05.mma.cta_group::{cta_group}.kind::{kind} [%tmem], %desc_a, %desc_b, %idesc, %accumulate;"


def tcgen05_commit(cta_group: int) -> str:
    """tcgen05.commit of the MMA to the mbarrier mma_done (PTX tcgen05.commit): with .cta_group::2 the
    arrive is multicast to the mbarrier at the same offset in both CTAs of the pair."""
    if cta_group == 1:
        return "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mma_done];"
    return ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
            "[mma_done], %cta_mask;")


def cluster_barrier(comment: str) -> list:
    """Lines: every thread of the pair meets (barrier.cluster), tcgen05 work ordered around it."""
    return [f"// {comment}", "tcgen05.fence::before_thread_sync;", "barrier.cluster.arrive.release.aligned;",
            "barrier.cluster.wait.acquire.aligned;", "tcgen05.fence::after_thread_sync;"]


def pair_lines(cta_group: int, lane_bytes: int) -> dict:
    """The kernel's extra lines for a CTA pair (none for .cta_group::1): registers, the issuing thread and
    this CTA's rows of `out`, the barriers around the MMA."""
    if cta_group == 1:
        return {"cluster": [], "pair_registers": [], "pair_setup": [], "pair_sync": [], "pair_end": [],
                "issuer": "leader"}
    return {"cluster": [".reqnctapercluster 2, 1, 1"],
            "pair_registers": [".reg .b32 %rank;", ".reg .b64 %cta_rows;", ".reg .b16 %cta_mask;",
                               ".reg .pred %issuer;"],
            "pair_setup": ["mov.u32 %rank, %cluster_ctarank;",
                           "setp.eq.and.u32 %issuer, %rank, 0, %leader;   // the even CTA's thread 0 issues",
                           f"mov.b16 %cta_mask, {PAIR_CTA_MASK};",
                           f"mul.wide.u32 %cta_rows, %rank, {128 * lane_bytes};   // this CTA's 128 lanes of D in out",
                           "add.u64 %out, %out, %cta_rows;"],
            "pair_sync": cluster_barrier("the pair: both CTAs filled, allocated and initialised before the MMA"),
            "pair_end": cluster_barrier("the pair: both CTAs read D before either frees its tensor memory"),
            "issuer": "issuer"}


def tcgen05_scale_factors(kind: str, mn: int) -> list:
    """The SM100_SCALE_FACTORS lines for a block-scaled kind (A's at column N, B's after them); none for
    another kind."""
    if kind not in BLOCK_SCALE_VEC:
        return []
    return fill(SM100_SCALE_FACTORS, sfa_column=mn, sfb_column=mn + SCALE_COLUMNS,
                ones=f"{UE8M0_ONES:#010x}", scale_columns=SCALE_COLUMNS,
                ones_regs="{" + ", ".join(["%ones"] * SCALE_COLUMNS) + "}").split("\n")


def tcgen05_read_d(mn: int) -> list:
    """The lines that read the thread's lane of D, READ_COLUMNS columns at a time, and store it to `out`."""
    lines = []
    for first in range(0, mn, READ_COLUMNS):
        width = min(READ_COLUMNS, mn - first)
        shape = 1 << (width.bit_length() - 1)   # .x1/.x2/.x4/.x8 (a ragged N, which is illegal anyway)
        stores = [f"st.global.b32 [%addr+{4 * (first + j)}], %v{j};" for j in range(shape)]
        lines += fill(SM100_READ_CHUNK, shape=shape, regs=register_list("v", shape), first=first,
                      stores=stores).split("\n")
    return lines


def sm100_notes(arch: str, kind: str, major: str, n: int, m: int, word_b: int, a: desc_mod.Descriptor,
                chunks: int, idesc: int, idesc_notes: list, columns: int, cta_group: int = 1) -> list:
    """The kernel's comment lines after the case values: the operands, the instruction descriptor (and
    what it could not hold), the tensor-memory columns and the launch."""
    out_type = "s32" if kind == "i8" else "f32"
    rows = m // cta_group
    a_line = (f"A (fixed): K-major, no swizzle, {rows} rows x {chunks * 16} bytes at shared address "
              f"{A_START} ({a_tile_bytes(rows, chunks)} bytes), descriptor {a.hex}")
    if cta_group == 2:
        a_line += f" (in each CTA of the pair: its {rows} of the {m} rows)"
    b_line = f"B (the case's descriptor): {describe_descriptor(arch, word_b)}"
    if cta_group == 2:
        b_line += f" (in each CTA of the pair: its {n // 2} of the {n} columns)"
    launch = (f"launch: 1 block of {THREADS} threads; out: 128 lanes x {n} columns of {out_type}, row-major"
              if cta_group == 1 else
              f"launch: a cluster of 2 blocks (the CTA pair) of {THREADS} threads; out: per CTA (rank 0, "
              f"then 1) 128 lanes x {n} columns of {out_type}, row-major")
    return [b_line, a_line,
            f"instruction descriptor (PTX 9.7.16.4.2, spec.mma.instr_desc.encode): {idesc:#010x} "
            f"(kind::{kind}, M = {m}, N = {n}, B {major}-major)"] + idesc_notes + [
            f"tensor memory: {columns} columns; D at column 0"
            + (f", scale factors (1.0, UE8M0) of A at column {n}, of B at {n + SCALE_COLUMNS}"
               if kind in BLOCK_SCALE_VEC else ""),
            launch]


def case_instruction(case: dict) -> tuple:
    """(cta_group, M) of a tcgen05 desc case: the case's, else .cta_group::1 and M = SM100_M."""
    cta_group = case.get("cta_group") or 1
    m = case.get("m") or SM100_M
    if cta_group not in (1, 2):
        raise ValueError(f"cta_group {cta_group!r}: expected 1 or 2")
    return int(cta_group), int(m)


def sm100_kernel(record: dict, m: Optional[int] = None) -> str:
    case = case_of(record)
    arch = record["arch"]
    dtype_name, major, mn, k = case["dtype"], case["major"], int(case["mn"]), int(case["k"])
    kind = case_kind(arch, case)
    cta_group, case_m = case_instruction(case)
    m = case_m if m is None else m
    n = cta_group * mn                                 # rule desc.tile.cta_pair_split
    word_b = parse_descriptor(case["descriptor"])
    chunks = k_chunks(dtype_name, kind, k)
    a = a_descriptor(arch, m // cta_group, chunks)
    idesc, idesc_notes = instruction_descriptor(arch, kind, dtype_name, major, n, k, m)
    columns = tmem_columns(n, kind in BLOCK_SCALE_VEC)
    notes = sm100_notes(arch, kind, major, n, m, word_b, a, chunks, idesc, idesc_notes, columns, cta_group)
    return fill(SM100_KERNEL,
                comments=comment_block(record, notes), name=f"fuzz_case_{int(record['index'])}",
                threads=THREADS, read_columns=READ_COLUMNS, fill_marker=FILL_MARKER,
                allocate=tmem_allocate(cta_group, columns), free=tmem_free(cta_group, columns),
                scale_factors=tcgen05_scale_factors(kind, n), desc_a=a.hex,
                desc_b=desc_mod.format_hex(word_b), idesc=f"{idesc:#010x}",
                mma=tcgen05_instruction(kind, cta_group), commit=tcgen05_commit(cta_group),
                row_bytes=4 * n, read_d=tcgen05_read_d(n), **pair_lines(cta_group, 4 * n))


# --- Modules ----------------------------------------------------------------------------------------
def render_kernel(record: dict) -> tuple:
    """(ptxas target, the `.entry` text) of one desc record."""
    case_of(record)
    target = target_arch(record["arch"])
    kernel = sm90_kernel(record) if record["arch"] == "sm90" else sm100_kernel(record)
    return target, kernel


def module(target: str, kernels: list) -> str:
    return fill(MODULE, version=PTX_VERSION, target=target, kernels="\n\n".join(kernels))


def render_case(record: dict) -> tuple:
    """(ptxas target, a PTX module holding the case's one kernel)."""
    target, kernel = render_kernel(record)
    return target, module(target, [kernel])


def render(records: list) -> dict:
    """{ptxas target: PTX module}: one module per target arch, one kernel per desc record (records of
    other targets are skipped), in record order."""
    kernels: dict = {}
    for record in records:
        if record.get("target") != "desc":
            continue
        target, kernel = render_kernel(record)
        kernels.setdefault(target, []).append(kernel)
    return {target: module(target, texts) for target, texts in kernels.items()}
