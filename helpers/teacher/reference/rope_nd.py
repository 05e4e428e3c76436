"""The reference maths of 11_rope_nd: RoPE beyond one dimension.

A 2D position is ``(row, col) = (y, x)``; pair ``j`` of a vector is dimensions ``(2j, 2j+1)``
and turns by ``freqs_x[j] * col + freqs_y[j] * row``: Pixtral's axial layout, RoPE-Mixed's
directions (Heo et al. 2024) and Qwen2-VL's M-RoPE, whose three ids slice one spectrum.
Hugging Face rotates the half-split layout; every comparison with it goes through
``interleaved_to_half`` (06_rope). Conventions of the whole reference:
``helpers.teacher.reference``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from helpers import validate
from helpers.teacher.reference.rope import _rotate_pairs, thetas

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "axial_freqs",
    "mixed_freqs",
    "patch_positions",
    "rope_2d_angles",
    "apply_rope_2d",
    "interaction_term",
    "mrope_position_ids",
    "mrope_angles",
    "mrope_interleaved_angles",
]

ASSIGNMENT = "11_rope_nd"

# Qwen2-VL's setting: head_dim 128, base 1e6, its sections of the 64 pairs.
QWEN2_VL_SECTION = (16, 24, 24)


def _dim4(d) -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d <= 0 or d % 4:
        raise ValueError(f"d must be a positive multiple of 4 (d/4 pairs per axis), got {d!r}")
    return int(d)


def _whole(value, name: str) -> int:
    """A whole number of any sign (4 and 4.0 are accepted, 4.5 is not)."""
    arr = validate.positions(value, name, allow_negative=True)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single whole number, got {value!r}")
    return int(arr)


def _freqs(freqs_x, freqs_y) -> tuple[np.ndarray, np.ndarray]:
    fx = validate.matrix(freqs_x, "freqs_x")
    fy = validate.matrix(freqs_y, "freqs_y")
    if fx.ndim != 1 or fy.ndim != 1 or fx.shape != fy.shape or fx.size == 0:
        raise ValueError(
            "freqs_x and freqs_y must be 1-D arrays of one length d/2 >= 1, "
            f"got shapes {fx.shape} and {fy.shape}"
        )
    if not (np.all(np.isfinite(fx)) and np.all(np.isfinite(fy))):
        raise ValueError("freqs_x and freqs_y must be finite numbers")
    return fx, fy


def _positions_2d(positions, name: str = "positions") -> np.ndarray:
    pos = validate.positions(positions, name)
    if pos.ndim == 0 or pos.shape[-1] != 2:
        raise ValueError(
            f"{name} must have a last axis of 2 (row, col), got shape {np.shape(positions)}"
        )
    return pos


def axial_freqs(d, base=10000.0) -> tuple[np.ndarray, np.ndarray]:
    """Axial 2D RoPE as Pixtral lays it out (notebook 11_rope_nd): (freqs_x, freqs_y).

    With theta = thetas(d, base) (theta_i = base ** (-2 i / d)):
        freqs_y[:d/4] = theta[0::2]   the height block: the first d/4 pairs turn with the row
        freqs_x[d/4:] = theta[1::2]   the width block: the last d/4 pairs turn with the column
    and 0 elsewhere, so each axis spans fast to slow.  (d = 8, base 1e4:
    freqs_x = [0, 0, 0.1, 0.001], freqs_y = [1, 0.01, 0, 0])
    # shapes: (d // 2,), (d // 2,)
    """
    d = _dim4(d)
    th = thetas(d, base)
    q = d // 4
    fx = np.zeros(d // 2)
    fy = np.zeros(d // 2)
    fy[:q] = th[0::2]
    fx[q:] = th[1::2]
    return fx, fy


def mixed_freqs(d, base=10.0, phi=0.0) -> tuple[np.ndarray, np.ndarray]:
    """RoPE-Mixed's starting frequencies of one head (notebook 11_rope_nd, Heo et al. 2024).

    mag_j = base ** (-4 j / d), j = 0 .. d/4 - 1
        freqs_x = concat(mag cos(phi), -mag sin(phi))
        freqs_y = concat(mag sin(phi),  mag cos(phi))
    two orthogonal directions turned by phi; phi = 0 is the paper's RoPE-Axial (the first
    d/4 pairs follow the column, the last d/4 the row).
    # shapes: (d // 2,), (d // 2,)
    """
    d = _dim4(d)
    base = validate.base(base)
    if isinstance(phi, bool) or not isinstance(phi, numbers.Real) or not math.isfinite(phi):
        raise ValueError(f"phi must be a finite number (an angle in radians), got {phi!r}")
    j = np.arange(d // 4, dtype=np.float64)
    mag = np.exp(-(4.0 * j / d) * math.log(base))
    c, s = math.cos(phi), math.sin(phi)
    return np.concatenate([mag * c, -mag * s]), np.concatenate([mag * s, mag * c])


def patch_positions(grid_h, grid_w) -> np.ndarray:
    """The (row, col) of every patch of a grid_h x grid_w image, row-major (notebook 11_rope_nd).

    patch r * grid_w + c is (r, c), as Pixtral's position ids (meshgrid, indexing="ij").
    # shape: (grid_h * grid_w, 2), int64
    """
    h = validate.count(grid_h, "grid_h")
    w = validate.count(grid_w, "grid_w")
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([rows.ravel(), cols.ravel()], axis=-1).astype(np.int64)


def rope_2d_angles(positions, freqs_x, freqs_y) -> np.ndarray:
    """The angle of every pair at every 2D position (notebook 11_rope_nd).

    angle[..., j] = freqs_x[j] * col + freqs_y[j] * row,  positions[..., :] = (row, col)
    # shapes: positions (..., 2), freqs (d/2,) -> positions.shape[:-1] + (d/2,)
    """
    pos = _positions_2d(positions)
    fx, fy = _freqs(freqs_x, freqs_y)
    return pos[..., 1:2] * fx + pos[..., 0:1] * fy


def apply_rope_2d(vec, positions, freqs_x, freqs_y) -> np.ndarray:
    """2D RoPE, interleaved pairs (notebook 11_rope_nd): pair j turned by its 2D angle.

    a = rope_2d_angles(positions, freqs_x, freqs_y)[..., j]
        out[2j]   = vec[2j] cos(a) - vec[2j+1] sin(a)
        out[2j+1] = vec[2j] sin(a) + vec[2j+1] cos(a)
    # shapes: vec (..., d), positions vec.shape[:-1] + (2,) -> (..., d); a new array
    """
    x, d = validate.vector_dim(vec, "vec")
    fx, fy = _freqs(freqs_x, freqs_y)
    if d != 2 * fx.size:
        raise ValueError(f"vec's last dimension must be 2 * len(freqs_x) = {2 * fx.size}, got {d}")
    pos = _positions_2d(positions)
    if pos.shape != x.shape[:-1] + (2,):
        raise ValueError(
            f"positions must have shape vec.shape[:-1] + (2,) = {x.shape[:-1] + (2,)}, "
            f"got {pos.shape}"
        )
    angles = pos[..., 1:2] * fx + pos[..., 0:1] * fy
    return _rotate_pairs(x, slice(0, None, 2), slice(1, None, 2), angles)


def interaction_term(q, k, dx, dy, freqs_x, freqs_y) -> np.ndarray:
    """Per pair, the part of the score that belongs to neither axis alone (notebook 11_rope_nd).

    s(a, b) = pair j's term of dot(R(y0 + b, x0 + a) q, R(y0, x0) k)
            = (q0 k0 + q1 k1) cos(phi) + (q0 k1 - q1 k0) sin(phi),  phi = fx_j a + fy_j b
    term_j = s(dx, dy) - s(dx, 0) - s(0, dy) + s(0, 0)
    0 in every pair when each pair turns with one axis only (axial RoPE).
    # shapes: q, k (d,) -> (d // 2,)
    """
    qv, d = validate.vector_dim(q, "q")
    kv, dk = validate.vector_dim(k, "k")
    if qv.ndim != 1 or kv.ndim != 1 or d != dk:
        raise ValueError(
            f"q and k must be vectors of one even length d, got shapes {qv.shape} and {kv.shape}"
        )
    fx, fy = _freqs(freqs_x, freqs_y)
    if d != 2 * fx.size:
        raise ValueError(f"q and k must have 2 * len(freqs_x) = {2 * fx.size} numbers, got {d}")
    a, b = _whole(dx, "dx"), _whole(dy, "dy")
    q0, q1, k0, k1 = qv[0::2], qv[1::2], kv[0::2], kv[1::2]
    same, cross = q0 * k0 + q1 * k1, q0 * k1 - q1 * k0

    def s(ax: int, by: int) -> np.ndarray:
        phi = fx * ax + fy * by
        return same * np.cos(phi) + cross * np.sin(phi)

    return s(a, b) - s(a, 0) - s(0, b) + s(0, 0)


def _segment(item, m: int) -> tuple[str, object]:
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise ValueError(
            f'each segment must be ("text", n) or ("image", (grid_h, grid_w)), got {item!r}'
        )
    kind, value = item
    if kind == "text":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"a text segment's length must be an integer >= 1, got {value!r}")
        return kind, int(value)
    if kind == "image":
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"an image segment must give (grid_h, grid_w), got {value!r}")
        sides = []
        for side in value:
            if (
                isinstance(side, bool)
                or not isinstance(side, numbers.Integral)
                or side < 1
                or side % m
            ):
                raise ValueError(
                    "an image's grid sides must be positive multiples of spatial_merge_size "
                    f"{m}, got {tuple(value)!r}"
                )
            sides.append(int(side))
        return kind, tuple(sides)
    raise ValueError(f'a segment\'s kind must be "text" or "image", got {kind!r}')


def mrope_position_ids(segments, spatial_merge_size=2) -> np.ndarray:
    """Qwen2-VL's M-RoPE position ids (t, h, w) of text and images (notebook 11_rope_nd).

    A running start s begins at 0.
      ("text", n):                 s + arange(n) in all three rows; s += n
      ("image", (grid_h, grid_w)): h = grid_h // m by w = grid_w // m merged tokens, row-major,
                                   (s, s + row, s + col); s += max(h, w)
    # shape: (3, N), int64
    """
    m = validate.count(spatial_merge_size, "spatial_merge_size")
    if not isinstance(segments, (list, tuple)) or len(segments) == 0:
        raise ValueError(f"segments must be a non-empty list of segments, got {segments!r}")
    parts = []
    s = 0
    for item in segments:
        kind, value = _segment(item, m)
        if kind == "text":
            parts.append(np.broadcast_to(s + np.arange(value, dtype=np.int64), (3, value)))
            s += value
        else:
            h, w = value[0] // m, value[1] // m
            rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
            parts.append(
                np.stack([np.full(h * w, s), s + rows.ravel(), s + cols.ravel()]).astype(np.int64)
            )
            s += max(h, w)
    return np.concatenate(parts, axis=1).astype(np.int64)


def mrope_angles(position_ids, d, base, mrope_section) -> np.ndarray:
    """M-RoPE's angle of every pair of every token (notebook 11_rope_nd).

    pair j of section s (t for the first mrope_section[0] pairs, then h, then w):
        angle[n, j] = position_ids[s, n] * theta_j,   theta = thetas(d, base)
    the sections slice one spectrum; three equal rows give outer(p, theta) exactly.
    # shapes: position_ids (3, N) -> (N, d // 2)
    """
    ids = validate.positions(position_ids, "position_ids")
    if ids.ndim != 2 or ids.shape[0] != 3:
        raise ValueError(
            f"position_ids must have shape (3, N) (temporal, height, width), got {ids.shape}"
        )
    d = validate.dim(d)
    th = thetas(d, base)
    sec = list(mrope_section) if isinstance(mrope_section, (list, tuple, np.ndarray)) else None
    if (
        sec is None
        or len(sec) != 3
        or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0 for v in sec)
        or sum(sec) != d // 2
    ):
        raise ValueError(
            f"mrope_section must be 3 integers >= 0 adding up to d/2 = {d // 2}, "
            f"got {mrope_section!r}"
        )
    which = np.repeat(np.arange(3), [int(v) for v in sec])
    return ids[which, :].T * th


def _mrope_ids_and_sections(position_ids, d, base, mrope_section):
    """The checks mrope_angles makes: ids (3, N) >= 0, rates, sections of d/2."""
    mrope_angles(position_ids, d, base, mrope_section)
    ids = validate.positions(position_ids, "position_ids")
    return ids, thetas(int(d), base), [int(v) for v in mrope_section]


def mrope_interleaved_angles(position_ids, d, base, mrope_section) -> np.ndarray:
    """Qwen3-VL's interleaved M-RoPE: the angle of every pair of every token (11_rope_nd).

    pair j turns with the height id when j % 3 == 1 and j < 3 * s_h, with the width id when
    j % 3 == 2 and j < 3 * s_w, with the temporal id otherwise, at theta_j = thetas(d, base)[j]
    (transformers' ``Qwen3VLTextRotaryEmbedding``): every axis gets fast and slow rates.
    ``mrope_section = [s_t, s_h, s_w]`` adds up to d/2, with 3 * s_h <= d/2 + 1 and
    3 * s_w <= d/2 (the height's pairs 1, 4, ... and the width's 2, 5, ... stay below d/2).
    # shapes: position_ids (3, N) -> (N, d // 2)
    """
    ids, th, (_, s_h, s_w) = _mrope_ids_and_sections(position_ids, d, base, mrope_section)
    return ids[interleaved_axes(th.size, s_h, s_w, mrope_section, "d/2"), :].T * th


def interleaved_axes(half: int, s_h: int, s_w: int, mrope_section, what: str) -> np.ndarray:
    """The axis (0 t, 1 h, 2 w) of each of ``half`` pairs in the interleave t, h, w, t, h, w, ...

    pair j: 1 when j % 3 == 1 and j < 3 s_h, 2 when j % 3 == 2 and j < 3 s_w, else 0.
    The height's last pair is 3 s_h - 2 and the width's 3 s_w - 1: both must be < half, so
    3 s_h <= half + 1 and 3 s_w <= half (transformers' slice(1, 3 s_h, 3) and
    slice(2, 3 s_w, 3) would otherwise cut the section short, silently).
    # shape: (half,), int64
    """
    if 3 * s_h > half + 1 or 3 * s_w > half:
        raise ValueError(
            f"mrope_section {list(mrope_section)!r}: the height's s_h pairs end at pair "
            f"3 * s_h - 2 and the width's s_w at 3 * s_w - 1, which must stay below "
            f"{what} = {half} (3 * s_h <= {half + 1}, 3 * s_w <= {half})"
        )
    j = np.arange(half)
    which = np.zeros(half, dtype=np.int64)  # the temporal id unless taken below
    which[(j % 3 == 1) & (j < 3 * s_h)] = 1
    which[(j % 3 == 2) & (j < 3 * s_w)] = 2
    return which
