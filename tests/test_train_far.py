"""helpers.train's far probe (notebook 13's "A token more than 32 back"): its sequences put the
key where they say and nowhere else, its score is 1 for a perfect reader and ln V for a
uniform one, its gradient (the loss at the query only) matches central differences, a model
that learns it reads chance once the key is hidden, each head's weight on the key is the
softmax of its scores there, and training the probes beside the seven leaves the seven as
they were."""

from __future__ import annotations

import math

import numpy as np
import pytest

import helpers.grader  # noqa: F401 - as 13's first cell: it gives the session its judge
from helpers import reference as ref
from helpers import train as tr


@pytest.mark.parametrize("length", [32, 64, 256])
def test_the_key_is_where_the_sequence_says_and_nowhere_else(length):
    cfg = tr.Config(task="needle")
    V = cfg.vocab
    inputs, answer, key = tr.needle_sequences(cfg, 400, length, np.random.default_rng(5))
    assert inputs.shape == (400, length) and answer.shape == key.shape == (400,)
    assert np.all(inputs[:, 0] == V), "BOS first"
    assert np.all(inputs[:, -1] == V + 1), "the query last"
    assert np.all((key >= 1) & (key <= 8)), "the key near the start"
    for b in range(400):
        is_key = inputs[b] >= V + 2
        assert is_key.sum() == 1 and is_key[key[b]], (b, inputs[b])
        assert inputs[b, key[b]] == V + 2 + answer[b]
        rest = np.delete(inputs[b, 1:-1], key[b] - 1)
        assert np.all((rest >= 0) & (rest < V)), "chain tokens elsewhere"
    # the query is more than 32 back from the key at every length past 32
    assert np.all(length - 1 - key >= (23 if length == 32 else 33))
    # the answers cover the tokens and the keys their positions, about evenly
    assert set(answer.tolist()) == set(range(V))
    assert set(key.tolist()) == set(range(1, 9))
    assert np.bincount(answer, minlength=V).max() < 3 * 400 / V


def test_the_answer_is_drawn_apart_from_the_chain():
    """The token after the key and the answer agree no more often than chance (1 / V): the
    chain does not carry the answer on."""
    cfg = tr.Config(task="needle")
    inputs, answer, key = tr.needle_sequences(cfg, 4000, 32, np.random.default_rng(6))
    after = inputs[np.arange(4000), key + 1]
    assert abs(float((after == answer).mean()) - 1 / 16) < 0.03


def test_a_needle_sequence_needs_room():
    with pytest.raises(ValueError, match="at least 3 tokens"):
        tr.needle_sequences(tr.Config(task="needle"), 2, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="task must be one of"):
        tr.Config(task="copy")


def test_the_score_of_a_perfect_reader_is_one_and_of_a_uniform_one_chance():
    answer = np.array([3, 0, 15, 7])
    perfect = np.zeros((4, 16))
    perfect[np.arange(4), answer] = 1000.0
    right, loss = tr.far_score(perfect, answer)
    assert right.all() and np.all(loss < 1e-12) and np.isfinite(loss).all()
    right, loss = tr.far_score(np.zeros((4, 16)), answer)
    assert np.allclose(loss, math.log(16), atol=1e-12)
    wrong = np.zeros((4, 16))
    wrong[np.arange(4), (answer + 1) % 16] = 5.0
    right, loss = tr.far_score(wrong, answer)
    assert not right.any()
    # -log(1 / (e^5 + 15)), by hand
    assert np.allclose(loss, math.log(math.exp(5) + 15), atol=1e-12)


@pytest.mark.parametrize("scheme", tr.SCHEMES)
def test_the_query_only_loss_matches_central_differences(scheme):
    """The needle's loss is -log softmax at the last position only; every weight's gradient
    as (L(w + h) - L(w - h)) / 2h in float64, the loss written here from its formula."""
    cfg = tr.Config(scheme=scheme, task="needle", d_model=8, n_heads=2, train_len=6, t5_buckets=8)
    rng = np.random.default_rng(0)
    params = {
        k: v + rng.normal(0, 0.3, v.shape)
        for k, v in tr.init_params(cfg, rng, dtype=np.float64).items()
    }
    positions = tr.Positions(cfg, tr.Encodings(), np.float64)
    inputs, answer, _ = tr.needle_sequences(cfg, 3, 6, np.random.default_rng(1))

    def loss_here() -> float:
        z = tr.forward(params, cfg, positions, inputs)[0][:, -1]
        return float(np.mean(np.log(np.exp(z).sum(-1)) - z[np.arange(3), answer]))

    loss, grads = tr.loss_and_grads(params, cfg, positions, inputs, answer)
    assert loss == pytest.approx(loss_here(), abs=1e-12)
    h = 1e-6
    for name, w in params.items():
        numeric = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            old = w[index]
            w[index] = old + h
            up = loss_here()
            w[index] = old - h
            down = loss_here()
            w[index] = old
            numeric[index] = (up - down) / (2 * h)
        scale = float(np.abs(numeric).max())
        assert np.abs(grads[name] - numeric).max() <= 1e-7 + 1e-6 * scale, (scheme, name)
    assert max(float(np.abs(g).max()) for g in grads.values()) > 1e-3


@pytest.fixture(scope="module")
def learner():
    """A small ALiBi model trained on the needle at length 12."""
    cfg = tr.Config(
        scheme="alibi", task="needle", d_model=32, train_len=12, steps=300, batch=16,
        warmup=30, lr=5e-3,
    )  # fmt: skip
    return tr.train(cfg)


def test_a_model_that_learns_the_needle_reads_chance_without_the_key(learner):
    """Trained, it answers inside its length; with the key replaced by a chain token the
    answer is nowhere in the input, and it scores about 1 / 16."""
    seen = tr.read_far(learner, n=256, factors=(1,))[1]
    assert seen["acc"] > 0.9, seen["acc"]
    hidden = tr.read_far(learner, n=256, factors=(1,), hide_key=True)[1]
    assert hidden["acc"] < 0.2, hidden["acc"]
    assert hidden["loss"] > seen["loss"] + 1.0


def test_the_weight_on_the_key_is_the_softmax_of_the_scores_there():
    """An ALiBi model whose queries and keys are zero: every score is ALiBi's bias alone,
    -m_h (i - j), so the query's weight on a key d back is exp(-m_h d) / sum_j exp(-m_h j)."""
    cfg = tr.Config(scheme="alibi", task="needle", steps=1)
    params = tr.init_params(cfg, np.random.default_rng(0))
    for l in range(cfg.n_layers):
        params[f"{l}.Wqkv"][:, : 2 * cfg.d_model] = 0.0
    model = tr.Model(cfg, params)
    reads = tr.read_far(model, n=32, factors=(1, 2))
    slopes = 2.0 ** (-8.0 * np.arange(1, 5) / 4)  # 1/4, 1/16, 1/64, 1/256
    for k, read in reads.items():
        T = 32 * k
        d = T - 1 - read["key"]  # (n,)
        norm = np.exp(-slopes[:, None] * np.arange(T)[None, :]).sum(1)  # (H,)
        want = (np.exp(-slopes[None, :] * d[:, None]) / norm).mean(0)  # (H,)
        for layer in range(cfg.n_layers):
            assert np.allclose(read["key_mass"][layer], want, rtol=1e-5), (k, layer)
        assert np.allclose(read["rows"].sum(-1), 1.0, atol=1e-12)
    heads = tr.far_heads(reads, ref.attention_entropy)
    assert heads["key_mass"].shape == heads["entropy"].shape == (2, 4, 2)
    assert np.allclose(heads["uniform"], np.log([32, 64]))
    # the flattest head is nearly even: its entropy near log T; the steepest far below it
    assert np.all(heads["entropy"][:, 3] > heads["uniform"] - 0.1)
    assert np.all(heads["entropy"][:, 0] < heads["uniform"] - 1.0)


def test_the_probes_leave_the_seven_as_they_were():
    """run_experiment with the probes trains the same chain models, bit for bit, as without;
    the probes are needle models of FAR_STEPS steps at most, read at every factor."""
    base = tr.Config(steps=12, batch=4, warmup=3, d_model=16, train_len=8, t5_buckets=8)
    names = ("nope", "alibi", "t5_md128")
    alone = tr.run_experiment(base=base, eval_n=4, names=names, progress=None, far=False)
    both = tr.run_experiment(base=base, eval_n=4, names=names, progress=None, workers=2)
    assert "far" not in alone and set(both["far"]) == set(names)
    for name in names:
        assert np.array_equal(alone["curves"][name], both["curves"][name]), name
        assert alone["models"][name].losses == both["models"][name].losses, name
        probe = both["far_models"][name]
        assert probe.cfg.task == "needle" and probe.cfg.scheme == both["models"][name].cfg.scheme
        assert probe.cfg.t5_max_distance == both["models"][name].cfg.t5_max_distance
        assert probe.cfg.steps == min(tr.FAR_STEPS, base.steps) == len(probe.losses)
        assert sorted(both["far"][name]) == list(tr.FACTORS)
        assert both["far_s"][name] > 0
    assert tr.far_config(tr.Config()).steps == tr.FAR_STEPS < tr.Config().steps


def test_the_probes_claims_are_printed_by_the_probe_cell():
    """The claims the probes add to claims() are the probe cell's group ("far"), and none
    of them is printed by another cell."""
    base = tr.Config(steps=4, batch=2, warmup=1, d_model=16, train_len=8, t5_buckets=8)
    alone = tr.run_experiment(base=base, eval_n=2, progress=None, far=False)
    both = tr.run_experiment(base=base, eval_n=2, progress=None)
    before = {text for _, text, _ in tr.claims(alone, breaking_point=ref.breaking_point)}
    added = [
        (group, text)
        for group, text, _ in tr.claims(both, breaking_point=ref.breaking_point)
        if text not in before
    ]
    assert len(added) == 6 and {group for group, _ in added} == {"far"}, added
