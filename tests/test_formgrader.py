"""The Formgrader with the course's grades, in headless Chromium (``make grade-ui``).

A class of two is autograded by the course's grader; JupyterLab then runs as
``python -m helpers grade-ui`` starts it (``cli.grade_ui_command``: the course folder as
its root). In the Formgrader the teacher sees the written answer waiting, gives it a
score, gives extra credit on a code cell and writes a comment; the gradebook holds them,
a regrade keeps them, and the feedback shows them. The page of the submission is saved
as a screenshot in ``artifacts/``.
"""

from __future__ import annotations

import json
import secrets
import urllib.request
from pathlib import Path

import nbformat
import pytest

from helpers import cli
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import feedback
from tests import classroom_kit as kit
from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, _free_port, _skip_reason

pytestmark = [pytest.mark.slow, pytest.mark.browser]
ASSIGNMENT = "01_order"
ANSWER = (
    "Each output row is a softmax-weighted sum over all tokens, and the weights depend only "
    "on the token vectors, so shuffling the tokens only shuffles the rows."
)


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course whose class (alice answered the written question, bob did not) is graded."""
    if _skip_reason():
        pytest.skip(_skip_reason())
    tmp = tmp_path_factory.mktemp("formgrader")
    course = kit.course_with(tmp, [ASSIGNMENT])
    path = kit.fill(course, "alice", ASSIGNMENT, broken=["answer_attention"], how="wrong")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _meta(cell).get("grade"):
            cell.source = ANSWER
    nbformat.write(nb, path)
    kit.fill(course, "bob", ASSIGNMENT)
    report = autograde(course, jobs=2, progress=False)
    assert not report.failures(), report.summary()
    return course


@pytest.fixture(scope="module")
def grade_ui(graded, tmp_path_factory):
    """JupyterLab started as ``grade-ui`` starts it; yields (url, token)."""
    tmp = tmp_path_factory.mktemp("grade-ui")
    port, token = _free_port(), secrets.token_hex(16)
    cmd = cli.grade_ui_command(graded)
    assert f"--notebook-dir={graded}" in cmd
    cmd = [
        *[c for c in cmd if c != "--allow-root"],
        "--allow-root",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    env = kit.env() | {
        "HOME": str(tmp),
        "JUPYTER_CONFIG_DIR": str(tmp / ".jupyter"),
        "PE_COURSE_EXCHANGE": str(tmp / "exchange"),
    }
    with kit.lab_server(cmd, graded, env, tmp / "lab.log", port, token) as url:
        yield url, token


def _ids(course: Path) -> tuple[str, str]:
    nb = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    written = next(
        _meta(c)["grade_id"]
        for c in nb.cells
        if c.cell_type == "markdown" and _meta(c).get("grade")
    )
    code = next(
        _meta(c)["grade_id"] for c in nb.cells if c.cell_type == "code" and _meta(c).get("grade")
    )
    return written, code


def test_formgrader_grades_by_hand_and_a_regrade_keeps_it(graded, grade_ui):
    from nbgrader.api import Gradebook
    from playwright.sync_api import sync_playwright

    url, token = grade_ui
    written, code = _ids(graded)
    # the Formgrader's links open the course's files: the root is the course folder
    for path in (f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb", f"autograded/alice/{ASSIGNMENT}"):
        with urllib.request.urlopen(f"{url}/api/contents/{path}?token={token}", timeout=30) as r:
            assert r.status == 200, path
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            saved = []
            page.on(
                "response", lambda r: saved.append(r.url) if r.request.method == "PUT" else None
            )
            page.goto(f"{url}/?token={token}")  # logs in (a cookie for the API calls)
            page.wait_for_url("**/formgrader**")  # grade-ui opens the Formgrader
            page.goto(f"{url}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
            page.wait_for_selector("text=Submission #2")
            page.get_by_text("Show All Names").click()
            page.wait_for_selector("text=alice")
            table = page.inner_text("table")
            assert "Written Score" in table and "0 / 1" in table, table
            page.screenshot(path=str(ARTIFACTS / "formgrader_gradebook.png"))
            page.get_by_role("link", name="alice").click()
            try:
                page.wait_for_selector(f"#{written}", timeout=15000)
            except Exception:
                print("the page:", page.url, page.inner_text("body")[:1500])
                raise
            page.wait_for_load_state("networkidle")  # the grades and comments are loaded
            assert ANSWER in page.inner_text("body")
            for selector, value in (
                (f"#{written}", "1"),
                (f"#{code}_extra_credit", "0.5"),
                (f"#{written}-comment", "Clear and complete."),
            ):
                field = page.locator(selector)
                field.fill(value)
                field.dispatch_event("change")  # the Formgrader saves a field when it changes
                page.wait_for_timeout(500)
            page.wait_for_timeout(1500)
            assert len(saved) >= 3, saved  # a grade, an extra credit, a comment
            page.screenshot(path=str(ARTIFACTS / "formgrader_submission.png"), full_page=False)
        finally:
            browser.close()

    url_db, cid = db_url(graded), course_id(graded)

    def read() -> dict:
        with Gradebook(url_db, cid) as gb:
            grade = gb.find_grade(written, ASSIGNMENT, ASSIGNMENT, "alice")
            return {
                "manual": grade.manual_score,
                "flagged": grade.needs_manual_grade,
                "extra": gb.find_grade(code, ASSIGNMENT, ASSIGNMENT, "alice").extra_credit,
                "comment": gb.find_comment(written, ASSIGNMENT, ASSIGNMENT, "alice").manual_comment,
            }

    want = {"manual": 1.0, "flagged": False, "extra": 0.5, "comment": "Clear and complete."}
    assert read() == want
    again = autograde(graded, jobs=2, progress=False)  # the course's regrade (--force)
    assert not again.failures(), again.summary()
    assert read() == want
    feedback(graded, [ASSIGNMENT], exchange=None)
    page = (graded / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text("utf-8")
    assert "Clear and complete." in page and ANSWER in page
    print(json.dumps(read()), ARTIFACTS / "formgrader_submission.png")


# axe-core on a page the course renders whole: every violation node is the course's.
AXE_ALL_JS = """async (tags) => {
  const results = await axe.run(document, {
    runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'],
  });
  return {version: axe.version, nodes: results.violations.flatMap(v => v.nodes.map(n => ({
    rule: v.id, impact: n.impact, target: n.target.join(' '), html: n.html.slice(0, 200),
    colours: (n.any[0] && n.any[0].data && n.any[0].data.fgColor)
      ? `${n.any[0].data.fgColor} on ${n.any[0].data.bgColor} (${n.any[0].data.contrastRatio})`
      : '',
  })))};
}"""


def _axe(page, name: str) -> list[dict]:
    from tests.test_accessibility import AXE, TAGS

    if not AXE.exists():
        pytest.skip(f"axe-core is not installed in {AXE.parent}: run `make system-deps`")
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(AXE_ALL_JS, TAGS)
    rules: dict[str, int] = {}
    for node in found["nodes"]:
        rules[node["rule"]] = rules.get(node["rule"], 0) + 1
    shown = ", ".join(f"{r} {n}" for r, n in sorted(rules.items())) or "none"
    print(f"\n{name}: axe {found['version']}: {len(found['nodes'])} nodes ({shown})")
    return found["nodes"]


def test_axe_finds_no_violation_in_the_submission_feedback_and_report_pages(graded, grade_ui):
    """The pages the course's templates render for a teacher and a learner, in Chromium with
    axe-core (WCAG 2.2 A and AA, as tests/test_accessibility.py): the Formgrader's page of a
    submission (``pe_formgrade``), the learner's feedback page (``pe_feedback``) and the class
    report (``reports/``). Everything on them is the course's: no violation at all."""
    from playwright.sync_api import sync_playwright

    from helpers.teacher.classroom import report

    url, token = grade_ui
    feedback(graded, [ASSIGNMENT], exchange=None)
    out = report.write(graded)
    pages = {
        "feedback": (graded / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html").as_uri(),
        "report": (out.parent / f"{ASSIGNMENT}.html").as_uri(),
        "report index": out.as_uri(),
    }
    problems = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            # the pages' own policy forbids inline scripts, axe's included: bypassed for it
            context = browser.new_context(viewport={"width": 1300, "height": 900}, bypass_csp=True)
            page = context.new_page()
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            page.goto(f"{url}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
            page.wait_for_selector("text=Submission #2")
            page.locator("a.name-hidden, a.name-shown").first.click()
            page.wait_for_load_state("networkidle")
            page.wait_for_selector(".cell")
            nodes = _axe(page, "formgrader submission")
            problems += [
                f"formgrader: {n['rule']}: {n['target']}: {n['colours']} {n['html']}" for n in nodes
            ]
            for name, where in pages.items():
                page.goto(where)
                page.wait_for_load_state("load")
                nodes = _axe(page, name)
                problems += [f"{name}: {n['rule']}: {n['target']}: {n['html']}" for n in nodes]
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


def test_make_grade_ui_serves_the_course_it_runs_in_with_the_exchange_it_is_given(graded, tmp_path):
    """`make grade-ui EXCHANGE=DIR PORT=N`, typed in a copy of the class (its Makefile beside
    it, as in a teacher's clone): the Formgrader is that course's, on that port, and its
    Release button (the Formgrader's own API) releases into that exchange. grade-ui once took
    no EXCHANGE and always served the repository's own course."""
    import os
    import re
    import shutil
    import signal
    import subprocess
    import sys
    import time

    copy = Path(shutil.copytree(graded, tmp_path / "course", symlinks=True))
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(kit.REPO / name, copy / name)
    exchange, port = tmp_path / "exchange", _free_port()
    venv = Path(sys.executable).parent.parent
    env = kit.env() | {"HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}
    env.pop("PE_COURSE_EXCHANGE", None)
    log = tmp_path / "grade-ui.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["make", "-o", str(venv / ".installed"), f"VENV={venv}", "grade-ui"]
            + [f"EXCHANGE={exchange}", f"PORT={port}"],
            cwd=copy,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline, found = time.monotonic() + 180, None
        while found is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(
                rf"http://127\.0\.0\.1:{port}/\S*\?token=([0-9a-f]+)", log.read_text()
            )
            time.sleep(0.5)
        assert found, log.read_text()
        token = found.group(1)

        def api(path: str, method: str = "GET") -> dict:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{path}",
                method=method,
                headers={"Authorization": f"token {token}"},
                data=b"" if method == "POST" else None,
            )
            with urllib.request.urlopen(request, timeout=120) as r:
                return json.loads(r.read() or b"{}")

        # the course it serves is the copy: its files, its gradebook's assignment
        listed = api("/api/contents/autograded")
        assert {c["name"] for c in listed["content"]} == {"alice", "bob"}, listed
        students = {s["id"] for s in api("/formgrader/api/students")}
        assert students >= {"alice", "bob"}, students
        said = api(f"/formgrader/api/assignment/{ASSIGNMENT}/release", "POST")
        assert said.get("success"), said
        released = exchange / course_id(copy) / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert released.is_file(), (said, sorted(p.name for p in exchange.rglob("*")))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
