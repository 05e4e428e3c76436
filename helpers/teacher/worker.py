"""The isolated worker: a process that imports a learner's answer cells and calls them.

Started by ``helpers.teacher.channel`` as ``python -I -m helpers.teacher.worker`` (inside
the bubblewrap sandbox when it works), it speaks JSON lines on stdin/stdout:

1. it says ``{"ready": true}``, then reads its limits (memory, CPU seconds, file size)
   and sets them;
2. ``{"op": "load", "source": ...}``: compiles the answer cells as ``<answers>`` and runs
   them in a fresh module, then answers ``{"loaded": ...}``;
3. ``{"op": "call", "name", "kind", "cases", "mutation"}``: calls the function on each
   case with ``helpers.teacher.calling.call`` (one reply per case, then ``{"done": true}``).

Before any learner code runs, it forgets the course's modules (``helpers`` is imported
anew, and refused, if learner code asks for it) and installs an audit hook that refuses
``helpers``, ctypes, new processes and reading the course's package files. Learner code
prints to stderr, never into the replies. The verdicts are made by the grading process,
from the replies alone.
"""

from __future__ import annotations

import builtins
import json
import math  # noqa: F401  (imported once, before any learner code)
import os
import resource
import sys
import types

import numpy  # noqa: F401

from helpers.teacher.calling import ANSWERS, call, error_of
from helpers.teacher.codec import decode

BLOCKED_MODULES = ("helpers", "ctypes", "_ctypes", "cffi")
BLOCKED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "ctypes.dlopen",
    "ctypes.dlsym",
    "ctypes.dlsym/handle",
    "ctypes.cdata",
    "ctypes.call_function",
    "os.startfile",
)


def _set_limits(cfg: dict) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in (
        (resource.RLIMIT_AS, cfg["memory"]),
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_FSIZE, cfg["fsize"]),
    ):
        _soft, hard = resource.getrlimit(limit)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(limit, (value, hard))


def _audit_hook(package_dir: str, attempts: list):
    """The hook that refuses what grading does not allow, noting each attempt."""
    realpath, fsdecode, sep, isabs = os.path.realpath, os.fsdecode, os.sep, os.path.isabs
    package = realpath(package_dir)
    busy = [False]

    def hook(event, args):
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "import":
                name = str(args[0] or "")
                if name.split(".")[0] in BLOCKED_MODULES:
                    attempts.append(f"import {name}")
                    raise ImportError(f"grading does not allow importing {name}")
            elif event == "open" and isinstance(args[0], str | bytes | os.PathLike):
                path = realpath(fsdecode(args[0]))
                # os.open (mode None) may be relative to any folder (dir_fd): refuse those.
                relative = args[1] is None and not isabs(fsdecode(args[0]))
                if relative or path == package or path.startswith(package + sep):
                    attempts.append(f"open {path}")
                    raise PermissionError(f"grading does not allow reading {path}")
            elif event in BLOCKED_EVENTS:
                attempts.append(event)
                raise PermissionError(f"grading does not allow {event}")
        finally:
            busy[0] = False

    return hook


def _inert(*args, **kwargs):
    return _Inert()


class _Inert:
    """What ``get_ipython()`` returns in the answer cells: accepts everything, does nothing."""

    def __getattr__(self, name):
        return _inert

    def __setattr__(self, name, value):
        pass

    def __call__(self, *args, **kwargs):
        return self


def _forget_course_modules() -> None:
    """Drop ``helpers`` from ``sys.modules``: learner code that imports it meets the hook."""
    for name in [n for n in sys.modules if n == "helpers" or n.startswith("helpers.")]:
        del sys.modules[name]


def _call_cases(module: types.ModuleType, msg: dict, send) -> None:
    name, kind = msg["name"], msg["kind"]
    for i, raw in enumerate(msg["cases"]):
        args, kwargs = decode(raw["args"]), decode(raw["kwargs"])
        target = module.__dict__.get(name)
        if name not in module.__dict__:
            out = {
                "error": {
                    "type": "NameError",
                    "missing": True,
                    "message": f"{name} is not defined in the answer cells.",
                }
            }
        elif kind != "constant" and not callable(target):
            out = {
                "error": {
                    "type": "TypeError",
                    "missing": True,
                    "message": f"{name} is not a function.",
                }
            }
        else:
            out = call(target, kind, args, kwargs, bool(msg.get("mutation")))
        out["i"] = i
        try:
            send(out)
        except (TypeError, ValueError):
            send({"i": i, "value": {"__obj__": "value", "repr": "not readable"}})


def main() -> None:
    """Serve the grading process on the JSON-lines channel until stdin closes."""
    rin = os.fdopen(os.dup(0), "rb")
    wout = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # the learner's prints go to stderr, never into the replies
    dumps, loads = json.dumps, json.loads

    def send(obj):
        wout.write(dumps(obj).encode("utf-8") + b"\n")
        wout.flush()

    def receive():
        line = rin.readline()
        if not line:
            os._exit(0)
        return loads(line)

    send({"ready": True})
    cfg = receive()
    _set_limits(cfg)
    attempts: list[str] = []
    module = types.ModuleType("answers")
    module.__dict__["get_ipython"] = _inert
    module.__dict__["__builtins__"] = builtins
    _forget_course_modules()
    sys.addaudithook(_audit_hook(cfg["package_dir"], attempts))
    loaded = False
    while True:
        msg = receive()
        op = msg.get("op")
        if op == "load":
            del attempts[:]
            try:
                code = compile(msg["source"], ANSWERS, "exec", dont_inherit=True)
                sys.modules["answers"] = module
                exec(code, module.__dict__)  # noqa: S102  (the worker's one job)
                loaded = True
                send({"loaded": True, "attempts": list(attempts)})
            except BaseException as exc:  # noqa: BLE001
                send({"loaded": False, "error": error_of(exc), "attempts": list(attempts)})
        elif op == "call" and loaded:
            del attempts[:]
            _call_cases(module, msg, send)
            send({"done": True, "attempts": list(attempts)})
        else:
            send({"error": "unknown request"})


if __name__ == "__main__":
    main()
