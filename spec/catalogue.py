"""Imports every topic module so that the rule catalogue (spec.rules.CATALOGUE) is complete."""
from . import canonical, descriptor, dtypes, instr_desc, layout, readmap, swizzle, tma_place, tma_swizzle  # noqa: F401
