"""Train every scheme of 13_train_short and read it past its training length.

    python -m bench.train_short [--seeds 0,1,2] [--steps 1500] [--jobs 1]

Prints milliseconds per step, seconds per model and the table of excess over the best
loss at 1x, 2x, 4x and 8x the training length (the mean over the seeds, and each seed's
ordering at 8x), then every claim the notebook makes (``helpers.train.claims``: the same
function its cells print) with its verdict on each seed; writes ``artifacts/train_short.json``:

    {"config": {...}, "seeds": [...], "schemes": {"<name>": {"excess": {"1": x, "2": x,
     "4": x, "8": x}, "train_s": s, "ms_per_step": ms}}, "total_train_s": s,
     "claims": [{"text": ..., "holds": [true, ...]}], "optimum_breaks": [p or null, ...],
     "run_all_s": s, "far": {"<name>": {"1": x, "2": x, "4": x, "8": x}}, "far_s": s,
     "load": [1, 5, 15]}

``far`` is the far probe's score, the share of right answers at its query (a key token near
the start of a sequence, the query at its end: more than 32 positions back from 2x on), at
each factor, the mean over the seeds, for the probe model of each scheme that the same
``run_experiment`` trains (``far_s``: their seconds of training and reading, one after
another). ``optimum_breaks`` is where the exact optimum, scored on the notebook's sequences, "breaks"
over the best expected loss with ``breaking_point``'s default window of 3 (the noise the
notebook reads breaks against); ``run_all_s`` the mean over the seeds of the wall time of what
the notebook's cells train and read for one seed (the seven models, RoPE made longer, the
heads, NoPE's temperatures). Timings depend on the machine and on what else runs on it: the
load averages are written beside them. ``total_train_s`` is the wall clock of the seven
trainings, each with its read at 8x, as the notebook runs them: two at a time where there
are two cores. ``--jobs N`` trains N seeds at once, in N processes (each still on one BLAS
thread): the excesses are the same, the timings are those of processes sharing the cores.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from helpers import train

OUT = Path("artifacts") / "train_short.json"


def one_seed(job: tuple[int, train.Config, int | None]) -> dict:
    """Every scheme trained and read for one seed, and every claim of the notebook measured
    on it, as its cells do (the models left out: the numbers only)."""
    import time

    from helpers import reference as ref

    seed, base, workers = job
    started = time.perf_counter()
    run = train.run_experiment(seed=seed, base=base, eval_n=64, progress=None, workers=workers)
    longer = train.longer_rope(run["models"]["rope"], run["best"])
    heads = {
        n: train.heads_past(run["models"][n], ref.attention_entropy)
        for n in ("nope", "rope", "alibi")
    }
    temps = train.temperatures(run["models"]["nope"])
    run["run_all_s"] = time.perf_counter() - started
    run["claims"] = train.claims(run, longer, heads, temps, ref.breaking_point)
    run["optimum_break"] = ref.breaking_point(run["optimum"] - run["best"], base.train_len)
    run["longer_excess"] = longer["excess"]
    # the far probe: its score (the share of right answers at the query) and its loss there
    run["far_acc"] = {n: {k: r[k]["acc"] for k in train.FACTORS} for n, r in run["far"].items()}
    run["far_loss"] = {n: {k: r[k]["loss"] for k in train.FACTORS} for n, r in run["far"].items()}
    run["far_key_mass"] = {
        n: {k: r[k]["key_mass"].max(axis=1).tolist() for k in train.FACTORS}
        for n, r in run["far"].items()
    }
    for key in ("models", "far_models", "far"):
        run.pop(key)
    return run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    parser.add_argument("--steps", type=int, default=train.Config().steps)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--jobs", type=int, default=1, help="seeds trained at once")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    base = replace(train.Config(), steps=args.steps)
    runs = []
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            # the seeds share the cores: each trains its models one at a time
            done = list(pool.map(one_seed, [(seed, base, 1) for seed in seeds]))
    else:
        done = (one_seed((seed, base, None)) for seed in seeds)
    for seed, run in zip(seeds, done):
        print(f"seed {seed}")
        runs.append(run)
        for name in runs[-1]["excess"]:
            print(
                f"  {name:>10}: {runs[-1]['train_s'][name]:6.1f} s, "
                f"{runs[-1]['ms_per_step'][name]:6.1f} ms/step "
                f"({runs[-1]['cpu_ms_per_step'][name]:.1f} ms of CPU), excess "
                + " ".join(f"{runs[-1]['excess'][name][k]:+.3f}" for k in train.FACTORS)
            )
    names = list(runs[0]["excess"])
    schemes = {}
    for name in names:
        schemes[name] = {
            "excess": {
                str(k): float(np.mean([r["excess"][name][k] for r in runs])) for k in train.FACTORS
            },
            "train_s": float(np.mean([r["train_s"][name] for r in runs])),
            "ms_per_step": float(np.mean([r["ms_per_step"][name] for r in runs])),
        }
    # what a learner waits for the seven: the wall clock of the trainings, each model read at
    # 8x as soon as it is trained, two at a time on two cores (run_experiment's wall_s)
    total = float(np.mean([r["wall_s"] for r in runs]))
    one_by_one = float(np.mean([sum(r["train_s"].values()) for r in runs]))
    load = list(os.getloadavg())
    print(f"\nmean of {len(seeds)} seed(s); load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"{'scheme':>10} {'ms/step':>8} {'s/model':>8}   "
        + "  ".join(f"{k}x" for k in train.FACTORS)
    )
    for name, row in schemes.items():
        print(
            f"{name:>10} {row['ms_per_step']:8.1f} {row['train_s']:8.1f}   "
            + " ".join(f"{row['excess'][str(k)]:+.3f}" for k in train.FACTORS)
        )
    for seed, r in zip(seeds, runs):
        order = sorted(r["excess"], key=lambda n: r["excess"][n][8])
        print(f"seed {seed} at 8x, best first: " + " < ".join(order))
    # the far probe, per seed and the mean
    far = {
        name: {str(k): float(np.mean([r["far_acc"][name][k] for r in runs])) for k in train.FACTORS}
        for name in names
    }
    print("\nthe far probe: right answers at the query (chance 1/16 = 0.062), 1x 2x 4x 8x")
    for seed, r in zip(seeds, runs):
        print(f"seed {seed}")
        for name in names:
            acc, loss = r["far_acc"][name], r["far_loss"][name]
            top = r["far_key_mass"][name]
            print(
                f"  {name:>10}: "
                + " ".join(f"{acc[k]:.3f}" for k in train.FACTORS)
                + "   loss "
                + " ".join(f"{loss[k]:.2f}" for k in train.FACTORS)
                + "   top head on the key, layers 0/1 "
                + " ".join("/".join(f"{m:.2f}" for m in top[k]) for k in train.FACTORS)
            )
    print(f"mean of {len(seeds)} seed(s)")
    for name, row in far.items():
        print(f"  {name:>10}: " + " ".join(f"{row[str(k)]:.3f}" for k in train.FACTORS))
    far_s = float(np.mean([sum(r["far_s"].values()) for r in runs]))
    print(f"the seven probes trained and read: {far_s:.1f} s, one after another (mean over seeds)")
    workers = runs[0]["workers"]
    print(
        f"seven trainings and their reads: {total:.1f} s wall clock, {workers} at a time "
        f"(mean over seeds; one after another they took {one_by_one:.1f} s)"
    )
    texts = [text for _, text, _ in runs[0]["claims"]]
    claims = [
        {"text": text, "holds": [r["claims"][i][2] for r in runs]} for i, text in enumerate(texts)
    ]
    print(f"\nthe notebook's claims on seed(s) {', '.join(map(str, seeds))}:")
    for c in claims:
        print("  " + " ".join("yes" if h else "NO " for h in c["holds"]) + "  " + c["text"])
    print(f"{sum(all(c['holds']) for c in claims)} of {len(claims)} claims hold on every seed")
    breaks = [r["optimum_break"] for r in runs]
    print(f"the optimum's break with window 3, per seed: {breaks}")
    run_all = float(np.mean([r["run_all_s"] for r in runs]))
    print(f"what the notebook trains and reads for one seed: {run_all:.1f} s (mean over seeds)")
    result = {
        "config": {k: v for k, v in asdict(base).items() if k not in ("scheme", "seed")},
        "seeds": seeds,
        "schemes": schemes,
        "total_train_s": total,
        "workers": workers,
        "claims": claims,
        "optimum_breaks": breaks,
        "run_all_s": run_all,
        "longer": {
            name: {
                str(k): float(np.mean([r["longer_excess"][name][k] for r in runs]))
                for k in train.FACTORS
            }
            for name in runs[0]["longer_excess"]
        },
        "far": far,
        "far_s": far_s,
        "load": load,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
