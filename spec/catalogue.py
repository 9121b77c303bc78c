"""Imports every topic module so that the rule catalogue (spec.rules.CATALOGUE) is complete."""
from spec.mma import canonical
from spec.cases import desc_case
from spec.mma import descriptor
from spec.mma import dtypes
from spec.tma import im2col
from spec.mma import instr_desc
from spec.cute import layout
from spec.mma import readmap
from spec.cases import recipe_case
from spec.cute import swizzle
from spec.tma import tensormap
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
