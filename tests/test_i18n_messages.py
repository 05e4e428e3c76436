"""The grader speaks the learner's language: every message it builds is in the catalogue.

Read from the source with ``ast``: every ``tr(...)`` call under ``helpers/`` has a literal
English template (except the few sites that translate a declared constant), and that
template has its Korean text in ``helpers/messages/*.yaml`` with the same ``{fields}``.
Then the registry: every known mistake (name and message) and every kind of check
(``PARTS``) is in the catalogue, no catalogue entry is left unused, every check's cases
build in Korean, every named mistake is named in Korean with the same score, and the
self-check prints its table in Korean.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import i18n
from helpers.i18n import MissingTranslation, catalogue, fields_of, speaking, tr
from helpers.teacher import checks as C
from helpers.teacher import kernel
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import MUTATION, PARTS
from helpers.teacher.verdict import cases_of, is_replay_line, replay_line

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "helpers"
HANGUL = re.compile("[\uac00-\ud7a3]")

# The sites whose ``tr`` translates a declared constant instead of a literal: the mistake
# and the kinds of checks of the registry (tests 2 and 3 cover them), the replay line's
# template (matched in every language) and the learner build's notice. Besides these, a
# bare module-level UPPER_CASE name bound to a string literal (a declared constant such as
# ``CLOCKWISE_TEXT``) is accepted: its value is checked like a literal.
NON_LITERAL_SITES = {
    ("helpers/teacher/verdict.py", "PARTS[p]"),
    ("helpers/teacher/verdict.py", "mistake.name"),
    ("helpers/teacher/verdict.py", "mistake.message"),
    ("helpers/teacher/verdict.py", "REPLAY"),
    ("helpers/teacher/kernel.py", "mistake.name"),  # a mistake's catalogue name
    ("helpers/grader.py", "TEACHER_SIDE"),
    # the classroom self-check: the same parts, and the mistakes' names and messages from
    # its data file (the catalogue's English texts, checked above through the checks)
    ("helpers/classcheck.py", "PARTS[p]"),
    ("helpers/classcheck.py", "said['name']"),
    ("helpers/classcheck.py", "said['message']"),
    ("helpers/classcheck.py", "mistake"),
    ("helpers/classcheck.py", "RANDOM_BY_TEACHER"),
    ("helpers/teacher/feedback_render.py", "mistake"),  # a mistake's catalogue name
    ("helpers/teacher/classroom/report.py", "name"),  # a mistake's catalogue name
    ("helpers/train.py", "text"),  # one of 13's claims: train.CLAIM_TEXTS
}


def _modules() -> list:
    return C._notebook_modules()


def _by_module():
    """One pytest param per check module."""
    return [pytest.param(m, id=m.__name__.rpartition(".")[2]) for m in _modules()]


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level ``NAME = "..."`` string constants of a file (implicit joins too)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                found[target.id] = value.value
    return found


def _tr_calls():
    """(file, line, literal or None, source of the first argument) of every tr call."""
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "i18n.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _module_constants(tree)
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name != "tr":
                continue
            assert node.args, f"{rel}:{node.lineno}: tr() without a message"
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                calls.append((rel, node.lineno, arg.value, None))
                continue
            source = ast.unparse(arg)
            if isinstance(arg, ast.Name) and arg.id.isupper() and arg.id in constants:
                calls.append((rel, node.lineno, constants[arg.id], source))
            else:
                calls.append((rel, node.lineno, None, source))
    return calls


TR_CALLS = _tr_calls()


def _declared_texts() -> set[str]:
    """Every declared constant translated where it is used: mistakes, PARTS, the rest."""
    texts = set(PARTS.values())
    for mistake in (MUTATION, *(m for c in C.CHECKS.values() for m in c.mistakes)):
        texts.update((mistake.name, mistake.message))
    texts.update(text for _, _, text, source in TR_CALLS if source is not None and text)
    from helpers.train import CLAIM_TEXTS

    texts.update(CLAIM_TEXTS)
    return texts


def _check_entry(en: str) -> str | None:
    """What is wrong with the catalogue entry of ``en``, or None."""
    entry = catalogue().get(en)
    if entry is None:
        return f"{en!r} is not in the catalogue"
    ko = entry.get("ko")
    if not ko:
        return f"{en!r} has no Korean text"
    if fields_of(en) != fields_of(ko):
        return f"{en!r}: the Korean text has the fields {sorted(fields_of(ko))}"
    return None


# --------------------------------------------------------------------------- (1) static


# A particle whose form depends on the word before it (받침: 을/를, 이/가, 은/는, 과/와,
# 으로/로), written straight after a placeholder: right for half the words it is filled
# with ("{callee}를" is wrong for every name that ends in a consonant). "(를)" spellings
# such as "{file}을(를)" count too: the message is rephrased instead ("{callee} 함수를").
PARTICLE_AFTER_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}\(?(?:으로|을|를|이|가|은|는|와|과|로)")


def _korean_texts():
    """(where, text) of every Korean message and every Korean translation of source/."""
    import yaml

    for path in sorted((PACKAGE / "messages").glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            yield f"{path.name}: {entry['en']!r}", entry.get("ko") or ""
    for path in sorted((REPO / "source").glob("*/*.ko.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key, cell in (data.get("cells") or {}).items():
            yield f"{path.name}: cell {key}", cell.get("markdown") or ""
            for en, ko in (cell.get("strings") or {}).items():
                yield f"{path.name}: cell {key}: {en!r}", ko


@pytest.mark.parametrize(
    "text, found",
    [
        ("{callee}를 먼저 고치세요", True),
        ("{where}이(가) 멈췄습니다", True),
        ("{typed}을(를) {value}(으)로 맞췄습니다", True),
        ("s + h·w = {count}가 아니라", True),
        ("{callee} 함수를 먼저 고치세요", False),
        ("토큰 {n}개가 있습니다", False),
        ("파일({file})을 읽을 수 없습니다", False),
        ("`{name}` 이름이 정의되지 않았습니다", False),
    ],
)
def test_the_particle_scan_finds_a_particle_after_a_placeholder(text, found):
    assert bool(PARTICLE_AFTER_PLACEHOLDER.search(text)) is found


def test_no_korean_particle_depends_on_the_word_a_placeholder_stands_for():
    """'{callee}를' is right for 'softmax' and wrong for 'attention' (어텐션을): no Korean
    message or translation puts a particle straight after a placeholder."""
    texts = list(_korean_texts())
    assert len(texts) > 500  # the catalogue and every notebook's translation were read
    slips = [
        f"{where}: ...{text[max(0, m.start() - 20) : m.end() + 10]}..."
        for where, text in texts
        for m in PARTICLE_AFTER_PLACEHOLDER.finditer(text)
    ]
    assert slips == [], "\n".join(slips)


def test_the_catalogue_loads_without_conflicts():
    catalogue.cache_clear()
    table = catalogue()
    assert table, "helpers/messages/*.yaml is empty"
    for en, entry in table.items():
        assert set(entry) <= set(i18n.LANGUAGES), f"{en!r}: unknown language in {set(entry)}"


def test_every_tr_call_has_a_literal_template_or_is_an_allowed_site():
    bad = [
        f"{rel}:{line}: tr({source})"
        for rel, line, text, source in TR_CALLS
        if text is None and (rel, source) not in NON_LITERAL_SITES
    ]
    assert not bad, "tr() needs a literal English template here:\n" + "\n".join(bad)
    assert len([c for c in TR_CALLS if c[2] is not None]) > 100


def test_every_tr_literal_is_in_the_catalogue_in_korean_with_the_same_fields():
    problems = []
    for rel, line, text, _ in TR_CALLS:
        if text is None:
            continue
        problem = _check_entry(text)
        if problem is not None:
            problems.append(f"{rel}:{line}: {problem}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- (2) the registry


def test_every_part_and_the_mutation_mistake_are_in_the_catalogue():
    problems = [_check_entry(text) for text in (*PARTS.values(), MUTATION.name, MUTATION.message)]
    assert not [p for p in problems if p], problems


@pytest.mark.parametrize("module", _by_module())
def test_every_mistake_of_the_module_is_in_the_catalogue(module):
    problems = []
    for check in module.CHECKS:
        for mistake in check.mistakes:
            for text in (mistake.name, mistake.message):
                problem = _check_entry(text)
                if problem is not None:
                    problems.append(f"{check.name}: {problem}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- (3) stale entries


def test_no_catalogue_entry_is_unused():
    used = {text for _, _, text, _ in TR_CALLS if text is not None} | _declared_texts()
    stale = sorted(en for en in catalogue() if en not in used)
    assert not stale, "catalogue entries no code uses:\n" + "\n".join(map(repr, stale))


# --------------------------------------------------------------------------- (4) cases in Korean


@pytest.mark.parametrize("module", _by_module())
def test_every_case_builds_in_korean(module):
    for check in module.CHECKS:
        english = [c.label for c in cases_of(check, 0)]
        for seed in (0, 1, 2):
            with speaking("ko"):
                korean = cases_of(check, seed)
                assert [c.label for c in korean] and all(isinstance(c.label, str) for c in korean)
        with speaking("ko"):
            same = cases_of(check, 0)
        # the same cases, only their words differ
        assert len(same) == len(english)
        for a, b in zip(cases_of(check, 0), same):
            assert a.part == b.part and _same_args(a, b), (check.name, a.label, b.label)


# The grader's Korean messages put a case's label before 에서 ("{label}에서 틀렸습니다"): a label
# that ends in a particle of its own reads "9부터에서".
ENDS_IN_A_PARTICLE = re.compile(
    r"(?:부터|까지|에서|에게|으로|로|에|만|도|와|과|을|를|이|가|은|는)$"
)


def test_every_korean_case_label_reads_before_eseo():
    slips = []
    for module in _by_module():
        for check in module.values[0].CHECKS:
            with speaking("ko"):
                labels = {c.label for seed in (0, 1) for c in cases_of(check, seed)}
            slips += [
                f"{check.name}: {label}" for label in labels if ENDS_IN_A_PARTICLE.search(label)
            ]
    assert not slips, "labels that end in a particle:\n" + "\n".join(sorted(slips))


def _same_args(a, b) -> bool:
    def flat(x):
        return repr(np.asarray(x, dtype=object).tolist()) if isinstance(x, np.ndarray) else repr(x)

    return [flat(x) for x in a.args] == [flat(x) for x in b.args] and repr(a.kwargs) == repr(
        b.kwargs
    )


# --------------------------------------------------------------------------- (5) mistakes in Korean


def _wrong_implementations(module):
    for check in module.CHECKS:
        for mistake in check.mistakes:
            for impl in (mistake.impl, *mistake.variants):
                if impl is not None:
                    yield check, mistake, impl


def _judge(check, impl, lang: str):
    namespace = {check.name: impl}
    with speaking(lang), np.errstate(all="ignore"):
        return kernel.grade_in_namespace(check, namespace, 3, replay_line(3, "replay()"))


@pytest.mark.parametrize("module", _by_module())
def test_every_named_mistake_is_named_in_korean_with_the_same_score(module):
    judged = 0
    for check, mistake, impl in _wrong_implementations(module):
        english = _judge(check, impl, "en")
        korean = _judge(check, impl, "ko")
        where = f"{check.name} / {mistake.name} ({impl.__name__})"
        assert not english.passed and not korean.passed, where
        assert korean.score == english.score, where
        assert korean.verdict == english.verdict, where  # stored in English either way
        assert korean.mistake == english.mistake, where
        assert HANGUL.search(korean.message), f"{where}: {korean.message}"
        if english.mistake == mistake.name:
            assert tr(mistake.name, lang="ko") in korean.message, f"{where}: {korean.message}"
            assert tr(mistake.message, lang="ko") in korean.message, where
            assert mistake.message not in korean.message, where
            judged += 1
    named = sum(1 for check in module.CHECKS for m in check.mistakes)
    assert judged >= min(named, 1), f"no mistake of {module.__name__} was named"


# --------------------------------------------------------------------------- (6) the self-check


def _order_namespace_with_a_mistake() -> dict:
    from helpers.teacher.checks.order import softmax_no_max

    namespace = {c.name: getattr(ref, c.name) for c in C.checks_for("01_order")}
    namespace["softmax"] = softmax_no_max
    return namespace


def _self_check(assignment: str, lang: str | None):
    out = io.StringIO()
    with speaking(lang), contextlib.redirect_stdout(out):
        report = kernel.self_check(assignment, _order_namespace_with_a_mistake(), seed=5)
    return report, out.getvalue()


def test_the_self_check_table_in_korean_with_one_mistake():
    report, text = _self_check("01_order", "ko")
    lines = text.splitlines()
    assert lines[0] == "01_order 자가 점검 (난수 시드 5): 채점 함수 5개 중 4개 통과", lines[0]
    head = lines[1].split()
    assert head == ["함수", "판정", "메시지"], lines[1]
    rows = {ln.split()[0]: ln for ln in lines[3:] if ln[:1].strip()}  # a row's first line
    assert "통과" in rows["attention"] and "검사" in rows["attention"]
    assert report["softmax"].verdict in ("partly", "FAILED")  # stored in English
    shown = "부분 점수" if report["softmax"].verdict == "partly" else "실패"
    assert rows["softmax"].split(None, 1)[1].startswith(shown + "  "), rows["softmax"]
    flat = " ".join(text.split())  # long messages wrap under their column
    assert "알려진 실수(최댓값을 빼지 않음)로 보입니다" in flat
    assert "연습 문제 1: `softmax` 부분을 다시 보세요." in flat
    assert "난수 시드 5의 무작위 사례; 다시 실행: self_check('01_order', seed=5)" in flat
    for english in ("passed", "FAILED", "partly", "known mistake", "replay with", "See Exercise"):
        assert english not in text, english


def test_the_self_check_speaks_english_by_default_and_korean_for_a_korean_assignment():
    report, english = _self_check("01_order", None)
    assert (
        english.splitlines()[0] == "self-check of 01_order (seed 5): 4 of 5 graded functions passed"
    )
    assert english.splitlines()[1].split() == ["function", "verdict", "message"]
    assert "This looks like a known mistake (no max subtraction)" in " ".join(english.split())
    report_ko, korean = _self_check("01_order_ko", None)
    assert korean.splitlines()[0].startswith("01_order_ko 자가 점검 (난수 시드 5)")
    assert [r.verdict for r in report_ko.results] == [r.verdict for r in report.results]
    assert [r.score for r in report_ko.results] == [r.score for r in report.results]


# --------------------------------------------------------------------------- nbgrader


def test_nbgrader_grades_a_korean_assignment_in_korean_and_hides_its_replay_line():
    nbgrader_plugin = pytest.importorskip("helpers.teacher.nbgrader_plugin")
    language = nbgrader_plugin.IsolatedGrades._language
    assert language({"nbgrader": {"assignment": "06_rope_ko"}}) == "ko"
    assert language({"nbgrader": {"assignment": "06_rope"}}) == "en"
    assert language({}) is None
    for lang in i18n.LANGUAGES:
        with speaking(lang):
            line = replay_line(7, "python -m helpers check x.ipynb --seed 7")
        assert is_replay_line(line), line
        message = f"wrong\n{line}\nmore"
        assert nbgrader_plugin._for_the_learner(message) == "wrong\nmore"
    assert not is_replay_line("softmax: 검사 3개 모두 통과")


def test_a_message_missing_in_korean_raises_instead_of_falling_back():
    with pytest.raises(MissingTranslation):
        tr("a message nobody translated {x}", lang="ko", x=1)


def test_isolated_grades_of_a_korean_assignment_speak_korean():
    nbgrader_plugin = pytest.importorskip("helpers.teacher.nbgrader_plugin")
    import nbformat

    nb = nbformat.read(REPO / "source" / "01_order" / "01_order.ipynb", as_version=4)
    answers = {
        "answer_softmax": (
            "import numpy as np\n"
            "def softmax(x, axis=-1):\n"
            "    e = np.exp(np.asarray(x, dtype=float))\n"
            "    return e / e.sum(axis=axis, keepdims=True)\n"
        ),
        "answer_attention": "def attention(Q, K, V, bias=None):\n    raise NotImplementedError\n",
    }
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    resources = {"nbgrader": {"assignment": "01_order_ko", "notebook": "01_order_ko"}}
    with np.errstate(all="ignore"):
        nb, _ = nbgrader_plugin.IsolatedGrades().preprocess(nb, resources)
    shown = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code":
            shown[grade_id] = "\n".join(
                str(o.get("text") or o.get("evalue") or o.get("data", {}).get("text/plain", ""))
                for o in cell.outputs
            )
    assert "알려진 실수(최댓값을 빼지 않음)로 보입니다" in shown["test_softmax_stable"]
    stub = next(
        c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_attention_scaled"
    )
    assert stub.outputs[0]["ename"] == "WrongAnswer"  # the names nbgrader stores stay
    assert "attention 함수는 아직 작성되지 않았습니다" in stub.outputs[0]["evalue"]
    assert shown["test_permutation_gap_equivariance"].startswith("permutation_gap: 검사 ")
    assert "여러분의 attention 함수는 실패했습니다" in shown["test_self_attention"]
    for text in shown.values():
        assert HANGUL.search(text), text
        assert "난수 시드" not in text and "Random cases" not in text  # the teacher's line
