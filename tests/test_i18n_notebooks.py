"""The Korean edition: every cell translated, generated from the English source, the same code.

``helpers.teacher.translate`` builds ``source/<id>_ko/<id>_ko.ipynb`` from
``source/<id>/<id>.ipynb`` and ``source/<id>/<id>.ko.yaml``. These tests hold the two
editions together: a Markdown cell without its translation, a translation made from an
older English cell, a committed Korean notebook that is not what the build makes, or a
translation that changes code, a grade id or points, all fail here. (That the Korean
notebooks execute and that ``notebooks/`` is what nbgrader generates from them is checked
with the English ones in ``tests/test_notebooks.py``.)
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from helpers import ASSIGNMENTS, cli, i18n
from helpers.teacher import translate

ROOT = Path(__file__).resolve().parent.parent
HANGUL = re.compile("[\uac00-\ud7a3]")


def nbgrader_roles(nb) -> list[tuple]:
    """Each cell's id, type and nbgrader metadata: what grading depends on."""
    return [(c.get("id"), c.cell_type, json.dumps(c.metadata.get("nbgrader"))) for c in nb.cells]


def regions(source: str) -> list[str]:
    """The solution and hidden-test blocks of a cell, verbatim."""
    found = []
    for begin, end in translate.PROTECTED:
        found += re.findall(re.escape(begin) + ".*?" + re.escape(end), source, re.DOTALL)
    return found


@pytest.mark.parametrize("base", ASSIGNMENTS)
def test_every_cell_is_translated(base):
    """Every Markdown cell has its Korean text, made from the current English cell."""
    found = translate.problems(base, "ko")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("base", ASSIGNMENTS)
def test_korean_notebook_is_what_the_build_makes(base):
    committed = translate.output_path(base, "ko")
    assert committed.exists(), f"{committed.relative_to(ROOT)} is missing: run `make notebooks`"
    built = translate.dumps(translate.build(base, "ko"))
    assert committed.read_text(encoding="utf-8") == built, (
        f"{committed.relative_to(ROOT)} is not what {base}.ko.yaml builds: run `make notebooks` "
        "(never edit a generated notebook)"
    )


@pytest.mark.parametrize("base", ASSIGNMENTS)
def test_korean_notebook_has_the_same_code_grades_and_points(base):
    en = translate.english(base)
    ko = nbformat.read(translate.output_path(base, "ko"), as_version=4)
    assert nbgrader_roles(ko) == nbgrader_roles(en)
    for e, k in zip(en.cells, ko.cells):
        if e.cell_type != "code":
            assert HANGUL.search(k.source) or k.source == e.source, f"{k.get('id')}: not Korean"
            continue
        assert regions(k.source) == regions(e.source), f"{k.get('id')}: a solution or test changed"
        shape = translate._code_shape(e.source)
        if k.metadata.get("nbgrader", {}).get("grade_id") == "imports":
            assert 'helpers.start(lang="ko")' in k.source
            shape = translate._code_shape(e.source.replace(translate.START, 'helpers.start("ko")'))
            assert translate._code_shape(k.source.replace('lang="ko"', '"ko"')) == shape
            continue
        assert translate._code_shape(k.source) == shape, f"{k.get('id')}: the code changed"
    assert ko.metadata["pe_course"]["language"] == "ko"


def test_counts_of_translated_cells_and_strings():
    """Every Markdown cell of the course is translated, and code strings besides."""
    markdown = strings = 0
    for base in ASSIGNMENTS:
        entries = translate.load(base, "ko")
        markdown += sum("markdown" in e for e in entries.values())
        strings += sum(len(e.get("strings") or {}) for e in entries.values())
    english_markdown = sum(
        c.cell_type == "markdown" for base in ASSIGNMENTS for c in translate.english(base).cells
    )
    print(f"translated: {markdown} Markdown cells of {english_markdown}, {strings} code strings")
    assert markdown == english_markdown
    assert strings > 0


# --------------------------------------------------------------------------- the tool can fail


def _tiny(tmp_path: Path) -> Path:
    """A course with one English notebook 01_order (a copy) to translate."""
    root = tmp_path / "course"
    (root / "source" / "01_order").mkdir(parents=True)
    shutil.copy2(ROOT / "source/01_order/01_order.ipynb", root / "source/01_order/")
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    return root


def test_translate_tool_reports_each_problem(tmp_path):
    root = _tiny(tmp_path)
    base = "01_order"
    path = translate.translation_path(base, "ko", root)
    assert translate.problems(base, "ko", root) == [
        f"{path.relative_to(root)}: no translation file"
    ]
    path.write_text(translate.skeleton(base, "ko", root), encoding="utf-8")
    untranslated = translate.problems(base, "ko", root)
    assert any("not translated yet" in p for p in untranslated)
    # translate every Markdown cell (a stand-in text), every code cell's docstrings and assert
    # messages as the course's translation does, and one assert message
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    en = translate.english(base, root)
    code = {c.get("id"): c for c in en.cells if c.cell_type == "code"}
    course = translate.load(base, "ko")
    for cid, entry in data["cells"].items():
        if "markdown" in entry:
            text = "번역된 셀 " + cid
            if "### BEGIN SOLUTION" in entry["markdown"]:  # a written answer keeps its markers
                text = f"### BEGIN SOLUTION\n{text}\n### END SOLUTION"
            entry["markdown"] = text
        else:
            entry["strings"] = dict(course.get(cid, {}).get("strings") or {})
    test_id = next(cid for cid, c in code.items() if cid.startswith("test_") and '"' in c.source)
    message = re.search(r'"([^"{}]{12,})"', code[test_id].source).group(1)
    data["cells"].setdefault(test_id, {"en": translate.fingerprint(code[test_id].source)})
    data["cells"][test_id]["strings"] = {
        k: v for k, v in data["cells"][test_id]["strings"].items() if message not in k
    } | {message: "번역된 메시지"}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert translate.problems(base, "ko", root) == []
    assert "번역된 메시지" in "".join(c.source for c in translate.build(base, "ko", root).cells)

    def broken(change) -> list[str]:
        bad = json.loads(json.dumps(data))
        change(bad["cells"])
        path.write_text(yaml.safe_dump(bad, allow_unicode=True), encoding="utf-8")
        return translate.problems(base, "ko", root)

    assert any("changed since" in p for p in broken(lambda c: c["title"].update(en="0" * 12)))
    assert any("no translation" in p for p in broken(lambda c: c.pop("title")))
    assert any("not in 01_order" in p for p in broken(lambda c: c.update(nope={"en": "x"})))
    written = next(
        cid for cid, e in data["cells"].items() if "BEGIN SOLUTION" in e.get("markdown", "")
    )
    unmarked = broken(lambda c: c[written].update(markdown="번역된 채점 기준"))
    assert any(f"{written!r}: the translation has the markers []" in p for p in unmarked), unmarked
    answer = next(cid for cid in code if cid.startswith("answer_"))
    solution_line = translate._protected_spans(code[answer].source)[0]
    inside = code[answer].source[solution_line[0] : solution_line[1]].splitlines()[1].strip()

    def in_solution(c):
        c[answer] = {"en": translate.fingerprint(code[answer].source), "strings": {inside: "x"}}

    assert any("inside a solution" in p for p in broken(in_solution))

    def changes_code(c):  # the message is the test cell's docstring: close it, add code
        c[test_id]["strings"] = {message: 'x""" + str(1) + """'}

    def does_not_parse(c):
        c[test_id]["strings"] = {message: 'x"""'}

    def english_docstring(c):  # a test cell's docstring left as it is
        doc = next(t for what, t in translate.learner_texts(code[test_id].source))
        c[test_id]["strings"] = {k: v for k, v in c[test_id]["strings"].items() if k != doc}

    left = broken(english_docstring)
    assert any(f"{test_id!r}: the docstring" in p and "still English" in p for p in left), left
    assert any("does not parse" in p for p in broken(does_not_parse))
    assert any("changes the code" in p for p in broken(changes_code))
    with pytest.raises(ValueError, match="changes the code"):
        translate.build(base, "ko", root)


@pytest.mark.slow  # nbgrader generate_assignment
def test_generate_builds_the_korean_source_then_the_learner_notebook(tmp_path):
    """`python -m helpers generate 01_order_ko` in a course copy: source, then notebooks/."""
    root = tmp_path / "course"
    (root / "source").mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    shutil.copytree(ROOT / "source/01_order", root / "source/01_order")
    assert cli.generate(["01_order_ko"], root=root) == 0
    built = root / "source/01_order_ko/01_order_ko.ipynb"
    learner = root / "notebooks/01_order_ko/01_order_ko.ipynb"
    assert built.read_text(encoding="utf-8") == translate.output_path("01_order", "ko").read_text(
        encoding="utf-8"
    )
    assert learner.exists() and not (root / "notebooks/01_order_ko/01_order.ko.yaml").exists()
    text = learner.read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and HANGUL.search(text)


def test_assignment_ids_and_languages():
    assert i18n.split_assignment("06_rope_ko") == ("06_rope", "ko")
    assert i18n.split_assignment("10_long_context") == ("10_long_context", "en")
    assert i18n.assignment_id("06_rope", "ko") == "06_rope_ko"
    with pytest.raises(ValueError, match="en .English., ko"):
        i18n.assignment_id("06_rope", "fr")


def test_lab_command_opens_the_korean_notebook_01():
    cmd = cli.lab_command("ko")
    assert cmd[-1].endswith("notebooks/01_order_ko/01_order_ko.ipynb")
    assert Path(cmd[-1]).exists()
    assert cli.lab_command()[-1].endswith("notebooks/01_order/01_order.ipynb")


def _make_lab(lang: str) -> str:
    """What `make lab LANG=<lang>` would run (a dry run)."""
    import subprocess

    return subprocess.run(
        ["make", "-n", "--no-print-directory", "lab", f"LANG={lang}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_make_lab_lang_ko_opens_the_korean_notebooks():
    """`make lab LANG=ko` and a Korean locale: JupyterLab on notebooks/01_order_ko."""
    assert "notebooks/01_order_ko/01_order_ko.ipynb" in _make_lab("ko")
    assert "notebooks/01_order_ko/01_order_ko.ipynb" in _make_lab("ko_KR.UTF-8")
    english = _make_lab("C.UTF-8")
    assert "notebooks/01_order/01_order.ipynb" in english and "_ko" not in english


def test_figures_render_hangul():
    """A figure with a Korean title draws real glyphs (a font with Hangul is installed)."""
    from helpers import fonts, plots

    assert fonts.renders_hangul(), "no font with Hangul: `pip install koreanize-matplotlib`"
    fig = plots.figure((3, 1))
    ax = fig.subplots()
    ax.set_title("위치 인코딩")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a warning
        fig.canvas.draw()


# --------------------------------------------------------------------------- what a learner reads


@pytest.mark.parametrize("base", ASSIGNMENTS)
def test_no_docstring_or_assert_message_of_a_korean_notebook_is_english(base):
    """Every test cell opens with a Korean docstring, and no docstring or assert message a
    learner reads (answer cells' and recap cells' functions too) is left in English."""
    ko = nbformat.read(translate.output_path(base, "ko"), as_version=4)
    left = []
    for cell in ko.cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("test_"):
            first = cell.source.lstrip().split("\n", 1)[0]
            assert first.startswith('"""'), f"{cell.get('id')}: a test cell opens with a docstring"
            if not HANGUL.search(first):
                left.append(f"{cell.get('id')}: docstring {first}")
        left += [f"{cell.get('id')}: {e}" for e in translate.english_left(cell.source, "ko")]
    assert not left, "\n".join(left)


@pytest.mark.parametrize("base", ASSIGNMENTS)
def test_the_korean_notebook_self_checks_the_korean_assignment(base):
    ko = nbformat.read(translate.output_path(base, "ko"), as_version=4)
    last = ko.cells[-1]
    assert last.metadata["nbgrader"]["grade_id"] == "self_check"
    assert f'self_check("{base}_ko")' in last.source, last.source


@pytest.mark.slow  # a real kernel
def test_the_korean_self_checks_replay_line_names_the_korean_assignment(tmp_path):
    """01_order_ko in a real kernel, softmax without its maximum subtracted: the replay line
    under the self-check's table names the assignment the learner is in, 01_order_ko."""
    from tests.learner_kernel import LearnerKernel

    nb = nbformat.read(ROOT / "notebooks/01_order_ko/01_order_ko.ipynb", as_version=4)
    with LearnerKernel(tmp_path) as kernel:
        first = kernel.run(
            nb.cells[next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")].source
        )
        assert first.status == "ok", first.text
        setup = kernel.run(
            "from helpers.teacher import checks as _checks, reference as _ref\n"
            "globals().update({c.name: getattr(_ref, c.name) for c in _checks.checks_for('01_order')})\n"
            "def softmax(x, axis=-1):\n"
            "    e = np.exp(np.asarray(x, dtype=float))\n"
            "    return e / e.sum(axis=axis, keepdims=True)\n"
        )
        assert setup.status == "ok", setup.text
        ran = kernel.run(nb.cells[-1].source, nb.cells[-1].get("id", ""))
    said = " ".join(ran.text.split())
    assert said.startswith("01_order_ko 자가 점검"), said
    assert "다시 실행: self_check('01_order_ko', seed=" in said, said
