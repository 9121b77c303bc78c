"""The executor on a branch that splits a warp's lanes (an elected thread issues a TMA and its
expect_tx, the whole warp arrives after): each group of lanes runs its own side, and where the sides meet
(the immediate post-dominator) the warp goes on with all its lanes, each register holding each lane's own
value, as the hardware's threads do. An arrive then counts 32 arrivals (PTX ISA 9.7.13.15.13: one per
executing thread)."""
from __future__ import annotations

from solver.kernel.concrete import executor
from solver.kernel.frontend import source

HEAD = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid 32, 1, 1\n{\n"
        ".reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<3>;\n.shared .align 8 .b8 bar[8];\n"
        "mov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\nsetp.eq.u32 %p1, %r1, 0;\n@!%p1 bra SKIP;\n")


def _visits(body: str) -> dict:
    module = source.parse(HEAD + body + "ret;\n}\n")
    function = module.functions[0]
    run = executor.run(function, {"bar": 0x400}, executor.Launch(), lambda ins: ins.opcode.startswith("mbarrier"))
    return {v.line: v for v in run.visits}, run


def test_the_lanes_of_a_split_meet_again_with_their_own_values():
    visits, run = _visits("mov.u32 %r2, 7;\nmbarrier.expect_tx.shared::cta.b64 [bar], 64;\nSKIP:\n"
                          "add.u32 %r3, %r2, %r1;\nmbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], %r3;\n")
    expect, arrive = sorted(visits.values(), key=lambda v: v.line)
    assert expect.lanes == 1                      # lane 0 alone
    assert arrive.lanes == 32                     # every lane again
    assert arrive.values["%r3"] == "varying"      # lane 0: 7 + 0, lane i: 0 + i
    assert not run.warps[0].notes and run.warps[0].stopped is None


def test_sides_that_never_meet_follow_the_lowest_lane_and_say_so():
    """Lane 0 leaves (exit) while the others go on: the sides meet nowhere (no post-dominator), so the run
    follows lane 0's side, and notes the split (nothing silent)."""
    visits, run = _visits("exit;\nSKIP:\nmbarrier.arrive.shared::cta.b64 %rd1, [bar];\n")
    assert not visits
    assert any("the warp splits; lanes 0..0 followed" in note for note in run.warps[0].notes)


def test_the_lane_masks_are_the_manuals_in_every_warp():
    """PTX ISA 10 (special registers): %lanemask_eq has lane i's bit alone, _lt the bits below it, _le those
    and its own, _gt the bits above it, _ge those and its own (32-bit masks), whichever warp reads them."""
    every = (1 << 32) - 1
    for index in (0, 3):
        special = executor.Warp(index, (128, 1, 1), executor.Launch(), {}, {}).special
        for lane in (0, 1, 17, 31):
            below = (1 << lane) - 1
            assert special["%lanemask_eq"].values[lane] == 1 << lane
            assert special["%lanemask_lt"].values[lane] == below
            assert special["%lanemask_le"].values[lane] == below | 1 << lane
            assert special["%lanemask_gt"].values[lane] == every & ~(below | 1 << lane)
            assert special["%lanemask_ge"].values[lane] == every & ~below


def test_lanes_split_off_and_not_followed_make_the_run_not_whole():
    """Lane 0 returns; lanes 1-31 branch past the return to an expect_tx. The sides never meet, so the run
    follows lane 0 alone and never sees the expect_tx: it is not whole (Run.incomplete), and what reads
    the run as every value fed (ptx check, `known`, the audit) must not take it so. Sides that meet again
    leave it whole."""
    visits, run = _visits("ret;\nSKIP:\nmbarrier.expect_tx.shared::cta.b64 [bar], 64;\n")
    assert not visits and run.warps[0].stopped is None and run.warps[0].dropped_lanes
    assert "some lanes were not followed" in run.incomplete()
    _, run = _visits("mov.u32 %r2, 7;\nSKIP:\nmbarrier.expect_tx.shared::cta.b64 [bar], 64;\n")
    assert not run.warps[0].dropped_lanes and run.incomplete() is None
