"""01_order agrees with itself, in both languages.

Its written question asks about the sentence pair its section 4 measures ("the dog bit the
boy" / "the boy bit the dog"), not the Korean pair that section 4 says does not show the
point; and what its self-check says (the cases' labels, the mistakes' messages) names only
functions that 01 defines.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from helpers.i18n import speaking
from helpers.teacher import checks as C
from helpers.teacher.verdict import cases_of
from tests.conftest import REPO


@pytest.mark.parametrize("nb_id", ["01_order", "01_order_ko"])
@pytest.mark.parametrize("folder", ["source", "notebooks"])
def test_the_written_question_uses_section_4_s_pair(folder, nb_id):
    nb = nbformat.read(REPO / folder / nb_id / f"{nb_id}.ipynb", as_version=4)
    cells = {c.get("id"): c.source for c in nb.cells}
    question, section = cells["written-question"], cells["rice-intro"]
    for words in ("the dog bit the boy", "the boy bit the dog"):
        assert words in question and words in section, (words, question)
    assert "rice" not in question and "밥" not in question, question


def _defined_in(nb_id: str) -> set[str]:
    nb = nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    return set(re.findall(r"^def (\w+)\(", code, flags=re.MULTILINE))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_self_check_of_01_names_only_functions_01_defines(lang):
    defined = _defined_in("01_order")
    assert "preview_pe" in defined and "sinusoidal_pe" not in defined
    said = []
    with speaking(lang):
        for check in C.checks_for("01_order"):
            for seed in (0, 1):
                said += [c.label for c in cases_of(check, seed)]
            for mistake in check.mistakes:
                said += [mistake.message]
    called = {name for text in said for name in re.findall(r"\b([a-z_][a-z0-9_]*)\(", text)}
    other = {n for n in called if "_" in n and n not in defined}
    assert not other, f"01's self-check names functions 01 does not define: {sorted(other)}"
