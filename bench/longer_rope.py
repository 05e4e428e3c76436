"""RoPE made longer (13_train_short): the RoPE model trained at 32, read at 1x to 8x six ways.

    python -m bench.longer_rope [--seeds 0,1,2] [--steps 1000]

For each seed: trains the RoPE model as the notebook does, then ``helpers.train.longer_rope``
(plain RoPE, position interpolation, NTK-aware, YaRN with the paper's ramp and with the
rescaled one, a short PI fine-tune; the reference's ``yarn_thetas``). Prints each seed's
table of excess over the best loss, the mean over the seeds, and the seconds the section
costs (wall and this process's CPU, the fine-tune and the reads), with the load averages.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np

from helpers import train
from helpers.reference import chain_entropy


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    parser.add_argument("--steps", type=int, default=train.Config().steps)
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    base = replace(train.Config(scheme="rope"), steps=args.steps)
    L = base.train_len
    best = train.best_loss_per_position(
        chain_entropy(train.markov_table(base.vocab, base.task_seed)), 8 * L
    )
    tables = []
    for seed in seeds:
        model = train.train(replace(base, seed=seed))
        wall, cpu = time.perf_counter(), time.process_time()
        out = train.longer_rope(model, best)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"seed {seed}: RoPE trained in {model.train_s:.1f} s; made longer in {wall:.1f} s "
            f"(cpu {cpu:.1f} s): fine-tune {out['finetune_s']:.1f} s, {out['reads']} reads "
            f"{out['read_s']:.1f} s"
        )
        for name, ex in out["excess"].items():
            print(f"  {name:>14}  " + " ".join(f"{ex[k]:+.3f}" for k in train.FACTORS))
        tables.append(out["excess"])
    print(f"mean over seeds {seeds}: excess over the best loss at 1x 2x 4x 8x")
    mean = {
        name: {k: float(np.mean([t[name][k] for t in tables])) for k in train.FACTORS}
        for name in tables[0]
    }
    for name, ex in mean.items():
        print(f"  {name:>14}  " + " ".join(f"{ex[k]:+.3f}" for k in train.FACTORS))
    print("load (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return mean


if __name__ == "__main__":
    main()
