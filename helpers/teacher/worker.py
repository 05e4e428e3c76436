"""The isolated worker: a process that imports a learner's answer cells and calls them.

Started by ``helpers.teacher.channel`` as ``python -I -m helpers.teacher.worker`` (inside
the bubblewrap sandbox when it works), it speaks JSON lines on stdin/stdout:

1. it says ``{"ready": true}``, then reads its limits (memory, CPU seconds, file size)
   and sets them;
2. ``{"op": "load", "cells": [{"id", "code"}], "seconds"}``: runs the answer cells one by
   one in one fresh module, each under its own time limit, and answers once per cell
   (``{"cell": id, "ok": ...}``, with the error, the refused attempts and any change it made
   to Python's built-ins, math or numpy, which is undone), then ``{"loaded": true}``. A cell
   that fails costs only itself: the next one runs;
3. ``{"op": "call", "name", "kind", "cases", "mutation", "standins", "constants"}``: calls
   the function on each case with ``helpers.teacher.calling.call`` (one reply per case,
   then ``{"done": true}`` with what it used and changed). While it runs, every other
   graded function named in ``standins`` is a stand-in that asks the grading process for
   the reference's answer (``{"reference": name, "args", "kwargs"}``), and the graded
   constants have the reference's values; the grading process names only those the
   answer cells define and the function may call (``helpers.teacher.standins``). The
   reference itself never enters this process. With ``"files"`` (a pair of paths per
   case), each reply holds the texts of those files as the call left them (read here,
   where the working folder is: it never reaches the host's disk).

Before any learner code runs, it forgets the course's modules (``helpers`` is imported
anew if learner code asks for it) and installs an audit hook that refuses the reference
and the teacher's modules (the public ones, plots, widgets, validation, stay allowed),
ctypes, new processes (``_posixsubprocess.fork_exec`` too; the sandbox's seccomp filter
refuses them below Python) and reading the teacher's files. Learner code prints to stderr,
never into the replies. The verdicts are made by the grading process, from the replies
alone.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import resource
import signal
import sys
import types

import numpy

from helpers.teacher.calling import ANSWERS, call, error_of, read_small
from helpers.teacher.codec import decode, encode

BLOCKED_MODULES = ("ctypes", "_ctypes", "cffi")
# The course's modules that answer cells may import: they give no answer away.
PUBLIC_MODULES = (
    "helpers",
    "helpers.validate",
    "helpers.plots",
    "helpers.widgets",
    "helpers.grader",
    "helpers.i18n",
    "helpers.fonts",
    "helpers.palette",
    "helpers.figure_words",
    "helpers.smoothing",
)
# Modules whose attributes learner code must not replace (undone, and the code fails).
PROTECTED = (builtins, math, numpy)
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
    "_posixsubprocess.fork_exec",
)


def _own_user_namespace() -> bool:
    """Whether this process runs in a user namespace of its own (the sandbox's), not the
    machine's (whose map is every uid to itself)."""
    try:
        with open("/proc/self/uid_map", encoding="ascii") as fh:
            return fh.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def _set_limits(cfg: dict) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limits = [
        (resource.RLIMIT_AS, cfg["memory"]),
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_FSIZE, cfg["fsize"]),
    ]
    # the sandbox's tasks (threads count: each is a task); outside a sandbox the limit
    # would count every process of the teacher's account
    if cfg.get("tasks") and _own_user_namespace():
        limits.append((resource.RLIMIT_NPROC, cfg["tasks"]))
    for limit, value in limits:
        _soft, hard = resource.getrlimit(limit)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        # the hard limit too: a soft one alone, the code that runs here could raise again;
        # one CPU second above it, so that SIGXCPU names the limit before SIGKILL
        top = value + 1 if limit == resource.RLIMIT_CPU and value > 0 else value
        if hard != resource.RLIM_INFINITY:
            top = min(top, hard)
        resource.setrlimit(limit, (value, top))


def _public(name: str) -> bool:
    return (
        any(name == m or name.startswith(m + ".") for m in PUBLIC_MODULES[1:]) or name == "helpers"
    )


def _audit_hook(package_dir: str, attempts: list):
    """The hook that refuses what grading does not allow, noting each attempt."""
    realpath, fsdecode, sep, isabs = os.path.realpath, os.fsdecode, os.sep, os.path.isabs
    package = realpath(package_dir)
    # What of the package learner code may not read: the teacher's folder, the reference.
    secret = (os.path.join(package, "teacher"), os.path.join(package, "reference.py"))
    busy = [False]

    def hook(event, args):
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "import":
                name = str(args[0] or "")
                top = name.split(".")[0]
                if top in BLOCKED_MODULES or (top == "helpers" and not _public(name)):
                    attempts.append(f"import {name}")
                    raise ImportError(f"grading does not allow importing {name}")
            elif event == "open" and isinstance(args[0], str | bytes | os.PathLike):
                path = realpath(fsdecode(args[0]))
                # os.open (mode None) may be relative to any folder (dir_fd): refuse those.
                relative = args[1] is None and not isabs(fsdecode(args[0]))
                hidden = any(path == s or path.startswith(s + sep) for s in secret)
                if relative or path == package or hidden:
                    attempts.append(f"open {path}")
                    raise PermissionError(f"grading does not allow reading {path}")
            elif event in BLOCKED_EVENTS:
                attempts.append(event)
                raise PermissionError(f"grading does not allow {event}")
        finally:
            busy[0] = False

    return hook


def _refuse_fork_exec() -> None:
    """``_posixsubprocess.fork_exec`` (what ``subprocess`` starts processes with) raises an
    audit event, which the hook refuses like ``os.fork``."""
    try:
        import _posixsubprocess
    except ImportError:
        return

    def fork_exec(*args, **kwargs):
        sys.audit("_posixsubprocess.fork_exec")
        raise PermissionError("grading does not allow _posixsubprocess.fork_exec")

    _posixsubprocess.fork_exec = fork_exec
    if "subprocess" in sys.modules:  # it keeps its own name for the function
        sys.modules["subprocess"]._fork_exec = fork_exec


def _take_files(paths) -> list:
    """The texts of a "files" case's files (None for one missing or too large), then gone."""
    texts = []
    for path in paths:
        texts.append(read_small(path))
        try:
            os.unlink(path)
        except OSError:
            pass
    return texts


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


class _CellTimeout(BaseException):
    """A cell ran past its time limit (raised by the alarm, again every second)."""


def _on_alarm(signum, frame):
    raise _CellTimeout()


def _snapshot() -> list[dict]:
    return [dict(vars(m)) for m in PROTECTED]


def _undo_changes(before: list[dict]) -> list[str]:
    """Put back what learner code replaced in the protected modules; say what it was."""
    changed = []
    for module, saved in zip(PROTECTED, before):
        now = vars(module)
        for key in set(now) | set(saved):
            if key.startswith("__") and key not in ("__import__", "__build_class__"):
                continue
            if key not in saved:
                if isinstance(now[key], types.ModuleType):
                    continue  # a submodule imported on first use (numpy.testing): no change
                changed.append(f"{module.__name__}.{key}")
                del now[key]
            elif now.get(key, changed) is not saved[key]:
                changed.append(f"{module.__name__}.{key}")
                now[key] = saved[key]
    return sorted(changed)


def _load_cells(module: types.ModuleType, msg: dict, attempts: list, send) -> None:
    seconds = float(msg.get("seconds", 10.0))
    for cell in msg["cells"]:
        del attempts[:]
        before = _snapshot()
        out: dict = {"cell": cell["id"], "ok": True}
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
        try:
            code = compile(cell["code"], ANSWERS, "exec", dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102  (the worker's one job)
        except _CellTimeout:
            out = {"cell": cell["id"], "ok": False, "timeout": seconds}
        except BaseException as exc:  # noqa: BLE001
            out = {"cell": cell["id"], "ok": False, "error": error_of(exc)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out["attempts"] = list(attempts)
        out["changed"] = _undo_changes(before)
        send(out)
    send({"loaded": True})


def _stand_in(name: str, send, receive, used: set):
    """A function that answers as the reference does, by asking the grading process."""

    def stand_in(*args, **kwargs):
        used.add(name)
        send({"reference": name, "args": encode(list(args)), "kwargs": encode(kwargs)})
        reply = receive()
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            kind = ValueError if error.get("value_error") else RuntimeError
            raise kind(str(error.get("message", "")))
        return decode(reply.get("value"))

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def _call_cases(module: types.ModuleType, msg: dict, send, receive) -> dict:
    """Call the function on every case with the other graded functions stood in for."""
    name, kind = msg["name"], msg["kind"]
    names = module.__dict__
    used: set = set()
    swap = {n: _stand_in(n, send, receive, used) for n in msg.get("standins", ()) if n != name}
    swap.update({n: decode(v) for n, v in (msg.get("constants") or {}).items() if n != name})
    saved = {n: names[n] for n in swap if n in names}
    before = _snapshot()
    names.update(swap)
    files = msg.get("files") or []
    try:
        for i, raw in enumerate(msg["cases"]):
            args, kwargs = decode(raw["args"]), decode(raw["kwargs"])
            paths = [str(p) for p in files[i]] if i < len(files) else []
            _take_files(paths)
            target = names.get(name)
            if name not in names:
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
            if paths and "error" not in out:
                out["files"] = _take_files(paths)
            out["i"] = i
            try:
                send(out)
            except (TypeError, ValueError):
                send({"i": i, "value": {"__obj__": "value", "repr": "not readable"}})
    finally:
        for n in swap:
            if n in saved:
                names[n] = saved[n]
            else:
                names.pop(n, None)
    return {"used": sorted(used), "changed": _undo_changes(before)}


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
    module.__dict__["math"] = math
    module.__dict__["np"] = numpy
    sys.modules["answers"] = module
    _forget_course_modules()
    _refuse_fork_exec()
    sys.addaudithook(_audit_hook(cfg["package_dir"], attempts))
    loaded = False
    while True:
        msg = receive()
        op = msg.get("op")
        if op == "load":
            _load_cells(module, msg, attempts, send)
            loaded = True
        elif op == "call" and loaded:
            del attempts[:]
            done = _call_cases(module, msg, send, receive)
            send({"done": True, "attempts": list(attempts), **done})
        else:
            send({"error": "unknown request"})


if __name__ == "__main__":
    main()
