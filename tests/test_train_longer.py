"""helpers.train's RoPE made longer (notebook 13's section on it): its rates are notebook 10's
(the reference's pi_thetas, ntk_thetas and yarn_thetas, recorded against Hugging Face), the
plain read is the trained model's own, a learner's yarn_thetas is used when it runs and its
mistakes show in the YaRN rows, equal rates are read once, and the fine-tune leaves the
trained model as it was."""

from __future__ import annotations

import numpy as np
import pytest

import helpers.grader  # noqa: F401 - as 13's first cell: it gives the session its judge
import helpers.reference as ref
from helpers import train as tr


@pytest.mark.parametrize("factor", [2, 4, 8])
def test_the_rates_are_notebook_10s(factor):
    cfg = tr.Config(scheme="rope")
    th = ref.thetas(16, 10000.0)
    assert np.allclose(tr.rope_rates(cfg), th, rtol=1e-12)
    pi = tr.longer_encodings(cfg, "pi", factor)
    assert np.allclose(pi.rope_thetas, ref.pi_thetas(16, 10000.0, factor), rtol=1e-12)
    assert pi.rope_scale == 1.0
    ntk = tr.longer_encodings(cfg, "ntk", factor)
    assert np.allclose(ntk.rope_thetas, ref.ntk_thetas(16, 10000.0, factor), rtol=1e-12)
    for ramp in ((32, 1), (4, 1), (1, 1), (0.25, 1)):
        yarn = tr.longer_encodings(cfg, "yarn", factor, ramp=ramp)
        rates, scale = ref.yarn_thetas(16, 10000.0, factor, 32, *ramp)
        assert np.allclose(yarn.rope_thetas, rates, rtol=1e-12)
        assert yarn.rope_scale == pytest.approx(scale)
    with pytest.raises(ValueError, match="method"):
        tr.longer_encodings(cfg, "linear", factor)


def test_with_its_own_ramp_only_the_fastest_pair_is_kept_at_this_size():
    """d 16, base 1e4, 32 positions: the pair turns 5.09, 1.61, 0.51, ... times; beta_fast 32
    and 4 round to the same ramp (low = 0, high = 2), beta_fast 1 keeps two pairs."""
    cfg = tr.Config(scheme="rope")
    th = tr.rope_rates(cfg)
    assert np.allclose(32 * th[:3] / (2 * np.pi), [5.093, 1.611, 0.509], atol=1e-3)
    paper = tr.longer_encodings(cfg, "yarn", 2).rope_thetas / th
    assert np.allclose(paper, [1, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    assert np.allclose(tr.longer_encodings(cfg, "yarn", 2, ramp=(4, 1)).rope_thetas / th, paper)
    ones = tr.longer_encodings(cfg, "yarn", 2, ramp=(1, 1)).rope_thetas / th
    assert np.allclose(ones[:3], [1, 1, 0.5])


def test_yarn_of_takes_a_working_function_and_says_whose():
    fn, line = tr.yarn_of(ref.yarn_thetas)
    assert fn is ref.yarn_thetas and line == "yarn_thetas: yours"

    def stub(d, base, factor, original_max, beta_fast=32, beta_slow=1):
        raise NotImplementedError

    assert tr.yarn_of(stub) == (
        None,
        "yarn_thetas: the reference's (yours is not written yet: 10_long_context, Exercise 5: `yarn_thetas`)",
    )

    def paper_ramp(d, base, factor, original_max, beta_fast=32, beta_slow=1):
        return tr.yarn_paper_rates(d, base, factor, original_max, beta_slow, beta_fast)

    # a YaRN that runs but is not notebook 10's (the paper's ramp): told, not used
    fn, line = tr.yarn_of(paper_ramp)
    assert fn is None and line.startswith("yarn_thetas: the reference's, as yours is wrong")
    assert tr.yarn_of(None) == (None, "yarn_thetas: the reference's")
    rates_only = lambda d, base, factor, original_max, beta_fast=32, beta_slow=1: np.ones(d // 2)
    assert tr.yarn_of(rates_only)[0] is None  # no attention factor: not YaRN's shape


def tiny_rope() -> tr.Model:
    cfg = tr.Config(scheme="rope", d_model=16, n_heads=2, train_len=8, steps=30, batch=4, warmup=3)
    return tr.train(cfg)


@pytest.fixture(scope="module")
def model():
    return tiny_rope()


def best_of(model: tr.Model) -> np.ndarray:
    h = ref.chain_entropy(tr.markov_table(model.cfg.vocab, model.cfg.task_seed))
    return tr.best_loss_per_position(h, 8 * model.cfg.train_len)


def test_the_plain_read_is_the_trained_model(model):
    """Rates given as numbers rotate as the model's apply_rope did: the same losses."""
    plain = tr.Encodings(rope_thetas=tr.rope_rates(model.cfg))
    assert np.allclose(
        tr.evaluate(model, 24, n=4, enc=plain), tr.evaluate(model, 24, n=4), atol=1e-5
    )


def test_longer_rope_reads_each_way_and_leaves_the_model_as_it_was(model):
    before = {k: v.copy() for k, v in model.params.items()}
    out = tr.longer_rope(model, best_of(model), finetune_steps=3, eval_n=4, beta_fast=(1.0, 32.0))
    assert all(np.array_equal(before[k], model.params[k]) for k in before)
    assert not all(np.array_equal(out["tuned"].params[k], model.params[k]) for k in before)
    ex = out["excess"]
    assert set(ex) == {name for name, _ in tr.LONGER}
    assert all(set(row) == set(tr.FACTORS) for row in ex.values())
    # every way reads the plain model at 1x (its rates at factor 1 are theta)
    assert len({round(ex[n][1], 12) for n in ("rope", "pi", "ntk", "yarn", "yarn_paper")}) == 1
    naive = 5 * 3 + 1 + 3 + 2 * 3  # ways x factors, the plain 1x, the fine-tune, the explorer
    assert out["reads"] < naive
    # the explorer's YaRN with the paper's beta_fast is the table's YaRN row, read once
    assert out["yarn"][(32.0, 8)]["curve"] is out["curves"]["yarn"]
    assert float((out["curves"]["yarn"] - best_of(model)).mean()) == pytest.approx(ex["yarn"][8])
    assert out["curves"]["yarn"].shape == (64,)


def test_a_wrong_yarn_shows_in_its_rows(model):
    """A yarn_thetas without its ramp (every rate divided: position interpolation) gives the
    PI row, not YaRN's."""

    def no_ramp(d, base, factor, original_max, beta_fast=32, beta_slow=1):
        return ref.thetas(d, base) / factor, 1.0

    best = best_of(model)
    wrong = tr.longer_rope(
        model, best, yarn_thetas=no_ramp, finetune_steps=2, eval_n=4, beta_fast=()
    )
    right = tr.longer_rope(model, best, finetune_steps=2, eval_n=4, beta_fast=())
    assert wrong["excess"]["yarn"] == wrong["excess"]["pi"]
    assert wrong["excess"]["yarn"] != right["excess"]["yarn"]


def test_a_quick_run_reads_little(model, monkeypatch):
    """COURSE_TRAIN_QUICK (the suite's executions of 13): 3 fine-tune steps, 2 sequences."""
    monkeypatch.setenv(tr.QUICK_ENV, "1")
    out = tr.longer_rope(model, best_of(model), beta_fast=())
    assert out["finetune_steps"] == 3 and len(out["tuned"].losses) == 3
    monkeypatch.setenv(tr.QUICK_ENV, "0")
    assert tr.longer_rope(model, best_of(model), eval_n=2, beta_fast=())["finetune_steps"] == 60


def test_the_papers_ramp_is_linear_in_turns_and_interpolates_the_fastest_pair_here():
    """Peng et al., Definition 2, worked by hand for 13's heads (d 16, base 1e4, 32 positions,
    s = 2): pair 0 turns 32 / 2 pi = 5.093 times, gamma = (5.093 - 1) / 31 = 0.1320, so its
    rate is theta (1 - 0.1320) / 2 + 0.1320 theta = 0.5660 theta; pair 1 turns 1.611 times,
    gamma = 0.0197, 0.5099 theta; the rest are halved. transformers' ramp keeps pair 0."""
    rates, scale = tr.yarn_paper_rates(16, 1e4, 2, 32)
    ratio = rates / ref.thetas(16, 1e4)
    assert ratio[:2] == pytest.approx([0.5660, 0.5099], abs=1e-4)
    assert ratio[2:] == pytest.approx([0.5] * 6, abs=1e-12)
    assert scale == pytest.approx(0.1 * np.log(2) + 1)
    hf, _ = ref.yarn_thetas(16, 1e4, 2, 32, 32, 1)
    assert hf[0] / ref.thetas(16, 1e4)[0] == pytest.approx(1.0)
