"""The named mistakes of 11_rope_nd, recognised by what they do to the output.

Each catalogued mistake of COURSE_SPEC.md (section 11_rope_nd) is written here twice, the
way two learners might write it (a vectorised form and a loop, or two different slips with
the same effect), independently of the wrong implementations in
helpers.teacher.checks.rope_nd. Both must be named on the spec's own example and on random
cases where the mistake shows, and a right answer written another way must never be named.
The spec's numbers of each mistake are checked against both.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from helpers import reference as ref
from helpers.teacher import checks as C


def named_on(name: str, impl, seeds=(0, 1, 2), mistake: int = 0) -> tuple[list[str], list[str]]:
    """(labels of the cases where ``impl`` was named by its check's mistake number ``mistake``,
    labels where it was wrong and named nothing)."""
    check = C.CHECKS[name]
    named, unnamed = [], []
    for seed in seeds:
        for case in C.cases(check, np.random.default_rng(seed)):
            if case.label.startswith("bad input:"):
                continue
            got = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            want = C.expected(check, case)
            if C.agree(check.kind, C.normalize(check.kind, got), want)[0]:
                continue
            found = C.diagnose(check, case, got)
            (named if found is not None else unnamed).append(case.label)
            if found is not None:
                assert found is check.mistakes[mistake], (case.label, found)
    return named, unnamed


# --------------------------------------------------------------------------- axial_freqs


def axial_halves_sliced(d, base=10000.0):
    th = base ** (-2.0 * np.arange(d // 2) / d)
    half = d // 4
    return (
        np.concatenate([np.zeros(half), th[half:]]),
        np.concatenate([th[:half], np.zeros(half)]),
    )


def axial_halves_loop(d, base=10000.0):
    fx, fy = [0.0] * (d // 2), [0.0] * (d // 2)
    for i in range(d // 2):
        rate = math.exp(-2.0 * i / d * math.log(base))
        if i < d // 4:
            fy[i] = rate
        else:
            fx[i] = rate
    return fx, fy


@pytest.mark.parametrize("impl", [axial_halves_sliced, axial_halves_loop])
def test_axial_halves_named_however_written(impl):
    fx, fy = impl(8, 1e4)
    np.testing.assert_allclose(fy[:2], [1, 0.1])  # the spec: height [1, 0.1], width [0.01, 0.001]
    np.testing.assert_allclose(fx[2:], [0.01, 0.001])
    named, unnamed = named_on("axial_freqs", impl)
    assert "axial_freqs(8, 1e4)" in named and not unnamed


# --------------------------------------------------------------------------- patch_positions


def patches_xy_meshgrid(grid_h, grid_w):
    rows, cols = np.meshgrid(np.arange(grid_h), np.arange(grid_w))  # indexing="xy"
    return np.stack([rows.ravel(), cols.ravel()], axis=-1)


def patches_loop_columns_first(grid_h, grid_w):
    return [[r, c] for c in range(grid_w) for r in range(grid_h)]


@pytest.mark.parametrize("impl", [patches_xy_meshgrid, patches_loop_columns_first])
def test_column_major_patches_named_however_written(impl):
    assert np.asarray(impl(2, 3))[1].tolist() == [1, 0]  # the spec: patch 1 is (1, 0)
    assert np.array_equal(impl(1, 5), ref.patch_positions(1, 5))  # invisible when a side is 1
    named, unnamed = named_on("patch_positions", impl)
    assert "patch_positions(2, 3)" in named and not unnamed


# --------------------------------------------------------------------------- rope_2d_angles


def angles_reversed_positions(positions, freqs_x, freqs_y):
    pos = np.asarray(positions, dtype=float)[..., ::-1]  # (row, col) read as (col, row)
    return pos[..., 1:2] * np.asarray(freqs_x) + pos[..., 0:1] * np.asarray(freqs_y)


def angles_einsum_swapped(positions, freqs_x, freqs_y):
    pos = np.asarray(positions, dtype=float)
    freqs = np.stack([np.asarray(freqs_x, float), np.asarray(freqs_y, float)])  # rows: x, y
    return np.einsum("...a,aj->...j", pos, freqs)  # row with freqs_x, col with freqs_y


@pytest.mark.parametrize("impl", [angles_reversed_positions, angles_einsum_swapped])
def test_swapped_row_and_column_named_however_written(impl):
    got = impl(ref.patch_positions(2, 3), *ref.axial_freqs(8, 1e4))
    np.testing.assert_allclose(got[1], [1, 0.01, 0, 0])  # the spec: patch (0, 1) turns the height
    named, unnamed = named_on("rope_2d_angles", impl)
    assert any("patch_positions(2, 3)" in n for n in named) and not unnamed


# --------------------------------------------------------------------------- mrope_position_ids


def ids_count_tokens(segments, spatial_merge_size=2):
    rows, s = [[], [], []], 0
    for kind, value in segments:
        if kind == "text":
            for t in range(value):
                for r in rows:
                    r.append(s + t)
            s += value
        else:
            h, w = value[0] // spatial_merge_size, value[1] // spatial_merge_size
            for i in range(h):
                for j in range(w):
                    rows[0].append(s)
                    rows[1].append(s + i)
                    rows[2].append(s + j)
            s += h * w
    return np.array(rows)


def ids_next_after_last_token(segments, spatial_merge_size=2):
    """Numbers the text after an image by token index, as if every token were text."""
    out, s = [], 0
    for kind, value in segments:
        if kind == "text":
            out.append(np.tile(np.arange(s, s + value), (3, 1)))
            s += value
        else:
            m = spatial_merge_size
            h, w = value[0] // m, value[1] // m
            grid = np.indices((h, w)).reshape(2, -1)
            out.append(np.vstack([np.full(h * w, s), s + grid]))
            s = s + grid.shape[1]
    return np.hstack(out)


@pytest.mark.parametrize("impl", [ids_count_tokens, ids_next_after_last_token])
def test_token_count_start_named_however_written(impl):
    got = impl([("text", 2), ("image", (4, 6)), ("text", 2)], 2)
    assert got[0, -2:].tolist() == [8, 9]  # the spec: ends [8, 9] instead of [5, 6]
    named, unnamed = named_on("mrope_position_ids", impl)
    assert named and not unnamed


# --------------------------------------------------------------------------- mrope_angles


def angles_restart_per_section(position_ids, d, base, mrope_section):
    ids = np.asarray(position_ids, dtype=float)
    cols = []
    for s, size in enumerate(mrope_section):
        for i in range(size):  # the rates of a head of dimension 2 * size
            cols.append(ids[s] * base ** (-2.0 * i / (2 * size)))
    return np.stack(cols, axis=-1)


def angles_restart_at_one(position_ids, d, base, mrope_section):
    ids = np.asarray(position_ids, dtype=float)
    th = base ** (-2.0 * np.arange(d // 2) / d)
    local = np.concatenate([np.arange(n) for n in mrope_section])  # index within the section
    which = np.repeat([0, 1, 2], mrope_section)
    return ids[which].T * th[local]


@pytest.mark.parametrize("impl", [angles_restart_per_section, angles_restart_at_one])
def test_restarted_rates_named_however_written(impl):
    p = np.arange(3)
    text = impl(np.stack([p, p, p]), 8, 1e4, [2, 1, 1])
    assert text[1, 0] == 1 and text[1, 2] == 1  # each section starts again at rate 1.0
    if impl is angles_restart_per_section:  # the spec's numbers: [1, 0.01, 1, 1]
        np.testing.assert_allclose(text[1], [1, 0.01, 1, 1])
    named, unnamed = named_on("mrope_angles", impl)
    assert any("text only" in n for n in named) and not unnamed


def angles_restart_spread(position_ids, d, base, mrope_section):
    """Each section starts again at rate 1.0 and spreads its rates over the whole spectrum: a
    third way to restart, named by what it does (the first pair of a section turns at 1.0),
    since neither wrong implementation of the checks module gives these numbers."""
    ids = np.asarray(position_ids, dtype=float)
    th = base ** (-2.0 * np.arange(d // 2) / d)
    blocks = [
        ids[s][:, None] * th[np.linspace(0, d // 2 - 1, n).astype(int)]
        for s, n in enumerate(mrope_section)
        if n > 0
    ]
    return np.concatenate(blocks, axis=1)


def test_a_third_restart_is_named_by_its_property():
    named, unnamed = named_on("mrope_angles", angles_restart_spread)
    assert any("text only" in n for n in named) and not unnamed
    check = C.CHECKS["mrope_angles"]
    case = check.fixed()[0]
    wrong = angles_restart_spread(*case.args)
    impls = (check.mistakes[0].impl, *check.mistakes[0].variants)
    assert not any(C.agree("array", wrong, impl(*case.args))[0] for impl in impls)


# --------------------------------------------------------------------------- mrope_interleaved_angles

EXAMPLE_IDS = [
    [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
    [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
    [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
]


def interleaved_in_blocks_repeat(position_ids, d, base, mrope_section):
    """Qwen2-VL's blocks: t for the first s_t pairs, then h, then w."""
    ids = np.asarray(position_ids, dtype=float)
    th = base ** (-2.0 * np.arange(d // 2) / d)
    return ids[np.repeat([0, 1, 2], mrope_section)].T * th


def interleaved_in_blocks_loop(position_ids, d, base, mrope_section):
    ids = np.asarray(position_ids, dtype=float)
    out = np.zeros((ids.shape[1], d // 2))
    j = 0
    for axis, size in enumerate(mrope_section):
        for _ in range(size):
            out[:, j] = ids[axis] * math.exp(-2.0 * j / d * math.log(base))
            j += 1
    return out


def interleaved_height_first_mask(position_ids, d, base, mrope_section):
    """h on j % 3 == 0, w on 1, t on 2 (the pattern h, w, t)."""
    ids = np.asarray(position_ids, dtype=float)
    j = np.arange(d // 2)
    axis = np.where((j % 3 == 0) & (j < 3 * mrope_section[1]), 1, 0)
    axis = np.where((j % 3 == 1) & (j < 3 * mrope_section[2]), 2, axis)
    return ids[axis].T * base ** (-2.0 * j / d)


def interleaved_height_first_loop(position_ids, d, base, mrope_section):
    """The pattern h, t, w: the height on pair 0 of each group of three."""
    ids = np.asarray(position_ids, dtype=float)
    out = np.empty((ids.shape[1], d // 2))
    for j in range(d // 2):
        axis = 0
        if j % 3 == 0 and j < 3 * mrope_section[1]:
            axis = 1
        elif j % 3 == 2 and j < 3 * mrope_section[2]:
            axis = 2
        out[:, j] = ids[axis] * base ** (-2.0 * j / d)
    return out


@pytest.mark.parametrize("impl", [interleaved_in_blocks_repeat, interleaved_in_blocks_loop])
def test_sections_left_in_blocks_named_however_written(impl):
    got = impl(EXAMPLE_IDS, 8, 1e4, [2, 1, 1])
    np.testing.assert_allclose(got[3], [2, 0.2, 0.02, 0.003])  # the spec: blocks give this
    named, unnamed = named_on("mrope_interleaved_angles", impl, mistake=0)
    assert named and not unnamed


@pytest.mark.parametrize("impl", [interleaved_height_first_mask, interleaved_height_first_loop])
def test_interleave_at_the_wrong_axis_named_however_written(impl):
    got = impl(EXAMPLE_IDS, 8, 1e4, [2, 1, 1])
    assert got[5, 0] == 3.0  # token 5 (t 2, h 3, w 2): pair 0 turns with the height id
    assert not np.allclose(got[5], [2, 0.3, 0.02, 0.002])  # where t turns it in Qwen3-VL
    named, unnamed = named_on("mrope_interleaved_angles", impl, mistake=1)
    assert named and not unnamed


def test_right_interleave_written_as_a_loop_is_never_named():
    def loop(position_ids, d, base, mrope_section):
        ids = np.asarray(position_ids, dtype=float)
        out = np.empty((ids.shape[1], d // 2))
        for j in range(d // 2):
            axis = 0
            if j % 3 == 1 and j < 3 * mrope_section[1]:
                axis = 1
            elif j % 3 == 2 and j < 3 * mrope_section[2]:
                axis = 2
            out[:, j] = ids[axis] * base ** (-2.0 * j / d)
        return out

    check = C.CHECKS["mrope_interleaved_angles"]
    for case in C.cases(check, np.random.default_rng(7)):
        if case.label.startswith("bad input:"):
            continue
        got = C.normalize(check.kind, loop(*copy.deepcopy(case.args)))
        assert C.agree(check.kind, got, C.expected(check, case))[0], case.label
        assert C.diagnose(check, case, got) is None


# The two forms of each mistake, for the course-wide test of named mistakes
# (tests/test_checks_mistake_forms.py).
FORMS = {
    ("axial_freqs", "height gets the first half of the rates, width the second"): (
        axial_halves_sliced,
        axial_halves_loop,
    ),
    ("patch_positions", "patches numbered column by column"): (
        patches_xy_meshgrid,
        patches_loop_columns_first,
    ),
    ("rope_2d_angles", "row and column swapped"): (
        angles_reversed_positions,
        angles_einsum_swapped,
    ),
    ("mrope_position_ids", "start moved on by h * w after an image"): (
        ids_count_tokens,
        ids_next_after_last_token,
    ),
    ("mrope_angles", "the rates start again in each section"): (
        angles_restart_per_section,
        angles_restart_at_one,
    ),
    ("mrope_interleaved_angles", "the sections left in blocks"): (
        interleaved_in_blocks_repeat,
        interleaved_in_blocks_loop,
    ),
    ("mrope_interleaved_angles", "the interleave started at the wrong axis"): (
        interleaved_height_first_mask,
        interleaved_height_first_loop,
    ),
}


def test_forms_name_the_catalogued_mistakes():
    for (function, name), forms in FORMS.items():
        assert name in [m.name for m in C.CHECKS[function].mistakes] and len(forms) == 2
    for function in {f for f, _ in FORMS}:
        names = {n for f, n in FORMS if f == function}
        assert names == {m.name for m in C.CHECKS[function].mistakes}


# --------------------------------------------------------------------------- right answers


def right_answers():
    """The reference's answers written another way: none of them is wrong, none named."""

    def axial(d, base=10000.0):
        fx, fy = np.zeros(d // 2), np.zeros(d // 2)
        for j in range(d // 4):
            fy[j] = base ** (-4.0 * j / d)
            fx[d // 4 + j] = base ** (-(4.0 * j + 2) / d)
        return fx, fy

    def patches(grid_h, grid_w):
        return np.array([[i // grid_w, i % grid_w] for i in range(grid_h * grid_w)])

    def angles(positions, freqs_x, freqs_y):
        pos = np.asarray(positions, dtype=float)
        return np.einsum("...a,aj->...j", pos, np.stack([freqs_y, freqs_x]))

    return {"axial_freqs": axial, "patch_positions": patches, "rope_2d_angles": angles}


@pytest.mark.parametrize("name", ["axial_freqs", "patch_positions", "rope_2d_angles"])
def test_right_answers_written_another_way_pass(name):
    impl = right_answers()[name]
    check = C.CHECKS[name]
    for case in C.cases(check, np.random.default_rng(5)):
        if case.label.startswith("bad input:"):
            continue
        got = C.normalize(check.kind, impl(*copy.deepcopy(case.args), **case.kwargs))
        assert C.agree(check.kind, got, C.expected(check, case))[0], case.label
        assert C.diagnose(check, case, got) is None
