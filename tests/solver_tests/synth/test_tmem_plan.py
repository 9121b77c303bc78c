"""`layoutproof tmem plan` (solver.synth.tmem_plan): the epilogue plan reads every element of D exactly
once, each warp inside its lane quarter, within the register budget. The expectations are recomputed
here from the executable spec -- each instruction's footprint (spec.tmem.ld_st.footprint), the fragment
map of the holder's register, D's map (spec.tmem.accumulator.d_cell), the lane quarters
(spec.tmem.address.lane_quarter) -- not from the plan's own check."""
from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from solver.cli.main import main
from solver.synth import tmem_plan
from spec.mma import dtypes
from spec.tmem import accumulator, ld_st
from spec.tmem import address as tmem_address


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def independent_check(result, budget):
    """Every cell of D in exactly one instruction's footprint, nothing else read, each footprint inside
    its warp's quarter, every vector within the budget."""
    acc = result.acc
    wanted = {}
    for m in range(acc.rows):
        for n in range(acc.N):
            lane, column = accumulator.d_cell(m, n, acc.M, acc.N, acc.cta_group, acc.ws, acc.lane_offset)
            wanted[(lane, column + acc.column)] = (m, n)
    seen = {}
    for index, ins in enumerate(result.instructions):
        access = ld_st.TmemAccess(op="ld", shape=ins.shape, num=ins.num, lane=ins.lane, column=ins.column,
                                  warp=ins.warp, pack=ins.pack, half_splitoff=ins.half_splitoff)
        assert ld_st.violations(access) == [], (index, ld_st.violations(access))
        cells = ld_st.footprint(access)
        quarter = tmem_address.lane_quarter(ins.warp)
        assert all(lane in quarter for lane, _ in cells), index
        assert ld_st.registers_per_thread(ins.shape, ins.num, ins.pack) <= budget
        for cell in cells:
            assert cell not in seen, (cell, seen.get(cell), index)
            seen[cell] = index
    assert set(seen) == set(wanted)
    return wanted


fragment_map = functools.lru_cache(maxsize=None)(ld_st.fragment_map)


def holder_cell(result, holder):
    """(lane, column, cell half) pieces the holder's register takes, from the fragment map."""
    warp, thread, index, register, half = holder
    ins = result.instructions[index]
    assert ins.warp == warp
    pieces = fragment_map(ins.shape, ins.num, ins.pack, ins.half_splitoff)[thread]
    chosen = [2 * register, 2 * register + 1] if half is None else [2 * register + half]
    return [(ins.lane + pieces[p][0], ins.column + pieces[p][1], pieces[p][2]) for p in chosen]


def test_m128_n256_f32_layout_d_reads_every_element_once():
    acc = tmem_plan.make_accumulator(128, 256, "f32")
    assert acc.layout == "D"                        # PTX 9.7.16.10.5: M=128, cta_group::1
    result = tmem_plan.plan(acc)
    assert result.status == "found" and result.check["read_exactly_once"] and result.check["ptxas_accepts"]
    # 128 x 256 cells of 32 bits = 32768 registers-by-thread over 32 threads: 8 vectors of 128 at the least
    assert len(result.instructions) == 8
    assert {(i.shape, i.num, i.pack) for i in result.instructions} == {("32x32b", 128, False)}
    wanted = independent_check(result, tmem_plan.DEFAULT_REGISTERS)
    table = tmem_plan.holders(result)
    for (lane, column), (m, n) in wanted.items():
        assert holder_cell(result, table[m][n]) == [(lane, column, 0), (lane, column, 1)]
    # row m of D is thread m % 32 of warp m // 32, register n % 128 of its second instruction for n >= 128
    assert table[37][200] == [1, 5, 3, 72, None]


@pytest.mark.parametrize("M,N,dtype,cta_group,ws,column,offset", [
    (128, 200, "f32", 1, False, 0, 0),     # D, .num x128 + x64 + x8
    (64, 256, "f32", 1, False, 32, 0),     # F: 16 lanes per quarter
    (64, 96, "bf16", 1, False, 0, 16),     # F at lane offset 16
    (64, 128, "s32", 1, True, 0, 0),       # E
    (32, 64, "f16", 1, True, 100, 0),      # G
    (128, 256, "f32", 2, False, 0, 0),     # B
    (256, 64, "bf16", 2, False, 256, 0),   # A
])
def test_every_layout_reads_d_exactly_once(M, N, dtype, cta_group, ws, column, offset):
    acc = tmem_plan.make_accumulator(M, N, dtype, cta_group, ws, column, offset)
    result = tmem_plan.plan(acc)
    assert result.status == "found" and result.check["read_exactly_once"], result.check
    wanted = independent_check(result, tmem_plan.DEFAULT_REGISTERS)
    table = tmem_plan.holders(result)
    for (lane, column_), (m, n) in wanted.items():
        assert holder_cell(result, table[m][n])[0] == (lane, column_, 0)


def test_sixteen_lane_shapes_where_d_uses_sixteen_lanes_per_quarter():
    result = tmem_plan.plan(tmem_plan.make_accumulator(64, 256, "f32"))        # layout F
    assert {i.shape for i in result.instructions} <= {"16x32bx2", "16x64b", "16x128b", "16x256b"}
    assert all(i.lane % 32 == 0 for i in result.instructions)
    assert "32x32b" in result.excluded


def test_budget_is_respected_and_costs_instructions():
    result = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"), budget=32)
    independent_check(result, 32)
    assert len(result.instructions) == 32 and max(i.registers for i in result.instructions) == 32


def test_sixteen_bit_d_is_packed_in_half_the_registers():
    wide = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"), budget=64)
    narrow = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f16"), budget=64)
    assert all(i.pack for i in narrow.instructions) and not any(i.pack for i in wide.instructions)
    assert sum(i.registers for i in narrow.instructions) * 2 == sum(i.registers for i in wide.instructions)
    independent_check(narrow, 64)
    table = tmem_plan.holders(narrow)
    # .pack::16b: columns 2c and 2c+1 share a register, low and high half (rule tmem.ld.packing)
    assert table[0][0][:4] == table[0][1][:4] and (table[0][0][4], table[0][1][4]) == (0, 1)


def test_too_small_budget_is_none_with_the_rules(capsys):
    result = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"), budget=0)
    assert result.status == "none" and result.instructions == []
    assert result.rules == ["tmem.ld.num", "tmem.ld.registers_per_thread"]
    code, out, _ = run(capsys, "tmem", "plan", "--m", "128", "--n", "256", "--dtype", "f32", "--registers", "0",
                       "--json")
    document = json.loads(out)
    assert code == 1 and document["status"] == "none" and "tmem.ld.num" in document["rules"]


def test_a_warp_set_missing_a_quarter_is_none(capsys):
    result = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"), warps=(0, 1, 3))
    assert result.status == "none" and result.rules == ["tmem.access.lane_quarter"]
    assert "lanes 64..95" in result.reason
    code, out, _ = run(capsys, "tmem", "plan", "--m", "128", "--n", "256", "--dtype", "f32", "--warps", "4,5,6")
    assert code == 1 and "tmem.access.lane_quarter" in out
    # warps 4..7 are warpgroup 1: the same quarters (w % 4)
    assert tmem_plan.plan(tmem_plan.make_accumulator(128, 64, "f32"), warps=(4, 5, 6, 7)).status == "found"


def test_the_check_catches_a_wrong_plan():
    result = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"))
    shifted = dataclasses.replace(result, instructions=[dataclasses.replace(result.instructions[0], column=8)]
                                  + result.instructions[1:])
    check = tmem_plan.verify_plan(shifted)
    assert not check["read_exactly_once"] and len(check["problems"]) >= 2
    stray = dataclasses.replace(result, instructions=[dataclasses.replace(result.instructions[0], warp=1)]
                                + result.instructions[1:])
    check = tmem_plan.verify_plan(stray)
    assert any("tmem.access.lane_quarter" in u for u in check["undefined"])


def test_the_check_names_each_way_a_plan_can_be_wrong():
    """Expectations by construction: dropping an instruction leaves its elements unread, repeating one
    reads them twice, moving a warp's last load past D reads cells outside it, and .pack::16b on a
    32-bit D splits each element over two registers."""
    result = tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32"))
    first = result.instructions[0]
    per_instruction = 32 * first.registers                   # 32-bit cells one instruction reads
    dropped = tmem_plan.verify_plan(dataclasses.replace(result, instructions=result.instructions[1:]))
    assert dropped["problems"] == [f"{per_instruction} elements of D are read by no instruction"]
    doubled = tmem_plan.verify_plan(dataclasses.replace(result, instructions=[first] + result.instructions))
    assert doubled["problems"] == [f"{per_instruction} elements of D are read more than once"]
    last = max(result.instructions, key=lambda i: (i.warp == first.warp, i.column))
    moved = [dataclasses.replace(i, column=i.column + 256) if i is last else i for i in result.instructions]
    outside = tmem_plan.verify_plan(dataclasses.replace(result, instructions=moved))
    first_outside = (last.lane, last.column + 256)
    assert any(p.startswith(f"{2 * per_instruction} reads of cells outside D, first (lane, column) = {first_outside}")
               for p in outside["problems"]), outside["problems"]
    packed = [dataclasses.replace(i, pack=True) for i in result.instructions]
    torn = tmem_plan.verify_plan(dataclasses.replace(result, instructions=packed))
    assert not torn["read_exactly_once"]
    assert any("do not hold one 32-bit element whole" in p for p in torn["problems"]), torn["problems"]


DOCUMENTED_KEYS = {"status", "reason", "rules", "objective", "accumulator", "warps", "registers", "excluded",
                   "shape", "pack", "instructions", "per_warp", "idle_warps", "register_file", "holders", "check"}


def test_cli_json_follows_the_documented_keys(capsys):
    code, out, _ = run(capsys, "tmem", "plan", "--m", "128", "--n", "64", "--dtype", "bf16", "--column", "64",
                       "--at", "33,9", "--json")
    document = json.loads(out)
    assert code == 0 and set(document) == DOCUMENTED_KEYS | {"at"}
    assert set(document["accumulator"]) == {"M", "N", "dtype", "element_bits", "cta_group", "ws", "sparse", "layout",
                                            "column", "lane_offset", "address", "rows_per_cta"}
    assert set(document["instructions"][0]) == {"index", "warp", "shape", "num", "pack", "half_splitoff", "lane",
                                                "column", "address", "offset", "registers", "ptx"}
    assert set(document["check"]) == {"elements", "read_exactly_once", "ptxas_accepts", "undefined", "problems",
                                       "target", "by"}
    assert document["pack"] is True and document["check"]["read_exactly_once"]
    assert len(document["holders"]) == 128 and len(document["holders"][0]) == 64
    assert document["at"]["holder"] == document["holders"][33][9]
    first = document["instructions"][document["holders"][33][9][2]]
    assert first["ptx"].startswith("tcgen05.ld.sync.aligned.32x32b.") and ".pack::16b.b32 {%r0, %r1," in first["ptx"]
    assert int(first["address"], 16) == int(first["offset"], 16) + 64


def test_cli_text_has_the_ptx_and_the_check_line(capsys):
    code, out, _ = run(capsys, "tmem", "plan", "--m", "128", "--n", "256", "--dtype", "f32")
    assert code == 0
    assert "tcgen05.ld.sync.aligned.32x32b.x128.b32 {%r0, ..., %r127}, [%taddr+0x00200080];" in out
    assert "check: every element of D read exactly once (32768 elements)" in out


@pytest.mark.parametrize("argv", [
    ("--m", "128", "--n", "250", "--dtype", "f32"),            # N not a multiple of 8
    ("--m", "128", "--n", "256", "--dtype", "f8"),             # not a D type
    ("--m", "96", "--n", "256", "--dtype", "f32"),             # no layout
    ("--m", "128", "--n", "256", "--dtype", "f32", "--column", "400"),
    ("--m", "128", "--n", "256", "--dtype", "f32", "--warps", "0,0"),
    ("--m", "64", "--n", "64", "--dtype", "f32", "--lane-offset", "8"),
    ("--m", "128", "--n", "256", "--dtype", "f32", "--at", "128,0"),
    ("--m", "128", "--n", "256"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv):
    code, out, err = run(capsys, "tmem", "plan", *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("spelled,name", [(alias, name) for alias, name in dtypes.ALIASES.items()
                                          if name in tmem_plan.DTYPE_BITS] + [("INT32", "s32"), ("F32", "f32"),
                                                                                ("Bf16", "bf16")])
def test_dtype_is_spelled_as_the_operand_types_are(capsys, spelled, name):
    """--dtype takes the same spellings as every other command (spec.mma.dtypes.ALIASES, any case), and
    the plan is the canonical name's, byte for byte."""
    argv = ["tmem", "plan", "--m", "128", "--n", "64", "--json", "--dtype"]
    assert run(capsys, *argv, spelled) == run(capsys, *argv, name)
    assert json.loads(run(capsys, *argv, spelled)[1])["accumulator"]["dtype"] == name


def test_an_unknown_dtype_is_one_line_naming_the_field_and_rule(capsys):
    code, out, err = run(capsys, "tmem", "plan", "--m", "128", "--n", "64", "--dtype", "fp8")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "dtype='fp8'" in err and accumulator.PACKING.id in err
