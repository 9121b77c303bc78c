"""Frictions of a first use of the Python API (issue 29, item 7): what `dir(layoutproof)` shows, no
guessed arch, and a descriptor shown as the manual and a debugger show it."""
from __future__ import annotations

import pytest

import layoutproof as lp
from spec.mma import descriptor


def test_dir_shows_no_future_import():
    assert "annotations" not in dir(lp)
    assert "check_tensor_map" in dir(lp)


def test_check_tensor_map_takes_the_arch_as_the_command_line_does():
    with pytest.raises(TypeError):
        lp.check_tensor_map({"encode": "tiled"})          # (no default arch: the command line never guesses)


def test_a_descriptor_shows_its_word_and_addresses_in_hex():
    shown = repr(descriptor.encode("sm90", 0x400, 16, 1024, "128B"))
    assert "raw=0x4000004000010040" in shown and "start_address=0x400" in shown and "swizzle='128B'" in shown


def test_a_plan_past_the_register_file_says_so():
    """Issue 29, item 10: 255 registers a thread (CUDA's Compute Capabilities table); a 128 x 256 f32 D read
    by four warps takes 256 columns, so 256 registers, per thread in all."""
    from solver.synth import tmem_plan
    big = tmem_plan.as_json(tmem_plan.plan(tmem_plan.make_accumulator(128, 256, "f32")))
    assert big["register_file"] == {"per_thread": 255, "largest_in_all": 256, "fits": False}
    small = tmem_plan.as_json(tmem_plan.plan(tmem_plan.make_accumulator(128, 64, "f32")))
    assert small["register_file"]["fits"] and small["register_file"]["largest_in_all"] == 64
