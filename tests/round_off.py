"""The round-off the notebooks' prose states, by its order, and the bound each printed value keeps.

A float64 result that is exact in mathematics (a rotation's norm, a score at two starts, a
permutation's gap) comes out as a few units in the last place, and which few depends on the
processor and on the BLAS kernel numpy picks (OpenBLAS's Haswell and Prescott kernels add a
matrix product's terms in different orders: 1.7e-16 on one, 2.2e-16 on the other). So the prose
says the order ("below $10^{-14}$") and the test checks that every printed value is under it;
tests/test_blas_kernels.py checks the same bounds under other kernels.

Each entry: (notebook, Markdown cell, the bound as its text says it, code cell, a pattern with
one group for the printed value, the bound). Every match of the pattern in the cell's output
must be below the bound. 12's entries are in tests/test_notebook_claims_12.py (``BOUNDS``).
"""

from __future__ import annotations

import re

ROUND_OFF = [
    (
        "01_order",
        "float32-outro",
        r"below \$10\^\{-14\}\$ in float64",
        "float32-gap",
        r"float64: (\S+)",
        1e-14,
    ),
    (
        "01_order",
        "float32-outro",
        r"in float32\nbelow \$10\^\{-5\}\$",
        "float32-gap",
        r"float32: (\S+)",
        1e-5,
    ),
    ("01_order", "summary", r"below 1e-14 in float64", "float32-gap", r"float64: (\S+)", 1e-14),
    ("01_order", "summary", r"below 1e-5 in float32", "float32-gap", r"float32: (\S+)", 1e-5),
    (
        "01_order",
        "rice-outro",
        r"differences below \$10\^\{-14\}\$",
        "rice-measure",
        r"max \|difference\| = (\S+)",
        1e-14,
    ),
    (
        "02_sincos",
        "logspace-outro",
        r"float64: \$< 2\\varepsilon\$ against\na few \$\\varepsilon\$, below \$10\^\{-14\}\$",
        "logspace-measure",
        r"float64     1e\+04\s+\S+\s+(\S+)",
        1e-14,
    ),
    (
        "02_sincos",
        "logspace-outro",
        r"float32: \$< 2\\varepsilon\$ against a few \$\\varepsilon\$, below \$10\^\{-5\}\$",
        "logspace-measure",
        r"float32     1e\+04\s+\S+\s+(\S+)",
        1e-5,
    ),
    (
        "03_norm",
        "every-base-intro",
        r"is round-off \(below \$10\^\{-14\}\$\)",
        "every-base",
        r"(\d\.\de[-+]\d\d)",  # every gap of the table (the bases print as 1e+04)
        1e-14,
    ),
    (
        "05_rotation",
        "shift-error-md",
        r"in float64 the same case gives less than 1e-15",
        "error-growth",
        r"d =  8, k = 3, pos 0\.\.19   : shift_error = (\S+)",
        1e-15,
    ),
    (
        "05_rotation",
        "summary",
        r"`shift_error` below 1e-15 \(d = 8, k = 3, pos 0 to 19\)",
        "error-growth",
        r"d =  8, k = 3, pos 0\.\.19   : shift_error = (\S+)",
        1e-15,
    ),
    (
        "05_rotation",
        "summary",
        r"below 1e-12 at d = 64 up to pos 4096",
        "error-growth",
        r"d = 64, k = 3, pos 0\.\.\d+ *: shift_error = (\S+)",
        1e-12,
    ),
    (
        "06_rope",
        "norm-md",
        r"\(below \$10\^\{-14\}\$\), as notebook 08 measures it too",
        "norm-check",
        r"norm_max_gap = (\S+)",
        1e-14,
    ),
    (
        "06_rope",
        "summary",
        r"`norm_max_gap` at pos 0, 1, 7, 100, 4096 \| rounding only \| below 1e-14 \|",
        "norm-check",
        r"norm_max_gap = (\S+)",
        1e-14,
    ),
    (
        "06_rope",
        "summary",
        r"`rope_spread` \| rounding only \| below 1e-12 \|",
        "score-table",
        r"rope_spread = (\S+)",
        1e-12,
    ),
    (
        "06_rope",
        "cache-md",
        r"to rounding\n\(below \$10\^\{-14\}\$",
        "cache-code",
        r"max difference: (\S+)",
        1e-14,
    ),
    (
        "08_offsets",
        "seed-table",
        r"the spread is below \$10\^\{-12\}\$",
        "seed-table-code",
        r"spread: rope (\S+),",
        1e-12,
    ),
    (
        "08_offsets",
        "norms",
        r"float noise\n\(below \$10\^\{-14\}\$",
        "norms-code",
        r"after RoPE: .* largest change (\S+)",
        1e-14,
    ),
    (
        "08_offsets",
        "course-map",
        r"spread below \$10\^\{-12\}\$\)",
        "course-map-code",
        r"RoPE spread (\S+)",
        1e-12,
    ),
    (
        "08_offsets",
        "course-map",
        r"change below \$10\^\{-14\}\$\)",
        "course-map-code",
        r"norm change (\S+)",
        1e-14,
    ),
    (
        "09_families",
        "nope-md",
        r"a gap of round-off size \(below \$10\^\{-14\}\$\)",
        "leak",
        r"full self-attention:\s+largest gap (\S+)",
        1e-14,
    ),
    ("11_rope_nd", "relative-md", r"below \$10\^\{-13\}\$", "relative", r"spread (\S+)", 1e-13),
    (
        "11_rope_nd",
        "axial-zero-md",
        r"below \$10\^\{-16\}\$",
        "axial-zero",
        r"largest \|term\| over the 32 pairs (\S+)",
        1e-16,
    ),
    (
        "11_rope_nd",
        "mixed-measure-md",
        r"0\s+again \(below \$10\^\{-16\}\$\)",
        "mixed-measure",
        r"phi = 0\): largest \|term\| (\S+)",
        1e-16,
    ),
]


def printed_values(output: str, pattern: str) -> list[float]:
    """Every value the pattern finds in a cell's output (a trailing comma or semicolon dropped)."""
    return [float(v.rstrip(",;")) for v in re.findall(pattern, output)]


def check_bound(nb_id, md, said, cell, printed, bound, text, out) -> None:
    """The Markdown cell still states the bound, and every value the cell printed is under it."""
    assert re.search(said, text[md]), f"{nb_id} {md} no longer says {said!r}:\n{text[md]}"
    values = printed_values(out[cell], printed)
    assert values, f"{nb_id} {cell} printed no {printed!r}:\n{out[cell]}"
    assert all(0 <= v < bound for v in values), (
        f"{nb_id} {cell} printed {values}, the prose of {md} says below {bound:g}"
    )
