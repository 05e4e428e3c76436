"""Where the suite's time goes: CPU seconds and wall seconds of each test module.

A test's CPU is what its worker process and every process it started and waited for spent
while the test ran (its setup, call and teardown): kernels, nbgrader, JupyterLab servers,
Chromium, hubs, trainings. A process is counted when it ends, so a server shared by a module
is counted in the teardown of the module's last test, and one shared by the whole run in the
last test of its worker. A server that runs detached from the worker (the hub, in a session
of its own; PostgreSQL, which ``pg_ctl`` leaves running) is not counted, nor is the CPU of the
machine's other work.

With ``--durations`` (as ``.ci/run`` and the README's measurement run it), the run ends with
the table, the modules that cost most first, after pytest's own slowest durations. Under
pytest-xdist each worker sends its counts to the controller, which adds them up.

The hooks are imported into ``tests/conftest.py``.
"""

from __future__ import annotations

import resource
import time
from collections import defaultdict

import pytest

KEY = "pe_suite_cpu"  # in xdist's workeroutput: {module: [cpu seconds, wall seconds, tests]}
SHOWN = 25  # modules in the table; the rest are summed in one line


def cpu_seconds() -> float:
    """User and system CPU of this process and of its ended children, in seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def add(into: dict, counts: dict) -> None:
    """Adds ``counts`` ({module: [cpu, wall, tests]}) into ``into``."""
    for module, (cpu, wall, tests) in counts.items():
        mine = into.setdefault(module, [0.0, 0.0, 0])
        mine[0] += cpu
        mine[1] += wall
        mine[2] += tests


def _line(cpu: float, wall: float, tests: int, name: str) -> str:
    return f"{cpu:8.1f} {wall:8.1f} {tests:6d}  {name}"


def _sums(counts: list) -> tuple[float, float, int]:
    """CPU, wall and tests of ``counts`` ([cpu, wall, tests] each), added up."""
    return sum(c for c, _, _ in counts), sum(w for _, w, _ in counts), sum(n for _, _, n in counts)


def table(counts: dict, shown: int = SHOWN) -> list[str]:
    """The lines of the summary: the costliest modules first, then the others and the total."""
    rows = sorted(counts.items(), key=lambda kv: -kv[1][0])
    lines = [f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  module (CPU: the worker and what it ran)"]
    lines += [_line(*c, module) for module, c in rows[:shown]]
    rest = [c for _, c in rows[shown:]]
    if rest:
        lines.append(_line(*_sums(rest), f"the other {len(rest)} modules"))
    lines.append(_line(*_sums(list(counts.values())), "in all"))
    return lines


class Counter:
    """The counts of one process: a worker's, or a run without xdist's."""

    def __init__(self) -> None:
        self.counts: dict = defaultdict(lambda: [0.0, 0.0, 0])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = cpu_seconds(), time.perf_counter()
        yield
        mine = self.counts[module_of(item.nodeid)]
        mine[0] += cpu_seconds() - cpu
        mine[1] += time.perf_counter() - wall
        mine[2] += 1

    def pytest_sessionfinish(self, session):
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # an xdist worker: to the controller
            output[KEY] = {m: list(c) for m, c in self.counts.items()}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):  # the controller: a worker's counts
        add(self.counts, getattr(node, "workeroutput", {}).get(KEY, {}))

    @pytest.hookimpl(trylast=True)  # after pytest's slowest durations
    def pytest_terminal_summary(self, terminalreporter, config):
        if config.getoption("durations", None) is None or hasattr(config, "workerinput"):
            return
        if not self.counts:
            return
        terminalreporter.write_sep("=", "CPU and wall seconds per test module")
        for line in table(self.counts):
            terminalreporter.write_line(line)


def register(config) -> None:
    config.pluginmanager.register(Counter(), "pe-suite-cpu")
