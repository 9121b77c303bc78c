"""PTX kernels for fuzzed tmem cases: one tcgen05.ld / st / ld.red / cp / shift per kernel, issued by the case's warp at
the case's tensor-memory address.

A tmem case (`layoutproof fuzz --target tmem`) is one instruction's text, its target and PTX version, the
issuing warp and the value of taddr. Each case becomes one `.entry` kernel, `fuzz_tmem_case_<index>`,
in a module of its (target, PTX version): the module's `.version` and `.target` lines are the case's, so
what ptxas refuses about the pair is refused. The kernel (one block of 256 threads: two warpgroups, so
that warps 0..7 exist):

* warp 0 allocates all 512 columns of tensor memory (tcgen05.alloc into the `.shared` variable
  tmem_base, then relinquish_alloc_permit): with every column taken the allocation starts at lane 0,
  column 0, so the case's address is absolute;
* after a barrier (with the tcgen05 fences around it), the case's warp alone sets %r0 (or %rd0) to the
  address (lane << 16 | column), fills its source registers (tcgen05.st) and issues the instruction,
  then waits for it (tcgen05.wait::ld / wait::st);
* after a second barrier warp 0 frees the columns.

A tcgen05.cp gets its s-desc (%rd1) set to SMEM_DESCRIPTOR, a shared-memory matrix descriptor (PTX
9.7.16.4.1: start address 0, LBO 16 bytes, SBO 1024 bytes, version 1, no swizzle); cp and shift are not
waited for (tcgen05.wait is for ld / st; the kernel only has to assemble). With .cta_group::2 on a cp /
shift the kernel's alloc, relinquish_alloc_permit and dealloc use .cta_group::2 too (ptxas wants one
cta_group per kernel).

The registers the instruction names are declared from its text: `.reg .b32 %r<n>` and `.reg .b64
%rd<n>`, n one past the highest index used. The kernel only moves data: nothing is read back, since the
run-time rules' outcomes are undefined (the fuzz label says "unknown"). What ptxas refuses is what
spec.tmem.instruction says it refuses (tests/solver_tests/fuzz/test_fuzz_tmem.py assembles samples with the local ptxas).
"""
from __future__ import annotations

import re
from string import Template

from solver.fuzz.formats.ptx import comment_block, fill, tmem_allocate, tmem_free

THREADS = 256            # warps 0..7: a case's warp is 0..7
ALLOC_COLUMNS = 512      # all of tensor memory: the allocation starts at column 0
_REGISTER = re.compile(r"%(rd|r)(\d+)\b")
SMEM_DESCRIPTOR = (1 << 46) | ((1024 >> 4) << 32) | ((16 >> 4) << 16)      # version 1, SBO 1024, LBO 16

MODULE = Template("""\
.version $version
.target $target
.address_size 64

$kernels
""")

KERNEL = Template("""\
$comments
.visible .entry $name()
.maxntid $threads, 1, 1
{
  $declarations
  .reg .b32 %thread, %warp, %tmem;
  .reg .pred %is_warp0, %not_case_warp;
  .shared .align 4 .b32 tmem_base;
  mov.u32 %thread, %tid.x;
  shr.u32 %warp, %thread, 5;
  setp.eq.u32 %is_warp0, %warp, 0;
  setp.ne.u32 %not_case_warp, %warp, $warp;
$allocate
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %tmem, [tmem_base];
  @%not_case_warp bra ACCESSED;
  $setup
  $instruction;
  $wait
ACCESSED:
$free
  ret;
}""")


def case_of(record: dict) -> dict:
    if record.get("target") != "tmem":
        raise ValueError("not a tmem case")
    return record["case"]


def registers(text: str) -> dict:
    """{"r": indices, "rd": indices} the instruction names, in order of first use."""
    found: dict = {"r": [], "rd": []}
    for kind, index in _REGISTER.findall(text):
        if int(index) not in found[kind]:
            found[kind].append(int(index))
    return found


def declarations(text: str) -> list:
    used = registers(text)
    lines = [f".reg .b32 %r<{max(used['r']) + 1}>;"] if used["r"] else []
    return lines + ([f".reg .b64 %rd<{max(used['rd']) + 1}>;"] if used["rd"] else [])


def address_value(case: dict) -> int:
    return (case["address"]["lane"] << 16) | case["address"]["column"]


def setup(case: dict) -> list:
    """Set taddr (%r0 or %rd0) to the case's address; for a store, give every other register a value."""
    text = case["ptx"]
    used = registers(text)
    wide_taddr = re.search(r"\[%rd0\]", text) is not None
    lines = [f"mov.b{'64' if wide_taddr else '32'} %{'rd' if wide_taddr else 'r'}0, {address_value(case):#x};"
             f"   // taddr: lane {case['address']['lane']}, column {case['address']['column']}"]
    if text.startswith("tcgen05.cp"):
        lines += [f"mov.b64 %rd{i}, {SMEM_DESCRIPTOR:#x};   // s-desc: a shared-memory descriptor"
                  for i in used["rd"] if i != 0]
        lines += [f"mov.b32 %r{i}, {i};" for i in used["r"] if i != 0]
    if text.startswith("tcgen05.st"):
        lines += [f"mov.b32 %r{i}, {i};" for i in used["r"] if i != 0]
        lines += [f"mov.b64 %rd{i}, {i};" for i in used["rd"] if i != 0]
    return lines


def cta_group(case: dict) -> int:
    """The kernel's cta_group: 2 where the case's cp / shift says .cta_group::2, else 1."""
    return 2 if re.match(r"tcgen05\.(cp|shift)\.\S*cta_group::2", case["ptx"]) else 1


def wait(case: dict) -> str:
    if case["ptx"].startswith(("tcgen05.cp", "tcgen05.shift")):
        return "// tcgen05.cp / tcgen05.shift: not waited for (tcgen05.commit would track them)"
    kind = "st" if case["ptx"].startswith("tcgen05.st") else "ld"
    return f"tcgen05.wait::{kind}.sync.aligned;"


def render_kernel(record: dict) -> tuple:
    """((target, PTX version), the `.entry` text) of one tmem record."""
    case = case_of(record)
    notes = [f"case: {case['ptx']}", f"target {case['target']}, PTX {case['ptx_version']}, warp {case['warp']}, "
             f"taddr lane {case['address']['lane']} column {case['address']['column']}",
             f"launch: 1 block of {THREADS} threads; tensor memory: all {ALLOC_COLUMNS} columns"]
    kernel = fill(KERNEL, comments=comment_block(record, notes), name=f"fuzz_tmem_case_{int(record['index'])}",
                  threads=THREADS, declarations=declarations(case["ptx"]), warp=int(case["warp"]),
                  setup=setup(case), instruction=case["ptx"], wait=wait(case),
                  allocate=tmem_allocate(cta_group(case), ALLOC_COLUMNS), free=tmem_free(cta_group(case), ALLOC_COLUMNS))
    return (case["target"], case["ptx_version"]), kernel


def module(target: str, version: str, kernels: list) -> str:
    return fill(MODULE, version=version, target=target, kernels="\n\n".join(kernels))


def render_case(record: dict) -> tuple:
    """(ptxas target, a PTX module holding the case's one kernel)."""
    (target, version), kernel = render_kernel(record)
    return target, module(target, version, [kernel])


def render(records: list) -> dict:
    """{(target, PTX version): module}, one kernel per tmem record (others skipped), in record order."""
    kernels: dict = {}
    for record in records:
        if record.get("target") != "tmem":
            continue
        key, kernel = render_kernel(record)
        kernels.setdefault(key, []).append(kernel)
    return {key: module(key[0], key[1], texts) for key, texts in kernels.items()}


def file_names(records: list) -> dict:
    """file name -> module text: fuzz_tmem_<target>.ptx, with _ptx<version> added where one target's
    cases come in several PTX versions."""
    modules = render(records)
    versions: dict = {}
    for target, version in modules:
        versions.setdefault(target, []).append(version)
    return {(f"fuzz_tmem_{target}.ptx" if len(versions[target]) == 1
             else f"fuzz_tmem_{target}_ptx{version}.ptx"): text for (target, version), text in modules.items()}
