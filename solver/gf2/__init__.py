"""The GF(2) engine: layouts that are linear (affine) over GF(2) as bit matrices.

A CuTe layout whose extents are powers of two and whose per-bit address weights never overlap (so that
adding them never carries), composed with XOR swizzles, maps the bits of a coordinate's 1-D index to
address bits by an affine map over GF(2): address = offset XOR (XOR of the columns of the index's set
bits). Injectivity, bijectivity onto a range and equality then come down to ranks and kernels of a small
bit matrix (solver.gf2.matrix), whose columns are Python ints. solver.gf2.layout builds the map, or says
why a layout is not linear (those go to Z3: solver.model.cute_layout).
"""
