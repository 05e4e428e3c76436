"""The round-off the notebooks state holds under other BLAS kernels too.

numpy's OpenBLAS picks a kernel for the processor when it loads, and the kernels add a matrix
product's terms in different orders, so a round-off-sized result changes in its last digits
from one machine to another (12's folded score printed 3.6e-15 on one and 1.8e-15 on another).
``OPENBLAS_CORETYPE`` forces a kernel. Each notebook with a round-off bound
(tests/round_off.py, and 12's ``BOUNDS``) runs, up to its last measuring cell, in a Jupyter
kernel started with Haswell (AVX2) and with Prescott (SSE3, which OpenBLAS reports as Katmai)
forced; a cell appended prints threadpoolctl's report of the kernel, which must name the forced
one, and every bound must hold. The default kernel's run is the claims tests' own
(tests/test_notebook_claims*.py): a forced kernel that is this machine's default is skipped.
"""

from __future__ import annotations

import json
import os
import platform
from collections import defaultdict
from pathlib import Path

import pytest

from tests.claims_kit import run_source
from tests.round_off import ROUND_OFF, check_bound
from tests.test_notebook_claims_12 import BOUNDS as BOUNDS_12

pytestmark = pytest.mark.slow

# The forced kernel, the names threadpoolctl may report for it, the CPU flag it needs.
KERNELS = {"Haswell": ({"haswell"}, "avx2"), "Prescott": ({"prescott", "katmai"}, "sse3")}

BOUNDS = defaultdict(list)  # notebook -> its bounds, in ROUND_OFF's form
for row in ROUND_OFF + [("12_rope_today", *b) for b in BOUNDS_12]:
    BOUNDS[row[0]].append(row)

PROBE = (
    "import json, numpy, threadpoolctl\n"
    "print(json.dumps([i.get('architecture') for i in threadpoolctl.threadpool_info()"
    " if i['internal_api'] == 'openblas']))"
)


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    flags = set(line.partition(":")[2].split())
    return flags | {"sse3"} if "pni" in flags else flags  # Linux calls SSE3 pni


def default_kernel() -> str:
    """The kernel numpy's OpenBLAS runs in this process (threadpoolctl), lower case."""
    import numpy  # noqa: F401  (loads the library threadpoolctl reports)
    import threadpoolctl

    found = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
    return str(found[0].get("architecture", "")).lower() if found else ""


@pytest.mark.parametrize("nb_id", sorted(BOUNDS))
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_round_off_bounds_hold_under_the_kernel(kernel, nb_id, tmp_path):
    names, flag = KERNELS[kernel]
    if platform.machine() not in ("x86_64", "AMD64") or flag not in cpu_flags():
        pytest.skip(f"OpenBLAS's {kernel} kernel needs an x86-64 processor with {flag}")
    if default_kernel() in names:
        pytest.skip(f"{kernel} is this machine's default kernel: the claims tests ran under it")
    rows = BOUNDS[nb_id]
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
    nb = run_source(
        nb_id,
        tmp_path / nb_id,
        env=env,
        through=tuple({r[1] for r in rows} | {r[3] for r in rows}),
        then=(PROBE,),
    )
    reported = json.loads("".join(o.get("text", "") for o in nb.cells[-1].outputs))
    assert reported and all(a.lower() in names for a in reported), (
        f"OPENBLAS_CORETYPE={kernel}: the kernel's numpy runs {reported}"
    )
    text = {c.id: c.source for c in nb.cells if c.cell_type == "markdown"}
    out = {
        c.id: "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in nb.cells
        if c.cell_type == "code"
    }
    for row in rows:
        check_bound(*row, text, out)
