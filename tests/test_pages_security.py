"""Nothing a learner wrote runs in the teacher's browser: the red-team tests of the pages.

A class of two is autograded by the course's grader. Alice's notebook carries script
payloads in her written answer, in a Markdown cell of her own and (as a kernel run of her
code would leave them: ``SafeExecute.run_kernel = True``) in her cells' outputs: HTML,
Markdown, SVG and JavaScript outputs, and a cell tag that would break out of its
attribute. Bob submitted his notebook under a file name that is a payload. Then, as the
teacher, in headless Chromium:

- the real Formgrader (``python -m helpers grade-ui --port N``) shows Alice's submission:
  no payload runs (each would append to ``window.__pwned``, set ``document.title`` and
  request ``/pe-xss-hit``), formulas are MathML and the Markdown table a table, the grading
  guide sits beside the answer, and the page comes with a Content-Security-Policy;
- a script reflected by one of nbgrader's own list pages (its template writes the URL into
  an inline script) is stopped by that policy alone;
- Alice's and Bob's feedback pages and the class report: no payload runs either.

Each test fails while its attack works (before the pages were cleaned, every payload
below ran; see docs/security.md).
"""

from __future__ import annotations

import re
import secrets
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest

from helpers import cli
from helpers.teacher.classroom import report as class_report
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import feedback
from tests import classroom_kit as kit
from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, _free_port, _skip_reason

pytestmark = [pytest.mark.slow, pytest.mark.browser]
ASSIGNMENT = "01_order"
HIT = "pe-xss-hit"


def _js(tag: str) -> str:
    """What a payload runs: visible three ways (a global, the title, a request)."""
    return (
        f"window.__pwned=(window.__pwned||[]).concat(['{tag}']);"
        f"document.title='PWNED {tag}';fetch('/{HIT}?{tag}')"
    )


def _markdown_payloads(where: str) -> str:
    return "\n\n".join(
        [
            f'<img src=x onerror="{_js(where + "-img")}">',
            f"<script>{_js(where + '-script')}</script>",
            f'<a href="javascript:{_js(where + "-link")}">click me {where}</a>',
            f'<svg onload="{_js(where + "-svg")}"><circle r="4"/></svg>',
            (
                f"<iframe srcdoc=\"<script>parent.document.title='PWNED {where}-iframe'</script>\">"
                "</iframe>"
            ),
            f'<details open ontoggle="{_js(where + "-details")}"><summary>s</summary>d</details>',
            f'<input autofocus onfocus="{_js(where + "-focus")}">',
        ]
    )


FORMULA = r"The angle is $\theta_i = 10000^{-2i/d}$ and"
TABLE = "| token | position |\n|---|---|\n| ate | 2 |\n| rice | 3 |"
ANSWER = (
    "Each output row is a softmax-weighted sum over all tokens.\n\n"
    f"{FORMULA}\n\n$$\\sum_j a_{{ij}} = 1$$\n\n{TABLE}\n\n{_markdown_payloads('answer')}"
)
# a file name cannot hold "/": this payload only sets the title
NAME_PAYLOAD = "<img src=x onerror=document.title='PWNED-name'>.ipynb"


def _outputs_cell() -> nbformat.NotebookNode:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" onload="'
        + _js("output-svg")
        + '"><circle r="4"/></svg>'
    )
    cell = nbformat.v4.new_code_cell("show()")
    cell.metadata["tags"] = [f'x" autofocus tabindex="1" onfocus="{_js("tags")}']
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": _markdown_payloads("output-html"), "text/plain": "html"},
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"text/markdown": _markdown_payloads("output-md"), "text/plain": "md"},
        ),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": svg, "text/plain": "svg"}),
        nbformat.v4.new_output(
            "display_data", data={"application/javascript": _js("output-js"), "text/plain": "js"}
        ),
        nbformat.v4.new_output(
            "execute_result",
            data={"text/html": f'<img src=x onerror="{_js("result")}">', "text/plain": "r"},
            execution_count=1,
        ),
    ]
    return cell


# Files a learner adds to a submission: a page whose script comes from the same folder (the
# Formgrader's policy allows scripts of its own origin), and an SVG that runs its own.
LEARNER_FILES = {
    "x.html": '<html><body><h1>hello</h1><script src="x.js"></script></body></html>',
    "x.js": _js("file-js"),
    "x.svg": (
        '<svg xmlns="http://www.w3.org/2000/svg"><script>'
        + _js("file-svg").replace("&", "&amp;").replace("<", "&lt;")
        + "</script></svg>"
    ),
}


# a Markdown image of an attachment the cell does not hold: nbconvert raised "missing
# attachment", the Formgrader's page was HTTP 500 and feedback stopped for the class
MISSING_ATTACHMENT = "A figure: ![plot](attachment:nowhere.png)"


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if _skip_reason():
        pytest.skip(_skip_reason())
    tmp = tmp_path_factory.mktemp("pages")
    course = kit.course_with(tmp, [ASSIGNMENT])
    (course / "roster.csv").write_text(
        "student_id,name,email,lms_id,section\n"
        "alice,Ada Lovelace,ada@example.org,1,A\nbob,김민준,bob@example.org,2,A\n",
        encoding="utf-8",
    )
    path = kit.fill(course, "alice", ASSIGNMENT, broken=["answer_attention"], how="wrong")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _meta(cell).get("grade"):
            cell.source = ANSWER
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(_markdown_payloads("markdown")))
    nb.cells.insert(2, nbformat.v4.new_markdown_cell(MISSING_ATTACHMENT))
    nbformat.write(nb, path)
    # Alice is late by years: the course's penalty is capped at 50 % (nbgrader_config.py)
    config = course / "nbgrader_config.py"
    config.write_text(
        config.read_text(encoding="utf-8")
        + f"\nc.ApplyDueDates.duedates = {{{ASSIGNMENT!r}: '2020-01-01 00:00:00 UTC'}}\n",
        encoding="utf-8",
    )
    (path.parent / "timestamp.txt").write_text("2026-11-01 00:00:00.000000 UTC\n")
    for name, text in LEARNER_FILES.items():  # files beside the notebook, copied by autograde
        (path.parent / name).write_text(text, encoding="utf-8")
    bob = kit.fill(course, "bob", ASSIGNMENT)
    bob.rename(bob.with_name(NAME_PAYLOAD))
    report = autograde(course, jobs=2, progress=False)
    graded_nb = course / "autograded" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(graded_nb, as_version=4)
    nb.cells.insert(2, _outputs_cell())
    nbformat.write(nb, graded_nb)
    assert report is not None
    return course


@pytest.fixture(scope="module")
def grade_ui(graded, tmp_path_factory):
    """The Formgrader as ``python -m helpers grade-ui --port N`` starts it."""
    tmp = tmp_path_factory.mktemp("grade-ui")
    port, token = _free_port(), secrets.token_hex(16)
    cmd = cli.grade_ui_command(graded, port=port)
    assert f"--ServerApp.port={port}" in cmd
    cmd = [
        *[c for c in cmd if c != "--allow-root"],
        "--allow-root",
        "--no-browser",
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
    log = tmp / "lab.log"
    with kit.lab_server(cmd, graded, env, log, port, token) as url:
        yield url, token, log


class Watch:
    """A page watched for any sign that a payload ran."""

    def __init__(self, page):
        self.page, self.hits, self.dialogs, self.violations = page, [], [], []
        page.on(
            "request",
            lambda r: (
                self.hits.append(r.url)
                if urllib.parse.urlparse(r.url).path.endswith(f"/{HIT}")
                else None
            ),
        )
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.console: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def _console(self, message) -> None:
        self.console.append(f"{message.type}: {message.text}")
        if "Content Security" in message.text:
            self.violations.append(message.text)

    def ran(self) -> list:
        """Everything a payload left: globals, title, requests, dialogs."""
        self.page.wait_for_timeout(1500)
        pwned = self.page.evaluate("window.__pwned || []")
        title = self.page.title()
        found = list(pwned) + self.hits + self.dialogs
        if "PWNED" in title:
            found.append(f"title: {title}")
        return found


def _browser(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)


def _click_links(page) -> None:
    """Click every link a payload made (a javascript: link runs only when clicked)."""
    for link in page.get_by_text(re.compile("click me")).all():
        if link.is_visible():
            link.click(timeout=2000, no_wait_after=True)
            page.wait_for_timeout(200)


def _open_submission(page, url: str, token: str) -> None:
    page.goto(f"{url}/?token={token}")
    page.wait_for_url("**/formgrader**")
    page.goto(f"{url}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
    page.wait_for_selector("text=Submission #1")
    page.get_by_text("Show All Names").click()
    page.get_by_role("link", name="Lovelace, Ada").click()  # the roster's name
    page.wait_for_load_state("networkidle")


def test_formgrader_submission_runs_nothing_a_learner_wrote(graded, grade_ui):
    from playwright.sync_api import sync_playwright

    url, token, _ = grade_ui
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            watch = Watch(page)
            _open_submission(page, url, token)
            written = next(
                _meta(c)["grade_id"]
                for c in nbformat.read(
                    graded / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4
                ).cells
                if c.cell_type == "markdown" and _meta(c).get("grade")
            )
            page.wait_for_selector(f"#{written}")
            _click_links(page)
            assert watch.ran() == []
            # the Formgrader itself still works: its scripts filled the autograded scores
            page.wait_for_function("window.formgrader && window.formgrader.grades.loaded")
            filled = page.locator("input.score").evaluate_all(
                "els => els.filter(e => e.placeholder !== '').length"
            )
            assert filled > 0, watch.console
            answer = page.locator(".pe-answer").first
            # formulas as MathML (no raw $...$), the Markdown table as a table
            assert answer.locator("math").count() >= 2
            assert answer.locator("math").first.bounding_box()["width"] > 10
            text = answer.inner_text()
            assert "$" not in text and "\\theta" not in text, text
            assert answer.locator("table td").count() == 4
            # the grading guide beside the answer, to its right
            guide = page.locator(".pe-guide").first
            assert "Grading guide" in guide.inner_text()
            assert guide.bounding_box()["x"] > answer.bounding_box()["x"] + 200
            # the score before and after the late penalty, each labelled
            from nbgrader.api import Gradebook

            with Gradebook(f"sqlite:///{graded / 'gradebook.db'}") as gb:
                sub = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "alice")
                score, top = float(sub.score), float(sub.max_score)
                penalty = float(sub.late_submission_penalty or 0)
            assert score > 0 and penalty == pytest.approx(0.5 * score)  # the 50 % cap
            said = page.inner_text(".pe-score")
            assert f"Score after the late penalty: {score - penalty:g} / {top:g}" in said, said
            assert f"before the penalty {score:g}; late penalty −{penalty:g}" in said, said
            page.screenshot(path=str(ARTIFACTS / "pages_formgrader_submission.png"))
        finally:
            browser.close()
    # the page's Content-Security-Policy: no inline script but the template's own
    with urllib.request.urlopen(f"{url}/formgrader/gradebook?token={token}", timeout=30) as r:
        policy = r.headers.get("Content-Security-Policy", "")
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy.split("style-src")[0]


def test_a_script_reflected_by_a_formgrader_page_is_stopped_by_its_policy(grade_ui):
    """nbgrader's list pages write the student id of the URL into an inline script,
    unescaped: a link a learner hands the teacher (allowed in an answer: it is http) would
    run. The Content-Security-Policy alone stops it."""
    from playwright.sync_api import sync_playwright

    url, token, _ = grade_ui
    evil = urllib.parse.quote(f'x";{_js("reflected")};"', safe="")
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            watch = Watch(page)
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            page.goto(f"{url}/formgrader/manage_students/{evil}")
            page.wait_for_load_state("networkidle")
            assert watch.ran() == []
            assert watch.violations, "the policy reported no blocked script"
            # the page's own scripts run: nbgrader's list shows its table
            page.goto(f"{url}/formgrader/manage_students")
            page.wait_for_selector("text=Ada")
            body = page.inner_text("body")
            assert "Lovelace, Ada" in body and "김, 민준" in body, body
            assert "None, None" not in body and "ada@example.org" in body
            page.screenshot(path=str(ARTIFACTS / "pages_manage_students.png"))
        finally:
            browser.close()


def test_a_formgrader_page_opened_again_runs_its_own_scripts(grade_ui):
    """A Formgrader page the browser has seen (opened again, reloaded) is sent whole with
    its policy: a revalidation answered ``304`` once carried a policy computed from no page,
    which blocked nbgrader's own inline scripts, and the reloaded list stayed empty. No page
    breaks its policy, and "Add new assignment..." (an inline handler) opens its dialog."""
    from playwright.sync_api import sync_playwright

    url, token, _ = grade_ui
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            watch = Watch(page)
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            row = page.locator(f"tr:has(td.name[data-order='{ASSIGNMENT}'])")
            for visit in ("goto", "goto", "reload", "reload"):
                if visit == "goto":
                    page.goto(f"{url}/formgrader/manage_assignments")
                else:
                    page.reload()
                row.locator("td.num-submissions").get_by_text("2").wait_for()
            page.goto(f"{url}/formgrader/manage_students")
            page.reload()
            page.get_by_text("Lovelace, Ada").wait_for()
            page.goto(f"{url}/formgrader/manage_assignments")
            page.get_by_role("link", name="Add new assignment...").click()
            page.locator(".modal-dialog", has_text="Add New Assignment").wait_for()
            assert watch.violations == [] and watch.ran() == [], watch.console
            assert not [c for c in watch.console if c.startswith("pageerror")], watch.console
        finally:
            browser.close()
    request = urllib.request.Request(
        f"{url}/formgrader/manage_assignments?token={token}", headers={"If-None-Match": "*"}
    )
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.status == 200 and r.headers["Cache-Control"] == "no-store"
        assert "sha256-" in r.headers["Content-Security-Policy"]


def _submission_id(course: Path, student: str) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).id


def test_a_learners_files_are_never_active_content_on_the_teachers_origin(graded, grade_ui):
    """Autograde copies every file of a submission to ``autograded/``, and the Formgrader
    serves them at ``/formgrader/submissions/<id>/<file>`` under its own policy, whose
    ``script-src 'self'`` ran a learner's ``x.js`` loaded by their ``x.html`` on the
    teacher's origin. Each such file now comes in a ``sandbox`` policy and, unless it is a
    plain image, as a download."""
    from playwright.sync_api import Error, sync_playwright

    url, token, _ = grade_ui
    sid = _submission_id(graded, "alice")
    assert (graded / "autograded" / "alice" / ASSIGNMENT / "x.html").is_file()
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            watch = Watch(page)
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            for name in ("x.html", "x.svg"):
                try:
                    page.goto(f"{url}/formgrader/submissions/{sid}/{name}")
                except Error as exc:  # a download: nothing rendered
                    assert "Download is starting" in str(exc), exc
                page.wait_for_timeout(1000)
            assert watch.ran() == [], watch.ran()
        finally:
            browser.close()
    for name in LEARNER_FILES:
        with urllib.request.urlopen(
            f"{url}/formgrader/submissions/{sid}/{name}?token={token}", timeout=30
        ) as r:
            policy = r.headers.get("Content-Security-Policy", "")
            assert policy.startswith("sandbox") and "frame-ancestors 'none'" in policy, policy
            assert r.headers.get("Content-Disposition") == "attachment", name


def test_no_page_of_the_teachers_origin_can_frame_the_formgrader(graded, grade_ui):
    """Any page of the teacher's origin (on a hub without subdomains, a learner's own
    server is one) could frame the Formgrader (``frame-ancestors 'self'``) and read it
    with the teacher's session: the solutions, the gradebook. The Formgrader, feedback and
    report pages now forbid every frame (``frame-ancestors 'none'``)."""
    from playwright.sync_api import sync_playwright

    url, token, _ = grade_ui
    feedback(graded, [ASSIGNMENT], exchange=None)
    class_report.write(graded, [ASSIGNMENT])
    framed = [
        "formgrader/gradebook",
        f"formgrader/submissions/{_submission_id(graded, 'alice')}/",
        f"files/feedback/alice/{ASSIGNMENT}/{ASSIGNMENT}.html",
        f"view/feedback/alice/{ASSIGNMENT}/{ASSIGNMENT}.html",
    ]
    read = """async (src) => {
        const f = document.createElement("iframe");
        f.src = src;
        document.body.appendChild(f);
        await new Promise((ok) => { f.onload = ok; setTimeout(ok, 8000); });
        await new Promise((ok) => setTimeout(ok, 500));
        try { return f.contentDocument.body.innerText.slice(0, 200); }
        catch (e) { return null; }
    }"""
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            page.goto(f"{url}/api/status")  # a page of the same origin, the attacker's stand-in
            got = {path: page.evaluate(read, f"{url}/{path}") for path in framed}
        finally:
            browser.close()
    assert not [p for p, text in got.items() if text], got
    for path in framed:
        with urllib.request.urlopen(f"{url}/{path}?token={token}", timeout=30) as r:
            policy = r.headers.get("Content-Security-Policy", "")
            assert (
                "frame-ancestors 'none'" in policy
                and "'self'" not in policy.split("frame-ancestors")[1].split(";")[0]
            ), (path, policy)


def test_a_missing_attachment_costs_nothing_but_its_image(graded, grade_ui):
    """Alice's notebook shows an image of an attachment it does not hold. Her Formgrader
    page renders (it was HTTP 500) and her feedback is generated with the rest (feedback
    stopped at her)."""
    url, token, _ = grade_ui
    sid = _submission_id(graded, "alice")
    with urllib.request.urlopen(
        f"{url}/formgrader/submissions/{sid}/?token={token}", timeout=60
    ) as r:
        assert r.status == 200
        page = r.read().decode("utf-8")
    assert "A figure:" in page and "nowhere.png" not in page.split("A figure:")[1][:300]
    feedback(graded, [ASSIGNMENT], exchange=None)
    alice = graded / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert "A figure:" in alice.read_text(encoding="utf-8")


def test_grade_ui_says_a_missing_exchange_once(grade_ui):
    """Every Formgrader request probes the exchange; a missing one is said once."""
    from playwright.sync_api import sync_playwright

    url, token, log = grade_ui
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            page.goto(f"{url}/?token={token}")
            for where in ("manage_assignments", "gradebook", "manage_students"):
                page.goto(f"{url}/formgrader/{where}")
                page.wait_for_load_state("networkidle")
        finally:
            browser.close()
    text = log.read_text(encoding="utf-8")
    assert text.count("Unwritable directory") == 1, text
    assert "said once" in text


def _open_file(path: Path) -> list:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            watch = Watch(page)
            page.goto(path.as_uri())
            _click_links(page)
            ran = watch.ran()
            math = page.locator("math").count()
            text = page.inner_text("body")
        finally:
            browser.close()
    return [ran, math, text]


def test_feedback_and_report_pages_run_nothing_a_learner_wrote(graded):
    feedback(graded, [ASSIGNMENT], exchange=None)
    alice = graded / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ran, math, text = _open_file(alice)
    assert ran == []
    assert math >= 2  # the answer's formulas, as MathML
    assert "No response." not in text
    # a partly right test cell's result (the share of its points nbgrader reads) is not
    # shown raw under its verdict
    nb = nbformat.read(graded / "autograded" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    raw = [
        o["data"]["text/plain"]
        for c in nb.cells
        if c.cell_type == "code" and _meta(c).get("grade")
        for o in c.get("outputs", [])
        if o.get("output_type") == "execute_result"
    ]
    assert raw, "no test cell was partly right"
    html = alice.read_text(encoding="utf-8")
    shown = [
        r
        for r in raw
        if re.search(r"output_execute_result[^>]*>\s*<pre>\s*" + re.escape(r) + r"\s*</pre>", html)
    ]
    assert not shown, shown
    pages = list((graded / "feedback" / "bob").rglob("*.html"))
    assert pages, "bob has no feedback page"
    for page in pages:
        assert _open_file(page)[0] == []
    out = class_report.write(graded, [ASSIGNMENT])
    for page in sorted(out.parent.glob("*.html")):
        ran, _, text = _open_file(page)
        assert ran == [], page
    page = (out.parent / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_report_names_the_function_of_each_mistake():
    """The report's mistakes table: one row per (function, mistake), the function first."""
    rep = class_report.AssignmentReport("06_rope", "en", 15.0, {"alice": 3.0, "bob": 4.0}, {})
    rep.mistakes = {("apply_rope", "split halves"): ["alice", "bob"], ("thetas", "x"): ["bob"]}
    page = class_report.assignment_page(rep)
    table = page[page.index('<table class="mistakes">') :]
    table = table[: table.index("</table>")]
    assert "<th>function</th><th>mistake</th>" in table
    cells = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", table)[1:]]
    assert cells[0][:3] == ["<code>apply_rope</code>", "split halves", "2"], cells
    assert cells[1][:3] == ["<code>thetas</code>", "x", "1"], cells
    assert rep.counts()["named mistakes"] == 2


def _js_number(x: float) -> str:
    """A score as nbgrader's pages write it (rounded to 2 places, as JavaScript prints it)."""
    return f"{round(x, 2):g}"


def test_formgrader_list_pages_show_scores_after_the_late_penalty(graded, grade_ui):
    """Every list page of the Formgrader that shows a learner's score (or an average of
    them) shows it after the late penalty, under a column that says so: Alice, late by
    years, has half her score taken (the 50 % cap), Bob none."""
    from nbgrader.api import Gradebook
    from playwright.sync_api import sync_playwright

    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}") as gb:
        alice = gb.find_submission(ASSIGNMENT, "alice")
        bob = gb.find_submission(ASSIGNMENT, "bob")
        top = float(alice.max_score)
        a_score, a_pen = float(alice.score), float(alice.late_submission_penalty or 0)
        b_score, b_pen = float(bob.score), float(bob.late_submission_penalty or 0)
    assert a_score > 0 and a_pen == pytest.approx(0.5 * a_score) and b_pen == 0
    a_after, b_after = a_score - a_pen, b_score
    assert _js_number(a_after) != _js_number(a_score)
    label = "Overall score after the late penalty"
    url, token, _ = grade_ui
    pages = {
        # page: (the row it reads, the score it must show, the column's label)
        "manage_students": ("Lovelace, Ada", a_after, label),
        "manage_students/alice": (ASSIGNMENT, a_after, label),
        f"manage_students/alice/{ASSIGNMENT}": (ASSIGNMENT, a_after, label),
        f"manage_submissions/{ASSIGNMENT}": ("Lovelace", a_after, "Score after the late penalty"),
        f"gradebook/{ASSIGNMENT}": (ASSIGNMENT, (a_after + b_after) / 2, "Average score after"),
        "gradebook": (ASSIGNMENT, (a_after + b_after) / 2, "Score after the late penalty"),
    }
    seen = {}
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 700})
            page.goto(f"{url}/?token={token}")
            page.wait_for_url("**/formgrader**")
            for where, (row_text, score, header) in pages.items():
                page.goto(f"{url}/formgrader/{where}")
                page.wait_for_selector(f"tbody tr:has-text('{row_text}') td.text-center")
                page.wait_for_function(
                    "() => [...document.querySelectorAll('tbody td')].some("
                    "td => / \\/ /.test(td.innerText))"
                )
                heads = page.locator("thead th").all_inner_texts()
                assert any(header in h for h in heads), (where, heads)
                row = page.locator("tbody tr", has_text=row_text).first.inner_text()
                seen[where] = row
                assert f"{_js_number(score)} / {_js_number(top)}" in row, (where, row)
                assert "Code, written and task scores are before it" in page.inner_text(
                    ".pe-late-note"
                )
                name = where.replace("/", "_")
                page.screenshot(path=str(ARTIFACTS / f"pages_late_{name}.png"))
            # Manual Grading's list of one notebook's submissions: both learners' scores
            page.goto(f"{url}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
            page.wait_for_selector("text=Submission #1")
            page.get_by_text("Show All Names").click()
            heads = page.locator("thead th").all_inner_texts()
            assert any(label in h for h in heads), heads
            # (Bob's notebook is under another name: Alice's is the only one)
            row = page.locator("tbody tr", has_text="Lovelace, Ada").first.inner_text()
            assert f"{_js_number(a_after)} / {_js_number(top)}" in row, row
            assert page.locator("tbody tr", has_text="민준").count() == 0
            page.screenshot(path=str(ARTIFACTS / "pages_late_gradebook_submissions.png"))
        finally:
            browser.close()
    print(seen)


def test_a_huge_notebook_does_not_freeze_the_teachers_server(graded, grade_ui):
    """A notebook of tens of thousands of cells took minutes to render in the server's
    event loop, and the teacher's whole server (Lab, terminals, the Formgrader) waited. The
    page renders in a thread of its own and shows a capped page that names the file;
    meanwhile the server answers at once."""
    import threading
    import time

    url, token, _ = grade_ui
    path = graded / "autograded" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    saved = path.read_bytes()
    nb = nbformat.reads(saved.decode("utf-8"), as_version=4)
    # ids of their own: 30,000 random ids of 8 hex digits collide about one run in ten
    nb.cells += [
        nbformat.v4.new_markdown_cell(f"padding {i}", id=f"pad-{i}") for i in range(30_000)
    ]
    nbformat.write(nb, path)
    got: dict = {}

    def render():
        sid = _submission_id(graded, "alice")
        with urllib.request.urlopen(
            f"{url}/formgrader/submissions/{sid}/?token={token}", timeout=900
        ) as r:
            got["page"] = r.read().decode("utf-8")

    try:
        worker = threading.Thread(target=render)
        worker.start()
        time.sleep(3)  # the page is rendering
        waits = []
        for _ in range(5):
            start = time.monotonic()
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=900) as r:
                assert r.status == 200
            waits.append(time.monotonic() - start)
            time.sleep(1)
        rendering = worker.is_alive()
        worker.join(900)
    finally:
        path.write_bytes(saved)
    assert max(waits) < 5, (waits, rendering)
    assert "30," in got["page"] and "cells" in got["page"] and "padding 29999" not in got["page"]
