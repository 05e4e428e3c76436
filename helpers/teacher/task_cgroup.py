"""Limits that rlimits cannot give, as cgroups: a sandbox's tasks, an account's memory.

RLIMIT_NPROC counts the tasks (processes and threads) of the sandbox's uid in its own user
namespace, so for a teacher's ordinary account it bounds one sandbox alone. The kernel
exempts root from it, and a grader started as root maps the sandbox's uid to root outside:
there an answer cell could start threads until the machine's ``pid_max``. So, where the
grading process is root, each sandboxed worker is moved, once started and before any
learner code reaches it, into a pids cgroup of its own whose ``pids.max`` is the limit: a
thread or process beyond it fails with EAGAIN ("can't start new thread"). The cgroup is
made below the grading process's own, in cgroup v1's pids hierarchy or in cgroup v2 where
the pids controller is enabled for children; ``bound`` returns None where neither can be
written (RLIMIT_NPROC is then the only bound).

RLIMIT_AS bounds one process; a learner on the hub can start many (kernels, terminals).
``account_memory`` makes the memory cgroup a learner's server joins before it becomes the
learner (``helpers.teacher.classroom.hub``), so that everything the account starts there
shares one limit.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

__all__ = ["account_memory", "bound", "parent", "process_tree", "release"]

PREFIX = "pe-sandbox"
_COUNT = itertools.count()


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, type, options) of each cgroup file system of this machine."""
    found = []
    try:
        with open("/proc/self/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                    found.append((parts[1], parts[2], parts[3].split(",")))
    except OSError:
        pass
    return found


def _own(hierarchy: str) -> str | None:
    """This process's cgroup in a v1 hierarchy (``pids``) or in v2 (``""``)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as fh:
            for line in fh:
                _num, controllers, path = line.rstrip("\n").split(":", 2)
                if hierarchy == "" and controllers == "" and _num == "0":
                    return path
                if hierarchy and hierarchy in controllers.split(","):
                    return path
    except (OSError, ValueError):
        pass
    return None


def parent(controller: str = "pids") -> Path | None:
    """The folder under which a cgroup of ``controller`` (``pids``, ``memory``) can be
    made: this process's own cgroup in that v1 hierarchy, or in v2 where the controller is
    enabled for children; None where there is none."""
    for point, kind, options in _mounts():
        if kind == "cgroup" and controller in options:
            own = _own(controller)
            if own is not None:
                return Path(point) / own.lstrip("/")
    for point, kind, _options in _mounts():
        if kind == "cgroup2":
            own = _own("")
            if own is None:
                continue
            here = Path(point) / own.lstrip("/")
            try:
                enabled = (here / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            if controller in enabled:
                return here
    return None


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, parents first (from /proc/<pid>/task/*/children)."""
    tree, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        if p in tree:
            continue
        tree.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                pass
    return tree


def bound(pids: list[int], limit: int) -> Path | None:
    """A new pids cgroup holding ``pids`` (their threads and everything they start), with
    at most ``limit`` tasks; None where this process is not root or no pids cgroup can be
    made here. Tasks already running stay; new ones beyond the limit are refused."""
    if os.geteuid() != 0:
        return None
    top = parent()
    if top is None:
        return None
    group = top / f"{PREFIX}-{os.getpid()}-{next(_COUNT)}"
    try:
        group.mkdir()
    except OSError:
        return None
    try:
        (group / "pids.max").write_text(str(int(limit)))
        for pid in pids:
            try:
                (group / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                pass  # it ended meanwhile
    except OSError:
        release(group)
        return None
    return group


def release(group: Path | None, wait: float = 30.0) -> None:
    """Remove a cgroup of ``bound``: its tasks (the sandbox's, being killed) are killed
    again, and the group is removed once the kernel has reaped them (on a busy machine,
    3,000 threads take seconds to end), within ``wait`` seconds."""
    if group is None:
        return
    end = time.monotonic() + wait
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # busy: a task not ended or not reaped yet
            if time.monotonic() > end:
                return
            try:
                left = (group / "cgroup.procs").read_text().split()
            except OSError:
                left = []
            for pid in left:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError, ValueError):
                    pass
            time.sleep(0.02)


def account_memory(name: str, limit: int) -> Path | None:
    """The memory cgroup ``pe-hub-<name>`` (made, or found from an earlier start) whose
    processes may use at most ``limit`` bytes together: a learner's server on the hub joins
    it, and its kernels and terminals inherit it, so the limit is the account's whole. None
    where this process is not root or no memory cgroup can be made here."""
    if os.geteuid() != 0:
        return None
    top = parent("memory")
    if top is None:
        return None
    group = top / f"pe-hub-{name}"
    try:
        group.mkdir(exist_ok=True)
        v1 = (group / "memory.limit_in_bytes").exists()
        (group / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(int(limit)))
        if v1 and (group / "memory.memsw.limit_in_bytes").exists():
            (group / "memory.memsw.limit_in_bytes").write_text(str(int(limit)))
    except OSError:
        return None
    return group
