"""The property catalogue: every theorem layoutproof proves or refutes (solver/prove/property.py says
what a property is). Importing this module registers every topic module's properties."""
from __future__ import annotations

from solver.prove import descriptor, im2col, layout, swizzle, tma  # noqa: F401  (each registers its properties)
from solver.prove import tmem  # noqa: F401  (tensor memory: solver/prove/tmem.py)
from solver.prove import scales  # noqa: F401  (block-scaled MMA scale factors: solver/prove/scales.py)
from solver.prove.property import PROPERTIES


def all_properties() -> list:
    """Every property, in registration order (topic modules in the order imported above)."""
    return list(PROPERTIES.values())
