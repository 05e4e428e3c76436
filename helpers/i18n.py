"""The course's languages: which one a notebook speaks, and the grader's message catalogue.

Every notebook exists in English (``06_rope``) and in Korean (``06_rope_ko``): the Korean
one is generated from the English source and its translation file
(``helpers.teacher.translate``). The learner's language is set by the notebook's first
cell (``helpers.start(lang="ko")``) and, while nbgrader grades, by the assignment id.

Everything the grader and the explorers say goes through ``tr``::

    tr("{name} is wrong on {label}: {detail}", name=name, label=label, detail=detail)

The English text is the key; the catalogue (``helpers/messages/*.yaml``, one entry per
message with its ``en`` and ``ko`` text) gives the other languages. A message missing
from the catalogue raises ``MissingTranslation``: the tests look up every message in
every language, so a missing one fails a test instead of reaching a learner in English.
"""

from __future__ import annotations

import contextlib
import contextvars
import string
from functools import lru_cache
from pathlib import Path

LANGUAGES = {"en": "English", "ko": "한국어"}
DEFAULT = "en"
CATALOGUE = Path(__file__).with_name("messages")

# The notebook's language (a plain global: IPython may run each cell in a copied context),
# and an override for one block of work (``speaking``), which wins while it is set.
_notebook = {"lang": DEFAULT}
_override: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pe_course_lang", default=None
)


class MissingTranslation(KeyError):
    """A message without its text in the language asked for (a test catches every one)."""


def check_language(lang: str) -> str:
    """``lang`` itself when the course speaks it, else a ValueError listing the languages."""
    if lang not in LANGUAGES:
        known = ", ".join(f"{code} ({name})" for code, name in LANGUAGES.items())
        raise ValueError(f"unknown language {lang!r}: the course speaks {known}")
    return lang


def language() -> str:
    """The language messages are given in now (``"en"`` unless set)."""
    return _override.get() or _notebook["lang"]


def set_language(lang: str) -> None:
    """Speak ``lang`` from now on (the notebook's first cell does it)."""
    _notebook["lang"] = check_language(lang)


@contextlib.contextmanager
def speaking(lang: str | None):
    """Speak ``lang`` inside the block (``None``: keep the current language)."""
    if lang is None:
        yield
        return
    token = _override.set(check_language(lang))
    try:
        yield
    finally:
        _override.reset(token)


def split_assignment(assignment: str) -> tuple[str, str]:
    """``"06_rope_ko"`` -> ``("06_rope", "ko")``; ``"06_rope"`` -> ``("06_rope", "en")``."""
    base, _, suffix = assignment.rpartition("_")
    if base and suffix in LANGUAGES and suffix != DEFAULT:
        return base, suffix
    return assignment, DEFAULT


def assignment_id(base: str, lang: str) -> str:
    """The assignment id of notebook ``base`` in ``lang``: ``06_rope`` or ``06_rope_ko``."""
    return base if check_language(lang) == DEFAULT else f"{base}_{lang}"


@lru_cache(maxsize=1)
def catalogue() -> dict[str, dict[str, str]]:
    """English text -> {language: text}, from every ``helpers/messages/*.yaml``."""
    import yaml

    table: dict[str, dict[str, str]] = {}
    for path in sorted(CATALOGUE.glob("*.yaml")):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for entry in entries:
            en = entry["en"]
            if en in table and table[en] != entry:
                raise ValueError(f"{path.name}: {en!r} is in the catalogue twice, differently")
            table[en] = dict(entry)
    return table


def fields_of(template: str) -> set[str]:
    """The names of the ``{fields}`` a message template fills in."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def tr(message: str, /, lang: str | None = None, **fields) -> str:
    """``message`` (English, a ``str.format`` template when ``fields`` are given) in ``lang``
    (default: the current language), with its fields filled in."""
    lang = lang or language()
    text = message
    if lang != DEFAULT:
        entry = catalogue().get(message)
        if entry is None or not entry.get(lang):
            raise MissingTranslation(
                f"no {LANGUAGES.get(lang, lang)} text for the message {message!r}"
            )
        text = entry[lang]
    return text.format(**fields) if fields else text
