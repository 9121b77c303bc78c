"""PTX kernels for fuzzed tmem-alloc cases: one module per case, whose kernel runs the case's allocation
operations in order, each by its warp.

A tmem-alloc case (`layoutproof fuzz --target tmem-alloc`) is one CTA's sequence of tcgen05.alloc,
tcgen05.dealloc and tcgen05.relinquish_alloc_permit (PTX 9.7.16.7.1), each with its warp, nCols and
.cta_group; an alloc's "address" is its own index in the sequence and a dealloc's the index of the
operation whose address it frees. The module's kernel, `fuzz_tmem_alloc_case_<index>` (one block of 256
threads: warps 0..7 exist; with .cta_group::2, a cluster of two such CTAs, the pair), has one shared
.b32 slot per operation, all set to NO_ADDRESS first; then for each operation i, in order:

* the case's warp alone (the others branch past it, so the .sync.aligned instruction is warp-uniform)
  moves nCols into a register (a run-time value: ptxas judges an immediate nCols itself, which is rule
  tmem.alloc.columns's, not the sequence's) and
  - alloc: tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [slot i], nCols;
  - dealloc of address t: loads slot t (what alloc t wrote; NO_ADDRESS where no alloc wrote it yet) and
    tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, nCols;
  - relinquish_alloc_permit: tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned;
* then every thread meets at a barrier (the tcgen05 fences around it, PTX 9.7.16.6), so that operation
  i + 1 comes after operation i in the CTA's execution order and sees the slot it wrote.

ptxas refuses a function whose tcgen05 instructions mix .cta_group::1 and ::2 (rule
tmem.alloc.cta_group_uniform); every other rule of the sequence is a run-time matter it lets through
(tests/solver_tests/fuzz/test_fuzz_tmem_alloc.py assembles cases with the local ptxas). The kernel reads nothing back: what
the broken rules do at run time is what the fuzz label says (unknown, or a hang).
"""
from __future__ import annotations

from string import Template

from solver.fuzz.formats.ptx import comment_block, fill

THREADS = 256                    # warps 0..7
PTX_VERSION = "8.8"              # tcgen05 on sm_100a needs PTX 8.6, on sm_103a 8.8
ARCH_TARGETS = {"sm100": "sm_100a", "sm103": "sm_103a"}
NO_ADDRESS = 0xFFFFFFFF          # a slot no alloc wrote: lane 0xffff, column 0xffff, outside tensor memory

MODULE = Template("""\
.version $version
.target $target
.address_size 64

$comments
.visible .entry $name()
.maxntid $threads, 1, 1
$cluster
{
  .reg .b32 %thread, %warp, %taddr, %ncols;
  .reg .pred %is_thread0, %not_op_warp;
  .shared .align 4 .b32 tmem_slot[$slots];
  mov.u32 %thread, %tid.x;
  shr.u32 %warp, %thread, 5;
  setp.eq.u32 %is_thread0, %thread, 0;
  $initial
  bar.sync 0;
  $operations
  ret;
}
""")


def case_of(record: dict) -> dict:
    if record.get("target") != "tmem-alloc":
        raise ValueError("not a tmem-alloc case")
    return record["case"]


def target_of(record: dict) -> str:
    """The ptxas target of the record's arch (sm100: sm_100a, sm103: sm_103a)."""
    try:
        return ARCH_TARGETS[record["arch"]]
    except KeyError:
        raise ValueError(f"arch {record.get('arch')!r}: tensor memory exists on "
                         + " and ".join(ARCH_TARGETS)) from None


def slot(index: int) -> str:
    return f"[tmem_slot+{4 * index}]"


def describe(index: int, op: dict) -> str:
    """ops[i]: what it does, in words (a comment line)."""
    who = f"by warp {op['warp']}, cta_group::{op['cta_group']}"
    if op["op"] == "alloc":
        return f"ops[{index}]: alloc of {op['columns']} columns {who}; its address goes to slot {index}"
    if op["op"] == "dealloc":
        return f"ops[{index}]: dealloc of {op['columns']} columns at the address in slot {op['address']} {who}"
    return f"ops[{index}]: relinquish_alloc_permit {who}"


def instruction_lines(index: int, op: dict, slots: int) -> list:
    """The case warp's lines for one operation (nCols in a register; a dealloc's taddr from its slot)."""
    group = f"cta_group::{op['cta_group']}"
    if op["op"] == "relinquish_alloc_permit":
        return [f"tcgen05.relinquish_alloc_permit.{group}.sync.aligned;"]
    lines = [f"mov.u32 %ncols, {op['columns']};"]
    if op["op"] == "alloc":
        return lines + [f"tcgen05.alloc.{group}.sync.aligned.shared::cta.b32 {slot(index)}, %ncols;"]
    named = op["address"]
    taddr = (f"ld.shared.b32 %taddr, {slot(named)};" if 0 <= named < slots
             else f"mov.b32 %taddr, {NO_ADDRESS:#x};   // names no operation of the sequence")
    return lines + [taddr, f"tcgen05.dealloc.{group}.sync.aligned.b32 %taddr, %ncols;"]


def operation_lines(index: int, op: dict, slots: int) -> list:
    """One operation: its warp runs it, then the whole CTA meets at a barrier."""
    done = f"OP_{index}_DONE"
    return ([f"// {describe(index, op)}", f"setp.ne.u32 %not_op_warp, %warp, {int(op['warp'])};",
             f"@%not_op_warp bra {done};"]
            + instruction_lines(index, op, slots)
            + [f"{done}:", "tcgen05.fence::before_thread_sync;", "bar.sync 0;", "tcgen05.fence::after_thread_sync;"])


def uses_pair(case: dict) -> bool:
    """Some operation names .cta_group::2: the kernel runs as a CTA pair (a cluster of two)."""
    return any(op["cta_group"] == 2 for op in case["ops"])


def render_case(record: dict) -> tuple:
    """(ptxas target, the PTX module of one tmem-alloc record)."""
    case = case_of(record)
    ops = case["ops"]
    notes = [describe(i, op) for i, op in enumerate(ops)]
    pair = " in a cluster of 2 (the CTA pair)" if uses_pair(case) else ""
    notes += [f"launch: 1 block of {THREADS} threads{pair}",
              f"every slot starts as {NO_ADDRESS:#x}: no tensor-memory address"]
    body = []
    for i, op in enumerate(ops):
        body += operation_lines(i, op, len(ops))
    initial = [f"@%is_thread0 st.shared.b32 {slot(i)}, {NO_ADDRESS:#x};" for i in range(len(ops))]
    target = target_of(record)
    text = fill(MODULE, version=PTX_VERSION, target=target, comments="\n".join(comment_block(record, notes)),
                name=f"fuzz_tmem_alloc_case_{int(record['index'])}", threads=THREADS,
                cluster=[".reqnctapercluster 2, 1, 1"] if uses_pair(case) else [], slots=len(ops),
                initial=initial, operations=body)
    return target, text


def file_names(records: list) -> dict:
    """file name -> module text: fuzz_tmem_alloc_case_<index>.ptx, one per tmem-alloc record."""
    return {f"fuzz_tmem_alloc_case_{int(r['index'])}.ptx": render_case(r)[1]
            for r in records if r.get("target") == "tmem-alloc"}
