"""Translated notebooks, generated from the English source and one translation file each.

The English ``source/<id>/<id>.ipynb`` is the only source. Beside it, ``<id>.<lang>.yaml``
holds, keyed by cell id (never by position):

- for every Markdown cell, its text in ``lang`` (``markdown:``);
- for code cells, the learner-facing strings and comments to replace (``strings:``,
  English -> ``lang``): printed labels, figure titles, assert messages, docstrings;
- for each entry, ``en:``, the fingerprint of the English cell it was translated from.

``build`` makes ``source/<id>_<lang>/<id>_<lang>.ipynb`` from them: the same cells, ids,
grade ids, points, solutions and hidden tests, the code the same up to its strings
(checked on the syntax tree), the first cell calling ``helpers.start(lang=...)`` and the
last one ``self_check("<id>_<lang>")``, the id of the translated assignment (its replay line
then names it). ``problems`` lists what stops a build: a Markdown cell without its
translation, an entry whose English cell changed since (stale), an unknown cell id, a string
that is not in its cell or lies inside a solution or hidden test, a translation that changes
the code, a docstring or assert message a learner reads still in English.

A translator's commands (``python -m helpers.teacher.translate --help``)::

    python -m helpers.teacher.translate skeleton 06_rope --lang ko --write  # TODO entries
    python -m helpers.teacher.translate check --lang ko              # what is missing
    python -m helpers generate                                       # build, then nbgrader
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

from helpers import ASSIGNMENTS
from helpers.i18n import DEFAULT, LANGUAGES, assignment_id, check_language
from helpers.teacher.notebook import _strip_magics

ROOT = Path(__file__).resolve().parents[2]
PROTECTED = (
    ("### BEGIN SOLUTION", "### END SOLUTION"),
    ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
)
START = "helpers.start()"
SELF_CHECK = 'self_check("{assignment}")'
# Text in the translated language must show its script where the English has words.
SCRIPTS = {"ko": re.compile("[\uac00-\ud7a3]")}
_WORD = re.compile(r"[A-Za-z]{4,}")
# Words of English prose in a docstring or an assert message: what is left once formulas,
# code spans, format fields, indexing, identifiers (snake_case, calls, the cell's own names),
# Python's words and names written in capitals inside (RoPE, YaRN) are taken out.
_PROSE_WORD = re.compile(r"\b[A-Za-z][A-Za-z'-]{2,}\b")
_NOT_PROSE = re.compile(r"\{[^{}]*\}|\[[^\]]*\]|\b\w+(?:_\w+)+\b|\b\w+\(")
PROSE_WORDS = 2  # this many English words make a text English
_MATH_OR_CODE = re.compile(
    r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|<[^>]*>|\([^)]*\)\]?|\[[^\]]*\]\(", re.DOTALL
)
GENERATED = "generated from source/{base}/{base}.ipynb and {base}.{lang}.yaml: do not edit"


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of an English cell's source."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def translation_path(base: str, lang: str, root: Path = ROOT) -> Path:
    return root / "source" / base / f"{base}.{lang}.yaml"


def translated_ids(lang: str, root: Path = ROOT) -> list[str]:
    """The notebooks that have a translation file in ``lang``, in course order."""
    return [b for b in ASSIGNMENTS if translation_path(b, lang, root).exists()]


def load(base: str, lang: str, root: Path = ROOT) -> dict[str, dict]:
    """The entries of a translation file, by cell id (``{}`` when there is none)."""
    import yaml

    path = translation_path(base, lang, root)
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    cells = data.get("cells") or {}
    if not isinstance(cells, dict):
        raise ValueError(f"{path.name}: 'cells' must map cell ids to entries")  # noqa: TRY004
    return cells


def english(base: str, root: Path = ROOT) -> nbformat.NotebookNode:
    return nbformat.read(root / "source" / base / f"{base}.ipynb", as_version=4)


# --------------------------------------------------------------------------- checks


def _protected_spans(source: str) -> list[tuple[int, int]]:
    spans = []
    for begin, end in PROTECTED:
        start = source.find(begin)
        while start != -1:
            stop = source.find(end, start)
            stop = len(source) if stop == -1 else stop + len(end)
            spans.append((start, stop))
            start = source.find(begin, stop)
    return spans


def _code_shape(source: str) -> str:
    """The syntax tree of a code cell with every string constant blanked (magics commented
    out, as the grader reads a cell)."""
    tree = ast.parse(_strip_magics(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
        if isinstance(node, ast.JoinedStr):  # an f-string: keep its expressions, not its text
            node.values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    return ast.dump(tree, include_attributes=False)


def _markers(text: str) -> list[str]:
    """The protected markers of a cell, in order (a written answer's grading guide sits
    between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in a Markdown cell)."""
    marks = {m for pair in PROTECTED for m in pair}
    return [ln.strip() for ln in text.splitlines() if ln.strip() in marks]


def _needs_words(text: str) -> bool:
    return bool(_WORD.search(_MATH_OR_CODE.sub(" ", text)))


def _prose_words(text: str, names: set[str]) -> list[str]:
    import builtins
    import keyword

    text = _NOT_PROSE.sub(" ", _MATH_OR_CODE.sub(" ", text))
    return [
        w
        for w in _PROSE_WORD.findall(text)
        if w not in names
        and not hasattr(builtins, w)
        and not keyword.iskeyword(w)
        and not any(ch.isupper() or ch.isdigit() for ch in w[1:])
    ]


def learner_texts(source: str) -> list[tuple[str, str]]:
    """The docstrings and assert messages a learner reads in a code cell (outside solutions
    and hidden tests), as (what, text): the cell's own and its functions' docstrings, and
    the string parts of each assert's message."""
    try:
        tree = ast.parse(_strip_magics(source))
    except SyntaxError:
        return []
    spans = _protected_spans(source)
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))

    def hidden(node) -> bool:
        at = offsets[node.lineno - 1] + node.col_offset
        return any(s <= at < e for s, e in spans)

    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.FunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
        ):
            doc = body[0].value
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str) and not hidden(doc):
                found.append(("docstring", doc.value))
        if isinstance(node, ast.Assert) and node.msg is not None and not hidden(node):
            parts = [
                n.value
                for n in ast.walk(node.msg)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            found.append(("assert message", " ".join(parts)))
    return found


def english_left(source: str, lang: str) -> list[str]:
    """The docstrings and assert messages of a translated code cell still in English: no
    letter of ``lang``'s script and at least ``PROSE_WORDS`` English words."""
    script = SCRIPTS.get(lang)
    if script is None:
        return []
    try:
        tree = ast.parse(_strip_magics(source))
    except SyntaxError:
        return []
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return [
        f"the {what} {text.strip()[:70]!r} is still English"
        for what, text in learner_texts(source)
        if not script.search(text) and len(_prose_words(text, names)) >= PROSE_WORDS
    ]


def replace_strings(source: str, strings: dict[str, str]) -> tuple[str, list[str]]:
    """``source`` with every English string replaced (longest first), and what went wrong."""
    if not strings:
        return source, []
    errors = []
    spans = _protected_spans(source)
    for en in sorted(strings, key=len, reverse=True):
        at = source.find(en)
        if not en or at == -1:
            errors.append(f"the string {en!r} is not in the cell")
            continue
        inside = [s for s in spans if s[0] <= at < s[1]]
        if inside:
            errors.append(f"the string {en!r} is inside a solution or hidden test")
            continue
    if errors:
        return source, errors
    # one pass, so a translation is never translated again
    pattern = re.compile("|".join(re.escape(en) for en in sorted(strings, key=len, reverse=True)))
    return pattern.sub(lambda m: strings[m.group(0)], source), []


def problems(base: str, lang: str, root: Path = ROOT) -> list[str]:
    """Everything that keeps ``base``'s translation into ``lang`` from being built."""
    check_language(lang)
    path = translation_path(base, lang, root)
    if not path.exists():
        return [f"{path.relative_to(root)}: no translation file"]
    try:
        entries = load(base, lang, root)
    except Exception as exc:  # noqa: BLE001  (a YAML error names the line)
        return [f"{path.name}: cannot be read: {exc}"]
    out = []
    cells = {c.get("id"): c for c in english(base, root).cells}
    script = SCRIPTS.get(lang)
    for cid, cell in cells.items():
        entry = entries.get(cid)
        where = f"{path.name}: cell {cid!r}"
        if cell.cell_type == "markdown" and (entry is None or "markdown" not in entry):
            out.append(f"{where} (Markdown) has no translation")
            continue
        if entry is None:
            if cell.cell_type == "code":
                out += [
                    f"{where}: {e} (translate it in 'strings:')"
                    for e in english_left(cell.source, lang)
                ]
            continue
        if entry.get("en") != fingerprint(cell.source):
            out.append(
                f"{where}: the English cell changed since it was translated "
                f"(en: {entry.get('en')}, now {fingerprint(cell.source)}): check the "
                "translation, then run the skeleton command to update 'en'"
            )
        if cell.cell_type == "markdown":
            text = entry.get("markdown")
            if not isinstance(text, str) or not text.strip():
                out.append(f"{where}: the Markdown translation is empty")
            elif _needs_words(cell.source) and (
                text.strip() == cell.source.strip() or (script and not script.search(text))
            ):
                out.append(f"{where}: the Markdown is not translated yet (still the English)")
            elif _markers(text) != _markers(cell.source):
                out.append(
                    f"{where}: the translation has the markers {_markers(text)} where the "
                    f"English cell has {_markers(cell.source)} (a written answer's grading "
                    "guide stays between ### BEGIN SOLUTION and ### END SOLUTION, each on a "
                    "line of its own)"
                )
            if "strings" in entry:
                out.append(f"{where}: a Markdown cell has 'markdown', not 'strings'")
            continue
        if "markdown" in entry:
            out.append(f"{where}: a code cell has 'strings', not 'markdown'")
        strings = entry.get("strings") or {}
        if not isinstance(strings, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in strings.items()
        ):
            out.append(f"{where}: 'strings' must map English text to translated text")
            continue
        new, errors = replace_strings(cell.source, strings)
        out += [f"{where}: {e}" for e in errors]
        if not errors:
            try:
                same = _code_shape(new) == _code_shape(cell.source)
            except SyntaxError as exc:
                out.append(
                    f"{where}: the translated code does not parse ({exc.msg}, line {exc.lineno})"
                )
            else:
                if not same:
                    out.append(f"{where}: the translation changes the code, not only its strings")
            out += [f"{where}: {e} (translate it in 'strings:')" for e in english_left(new, lang)]
    for cid in entries:
        if cid not in cells:
            out.append(f"{path.name}: cell {cid!r} is not in {base}.ipynb")
    return out


# --------------------------------------------------------------------------- build


def build(base: str, lang: str, root: Path = ROOT) -> nbformat.NotebookNode:
    """The notebook ``base`` in ``lang``; ValueError listing the problems when it cannot be built."""
    issues = problems(base, lang, root)
    if issues:
        raise ValueError(f"{base} in {lang}: " + "; ".join(issues))
    entries = load(base, lang, root)
    nb = copy.deepcopy(english(base, root))
    for cell in nb.cells:
        entry = entries.get(cell.get("id"))
        if entry is not None and cell.cell_type == "markdown":
            cell.source = entry["markdown"]
        elif entry is not None:
            cell.source, _ = replace_strings(cell.source, entry.get("strings") or {})
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id == "imports":
            if cell.source.count(START) != 1:
                raise ValueError(f"{base}: the imports cell must call {START} once")
            cell.source = cell.source.replace(START, f'helpers.start(lang="{lang}")')
        if cell.cell_type == "code" and grade_id == "self_check":
            english_call = SELF_CHECK.format(assignment=base)
            if cell.source.count(english_call) != 1:
                raise ValueError(f"{base}: the self-check cell must call {english_call} once")
            cell.source = cell.source.replace(
                english_call, SELF_CHECK.format(assignment=assignment_id(base, lang))
            )
    nb.metadata["pe_course"] = {
        "language": lang,
        "generated": GENERATED.format(base=base, lang=lang),
    }
    return nb


def output_path(base: str, lang: str, root: Path = ROOT) -> Path:
    aid = assignment_id(base, lang)
    return root / "source" / aid / f"{aid}.ipynb"


def dumps(nb: nbformat.NotebookNode) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def write(base: str, lang: str, root: Path = ROOT) -> Path:
    """Build ``base`` in ``lang`` into ``source/<id>_<lang>/`` (nbgrader then releases it)."""
    from helpers.teacher.files import write_text

    return write_text(output_path(base, lang, root), dumps(build(base, lang, root)))


# --------------------------------------------------------------------------- skeleton


def _block(text: str, indent: str) -> str:
    """A YAML literal block holding ``text`` exactly."""
    if text == "":
        return '""'
    lines = text.split("\n")
    head = (
        "|" + ("2" if lines[0].startswith(" ") else "") + ("-" if not text.endswith("\n") else "")
    )
    if text.endswith("\n"):
        lines = lines[:-1]
        if text.endswith("\n\n"):
            return json.dumps(text, ensure_ascii=False)  # trailing blank lines: keep exactly
    if any(ln != ln.rstrip(" ") and ln.strip() == "" for ln in lines):
        return json.dumps(text, ensure_ascii=False)
    return head + "\n" + "\n".join(indent + ln if ln else "" for ln in lines)


def candidate_strings(source: str) -> list[str]:
    """The string literals and comments of a code cell a learner reads (outside solutions)."""
    import io
    import tokenize

    spans = _protected_spans(source)
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        at = offsets[tok.start[0] - 1] + tok.start[1]
        if any(s <= at < e for s, e in spans) or tok.string.startswith("###"):
            continue
        text = tok.string
        if tok.type == tokenize.COMMENT:
            text = text.lstrip("#").strip()
        else:
            text = re.sub(r'^[rRbBuUfF]*("""|\'\'\'|"|\')', "", text)
            text = re.sub(r'("""|\'\'\'|"|\')$', "", text)
        if _WORD.search(text) and text not in found:
            found.append(text)
    return found


def skeleton(base: str, lang: str, root: Path = ROOT) -> str:
    """The translation file with every entry a translator still has to write or check.

    Entries already translated and current are kept as they are; a new or changed cell
    gets its English text (and, for a stale one, the old translation as a comment) to
    translate in place; code cells list their candidate strings, English on both sides.
    """
    check_language(lang)
    entries = load(base, lang, root)
    nb = english(base, root)
    out = [
        f"# {LANGUAGES[lang]} text of source/{base}/{base}.ipynb, keyed by cell id.",
        "# markdown: the cell's text; strings: English -> translated, replaced verbatim in the",
        "# code (labels, titles, assert messages, comments); en: the English cell's fingerprint.",
        "# Check with: python -m helpers.teacher.translate check " + base + " --lang " + lang,
        "cells:",
    ]
    for cell in nb.cells:
        cid, print_ = cell.get("id"), fingerprint(cell.source)
        entry = entries.get(cid)
        if cell.cell_type == "markdown":
            if entry and entry.get("en") == print_:
                text, todo = entry["markdown"], ""
            else:
                text, todo = cell.source, "  # TODO translate"
                if entry and entry.get("markdown"):
                    todo = "  # TODO the English changed: update the translation (old one below)"
            out.append(f"  {json.dumps(cid)}:{todo}")
            if todo and entry and entry.get("markdown"):
                out += ["    # " + ln for ln in entry["markdown"].splitlines()]
            out.append(f"    en: {print_}")
            out.append("    markdown: " + _block(text, "      "))
        elif cell.cell_type == "code":
            strings = dict((entry or {}).get("strings") or {})
            stale = entry is not None and entry.get("en") != print_
            for text in candidate_strings(cell.source):
                strings.setdefault(text, text)
            if not strings:
                continue
            flag = "  # TODO the code changed: check the strings" if stale else ""
            out.append(f"  {json.dumps(cid)}:{flag}")
            out.append(f"    en: {print_}")
            out.append("    strings:")
            for en, tr in strings.items():
                mark = "" if en != tr else "  # TODO translate or delete"
                line = f"      {json.dumps(en, ensure_ascii=False)}: {json.dumps(tr, ensure_ascii=False)}"
                out.append(line + mark)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.teacher.translate",
        description="Translated notebooks: write a skeleton, check, build.",
    )
    parser.add_argument("command", choices=("skeleton", "check", "build"))
    parser.add_argument("ids", nargs="*", help="notebook ids (default: every translated one)")
    parser.add_argument("--lang", default="ko", help="language code (default: ko)")
    parser.add_argument(
        "--write",
        action="store_true",
        help="skeleton: write it into the translation file (its current entries kept) "
        "instead of printing it",
    )
    args = parser.parse_args(argv)
    if args.lang == DEFAULT or args.lang not in LANGUAGES:
        print(
            f"--lang must be one of {', '.join(k for k in LANGUAGES if k != DEFAULT)}",
            file=sys.stderr,
        )
        return 2
    unknown = [i for i in args.ids if i not in ASSIGNMENTS]
    if unknown:
        print(
            f"unknown notebook {', '.join(unknown)}; the notebooks are {', '.join(ASSIGNMENTS)}",
            file=sys.stderr,
        )
        return 2
    if args.command == "skeleton":
        for base in args.ids or ASSIGNMENTS:
            text = skeleton(base, args.lang, root)  # read the file before anything is written
            if args.write:
                from helpers.teacher.files import write_text

                path = write_text(translation_path(base, args.lang, root), text)
                todo = text.count("# TODO")
                print(f"wrote {path.relative_to(root)}: {todo} entr(ies) marked TODO")
            else:
                sys.stdout.write(text)
        return 0
    ids = args.ids or translated_ids(args.lang)
    if args.command == "check":
        found = [p for base in ids for p in problems(base, args.lang)]
        print("\n".join(found) if found else f"{len(ids)} notebooks: every cell translated")
        return 1 if found else 0
    for base in ids:
        print(f"wrote {write(base, args.lang).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
