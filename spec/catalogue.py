"""Imports every topic module so that the rule catalogue (spec.rules.CATALOGUE) is complete."""
from . import (canonical, desc_case, descriptor, dtypes, im2col, instr_desc, layout, readmap, recipe_case,  # noqa: F401
               swizzle, tensormap, tma_place, tma_swizzle)
