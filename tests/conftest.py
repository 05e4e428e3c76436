"""Fixtures shared by the whole suite.

The suite is the package ``tests``: test modules import its kit as ``from tests import
classroom_kit``, ``from tests import rehearsal`` (a class rehearsed from the course's own
solutions), ``from tests.cells import cell`` (the one builder of nbgrader cells) and
``from tests.fixtures import grading_course`` (the grader's own small course).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def learner_session(monkeypatch):
    """Every test starts as a learner's session would: outside nbgrader.

    nbgrader sets ``NBGRADER_EXECUTION`` while it validates or autogrades, and then the
    explorers draw nothing and ``grade`` defers to the isolated grader; a test that wants
    that sets it itself.
    """
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository: the course root."""
    return REPO
