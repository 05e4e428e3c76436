"""The pages a teacher opens, piece by piece (helpers.teacher.pages and its neighbours).

The browser tests (tests/test_pages_security.py) open the real pages; these check the
parts on their own, each against a payload or a value written here by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from helpers import cli
from helpers.i18n import speaking, tr
from helpers.teacher import pages
from helpers.teacher.classroom.lms import roster_names, split_name
from helpers.teacher.feedback_render import mathml, summary, teacher_comment
from helpers.teacher.verdict import named

# (payload, what must not survive cleaning)
ATTACKS = [
    ('<img src=x onerror="alert(1)">', "onerror"),
    ("<script>alert(1)</script>", "<script"),
    ('<a href="javascript:alert(1)">x</a>', "javascript:"),
    ('<a href="JaVaScRiPt:alert(1)">x</a>', "javascript"),
    ('<svg onload="alert(1)"><circle r=5/></svg>', "onload"),
    ('<iframe srcdoc="<script>alert(1)</script>"></iframe>', "iframe"),
    ('<details open ontoggle="alert(1)"><summary>s</summary>x</details>', "ontoggle"),
    ('<input autofocus onfocus="alert(1)">', "onfocus"),
    ('<math><maction xlink:href="javascript:alert(1)">x</maction></math>', "javascript"),
    ('<img src="data:text/html;base64,PHNjcmlwdD4=">', "data:text/html"),
    ('<img src="/logout">', "/logout"),
    ('<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', "refresh"),
    ('<base href="http://127.0.0.1:9/">', "<base"),
    ('<form action="/api/x"><button>go</button></form>', "<form"),
    ('<object data="x"></object><embed src="x">', "<object"),
    ("<style>body{display:none}</style>", "display:none"),
    ('<p style="position:fixed;top:0">cover</p>', "position:fixed"),
    ('<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>', "<img src"),
    ("<svg><style><img src=x onerror=alert(1)></style></svg>", "onerror"),
]


@pytest.mark.parametrize(("payload", "banned"), ATTACKS)
def test_clean_removes_every_payload(payload, banned):
    assert banned.lower() not in pages.clean(payload).lower()


def test_clean_keeps_layout_tables_images_and_mathml():
    kept = pages.clean(
        "<h2>Head</h2><p><b>b</b> <a href='#x'>in</a> <a href='https://arxiv.org'>out</a></p>"
        "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="plot">'
        "<details open><summary>Hint</summary>h</details>"
    )
    for part in (
        "<h2>Head</h2>",
        "<b>b</b>",
        'href="#x"',
        'href="https://arxiv.org"',
        "<th>a</th>",
        "<td>1</td>",
        'src="data:image/png;base64,iVBORw0KGgo="',
        "<summary>Hint</summary>",
    ):
        assert part in kept, (part, kept)
    formula = pages.clean(mathml(r"<p>$\theta_i = 10000^{-2i/d}$</p>"))
    assert "<math" in formula and "<msub>" in formula and "<mi>θ</mi>" in formula
    # the learner's ids cannot take the page's own (a Formgrader score field's id)
    assert 'id="c-written_equivariance"' in pages.clean('<p id="written_equivariance">x</p>')


def test_formgrader_policy_allows_only_nbgrader_variable_lines_and_the_template():
    page = (
        '<script>\nvar student_id = "alice";\n</script>'
        '<script>\nvar student_id = "x";document.title="PWNED";"";\n</script>'
        '<script src="/formgrader/static/js/utils.js"></script>'
    )
    policy = pages.formgrader_csp(page)
    allowed = set(re.findall(r"'sha256-[^']+'", policy))
    assert pages._sha256('\nvar student_id = "alice";\n') in allowed
    assert pages._sha256('\nvar student_id = "x";document.title="PWNED";"";\n') not in allowed
    assert "'unsafe-inline'" not in policy.split("style-src")[0]
    assert "'unsafe-eval'" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    # the course template's own inline script is allowed by its hash
    template = (pages.TEMPLATE_DIR / pages.TEMPLATE / "index.html.j2").read_text("utf-8")
    body = re.search(r"<script>(.*?)</script>", template, re.DOTALL).group(1)
    assert pages._sha256(body) in allowed


def test_formgrader_policy_allows_every_inline_handler_of_the_templates():
    """Each ``on...="..."`` attribute of nbgrader's Formgrader templates and of the
    course's formgrade template is allowed by its hash ("Add new assignment..." among
    them): a handler left out is a button that does nothing."""
    import nbgrader

    theirs = Path(nbgrader.__file__).resolve().parent / "server_extensions/formgrader/templates"
    found = set()
    for folder in (theirs, pages.TEMPLATE_DIR / pages.TEMPLATE):
        for path in folder.rglob("*"):
            if path.suffix in (".tpl", ".j2", ".html"):
                text = path.read_text(encoding="utf-8")
                found |= set(re.findall(r'\son[a-z]+="([^"]*)"', text, re.IGNORECASE))
    assert {"createAssignmentModal();", "toggleAllNames()"} <= found, found
    allowed = set(re.findall(r"'sha256-[^']+'", pages.formgrader_csp("")))
    assert {h for h in found if pages._sha256(h) not in allowed} == set()


def test_safe_cells_keep_nothing_for_an_attribute():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.metadata["tags"] = ['x" onmouseover="alert(1)']
    cell.metadata["nbgrader"] = {"grade_id": 'a" onclick="x', "grade": True}
    raw = nbformat.v4.new_raw_cell("<script>alert(1)</script>")
    raw.metadata["raw_mimetype"] = "text/html"
    nb.cells = [cell, raw]
    out, _ = pages.SafeCells().preprocess(nb, {})
    assert "tags" not in out.cells[0].metadata
    assert re.fullmatch(r"[A-Za-z0-9_-]+", out.cells[0].metadata["nbgrader"]["grade_id"])
    assert out.cells[1].source == ""


def test_grading_guide_comes_from_the_instructor_notebook_only(tmp_path):
    from tests.classroom_kit import REPO

    guide = pages.GradingGuide(course_root=str(REPO))
    found = guide.guides("01_order", "01_order")
    assert found and all("Grading guide" in text for text in found.values())
    # the learner's notebook (and so its feedback) never carries it
    learner = (REPO / "notebooks" / "01_order" / "01_order.ipynb").read_text("utf-8")
    assert "Grading guide" not in learner
    assert pages.GradingGuide(course_root=str(tmp_path)).guides("01_order", "01_order") == {}


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "sinusoidal_pe",
            "sinusoidal_pe: 맞습니다(참조 구현).",
            "sinusoidal_pe: 맞습니다(참조 구현).",
        ),
        ("thetas", "thetas is right, checked with", "thetas is right, checked with"),
        ("thetas", "all 4 checks passed", "thetas: all 4 checks passed"),
        ("pe", "pe_norms is wrong", "pe: pe_norms is wrong"),
    ],
)
def test_a_verdict_names_its_function_once(name, text, said):
    assert named(name, text) == said


def test_feedback_has_no_automatic_no_response_comment():
    assert teacher_comment("No response.") == ""
    assert teacher_comment("Clear and complete.") == "Clear and complete."
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
    cell.metadata["nbgrader"] = {"grade_id": "w", "solution": True, "comment": "No response."}
    nb.cells = [cell]
    for lang, assignment in (("en", "01_order"), ("ko", "01_order_ko")):
        with speaking(lang):
            heading = tr("Your teacher's comments")
        page = summary(nb, {"nbgrader": {"assignment": assignment}})
        assert "No response." not in page and heading not in page


def test_roster_names_for_the_gradebook(tmp_path):
    assert split_name("Ada Lovelace") == ("Ada", "Lovelace")
    assert split_name("Mary Ann Evans") == ("Mary Ann", "Evans")
    # the roster's own forms: last name first with a comma, and Korean (family name first)
    assert split_name("Lovelace, Ada") == ("Ada", "Lovelace")
    assert split_name(" Lovelace ,  Ada ") == ("Ada", "Lovelace")
    assert split_name("김민준") == ("민준", "김")
    assert split_name("김 민준") == ("민준", "김")
    assert split_name("남궁민수") == ("민수", "남궁")
    assert split_name("김") == ("", "김")
    assert split_name("Plato") == ("", "Plato")
    (tmp_path / "roster.csv").write_text(
        "student_id,name,email,lms_id,section\nalice,Ada Lovelace,ada@example.org,1,A\nbob,,,2,A\n",
        encoding="utf-8",
    )
    assert roster_names(tmp_path) == {
        "alice": {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.org"}
    }
    assert roster_names(tmp_path / "none") == {}


def test_grade_ui_port_and_guard():
    cmd = cli.grade_ui_command(port=8890)
    assert "--ServerApp.port=8890" in cmd and "--ServerApp.port_retries=0" in cmd
    assert f"--ServerApp.jpserver_extensions={pages.EXTENSION}=True" in cmd
    assert not any("port" in c for c in cli.grade_ui_command())
    for bad in ("0", "70000", "http"):
        with pytest.raises(SystemExit) as stop:
            cli.main(["grade-ui", "--port", bad])  # refused before anything starts
        assert stop.value.code == 2


def test_hub_teacher_environment_loads_the_guard(tmp_path):
    path = pages.enable_in(tmp_path)
    data = json.loads(path.read_text("utf-8"))
    assert data["ServerApp"]["jpserver_extensions"] == {pages.EXTENSION: True}
    assert path.parent.name == "jupyter_server_config.d"


def test_the_teachers_language_follows_the_locale():
    assert pages.teacher_language({"LANG": "ko_KR.UTF-8"}) == "ko"
    assert pages.teacher_language({"LANG": "en_US.UTF-8"}) == "en"
    assert pages.teacher_language({"LC_ALL": "C.UTF-8", "LANG": "ko_KR.UTF-8"}) == "en"
    assert pages.teacher_language({"PE_COURSE_LANG": "ko", "LANG": "C"}) == "ko"
    assert pages.teacher_language({}) == "en"


NBGRADER_HEAD = (
    '<ol class="breadcrumb"><li>Students</li></ol>\n<table class="table">\n<thead><tr>'
    '<th>Name</th><th class="text-center">Overall Score</th>'
    '<th class="text-center">Code Score</th></tr></thead></table>'
)


def test_a_list_page_says_its_scores_are_after_the_penalty_in_the_teachers_language():
    en = pages.label_scores(NBGRADER_HEAD, "en")
    assert ">Overall score after the late penalty</th>" in en
    assert '<th class="text-center">Code Score</th>' in en  # before the penalty, unchanged
    assert en.index("pe-late-note") < en.index("<table")
    ko = pages.label_scores(NBGRADER_HEAD, "ko")
    assert ">지각 감점 후 총점</th>" in ko and "코드, 서술형, 과제 점수는 감점 전" in ko
    plain = "<table><tr><th>Name</th></tr></table>"
    assert pages.label_scores(plain, "en") == plain  # a page without scores: untouched


def test_api_answers_get_scores_after_the_penalty():
    pen = pages.Penalties(
        each={("a1", "nb", "alice"): 2.5, ("a1", "nb2", "alice"): 0.5, ("a2", "nb", "bob"): 1.0},
        assignments={"a1": 2, "a2": 1},
        notebooks={("a1", "nb"): 2, ("a1", "nb2"): 2, ("a2", "nb"): 1},
    )

    def rewritten(path, rows, key="score"):
        return [r[key] for r in pages.rewrite_scores(path, rows, pen)]

    students = [{"id": "alice", "score": 10.0}, {"id": "bob", "score": 0.5}]
    assert rewritten("/formgrader/api/students", students) == [7.0, 0.0]  # never below 0
    assert students[0]["pe_score_before_penalty"] == 10.0 and students[0]["pe_late_penalty"] == 3.0
    one = pages.rewrite_scores("/x/formgrader/api/student/alice", {"id": "alice", "score": 4}, pen)
    assert one["score"] == 1.0
    mine = [{"name": "a1", "score": 6.0}, {"name": "a2", "score": 6.0}]
    assert rewritten("/formgrader/api/student_submissions/alice", mine) == [3.0, 6.0]
    nbs = [{"name": "nb", "score": 3.0}, {"name": "nb2", "score": 3.0}]
    assert rewritten("/formgrader/api/student_notebook_submissions/alice/a1", nbs) == [0.5, 2.5]
    subs = [{"student": "alice", "score": 5.0}, {"student": "carol", "score": 5.0}]
    assert rewritten("/formgrader/api/submitted_notebooks/a1/nb", subs) == [2.5, 5.0]
    subs = [{"student": "alice", "score": 5.0}, {"student": "bob", "score": 5.0}]
    assert rewritten("/formgrader/api/submissions/a1", subs) == [2.0, 5.0]
    averages = [{"name": "a1", "average_score": 4.0}, {"name": "a2", "average_score": 4.0}]
    assert rewritten("/formgrader/api/assignments", averages, "average_score") == [2.5, 3.0]
    notebooks = [{"name": "nb", "average_score": 4.0}, {"name": "nb2", "average_score": 4.0}]
    got = rewritten("/formgrader/api/notebooks/a1", notebooks, "average_score")
    assert got == [2.75, 3.75]
    grades = [{"id": "g", "score": 1.0}]  # a cell's grade is not a learner's total: kept
    assert rewritten("/formgrader/api/grades", grades) == [1.0]


def test_formgrader_links_open_in_the_servers_lab():
    """nbgrader's utils.js (``linkTo``) links a folder, in a window of its own, to
    ``/tree/<path>`` of the host (``/hub/tree/...`` on a hub: 404): the course's transform
    makes it this server's ``<base>/lab/tree/<path>``."""
    import nbgrader

    script = Path(nbgrader.__file__).parent / "server_extensions/formgrader/static/js/utils.js"
    text = script.read_bytes()
    assert pages._LINK_HREF in text, "nbgrader's linkTo changed: check the course's rewrite"
    rewritten = pages._links_into_lab(text)
    assert pages._LINK_HREF not in rewritten and pages._LAB_HREF in rewritten
