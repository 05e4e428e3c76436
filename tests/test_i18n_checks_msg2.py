"""The Korean of the grader's messages of 06_rope .. 11_rope_nd (helpers.teacher.checks:
rope, alibi, offsets, families, long_context, rope_nd) and of their catalogue files.

Every case label built in Korean (fixed cases, random cases of 3 seeds) is found in the
catalogue; every known mistake of these modules has its Korean; write_report's file
details are translated; a wrong implementation judged through the grader in Korean meets
no missing message. Texts declared in another checks module (the clockwise rotation of
rotation.py, the MUTATION of base.py) are that module's to translate.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from helpers import i18n
from helpers.i18n import fields_of, speaking, tr
from helpers.teacher import codec, verdict
from helpers.teacher import reference as ref
from helpers.teacher.checks import CHECKS, base, offsets

MODULES = ("rope", "alibi", "offsets", "families", "long_context", "rope_nd")
CATALOGUE = Path(i18n.__file__).with_name("messages")
HANGUL = re.compile("[\uac00-\ud7a3]")
SEEDS = (0, 1, 2)


def module(name: str):
    return importlib.import_module(f"helpers.teacher.checks.{name}")


def foreign_texts() -> set[str]:
    """Mistake names and messages declared in the other checks modules (translated there)."""
    found = {base.MUTATION.name, base.MUTATION.message}
    here = Path(base.__file__).parent
    for path in here.glob("*.py"):
        if path.stem in MODULES or path.stem in ("__init__", "base", "compare"):
            continue
        for check in getattr(module(path.stem), "CHECKS", ()):
            for mistake in check.mistakes:
                found |= {mistake.name, mistake.message}
    return found


FOREIGN = foreign_texts()


def checks_of(name: str) -> list:
    """The registry's checks of one module (section and points filled in)."""
    return [CHECKS[c.name] for c in module(name).CHECKS]


def own_mistakes(name: str) -> list:
    return [m for check in module(name).CHECKS for m in check.mistakes]


# --------------------------------------------------------------------------- the catalogue files


@pytest.mark.parametrize("name", MODULES)
def test_catalogue_file_entries_have_korean_with_the_same_fields(name):
    entries = yaml.safe_load((CATALOGUE / f"checks_{name}.yaml").read_text(encoding="utf-8"))
    assert entries, name
    for entry in entries:
        assert set(entry) == {"en", "ko"}, entry
        en, ko = entry["en"], entry["ko"]
        # "vec: {shape}" says the rest in its field (words(), translated in base.py)
        assert ko and (HANGUL.search(ko) or fields_of(ko)), f"no Korean for {en!r}"
        assert fields_of(en) == fields_of(ko), en
        assert i18n.catalogue()[en] == entry  # the same English has the same Korean everywhere


# --------------------------------------------------------------------------- case labels


@pytest.mark.parametrize("name", MODULES)
def test_every_case_label_speaks_korean(name):
    for check in module(name).CHECKS:
        with speaking("ko"):  # a label missing from the catalogue raises MissingTranslation
            for seed in SEEDS:
                random = check.random(np.random.default_rng(seed))
                assert all(isinstance(c.label, str) and c.label for c in random), check.name
            korean = [c.label for c in check.fixed()]
        with speaking("en"):
            english = [c.label for c in check.fixed()]
        assert len(korean) == len(english), check.name
        for en, ko in zip(english, korean):
            # pure code ("d=64", "n_heads=8") stays as it is; the rest is Korean
            assert ko == en or HANGUL.search(ko), f"{check.name}: {ko!r}"


# --------------------------------------------------------------------------- known mistakes


@pytest.mark.parametrize("name", MODULES)
def test_every_mistake_has_its_korean(name):
    for mistake in own_mistakes(name):
        for text in (mistake.name, mistake.message):
            if text in FOREIGN:
                continue
            ko = tr(text, lang="ko")
            assert HANGUL.search(ko), text


def _outcome(impl, case) -> verdict.Outcome:
    """What the grader reads back when ``impl`` answers ``case`` (a JSON round trip)."""
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)
    try:
        with np.errstate(all="ignore"):
            value = impl(*args, **kwargs)
    except ValueError as exc:
        return verdict.Outcome(
            error={"type": "ValueError", "message": str(exc), "value_error": True}
        )
    except Exception as exc:  # noqa: BLE001 - a wrong implementation may fail anyhow
        return verdict.Outcome(error={"type": type(exc).__name__, "message": str(exc)})
    mutated = any(
        not np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        for a, b in zip(args, case.args)
    )
    return verdict.outcome_of({"value": codec.encode(value), "mutated": mutated})


MISTAKES = [
    (check.name, mistake)
    for name in MODULES
    for check in module(name).CHECKS
    for mistake in check.mistakes
]


@pytest.mark.parametrize(("fn", "mistake"), MISTAKES, ids=lambda v: getattr(v, "name", v))
def test_a_known_mistake_judged_in_korean(fn, mistake):
    check = CHECKS[fn]
    with speaking("ko"):
        cases = verdict.cases_of(check, 7)
        wants = verdict.expectations(check, cases)
        for impl in (mistake.impl, *mistake.variants):
            outcomes = [_outcome(impl, case) for case in cases]
            result = verdict.judge(check, cases, wants, outcomes, "")
            assert not result.passed, impl.__name__
            assert result.mistake == mistake.name, result.message
            # English until verdict.py translates it (the other branch), then Korean
            entry = i18n.catalogue().get(mistake.message, {})
            said = (mistake.message, entry.get("ko", mistake.message))
            assert any(text in result.message for text in said), result.message


# --------------------------------------------------------------------------- write_report's files


def test_report_file_details_are_korean(tmp_path):
    json_path, md_path = tmp_path / "rope_report.json", tmp_path / "rope_report.md"
    ref.write_report(json_path, md_path)
    json_text, md_text = json_path.read_text(), md_path.read_text()
    wrong = json.loads(json_text)
    wrong["add_spread"] = 1.0
    no_row = "\n".join(line for line in md_text.splitlines() if "turns_first" not in line)
    no_table = "\n".join(line for line in md_text.splitlines() if "---" not in line)
    tries = [
        (json_text, md_text, True),
        ("{not json", md_text, False),
        (json.dumps(wrong), md_text, False),
        (json_text, None, False),
        (json_text, no_table, False),
        (json_text, no_row, False),
    ]
    with speaking("ko"):
        for json_file, md_file, good in tries:
            ok, detail = offsets.check_report_files(json_file, md_file)
            assert ok is good, detail
            assert HANGUL.search(detail), detail
    with speaking("en"):
        assert offsets.check_report_files(json_text, no_row)[1] == (
            "the Markdown table has no row for turns_first"
        )
