"""The reference maths of 10_long_context: stretching RoPE past its training length.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from helpers import validate
from helpers.teacher.reference.rope import thetas

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "pi_thetas",
    "ntk_base",
    "ntk_thetas",
    "dynamic_ntk_thetas",
    "yarn_thetas",
    "llama3_thetas",
    "unseen_angle_pairs",
]

ASSIGNMENT = "10_long_context"


def _factor(factor) -> float:
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
        raise ValueError(f"factor must be a finite number >= 1, got {factor!r}")  # noqa: TRY004
    value = float(factor)
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"factor must be a finite number >= 1, got {factor!r}")
    return value


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")  # noqa: TRY004
    out = float(value)
    if not math.isfinite(out) or out <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return out


def _ntk_dim(d) -> int:
    d = validate.dim(d)
    if d < 4:
        raise ValueError(f"d must be an even integer >= 4 for NTK scaling (d / (d - 2)), got {d!r}")
    return d


def pi_thetas(d, base, factor) -> np.ndarray:
    """Position interpolation (Chen et al. 2023) (notebook 10_long_context).

    theta'_i = theta_i / factor   (Hugging Face rope_type="linear")
    # shape: (d // 2,)
    """
    return thetas(d, base) / _factor(factor)


def ntk_base(base, factor, d) -> float:
    """The base of NTK-aware scaling (bloc97 2023) (notebook 10_long_context).

    base' = base * factor ** (d / (d - 2))
    """
    base = validate.base(base)
    factor = _factor(factor)
    d = _ntk_dim(d)
    return base * factor ** (d / (d - 2))


def ntk_thetas(d, base, factor) -> np.ndarray:
    """NTK-aware rates: the usual rates with the base ntk_base(base, factor, d) (notebook 10_long_context).

    theta'_i = ntk_base(base, factor, d) ** (-2 i / d)
    # shape: (d // 2,)
    """
    return thetas(d, ntk_base(base, factor, d))


def dynamic_ntk_thetas(d, base, factor, seq_len, original_max) -> np.ndarray:
    """Dynamic NTK scaling, the base grows with the sequence (notebook 10_long_context).

    s = max(seq_len, original_max)
    base' = base * (factor * s / original_max - (factor - 1)) ** (d / (d - 2))
    theta'_i = base' ** (-2 i / d)   (Hugging Face rope_type="dynamic")
    # shape: (d // 2,)
    """
    d = _ntk_dim(d)
    base = validate.base(base)
    factor = _factor(factor)
    seq_len = validate.count(seq_len, "seq_len")
    original_max = validate.count(original_max, "original_max")
    s = max(seq_len, original_max)
    return thetas(d, base * (factor * s / original_max - (factor - 1)) ** (d / (d - 2)))


def yarn_thetas(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """YaRN (Peng et al. 2023): a ramp between extrapolated and interpolated pairs (notebook 10_long_context).

    Correction dim of b rotations over original_max: c(b) = d ln(original_max / (2 pi b)) / (2 ln base)
    low = max(floor(c(beta_fast)), 0),  high = min(ceil(c(beta_slow)), d - 1)  (high += 0.001 if equal)
    ramp_i = clip((i - low) / (high - low), 0, 1)
    theta'_i = theta_i / factor * ramp_i + theta_i * (1 - ramp_i)
    attention_factor = 0.1 ln(factor) + 1   (1.0 when factor <= 1)
    As Hugging Face rope_type="yarn" with its defaults (truncate=True, no mscale).
    # shape: ((d // 2,), float)
    """
    d = validate.dim(d)
    base = validate.base(base)
    factor = _factor(factor)
    original_max = validate.count(original_max, "original_max")
    beta_fast = _positive(beta_fast, "beta_fast")
    beta_slow = _positive(beta_slow, "beta_slow")

    def correction_dim(rotations: float) -> float:
        return d * math.log(original_max / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    th = thetas(d, base)
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return th / factor * ramp + th * (1.0 - ramp), attention_factor


def llama3_thetas(
    d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0
) -> np.ndarray:
    """Llama 3's rates: slow pairs interpolated, fast pairs kept, smooth between (notebook 10_long_context).

    wavelength w_i = 2 pi / theta_i
    w_i > original_max / low_freq_factor:   theta'_i = theta_i / factor
    w_i < original_max / high_freq_factor:  theta'_i = theta_i
    otherwise, s = (original_max / w_i - low_freq_factor) / (high_freq_factor - low_freq_factor):
        theta'_i = (1 - s) theta_i / factor + s theta_i
    As Hugging Face rope_type="llama3".
    # shape: (d // 2,)
    """
    th = thetas(d, base)
    factor = _factor(factor)
    original_max = validate.count(original_max, "original_max")
    low = _positive(low_freq_factor, "low_freq_factor")
    high = _positive(high_freq_factor, "high_freq_factor")
    if high <= low:
        raise ValueError(
            f"high_freq_factor must be greater than low_freq_factor={low_freq_factor!r}, "
            f"got {high_freq_factor!r}"
        )
    w = 2 * np.pi / th
    smooth = (original_max / w - low) / (high - low)
    medium = th * ((1.0 - smooth) / factor + smooth)
    return np.where(
        w > original_max / low, th / factor, np.where(w < original_max / high, th, medium)
    )


def unseen_angle_pairs(train_thetas, new_thetas, train_len, new_len) -> int:
    """How many pairs meet angles the training never came near (notebook 10_long_context).

    Pair i counts when it never finished a turn in training, (train_len - 1) theta_i < 2 pi,
    and at new_len goes past the angle of the first unseen position:
        (new_len - 1) theta'_i > train_len theta_i (1 + 1e-12)
    (d = 128, base 1e4, train_len 4096, new_len = factor * 4096 for factors 2 .. 32:
    plain RoPE 18, NTK-aware 17, position interpolation, YaRN and Llama 3 0)
    """
    old = validate.matrix(train_thetas, "train_thetas", ndim=1)
    new = validate.matrix(new_thetas, "new_thetas", ndim=1)
    if new.shape != old.shape:
        raise ValueError(
            f"new_thetas must have the length of train_thetas ({old.shape[0]}), got shape {new.shape}"
        )
    train_len = validate.count(train_len, "train_len")
    new_len = validate.count(new_len, "new_len")
    slow = (train_len - 1) * old < 2 * np.pi
    beyond = (new_len - 1) * new > train_len * old * (1 + 1e-12)
    return int(np.count_nonzero(slow & beyond))
