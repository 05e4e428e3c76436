"""Median time of one explorer update (recompute + redraw) for every move of every explorer.

The explorers are found, not listed: every ``Explorer`` subclass defined in a module of
``helpers.widgets``. Each is built from ``helpers.reference`` (its function parameters are
matched by name to the reference functions, see ``REFERENCE_NAMES``) at the largest sizes
the course uses (d = 512, max_len = 512, 512 tokens, ...; see ``LARGE``), and each of its
controls, one at a time, is moved to a new value (``new_value``): one row per explorer and
control. One update = setting that value (the explorer recomputes and re-renders its
figure). The kind of redraw is measured, not assumed, from the explorer's ``static_key()``
and ``full_slow_key()``: ``blit`` (the cached layer is restored and only the changing
artists drawn), ``layer`` (the cached layer of slow artists and moving axes is drawn again
over the background) or ``full`` (the whole figure is drawn again).

    .venv/bin/python -m bench.widget_update [--repeat 20] [--only rope,alibi]

Target: at most 50 ms to the first new frame, whatever the kind of update (the exit status
is 1 when a median is over). BLAS runs on one thread (as in a learner's kernel on a busy
machine, and so that the timings do not depend on the number of idle cores); the machine's
load average is printed before and after the measurements.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import importlib
import inspect
import math
import pkgutil
import statistics
import time
from collections.abc import Callable

import numpy as np

import helpers.reference as ref
import helpers.widgets
from helpers.widgets.base import Explorer

TARGET_MS = 50.0

# Start values of the explorers' parameters that exist, at the largest sizes of the course.
LARGE = {
    "d": 512,
    "max_len": 512,
    "n": 512,
    "seq_len": 512,
    "max_offset": 511,
    "positions": True,
    "grid": 32,  # 11_rope_nd: a 32 x 32 patch grid, images of 32 x 32 patches
    "grid_h": 32,
    "grid_w": 32,
    "n_layers": 80,
    "window": 32,
    "steps": 200,
}

# A function parameter of an explorer -> the reference function of the same job.
REFERENCE_NAMES = {"position_table": "sinusoidal_pe"}


def alibi_score(q, k, m, n, slope=0.5):
    """08_offsets' ``alibi_score`` from the reference: ``q . k`` plus the bias of one head
    at distance ``|m - n|``, rescaled from the reference's slope to ``slope``."""
    one_head = float(ref.alibi_slopes(1)[0])
    bias = ref.alibi_bias(1, abs(m - n) + 1, causal=False)[0, 0, -1]
    return float(np.dot(q, k)) + float(bias) * slope / one_head


def train_short_results() -> dict:
    """Curves shaped like 13_train_short's trained models (flat; breaking at 32, 34, 36, 40;
    degrading slowly), standing in for ``helpers.train.run_experiment``'s: no training here."""
    pos = np.arange(256)
    best = np.full(256, 0.9)
    rise = {"nope": (34, 0.01), "sinusoidal": (34, 0.05), "learned": (32, 0.08)}
    rise |= {"rope": (36, 0.04), "alibi": (256, 0.0), "t5": (128, 0.002), "t5_md128": (40, 0.01)}
    curves = {n: best + np.clip((pos - at) * k, 0, 3.0) for n, (at, k) in rise.items()}
    return {"best": best, "curves": curves}


def train_short_yarn() -> dict:
    """YaRN reads shaped like 13_train_short's RoPE model's, by (beta_fast, factor): the
    fewer pairs the ramp keeps, the later it breaks; standing in for ``longer_rope``'s."""
    from helpers.train import BETA_FAST

    pos = np.arange(256)
    reads = {}
    for b in BETA_FAST:
        at = 40 if b <= 0.5 else 60 if b <= 1 else 80
        for k in (2, 4, 8):
            curve = 0.9 + np.clip((pos[: 32 * k] - at) * 0.02, 0, 1.5)
            reads[(b, k)] = {"rates": np.ones(8), "curve": curve}
    return reads


EXTRA = {"alibi_score": alibi_score}  # notebook functions the reference does not have
EXTRA["results"] = train_short_results()  # 13's measured curves (a value, not a function)
EXTRA["yarn"] = train_short_yarn()  # 13's RoPE model read with YaRN (a value)


def explorer_classes() -> list[tuple[str, type[Explorer]]]:
    """Every ``Explorer`` subclass defined in a module of ``helpers.widgets``."""
    found = []
    for info in pkgutil.iter_modules(helpers.widgets.__path__):
        module = importlib.import_module(f"helpers.widgets.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, Explorer)
                and cls is not Explorer
                and cls.__module__ == module.__name__
            ):
                found.append((info.name, cls))
    return found


def reference_function(name: str) -> Callable:
    if name in EXTRA:
        return EXTRA[name]
    fn = getattr(ref, REFERENCE_NAMES.get(name, name), None)
    if not callable(fn):
        raise SystemExit(f"no reference function for the explorer parameter {name!r}")
    return fn


def reference_kwargs(cls: type[Explorer]) -> dict[str, Callable]:
    """The function parameters of ``cls``, each the reference function of its name: those
    it needs and the optional ones that draw a panel of their own (default ``None``)."""
    kwargs = {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if (
            param.default is inspect.Parameter.empty
            or param.default is None
            and (callable(getattr(ref, name, None)) or name in EXTRA)
        ):
            kwargs[name] = reference_function(name)
    return kwargs


def build(cls: type[Explorer]) -> Explorer:
    """``cls`` on the reference functions, with the ``LARGE`` start values it accepts."""
    kwargs = reference_kwargs(cls)
    for name in inspect.signature(cls.__init__).parameters:
        if name in LARGE and name not in kwargs:
            kwargs[name] = LARGE[name]
    return cls(**kwargs)


def new_value(control):
    """A value of ``control`` other than its current one, about 60 % along its range."""
    value = control.value
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return "5, 20, 300, 4000" if value != "5, 20, 300, 4000" else "3, 10, 100, 4000"
    if hasattr(control, "base"):  # a log slider: exponents min .. max
        lo, hi = control.min, control.max
        exponent = math.log(value, control.base)
        target = lo + 0.6 * (hi - lo)
        if abs(target - exponent) < 0.5:
            target = lo + 0.2 * (hi - lo)
        return float(control.base ** (round(target / control.step) * control.step))
    lo, hi, step = control.min, control.max, control.step
    for fraction in (0.6, 0.3, 0.9):
        target = lo + round(fraction * (hi - lo) / step) * step
        if target != value:
            return type(value)(target)
    raise ValueError(f"no other value for {control.description!r}")


def set_quietly(explorer: Explorer, name: str, value) -> None:
    """Set a control without firing the explorer's observer."""
    control = explorer.controls[name]
    control.unobserve(explorer._on_change, names="value")
    try:
        control.value = value
    finally:
        control.observe(explorer._on_change, names="value")


def time_move(explorer: Explorer, name: str, value, repeat: int) -> dict:
    """Alternate the control between its start value and ``value``; time each refresh.

    Returns the kind of the move to ``value`` (``full``, ``layer`` or ``blit``), and, per
    refresh, in ms: the wall time to the first new frame (the move answered: what the
    learner sees first), the wall time to the last frame, the CPU time of this process and
    the number of frames sent (an explorer may show a large move in two frames). On a busy
    machine the wall time also holds the time other processes had the cores.
    """
    start = explorer.controls[name].value
    first, last, cpu, frames, kinds = [], [], [], [], set()
    sent: list[float] = []

    def on_frame(_change) -> None:
        sent.append(time.perf_counter())

    explorer.image.observe(on_frame, names="value")
    try:
        for i in range(repeat):
            key, layer = explorer.static_key(), explorer.full_slow_key()
            set_quietly(explorer, name, value if i % 2 == 0 else start)
            sent.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            explorer.refresh()
            t1 = time.perf_counter()
            cpu.append((time.process_time() - c0) * 1000.0)
            last.append((t1 - t0) * 1000.0)
            first.append(((sent[0] if sent else t1) - t0) * 1000.0)
            frames.append(len(sent))
            if i % 2 == 0:
                if explorer.static_key() != key:
                    kinds.add("full")
                elif explorer.full_slow_key() != layer:
                    kinds.add("layer")
                else:
                    kinds.add("blit")
    finally:
        explorer.image.unobserve(on_frame, names="value")
    kind = "full" if "full" in kinds else "layer" if "layer" in kinds else "blit"
    set_quietly(explorer, name, start)
    explorer.refresh()
    return {"kind": kind, "first": first, "last": last, "cpu": cpu, "frames": frames}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--only", default="", help="comma-separated widget modules")
    args = parser.parse_args()
    only = {m for m in args.only.split(",") if m}
    load_before = os.getloadavg()
    rows = []
    for module, cls in explorer_classes():
        if only and module not in only:
            continue
        explorer = build(cls)
        for name, control in explorer.controls.items():
            value = new_value(control)
            timed = time_move(explorer, name, value, args.repeat)
            if explorer.message.value:
                raise SystemExit(
                    f"{cls.__name__}[{name}]: the explorer reported an error: "
                    f"{explorer.message.value}"
                )
            timed["label"] = f"{module}.{cls.__name__}[{name} -> {value}]"
            timed["median"] = statistics.median(timed["first"])
            rows.append(timed)
    load = os.getloadavg()
    width = max(len(r["label"]) for r in rows)
    print(
        f"machine load (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} "
        f"{load_before[2]:.2f}, after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} cores; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )
    print(
        f"median ms of {args.repeat} updates; first: to the first new frame (target "
        f"{TARGET_MS:.0f} ms), last: to the last frame, when a move is shown in two"
    )
    print(
        f"{'explorer[control -> new value]':<{width}}  kind   frames  first ms  max ms  "
        f"last ms  cpu ms"
    )
    for r in rows:
        flag = "" if r["median"] <= TARGET_MS else "  over target"
        print(
            f"{r['label']:<{width}}  {r['kind']:<5}  {max(r['frames']):6d}  {r['median']:8.1f}  "
            f"{max(r['first']):6.1f}  {statistics.median(r['last']):7.1f}  "
            f"{statistics.median(r['cpu']):6.1f}{flag}"
        )
    for kind in ("blit", "layer", "full"):
        of_kind = [r for r in rows if r["kind"] == kind]
        over = [r for r in of_kind if r["median"] > TARGET_MS]
        if of_kind:
            print(f"{kind:<5}: {len(of_kind)} moves, {len(over)} over the target")
    return 1 if any(r["median"] > TARGET_MS for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
