"""Small PTX files that made the kernel reader (solver.kernel) run away: each is far below the reader's
bounds (32 MiB, 200,000 statements per function) yet took minutes or gigabytes before issue 25.

Each generator takes a size n and returns PTX text whose length grows linearly with n. They are written
for reuse: tests/solver_tests/kernel/test_ptx_runaways.py runs them against today's reader (time, memory, and how the time
grows when n doubles), and a later PTX front end is to pass the same tests.

ISSUE_SIZES gives the n of each file as issue 25 reported it (or the size of its variation); the tests run
those sizes under a time bound, and smaller ones for the scaling check.
"""
from __future__ import annotations

HEADER = ".version 8.8\n.target sm_100a\n.address_size 64\n"
REGISTERS = "\t.reg .pred %p<4>;\n\t.reg .b32 %r<{count}>;\n\t.reg .b64 %rd<16>;\n"
# a tcgen05.mma whose descriptors and instruction descriptor are immediates the reader decodes, so that a
# file also has a site to report (0x08110490: kind::f16, M 128, N 64; tests/fixtures/ptx/handwritten_tcgen05.ptx)
MMA = "\ttcgen05.mma.cta_group::1.kind::f16 [%r0], 0x4000404000010040, 0x4000404000010440, 0x08110490, %p1;\n"


UNKNOWN_MMA = "\ttcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r0, %p1;\n"


def kernel(body: str, registers: int = 8, before: str = "") -> str:
    """One .entry with `body` (module-level text `before` it)."""
    return (HEADER + before + ".visible .entry k()\n{\n" + REGISTERS.format(count=registers + 1)
            + "\tsetp.ne.u32 %p1, %r0, 0;\n" + body + MMA + "\tret;\n}\n")


# --- the three files of issue 25, item 10 ------------------------------------------------------------------
def back_branches(n: int) -> str:
    """A label followed by n `@%p1 bra TOP;`: n loops sharing one header (loop finding and the walk were
    quadratic: each loop's body scanned, every loop looked at per branch)."""
    return kernel("TOP:\n" + "\t@%p1 bra TOP;\n" * n)


def shared_directives(n: int) -> str:
    """`.shared` followed by n `.a` and no declaration (regular-expression backtracking)."""
    return kernel("", before=".shared" + " .a" * n + "\n")


def forward_branches_over_registers(n: int) -> str:
    """n registers with known values, then n forward branches to one label (each branch copied the
    register environment: n x n entries)."""
    movs = "".join(f"\tmov.u32 %r{i}, {i};\n" for i in range(1, n + 1))
    return kernel(movs + "\t@%p1 bra DONE;\n" * n + "DONE:\n", registers=n)


# --- variations: other shapes of input that grow one structure ----------------------------------------------
def forward_branches_to_distinct_labels(n: int) -> str:
    """n known registers, then n forward branches each to its own label at the end (n pending
    environments at once)."""
    movs = "".join(f"\tmov.u32 %r{i}, {i};\n" for i in range(1, n + 1))
    branches = "".join(f"\t@%p1 bra L{i};\n" for i in range(n))
    labels = "".join(f"L{i}:\n" for i in range(n))
    return kernel(movs + branches + labels, registers=n)


def labels_over_registers(n: int) -> str:
    """n known registers, then n labels one after another (each label met the environments that reach it)."""
    movs = "".join(f"\tmov.u32 %r{i}, {i};\n" for i in range(1, n + 1))
    return kernel(movs + "".join(f"L{i}:\n" for i in range(n)), registers=n)


def loop_exits_over_registers(n: int) -> str:
    """n known registers, a loop header, then n pairs (write, conditional back branch): every fall-through
    out of a loop forgets what the loop wrote."""
    movs = "".join(f"\tmov.u32 %r{i}, {i};\n" for i in range(1, n + 1))
    pairs = "".join(f"\tadd.u32 %r{i}, %r{i}, 1;\n\t@%p1 bra TOP;\n" for i in range(1, n + 1))
    return kernel(movs + "TOP:\n" + pairs, registers=n)


def breaks_out_of_loops(n: int) -> str:
    """n loops sharing a header, each body with a forward branch past every back branch (a branch that
    leaves loops forgets what they write), then MMAs inside all of them."""
    body = "".join(f"\tmov.u32 %r{i % 8}, {i};\n\t@%p2 bra OUT;\n\t@%p1 bra TOP;\n" for i in range(n))
    return kernel("TOP:\n" + MMA * 4 + body + "OUT:\n")


def mmas_in_nested_loops(n: int) -> str:
    """n nested loops (distinct headers), with n MMAs in the innermost (each MMA was given every loop
    containing it). The MMAs read unknown descriptors: no read maps, so the sites cost little."""
    headers = "".join(f"H{i}:\n" for i in range(n))
    branches = "".join(f"\t@%p1 bra H{i};\n" for i in reversed(range(n)))
    return kernel(headers + UNKNOWN_MMA * n + branches)


def nested_scopes(n: int) -> str:
    """An instruction inside n nested { } scopes."""
    return kernel("{\n" * n + "\tmov.u32 %r1, 1;\n" + "}\n" * n)


def labels_one_per_line(n: int) -> str:
    """n labels, each alone on its line, then one instruction (a label's statement looked for its ';' as
    far as that instruction)."""
    return kernel("".join(f"L{i}:\n" for i in range(n)) + "\tmov.u32 %r1, 1;\n")


def labels_on_one_line(n: int) -> str:
    """n labels on one line before one instruction."""
    return kernel("".join(f"L{i}: " for i in range(n)) + "mov.u32 %r1, 1;\n")


def one_long_statement(n: int) -> str:
    """One statement spread over n lines (its operands one per line)."""
    return kernel("\tmov.u32 %r1,\n" + "\t\n" * n + "\t1;\n")


def blank_lines(n: int) -> str:
    """n blank lines inside the body."""
    return kernel("\n" * n)


def long_operand_list(n: int) -> str:
    """One wgmma-like vector operand of n registers on one line."""
    return kernel("\tmov.b64 %rd1, {" + ", ".join(f"%r{i % 8}" for i in range(n)) + "};\n")


def many_predicates(n: int) -> str:
    """n predicates each set and used as a guard."""
    body = "".join(f"\tsetp.ne.u32 %q{i}, %r1, {i};\n\t@%q{i} mov.u32 %r2, {i};\n" for i in range(n))
    return kernel("\t.reg .pred %q<" + str(n) + ">;\n" + body)


def many_shared_declarations(n: int) -> str:
    """n module-level .shared declarations, all named by the kernel."""
    declarations = "".join(f".shared .align 16 .b8 s{i}[16];\n" for i in range(n))
    uses = "".join(f"\tmov.u32 %r1, s{i};\n" for i in range(n))
    return kernel(uses, before=declarations)


def shared_keywords(n: int) -> str:
    """n `.shared` keywords in a row, then one declaration."""
    return kernel("", before=".shared " * n + ".b8 s[16];\n")


def linkage_directives(n: int) -> str:
    """n `.visible` before one .entry (the function header's directive list)."""
    return HEADER + ".visible " * n + kernel("")[len(HEADER):]


def unclosed_parameter_lists(n: int) -> str:
    """n `.func (` prototypes with no ')' inside a comment-free module before a kernel."""
    return kernel("", before=".func (" * n + "\n")


def unterminated_block_comments(n: int) -> str:
    """n `/*` that no `*/` closes, at the end of the file."""
    return kernel("") + "/*" * n


def block_comments(n: int) -> str:
    """n short block comments in the body."""
    return kernel("/* c */\n" * n)


def long_parameter_name(n: int) -> str:
    """A .param whose name is n characters, followed by a word that ends no parameter."""
    return HEADER + ".visible .entry k(.param .u64 " + "a" * n + " b)\n{\n\tret;\n}\n"


def linkage_directives_without_function(n: int) -> str:
    """n `.visible` followed by no .entry / .func."""
    return kernel("", before=".visible " * n + ".shared .b8 s[16];\n")


def nested_parameter_lists(n: int) -> str:
    """n `.func f(` each inside the one before, closed together, declaring nothing."""
    return kernel("", before=".func f(" * n + ")" * n + ";\n")


def register_declarations(n: int) -> str:
    """n .reg declarations of one register each."""
    return kernel("".join(f"\t.reg .b32 %x{i};\n" for i in range(n)))


def mmas_outside_functions(n: int) -> str:
    """A kernel, then n MMA statements outside every function: each one listed as unread (issue 26), the
    listing linear in the file."""
    return kernel("\tret;\n") + "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n" * n


GENERATORS = {
    "back_branches": back_branches,
    "shared_directives": shared_directives,
    "forward_branches_over_registers": forward_branches_over_registers,
    "forward_branches_to_distinct_labels": forward_branches_to_distinct_labels,
    "labels_over_registers": labels_over_registers,
    "loop_exits_over_registers": loop_exits_over_registers,
    "breaks_out_of_loops": breaks_out_of_loops,
    "mmas_in_nested_loops": mmas_in_nested_loops,
    "nested_scopes": nested_scopes,
    "labels_on_one_line": labels_on_one_line,
    "labels_one_per_line": labels_one_per_line,
    "one_long_statement": one_long_statement,
    "blank_lines": blank_lines,
    "long_operand_list": long_operand_list,
    "many_predicates": many_predicates,
    "many_shared_declarations": many_shared_declarations,
    "shared_keywords": shared_keywords,
    "linkage_directives": linkage_directives,
    "unclosed_parameter_lists": unclosed_parameter_lists,
    "unterminated_block_comments": unterminated_block_comments,
    "block_comments": block_comments,
    "register_declarations": register_declarations,
    "long_parameter_name": long_parameter_name,
    "linkage_directives_without_function": linkage_directives_without_function,
    "nested_parameter_lists": nested_parameter_lists,
    "mmas_outside_functions": mmas_outside_functions,
}

# The n of issue 25's three files (20,000 back branches: 280 KB; 20,000 `.a`: 64 KB; 10,000 registers and
# 10,000 branches: 378 KB) and of each variation (a few hundred KB).
ISSUE_SIZES = {
    "back_branches": 20_000,
    "shared_directives": 20_000,
    "forward_branches_over_registers": 10_000,
    "forward_branches_to_distinct_labels": 10_000,
    "labels_over_registers": 10_000,
    "loop_exits_over_registers": 10_000,
    "breaks_out_of_loops": 10_000,
    "mmas_in_nested_loops": 2_000,
    "nested_scopes": 20_000,
    "labels_on_one_line": 20_000,
    "labels_one_per_line": 100_000,
    "one_long_statement": 100_000,
    "blank_lines": 200_000,
    "long_operand_list": 50_000,
    "many_predicates": 10_000,
    "many_shared_declarations": 10_000,
    "shared_keywords": 20_000,
    "linkage_directives": 20_000,
    "unclosed_parameter_lists": 20_000,
    "unterminated_block_comments": 20_000,
    "block_comments": 50_000,
    "register_declarations": 20_000,
    "long_parameter_name": 20_000,
    "linkage_directives_without_function": 20_000,
    "nested_parameter_lists": 10_000,
    "mmas_outside_functions": 20_000,
}
