"""The data of the classroom self-check (``helpers.classcheck``), made from the checks.

For every graded function of every notebook: its fixed cases only (the numbers the
notebook shows, the edge cases, bad input; never a random case), each with the
reference's output or the ``ValueError`` message the reference gives, and the output of
each catalogued mistake on that case where it differs from the reference's (a value,
never the wrong implementation). Labels and sections are written in every language of
the course. ``learner_build`` writes it into the learner wheel as
``helpers/classcheck.json``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from helpers import ASSIGNMENTS
from helpers.i18n import LANGUAGES, speaking
from helpers.teacher import checks
from helpers.teacher.codec import encode
from helpers.teacher.verdict import section_text

FORMAT = 1


def _per_language(make) -> dict[str, str]:
    out = {}
    for lang in LANGUAGES:
        with speaking(lang):
            out[lang] = make()
    return out


def _mistake_outputs(check, case, want) -> list[dict]:
    """The catalogued mistakes' outputs on ``case`` that differ from the reference's."""
    found = []
    for mistake in check.mistakes:
        if mistake.detect != "output":
            continue
        for impl in (mistake.impl, *mistake.variants):
            if impl is None:
                continue
            try:
                with np.errstate(all="ignore"):
                    wrong = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
                checks.normalize(check.kind, wrong)
            except (ValueError, TypeError, ArithmeticError, IndexError):
                continue
            if want is not None and checks.agree(check.kind, wrong, want)[0]:
                continue
            found.append({"name": mistake.name, "value": encode(wrong), "atol": mistake.atol})
    return found


def function_entry(check) -> dict:
    """What the classroom self-check knows of one graded function."""
    entry = {
        "name": check.name,
        "kind": check.kind,
        "check_mutation": check.check_mutation,
        "section": _per_language(lambda: section_text(check.section) if check.section else ""),
        "mistakes": [
            {"name": m.name, "message": m.message} for m in check.mistakes if m.detect == "output"
        ],
        "cases": [],
    }
    if check.check_mutation:
        m = checks.mutation_mistake(check)
        catalogued = any(x.detect == "mutation" for x in check.mistakes)
        entry["mutation"] = {"name": m.name, "message": m.message, "catalogued": catalogued}
    if check.kind == "files":
        return entry  # judged on the files it writes: the teacher's grading only
    labels = {lang: [c.label for c in cases] for lang, cases in _fixed(check).items()}
    for index, case in enumerate(check.fixed()):
        out: dict = {
            "args": encode(list(case.args)),
            "kwargs": encode(dict(case.kwargs)),
            "label": {lang: labels[lang][index] for lang in LANGUAGES},
            "part": case.part or "shown",
        }
        try:
            want = checks.expected(check, case)
        except ValueError as exc:
            out["raises"] = str(exc)
            want = None
        else:
            out["want"] = encode(want)
        mistakes = _mistake_outputs(check, case, want)
        if mistakes:
            out["mistakes"] = mistakes
        entry["cases"].append(out)
    return entry


def _fixed(check) -> dict[str, list]:
    out = {}
    for lang in LANGUAGES:
        with speaking(lang):
            out[lang] = check.fixed()
    return out


def build(assignments=ASSIGNMENTS) -> dict:
    """The classroom checks of ``assignments``: ``{"format", "notebooks": {id: [...]}}``."""
    return {
        "format": FORMAT,
        "notebooks": {a: [function_entry(c) for c in checks.checks_for(a)] for a in assignments},
    }


def write(path: Path, assignments=ASSIGNMENTS) -> Path:
    """Write the classroom checks to ``path`` (JSON)."""
    path.write_text(json.dumps(build(assignments), ensure_ascii=False) + "\n", encoding="utf-8")
    return path
