"""Which graded functions the reference stands in for, and where the reference then runs.

While one graded function is checked, a graded function it calls may answer as the
reference does, so that a mistake in one exercise does not cost the next. That help has
bounds (``plan``); a stand-in is given for ``other`` while ``name`` is graded only when

- the learner's answer cells define ``other`` (a name the notebook never defines fails
  with NameError, as it does in the learner's kernel);
- the reference of ``name`` calls ``other``, directly or through its helpers
  (``reference_calls``: read from the reference modules' source, so it follows the maths);
- the learner's ``other`` does not reach back to ``name`` (``learner_calls``: the names
  its definition mentions, followed through the answer cells' other definitions).

Graded constants are given their reference values only when the answer cells define them.

The reference's answers are computed in a process of their own (``ReferenceProcess``,
``python -I -m helpers.teacher.standins``) with its own memory and CPU limits
(``MEMORY_LIMIT``), never in the grading process; the time it takes counts against the
deadline of the call that asked for it. A call too costly for those limits fails the
function being graded, and only that one.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import resource
import sys
import threading
import time
from collections.abc import Iterable

__all__ = [
    "MEMORY_LIMIT",
    "ReferenceProcess",
    "learner_calls",
    "namespace_calls",
    "plan",
    "reference_calls",
]

# Limits of the process that computes the reference's answers for stand-ins.
MEMORY_LIMIT = 1024**3
# The reference's process (``main``), as ``channel.Worker`` and ``channel.SPARES`` start it.
REFERENCE_ARGV = (sys.executable, "-I", "-m", "helpers.teacher.standins")


def _mentions(node: ast.AST) -> set[str]:
    """Every identifier a piece of code mentions: names, attributes, and strings that
    look like one (``globals()["rope_half"]``)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif (
            isinstance(sub, ast.Constant)
            and isinstance(sub.value, str)
            and sub.value.isidentifier()
        ):
            found.add(sub.value)
    return found


def _closure(direct: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """Everything each key reaches through the others (a path of one step or more)."""
    out: dict[str, frozenset[str]] = {}
    for start, first in direct.items():
        seen: set[str] = set()
        todo = list(first)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(direct.get(name, ()))
        out[start] = frozenset(seen)
    return out


@functools.lru_cache(maxsize=1)
def reference_calls() -> dict[str, frozenset[str]]:
    """``name -> the graded names its reference reaches``, for every graded name.

    Each reference module's top-level definitions are read from its source; a name a body
    mentions is followed to the definition it means (one of the module's own, or one it
    imports from another reference module), through private helpers too.
    """
    from helpers.teacher import reference as ref

    graded = set(ref.__all__)
    direct: dict[str, set[str]] = {}  # "module:name" -> "module:name" it mentions
    for module in ref.notebook_modules():
        mod = module.__name__
        tree = ast.parse(inspect.getsource(module))
        local: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ref.__name__):
                for alias in node.names:
                    local[alias.asname or alias.name] = f"{node.module}:{alias.name}"
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                local[node.name] = f"{mod}:{node.name}"
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        local[target.id] = f"{mod}:{target.id}"
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                key = f"{mod}:{node.name}"
                direct[key] = {local[n] for n in _mentions(node) if n in local} - {key}
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        key = f"{mod}:{target.id}"
                        mentioned = _mentions(node.value)
                        direct[key] = {local[n] for n in mentioned if n in local} - {key}
    reach = _closure(direct)
    out: dict[str, frozenset[str]] = {}
    for name in graded:
        home = getattr(ref, name)
        mod = getattr(home, "__module__", None)
        key = f"{mod}:{name}" if mod else None
        if key is None or key not in reach:
            key = next((k for k in reach if k.endswith(f":{name}")), None)
        found = reach.get(key, frozenset()) if key else frozenset()
        out[name] = frozenset(k.split(":", 1)[1] for k in found) & graded - {name}
    return out


def learner_calls(sources: Iterable[str]) -> dict[str, frozenset[str]]:
    """``name -> the names it reaches`` for each top-level name the answer cells define.

    A definition reaches every name it mentions (in its body, defaults, decorators, or as
    a string), and what those names' own definitions reach. A cell that cannot be read
    adds nothing.
    """
    direct: dict[str, set[str]] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            defined: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined = [node.name]
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            elif isinstance(node, ast.Import | ast.ImportFrom):
                defined = [(a.asname or a.name).split(".")[0] for a in node.names]
            else:  # if/for/with/try at the top: whatever it binds mentions all of it
                defined = [
                    n.id
                    for n in ast.walk(node)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                ]
                defined += [
                    n.name
                    for n in ast.walk(node)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                ]
            try:
                mentioned = _mentions(node)
            except RecursionError:
                mentioned = set()
            for name in defined:
                direct.setdefault(name, set()).update(mentioned - {name})
    return _closure(direct)


def _code_mentions(code, depth: int = 0) -> set[str]:
    found = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, str) and const.isidentifier():
            found.add(const)
        elif hasattr(const, "co_names") and depth < 20:
            found |= _code_mentions(const, depth + 1)
    return found


def namespace_calls(namespace) -> dict[str, frozenset[str]]:
    """``learner_calls`` for a live namespace (the learner's kernel): what each function
    defined there mentions in its compiled code, followed through the namespace."""
    direct: dict[str, set[str]] = {}
    for name, value in list(namespace.items()):
        code = getattr(value, "__code__", None)
        if code is not None and hasattr(code, "co_names"):
            direct[name] = _code_mentions(code) - {name}
    return _closure(direct)


def plan(
    name: str,
    defined: Iterable[str],
    learner: dict[str, frozenset[str]],
    functions: Iterable[str],
    constants: Iterable[str],
) -> tuple[list[str], list[str]]:
    """The graded functions and constants the reference stands in for while ``name`` is
    graded: of ``functions`` (the course's graded functions), those the reference of
    ``name`` reaches, that the answer cells define (``defined``) and whose learner
    definition does not reach back to ``name`` (``learner``: ``learner_calls``); of
    ``constants``, those the answer cells define."""
    defined = set(defined)
    reach = reference_calls().get(name, frozenset())
    chosen = [
        other
        for other in functions
        if other != name
        and other in reach
        and other in defined
        and name not in learner.get(other, frozenset())
    ]
    return chosen, [c for c in constants if c != name and c in defined]


# --------------------------------------------------------------------------- the process


class ReferenceProcess:
    """The process that computes the reference's answers for stand-ins, started on first use.

    ``answer(name, args, kwargs, deadline)`` returns ``{"value": ...}`` or ``{"error":
    {...}}``; ``{"error": {"costly": ...}}`` when the call went past the deadline or the
    process's limits (the process is then ended, and a new one starts for the next call).
    """

    def __init__(self, workdir: str, cpu_seconds: float) -> None:
        self.workdir, self.cpu = workdir, cpu_seconds
        self.channel = None
        self.starting: threading.Thread | None = None

    def start_soon(self) -> None:
        """Start the process in the background (while the worker loads the answer cells)."""
        if self.channel is None and self.starting is None:
            self.starting = threading.Thread(target=self._start, daemon=True)
            self.starting.start()

    def start(self) -> float:
        """Start the process unless it runs; the seconds that took (0 when it ran)."""
        started = time.monotonic()
        if self.starting is not None:
            self.starting.join()
            self.starting = None
        if self.channel is None:
            self._start()
        return time.monotonic() - started

    def _start(self) -> None:
        from helpers.teacher.channel import SPARES, WorkerDied, WorkerTimeout

        try:
            self.channel = SPARES.take(self.workdir, self.cpu, REFERENCE_ARGV, MEMORY_LIMIT)
        except (WorkerDied, WorkerTimeout, OSError):
            self.channel = None

    def answer(self, name: str, args, kwargs, deadline: float) -> dict:
        from helpers.teacher.channel import WorkerDied, WorkerTimeout

        try:
            if self.channel is None:
                raise WorkerDied("the reference's process did not start")
            self.channel.send({"name": name, "args": args, "kwargs": kwargs}, deadline)
            reply = self.channel.receive(deadline)
        except WorkerTimeout:
            self.stop()
            return {"error": {"type": "Timeout", "costly": "time"}}
        except (WorkerDied, OSError) as exc:
            self.stop()
            return {"error": {"type": "Died", "costly": "memory", "message": str(exc)}}
        if reply.get("error", {}).get("type") == "MemoryError":
            self.stop()
            return {"error": {"type": "MemoryError", "costly": "memory"}}
        return reply

    def stop(self) -> None:
        if self.starting is not None:
            self.starting.join()
            self.starting = None
        if self.channel is not None:
            self.channel.stop()
            self.channel = None


def _set_limits(cfg: dict) -> None:
    for limit, value in (
        (resource.RLIMIT_AS, cfg["memory"]),
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_CORE, 0),
    ):
        _soft, hard = resource.getrlimit(limit)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        # the hard limit too: a soft one alone, the code that runs here could raise again;
        # one CPU second above it, so that SIGXCPU names the limit before SIGKILL
        top = value + 1 if limit == resource.RLIMIT_CPU and value > 0 else value
        if hard != resource.RLIM_INFINITY:
            top = min(top, hard)
        resource.setrlimit(limit, (value, top))


def preload() -> None:
    """What every reference's process loads before its first request: a zygote
    (``helpers.teacher.zygote``) loads it once and forks each process from it."""
    import json  # noqa: F401

    import numpy  # noqa: F401

    from helpers.teacher import codec, reference  # noqa: F401


def main() -> None:  # pragma: no cover - run as a process (tests/test_grader_standins.py)
    """Serve reference answers on JSON lines (the protocol of ``helpers.teacher.channel``)."""
    import json

    import numpy as np

    from helpers.teacher.codec import decode, encode

    rin, wout = sys.stdin.buffer, sys.stdout.buffer

    def send(obj: dict) -> None:
        wout.write(json.dumps(obj).encode("utf-8") + b"\n")
        wout.flush()

    from helpers.teacher import reference as ref  # before ``ready``: a spare has it loaded

    send({"ready": True})
    _set_limits(json.loads(rin.readline()))

    for line in rin:
        request = json.loads(line)
        try:
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
            with np.errstate(all="ignore"):
                value = getattr(ref, str(request["name"]))(*args, **kwargs)
            out = {"value": encode(value)}
        except MemoryError:
            out = {"error": {"type": "MemoryError", "message": ""}}
        except Exception as exc:  # noqa: BLE001  (the caller's error, reported back to it)
            error = {"type": type(exc).__name__, "message": str(exc)[:300]}
            out = {"error": {**error, "value_error": isinstance(exc, ValueError)}}
        try:
            send(out)
        except MemoryError:
            send({"error": {"type": "MemoryError", "message": ""}})
    os._exit(0)


if __name__ == "__main__":
    main()
