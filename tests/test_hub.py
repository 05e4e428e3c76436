"""A class on a real JupyterHub of this machine, in headless Chromium.

``helpers.teacher.classroom.hub`` starts the course's hub (PAM accounts of a roster, the
local process spawner, nbgrader's groups, the learner environment) for a teacher and three
learners whose accounts are named under a prefix of this test; then, through the browser:

1. the teacher logs in and, in the Formgrader (a tab of its own), generates and releases
   ``01_order``;
2. each learner logs in, fetches it from the Assignments tab, writes answers into the
   notebook (one right, one with the catalogued mistake "missing 1/sqrt(d_k)", one
   unfinished), answers the written question when the notebook has one, runs every cell
   (the self-check is the last), saves and submits;
3. the hub is stopped and started again: the same passwords log in, the release and the
   submissions are still there;
4. the teacher collects (Formgrader), autogrades with ``python -m helpers autograde`` as
   their own account, comments on every submission in the Formgrader, grades the written
   answers and overrides one score, and releases the feedback (``python -m helpers
   feedback``);
5. each learner fetches the feedback and opens it: their verdicts and the teacher's comment,
   no hidden test;
6. ``grades.csv`` holds the manual scores;
7. each learner's own account cannot read another learner's files, submissions or fetched
   feedback, nor the course folder, the gradebook, the secret or the passwords.

Screenshots of every step go to ``artifacts/hub/``; the steps' times are printed and written
to ``artifacts/hub/timings.txt``. The accounts, the hub's processes and its folder are
removed at the end, also when a step fails. Runs as root only (accounts, PAM).
"""

from __future__ import annotations

import csv
import inspect
import json
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from helpers.teacher.checks.order import M_ATTENTION_UNSCALED as MISTAKE
from helpers.teacher.classroom import hub as hubmod
from helpers.teacher.classroom import hub_accounts as accounts
from helpers.teacher.classroom import hub_roster as hubroster
from tests import classroom_kit as kit
from tests import hub_client, rehearsal
from tests.test_browser import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ASSIGNMENT = "01_order"
ARTIFACTS = kit.REPO / "artifacts" / "hub"
MARK = "pe-course hub test"  # the accounts' full name starts with it (leftovers are found)
PREFIX = "pehub" + secrets.token_hex(2)
TEACHER = f"{PREFIX}-teach"
RIGHT, WRONG, PART = f"{PREFIX}-right", f"{PREFIX}-wrong", f"{PREFIX}-part"
LEARNERS = (RIGHT, WRONG, PART)
PART_WRITES = ("answer_softmax", "answer_attention")  # the unfinished learner stops there
OVERRIDE = ("test_attention_scaled", 1.0)  # the wrong learner's cell and its manual score
COMMENTED = "answer_attention"
WRITTEN = "The order of the tokens is lost without positions: attention is a weighted sum."
TIMEOUT_MS = 180_000


def _skip_reason() -> str:
    if os.geteuid() != 0:
        return (
            "the hub test creates Linux accounts and runs JupyterHub's PAM authenticator and "
            "spawner: it needs root (make test as root)"
        )
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM}: `make system-deps`"
    for module, hint in (("playwright", "make setup"), ("jupyterhub", "pip install -e .[hub]")):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed: `{hint}`"
    if not hubmod.proxy_command().exists() and shutil.which("npm") is None:
        return "configurable-http-proxy is not installed and npm is missing: `make system-deps`"
    if not kit.real_ids([ASSIGNMENT]):
        return f"source/{ASSIGNMENT} does not exist"
    return ""


SKIP = _skip_reason()


def _leftovers() -> list[str]:
    """Accounts of an earlier run of this test (their full name starts with MARK)."""
    return [p.pw_name for p in pwd.getpwall() if p.pw_gecos.startswith(MARK)]


class Timings:
    def __init__(self):
        self.steps: list[tuple[str, float]] = []

    @contextmanager
    def step(self, name: str):
        start = time.monotonic()
        try:
            yield
        finally:
            self.steps.append((name, time.monotonic() - start))

    def table(self) -> str:
        total = sum(t for _, t in self.steps)
        lines = [f"{t:7.1f} s  {name}" for name, t in self.steps]
        return "\n".join([*lines, f"{total:7.1f} s  total"])


TIMES = Timings()


STATE_PREFIX = "pe-hub-test-"


def _sweep() -> None:
    """What an earlier run killed before its clean-up left: its hub, folder and accounts."""
    for state in Path(tempfile.gettempdir()).glob(STATE_PREFIX + "*"):
        hubmod.stop(hubroster.Hub(state, kit.REPO, "positional-encodings"))
        shutil.rmtree(state, ignore_errors=True)
    accounts.remove_accounts(_leftovers())


# What a checkout leaves out of a copy (the venv, the build's and the tests' outputs).
CLONE_TOP_IGNORE = {".git", ".venv", "artifacts", "demo", "dist", ".pytest_cache"}


def _clone_ignore(folder: str, names: list[str]) -> set[str]:
    top = CLONE_TOP_IGNORE if Path(folder) == kit.REPO else set()
    return {n for n in names if n in top or n == "__pycache__" or n.endswith(".pyc")}


def private_checkout(top: Path) -> Path:
    """The course as a careful teacher keeps it: a checkout inside a folder of mode 0700
    (``mktemp -d``), with the hub's proxy (``.proxy/``) of this checkout."""
    course = top / "positional-encodings"
    shutil.copytree(kit.REPO, course, ignore=_clone_ignore, symlinks=True)
    assert stat.S_IMODE(top.stat().st_mode) == 0o700
    return course


@pytest.fixture(scope="module")
def cls():
    """The class's hub, started from a private checkout: accounts, the hub on free ports,
    its folder; all removed after."""
    _sweep()
    state = Path(tempfile.mkdtemp(prefix=STATE_PREFIX))
    os.chmod(state, 0o755)
    checkout = private_checkout(Path(tempfile.mkdtemp(prefix=STATE_PREFIX, dir=state)))
    roster = state / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*hubroster.ROSTER_FIELDS, "role"])
        writer.writerow([TEACHER, f"{MARK} teacher", "t@example.org", "T0", "A", "teacher"])
        for i, name in enumerate(LEARNERS, start=1):
            writer.writerow([name, f"{MARK} {i}", f"l{i}@example.org", f"L{i}", "A", ""])
    members = hubroster.read_roster(roster)
    hub = hubroster.Hub(state, checkout, "positional-encodings")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    try:
        with TIMES.step("hub: accounts, environments, JupyterHub started"):
            url = hubmod.start(hub, members, hubmod._free_port(), ids=[ASSIGNMENT])
        with open(hub.passwords, newline="", encoding="utf-8") as fh:
            passwords = {row["id"]: row["password"] for row in csv.DictReader(fh)}
        yield {"hub": hub, "url": url, "passwords": passwords, "members": members}
    finally:
        print("\nsteps of the class on the hub:\n" + TIMES.table())
        start = time.monotonic()
        try:
            hubmod.stop(hub)
        finally:
            accounts.remove_accounts([m.id for m in members])
            shutil.rmtree(state, ignore_errors=True)
            print(
                f"clean-up (hub stopped, accounts and files removed): "
                f"{time.monotonic() - start:.1f} s"
            )


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


# --------------------------------------------------------------------------- browser steps


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


# What the teacher's browser said on the Formgrader's pages against their policy (or a
# script error there): (page, message). nbgrader's own scripts must all run.
FORMGRADER_CONSOLE: list[tuple[str, str]] = []


def _watch_console(page) -> None:
    def said(text: str) -> None:
        if "/formgrader" in page.url and (
            "Content Security Policy" in text or text.startswith("pageerror")
        ):
            FORMGRADER_CONSOLE.append((page.url, text))

    page.on("console", lambda m: said(m.text))
    page.on("pageerror", lambda e: said(f"pageerror: {e}"))


def _login(browser, cls, user: str):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    _watch_console(page)
    page.goto(cls["url"] + "/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", cls["passwords"][user])
    page.click("#login_submit")
    page.wait_for_url("**/lab**")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
    return page


def _modal_ok(page, expect: str) -> str:
    """Wait for the Formgrader's dialog, check it says ``expect``, close it; its text."""
    dialog = page.locator(".modal-dialog")
    dialog.wait_for()
    text = dialog.inner_text()
    page.locator(".modal-footer button").first.click()
    dialog.wait_for(state="detached")
    assert expect in text, f"the Formgrader said:\n{text[:2000]}"
    return text


def _formgrader(page, cls, path: str = "manage_assignments") -> None:
    page.goto(f"{cls['url']}/user/{TEACHER}/formgrader/{path}")
    page.wait_for_load_state("networkidle")


def _assignments_tab(page) -> None:
    tab = page.locator(".lm-TabBar-tab", has_text="Assignments")
    if tab.count():
        tab.first.click()
        page.locator("#refresh_assignments_list").click()
    else:
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
        page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()


def _released_notebook() -> nbformat.NotebookNode:
    return nbformat.read(kit.REPO / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)


def _written_cells(nb) -> list[int]:
    """Indices of the written answers (markdown cells graded by hand)."""
    return [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown"
        and c.metadata.get("nbgrader", {}).get("solution")
        and c.metadata.get("nbgrader", {}).get("grade")
    ]


def _mistake_answer() -> str:
    """The catalogued mistake "missing 1/sqrt(d_k)" as a learner would write it."""
    lines = inspect.getsource(MISTAKE.impl).splitlines()
    code = "\n".join(ln for ln in lines if '"""' not in ln)  # its docstring names it
    return code.replace("def attention_unscaled(", "def attention(").replace(
        "ref.softmax(", "softmax("
    )


def _answers(learner: str) -> dict[str, str]:
    source = nbformat.read(kit.REPO / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    right = {g: c for g, c in rehearsal.solution_cells(source).items() if g.startswith("answer")}
    if learner == WRONG:
        return right | {"answer_attention": _mistake_answer()}
    if learner == PART:
        return {g: right[g] for g in PART_WRITES}
    return right


# Every code cell's prompt: some ran, none waits.
RUN_DONE_JS = """() => {
  const prompts = [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')].map(e => e.innerText);
  return prompts.some(t => /\\d/.test(t)) && !prompts.some(t => t.includes('*'));
}"""


# Every code cell's prompt has its execution count.
ALL_RUN_JS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]
    .every(e => /\\[\\d+\\]/.test(e.innerText))"""


def _type_into(page, cell, text: str) -> None:
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").first.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)


def _learner_works(browser, cls, learner: str) -> str:
    """Fetch, answer, self-check, save and submit as ``learner``; the self-check's text."""
    page = _login(browser, cls, learner)
    try:
        _assignments_tab(page)
        released = page.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
        released.locator("button", has_text="Fetch").click()
        page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for()
        _shot(page, f"2-{learner}-fetched")
        page.goto(
            f"{cls['url']}/user/{learner}/lab/tree/positional-encodings/{ASSIGNMENT}/"
            f"{ASSIGNMENT}.ipynb?reset"
        )
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
        nb = _released_notebook()
        cells = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")
        page.wait_for_function(  # every cell in the page (the hub's windowingMode none)
            "n => document.querySelectorAll("
            "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell').length === n",
            arg=len(nb.cells),
        )
        answers = _answers(learner)
        for i, cell in enumerate(nb.cells):
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                _type_into(page, cells.nth(i), answers[gid])
        for i in _written_cells(nb) if learner != PART else ():  # PART leaves it unwritten
            cells.nth(i).dblclick()
            _type_into(page, cells.nth(i), WRITTEN)
        page.keyboard.press("Escape")
        page.get_by_role("menuitem", name="Run").first.click()
        page.get_by_text("Run All Cells", exact=True).first.click()
        page.wait_for_function(RUN_DONE_JS)
        # Run All stops at a failing cell: the learner runs each cell left, one by one
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        for i in code:
            if not re.search(r"\d", cells.nth(i).locator(".jp-InputPrompt").inner_text()):
                cells.nth(i).scroll_into_view_if_needed()
                cells.nth(i).locator(".cm-content").first.click()
                page.keyboard.press("Control+Enter")
        page.wait_for_function(ALL_RUN_JS)
        check = cells.nth(code[-1])  # the self-check
        check.scroll_into_view_if_needed()
        shown = check.locator(".jp-OutputArea")
        # the table's rows as the page lays them out, then all of it, the closed details too
        verdict = shown.inner_text() + "\n" + shown.text_content()
        _shot(page, f"2-{learner}-self-check")
        page.keyboard.press("Control+s")
        page.locator(".jp-mod-dirty").first.wait_for(state="detached")
        _assignments_tab(page)
        fetched = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
        fetched.locator("button", has_text="Submit").first.click()
        page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for()
        _shot(page, f"2-{learner}-submitted")
        return verdict
    finally:
        page.context.close()


def _token(user: str) -> str:
    """The user's own token: its server's (``JUPYTERHUB_API_TOKEN``, as ``echo
    $JUPYTERHUB_API_TOKEN`` shows it in the user's terminal), read from /proc."""
    found = subprocess.run(
        ["pgrep", "-n", "-u", user, "-f", "jupyterhub.singleuser"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, f"no server of {user} runs"
    raw = Path(f"/proc/{found.stdout.split()[0]}/environ").read_bytes()
    env = dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)
    return env["JUPYTERHUB_API_TOKEN"]


def _terminal(cls, user: str, command: str, check: bool = True) -> str:
    """``command`` typed into a real terminal of ``user``'s running server on the hub (opened
    through the hub as JupyterLab opens one, with the user's token): what it printed."""
    token = _token(user)
    server = hub_client.server_url(cls["url"], user, token)
    rc, out = hub_client.terminal(server, token, command)
    if check:
        assert rc == 0, f"{user}$ {command}\n(exit {rc})\n{out}"
    return out


def _submission_page(page, cls, learner: str) -> None:
    _formgrader(page, cls, f"gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
    href = page.locator("a.name-shown", has_text=learner).first.get_attribute("href")
    page.goto(cls["url"] + href)
    page.wait_for_load_state("networkidle")


def _save_field(page, locator, value: str) -> None:
    locator.scroll_into_view_if_needed()
    locator.fill(value)
    locator.press("Tab")  # the Formgrader saves on change


def _teacher_grades(browser, cls, nb) -> None:
    page = _login(browser, cls, TEACHER)
    try:
        for learner in LEARNERS:
            _submission_page(page, cls, learner)
            comment = page.locator(f"textarea#{COMMENTED}-comment")
            _save_field(page, comment, f"Comment for {learner}: check the scale of the scores.")
            if learner == WRONG:
                gid, score = OVERRIDE
                _save_field(page, page.locator(f"input.score#{gid}"), str(score))
            for i in _written_cells(nb):
                gid = nb.cells[i].metadata["nbgrader"]["grade_id"]
                points = nb.cells[i].metadata["nbgrader"]["points"]
                value = str(points) if learner != PART else "0"
                _save_field(page, page.locator(f"input.score#{gid}"), value)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.save-icon')]"
                ".every(e => getComputedStyle(e).display === 'none' || "
                "e.classList.contains('score-saved') || e.classList.contains('comment-saved'))"
            )
            page.wait_for_load_state("networkidle")
            _shot(page, f"3-formgrader-{learner}")
    finally:
        page.context.close()


def _learner_reads_feedback(browser, cls, learner: str) -> str:
    page = _login(browser, cls, learner)
    try:
        _assignments_tab(page)
        submitted = page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT)
        submitted.locator("button", has_text="Fetch Feedback").first.click()
        link = submitted.locator("a", has_text="view feedback").first
        link.wait_for()
        _shot(page, f"4-{learner}-feedback-fetched")
        link.click()  # the file browser goes to the feedback's folder
        page.locator(".jp-DirListing-item", has_text=f"{ASSIGNMENT}.html").dblclick()
        frame = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
        body = frame.locator("body")
        body.get_by_text("Comment for", exact=False).first.wait_for()
        _shot(page, f"4-{learner}-feedback")
        return body.inner_text()
    finally:
        page.context.close()


def _can_read(user: str, *cmd: str) -> bool:
    """``cmd`` succeeds as ``user``, started in the user's home (as a server of the hub)."""
    proc = subprocess.run(
        ["runuser", "-u", user, "--", *cmd],
        cwd=pwd.getpwnam(user).pw_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode == 0


# --------------------------------------------------------------------------- the test


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ready")
def test_a_terminal_of_the_hub_finds_the_course(cls, browser):
    """In a real terminal of each server (its login, then a terminal opened through the hub),
    the commands of the docs find their environment: the teacher's ``python`` is the
    teachers' environment's, with the course package; a learner's ``nbgrader`` is the
    learner environment's."""
    hub = cls["hub"]
    for user in (TEACHER, PART):
        _login(browser, cls, user).context.close()
    said = _terminal(cls, TEACHER, "python -m helpers inbound list && command -v python")
    assert said.split()[-1] == str(hub.teacher_env / "bin" / "python"), said
    said = _terminal(cls, PART, "nbgrader --version && command -v nbgrader")
    assert said.split()[-1] == str(hub.learner_env / "bin" / "nbgrader"), said


# A fork bomb, bounded: children until fork fails (at most twice the limit), then killed.
FORK_BOMB = (
    "{python} -c $'import os, resource, time\\nkids = []\\ntry:\\n"
    "    while len(kids) < {cap}:\\n        pid = os.fork()\\n        if pid == 0:\\n"
    "            time.sleep(60)\\n            os._exit(0)\\n        kids.append(pid)\\n"
    'except OSError as e:\\n    print("refused", e.errno)\\n'
    'print("forked", len(kids))\\nfor k in kids:\\n    os.kill(k, 9)\\n'
    "for k in kids:\\n    os.waitpid(k, 0)\\n'"
)


# two processes of the account that hold 2.5 GiB each (written: the pages are used), the
# second started once the first holds its memory
ACCOUNT_MEMORY = (
    '{python} -c \'import time; x = b"x" * (2560 << 20); print("held", flush=True); '
    "time.sleep(60)' & A=$!; sleep 4; "
    '{python} -c \'x = b"x" * (2560 << 20)\'; echo "second $?"; '
    'kill $A 2>/dev/null; wait $A; echo "first $?"'
)


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ready")
def test_a_learners_terminal_cannot_fork_past_its_limit(cls, browser):
    """A learner's terminal on the hub (a real one, through the hub) has the per-account
    task and memory limits, cannot raise them, and a fork bomb there stops at the limit;
    the exchange's course folders are the teacher's before any learner logs in."""
    hub = cls["hub"]
    _login(browser, cls, WRONG).context.close()
    said = _terminal(
        cls, WRONG, FORK_BOMB.format(python=hub.learner_env / "bin" / "python", cap=2048)
    )
    print(f"\nfork bomb in a learner's terminal: {' '.join(said.split())}")
    forked = int(re.search(r"forked (\d+)", said).group(1))
    assert "refused 11" in said and forked < hubmod.LEARNER_TASKS, said
    # the server and its terminals still work after it
    assert _terminal(cls, WRONG, "echo alive").strip() == "alive"
    said = _terminal(cls, WRONG, "ulimit -u; ulimit -v; ulimit -u 100000 || echo not raised")
    tasks, memory = said.split("\n")[:2]
    assert int(tasks) == hubmod.LEARNER_TASKS and int(memory) * 1024 == hubmod.LEARNER_MEMORY
    assert "not raised" in said, said
    # the account's memory is one limit for all its processes: two of 2.5 GiB each (each
    # within RLIMIT_AS) do not both fit in LEARNER_ACCOUNT_MEMORY, and the kernel ends one
    said = _terminal(cls, WRONG, "grep memory /proc/self/cgroup")
    assert f"/pe-hub-{WRONG}" in said, said
    said = _terminal(cls, WRONG, ACCOUNT_MEMORY.format(python=hub.learner_env / "bin" / "python"))
    print(f"two processes of 2.5 GiB in a learner's terminal: {' '.join(said.split())}")
    assert hubmod.LEARNER_ACCOUNT_MEMORY < 5 << 30
    assert re.search(r"(first|second) 137", said), said
    assert _terminal(cls, WRONG, "echo alive").strip() == "alive"
    for sub, mode in hubmod.COURSE_FOLDERS.items():
        st = (hub.exchange / hub.course_id / sub).stat()
        assert pwd.getpwuid(st.st_uid).pw_name == TEACHER, sub
        assert stat.S_IMODE(st.st_mode) == mode, (sub, oct(st.st_mode))


def test_a_squatted_exchange_folder_is_refused_by_name(tmp_path):
    """``make hub`` makes the course's exchange folders the teacher's; one another account
    made first is refused with its owner and the command that removes it."""
    if os.geteuid() != 0:
        pytest.skip("the hub runs as root")
    hub = hubroster.Hub(tmp_path / "state", kit.REPO, "positional-encodings")
    squatted = hub.exchange / hub.course_id / "inbound"
    squatted.mkdir(parents=True)
    os.chown(squatted, pwd.getpwnam("nobody").pw_uid, -1)
    with pytest.raises(RuntimeError) as refused:
        hubmod.exchange(hub, "root")
    said = str(refused.value)
    assert f"{squatted} was made by nobody" in said and f"rm -r '{squatted}'" in said, said
    squatted.rmdir()
    hubmod.exchange(hub, "root")
    assert stat.S_IMODE(squatted.stat().st_mode) == hubmod.COURSE_FOLDERS["inbound"]


# A learner's own page, served unauthenticated by the learner's own server
# (``c.ServerApp.extra_static_paths``), that tries the teacher's session: it frames the
# teacher's Formgrader, or opens the teacher's Lab in a popup, reads ``_xsrf`` from that
# window's cookies and fetches the solutions, the gradebook and the Formgrader's API, and
# writes a file into the teacher's home, from the page's own origin and from the teacher's.
ATTACK_PAGE = """<!doctype html><html><body><script>
const TEACHER = %(teacher)s, COURSE = %(course)s, TEACHER_ORIGIN = %(teacher_origin)s;
const base = o => o + "/user/" + TEACHER + "/";
const targets = [...new Set([location.origin, TEACHER_ORIGIN])];
async function steal(win, origin, how) {
  const xsrf = (win.document.cookie.match(/(?:^|; )_xsrf=([^;]+)/) || [])[1] || "";
  const h = {"X-XSRFToken": decodeURIComponent(xsrf)};
  const got = {};
  const paths = {
    solution: "api/contents/" + COURSE + "/source/01_order/01_order.ipynb?content=1",
    gradebook: "api/contents/" + COURSE + "/gradebook.db?content=1&type=file&format=base64",
    students: "formgrader/api/students",
  };
  for (const [k, p] of Object.entries(paths)) {
    const r = await win.fetch(base(origin) + p, {headers: h, credentials: "include"});
    got[k] = r.status + " " + (await r.text()).slice(0, 4000);
  }
  const put = await win.fetch(base(origin) + "api/contents/pwned-" + how + ".txt", {
    method: "PUT", credentials: "include",
    headers: Object.assign({"Content-Type": "application/json"}, h),
    body: JSON.stringify({type: "file", format: "text", content: "pwned"})});
  got.put = String(put.status);
  return got;
}
function opened(make) {  // the window once loaded, or why it could not be read
  return new Promise(resolve => {
    const w = make(); const start = Date.now();
    const poll = () => {
      try {
        if (w.document.readyState === "complete" && w.location.href.includes("/user/")) {
          return resolve(w);
        }
      } catch (e) { return resolve("refused: " + e.name); }
      if (Date.now() - start > 20000) return resolve("refused: timeout");
      setTimeout(poll, 200);
    };
    poll();
  });
}
(async () => {
  const result = {};
  for (const origin of targets) {
    for (const how of ["frame", "popup"]) {
      const key = how + " " + origin;
      try {
        let closeIt = () => {};
        const w = await opened(() => {
          if (how === "popup") {
            const p = window.open(base(origin) + "lab", "_blank");
            closeIt = () => p.close();
            return p;
          }
          const f = document.createElement("iframe");
          f.src = base(origin) + "formgrader/manage_assignments";
          document.body.append(f);
          closeIt = () => f.remove();
          return f.contentWindow;
        });
        result[key] = typeof w === "string" ? w : await steal(w, origin, how);
        closeIt();
      } catch (e) {
        result[key] = "refused: " + e;
      }
    }
  }
  window.__attack = result;
})();
</script></body></html>
"""


def _restart_through_the_hub(cls, user: str) -> None:
    """Stop and start ``user``'s server with the user's own token (the hub's REST API), as
    the learner can from its terminal (``$JUPYTERHUB_API_TOKEN``)."""
    api = f"{cls['url']}/hub/api/users/{user}"
    status, text = hub_client.request(f"{api}/tokens", _token(user), "POST", {"note": "mine"})
    assert status in (200, 201), (status, text)
    token = json.loads(text)["token"]
    status, text = hub_client.request(f"{api}/server", token, "DELETE")
    assert status in (202, 204), (status, text)
    deadline = time.monotonic() + 120
    while json.loads(hub_client.request(api, token)[1]).get("server"):
        assert time.monotonic() < deadline, "the learner's server did not stop"
        time.sleep(0.5)
    status, text = hub_client.request(f"{api}/server", token, "POST")
    assert status in (201, 202), (status, text)
    while not json.loads(hub_client.request(api, token)[1]).get("server"):
        assert time.monotonic() < deadline, "the learner's server did not start"
        time.sleep(0.5)


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ready")
def test_a_learners_page_cannot_use_the_teachers_session(cls, browser):
    """One origin per user: a page a learner serves from its own server, opened by the
    teacher logged in to the hub, cannot read the teacher's files, gradebook or Formgrader
    nor write into the teacher's home, neither by framing the teacher's Formgrader nor by
    opening the teacher's Lab in a popup, from its own origin or the teacher's."""
    hub, learner = cls["hub"], PART
    teacher_page = _login(browser, cls, TEACHER)
    _login(browser, cls, learner).context.close()
    home = Path(pwd.getpwnam(learner).pw_dir)
    teacher_server = hub_client.server_url(cls["url"], TEACHER, _token(TEACHER))
    teacher_origin = teacher_server.split("/user/")[0] if "://" in teacher_server else ""
    page = ATTACK_PAGE % {
        "teacher": json.dumps(TEACHER),
        "course": json.dumps(hub.course_id),
        "teacher_origin": json.dumps(teacher_origin or cls["url"]),
    }
    script = (
        "mkdir -p ~/.jupyter ~/pages && cat > ~/pages/notes.html && "
        "echo 'c.ServerApp.extra_static_paths = [\"'$HOME/pages'\"]' "
        "> ~/.jupyter/jupyter_server_config.py"
    )
    subprocess.run(
        ["runuser", "-u", learner, "--", "sh", "-c", script],
        input=page,
        text=True,
        cwd=home,
        check=True,
    )
    try:
        _restart_through_the_hub(cls, learner)
        served = hub_client.server_url(cls["url"], learner, _token(learner)) + "static/notes.html"
        if "://" not in served:
            served = cls["url"] + served
        status, _ = hub_client.request(served, "")
        assert status == 200, f"the learner's page is not served at {served}: {status}"
        teacher_page.goto(served)
        teacher_page.wait_for_function("() => window.__attack", timeout=120_000)
        result = teacher_page.evaluate("() => window.__attack")
        _shot(teacher_page, "0-attack")
    finally:
        teacher_page.context.close()
        (home / ".jupyter" / "jupyter_server_config.py").unlink(missing_ok=True)
        _restart_through_the_hub(cls, learner)
    print("\nthe learner's page, opened by the teacher:\n" + json.dumps(result, indent=1)[:6000])
    teacher_home = Path(pwd.getpwnam(TEACHER).pw_dir)
    written = sorted(p.name for p in teacher_home.glob("pwned-*"))
    # what each answer holds when the read worked (a login page in its place is no theft)
    markers = {
        "solution": lambda v: "BEGIN SOLUTION" in v,
        "gradebook": lambda v: "U1FMaXRlIGZvcm1hdCAz" in v,  # base64 of "SQLite format 3"
        "students": lambda v: v.startswith("200 ["),
    }
    stolen = {
        key: [k for k, check in markers.items() if check(got.get(k, ""))]
        for key, got in result.items()
        if isinstance(got, dict)
    }
    assert written == [], f"the learner's page wrote into the teacher's home: {written}"
    assert not any(stolen.values()), f"the learner's page read the teacher's: {stolen}"
    assert "BEGIN SOLUTION" not in json.dumps(result)
    assert len(result) >= 2, result


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ready")
def test_a_class_on_the_hub(cls, browser):
    hub, nb = cls["hub"], _released_notebook()
    course = hub.course_dir(TEACHER)

    with TIMES.step("teacher: log in, Formgrader: generate and release 01_order"):
        page = _login(browser, cls, TEACHER)
        _shot(page, "1-teacher-lab")
        _formgrader(page, cls)
        row = page.locator(f"tr:has(td.name[data-order='{ASSIGNMENT}'])")
        row.locator("td.assign a").click()
        _modal_ok(page, "Success")
        row.locator("td.release a").click()
        _modal_ok(page, f"Successfully released '{ASSIGNMENT}'")
        page.wait_for_load_state("networkidle")
        _shot(page, "1-teacher-released")
        # the assignment's name (its source) and Preview (the release, which the course's
        # nbgrader_config.py names notebooks/) open the folder in the teacher's Lab, in a tab
        # of their own
        for column, folder in (("name", "source"), ("preview", "notebooks")):
            with page.expect_popup() as popup:
                row.locator(f"td.{column} a").first.click()
            opened = popup.value
            opened.set_default_timeout(TIMEOUT_MS)
            opened.locator(".jp-DirListing-item", has_text=f"{ASSIGNMENT}.ipynb").first.wait_for()
            where = opened.locator(".jp-BreadCrumbs").inner_text()
            assert folder in where and ASSIGNMENT in where, (opened.url, where)
            assert f"/user/{TEACHER}/lab/tree/" in opened.url, opened.url
            _shot(opened, f"1-teacher-{folder}-link")
            opened.close()
        page.context.close()

    verdicts = {}
    for learner in LEARNERS:
        with TIMES.step(f"learner {learner}: fetch, answer, self-check, submit"):
            verdicts[learner] = _learner_works(browser, cls, learner)
    with TIMES.step("learner: nbgrader fetch_assignment in a terminal, as documented"):
        said = _terminal(
            cls, PART, f"mkdir -p ~/t && cd ~/t && nbgrader fetch_assignment {ASSIGNMENT}"
        )
        home = Path(pwd.getpwnam(PART).pw_dir)
        fetched = home / "t" / hub.course_id / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert fetched.is_file(), said
        shutil.rmtree(home / "t")
        # and submitted again from inside the course's folder, where the terminal often is
        said = _terminal(cls, PART, f"cd ~/{hub.course_id} && nbgrader submit {ASSIGNMENT}")
        assert "Submitted as" in said, said

    functions = [g.removeprefix("answer_") for g in _answers(RIGHT)]
    for learner, verdict in verdicts.items():
        print(f"\nself-check of {learner}:\n{verdict}")
        assert "BEGIN HIDDEN TESTS" not in verdict
    # the learner build's own public checks: verdicts, and the mistake named
    assert all("classroom self-check" in text for text in verdicts.values()), verdicts
    table = {learner: _self_check_table(text, functions) for learner, text in verdicts.items()}
    assert set(table[RIGHT].values()) == {"passed"}, table[RIGHT]
    # what calls attention is wrong with it; softmax is right
    assert table[WRONG]["attention"] != "passed" and table[WRONG]["softmax"] == "passed"
    # the table wraps long messages under their column: compare the words
    said = {learner: " ".join(text.split()) for learner, text in verdicts.items()}
    assert MISTAKE.message in said[WRONG] and MISTAKE.message not in said[RIGHT]
    done = [g.removeprefix("answer_") for g in PART_WRITES]
    assert all(table[PART][f] == "passed" for f in done), table[PART]
    assert all(table[PART][f] != "passed" for f in functions if f not in done), table[PART]

    with TIMES.step("hub: stopped (make hub-stop)"):
        port = int(cls["url"].rsplit(":", 1)[1])
        assert hubmod.stop(hub), "the hub ran"
        assert hubmod.running_pid(hub) is None
    with TIMES.step("hub: started again (make hub)"):
        assert hubmod.start(hub, cls["members"], port, ids=[ASSIGNMENT]) == cls["url"]

    with TIMES.step("teacher: Formgrader collect; python -m helpers autograde"):
        page = _login(browser, cls, TEACHER)
        _formgrader(page, cls)
        row = page.locator(f"tr:has(td.name[data-order='{ASSIGNMENT}'])")
        assert row.locator("td.status").inner_text().strip() == "released", "kept: released"
        # a learner's folder forged for another, with a later time: Collect names it and
        # does not say "Success"; the teacher lists and removes it in a terminal
        forged = (
            hub.exchange
            / hub.course_id
            / "inbound"
            / f"{RIGHT}+{ASSIGNMENT}+2099-01-01 000000.000000 UTC+x"
        )
        script = (
            f"mkdir '{forged}' && echo '{{}}' > '{forged}/{ASSIGNMENT}.ipynb' && "
            f"printf %s {secrets.token_hex(64)} > '{forged}/submission_secret.txt'"
        )
        subprocess.run(["runuser", "-u", WRONG, "--", "sh", "-c", script], check=True)
        row.locator("td.collect a").click()
        said = _modal_ok(page, f"refused {forged.name}")
        assert f"owned by {WRONG}" in said and "Success" not in said, said
        listed = _terminal(cls, TEACHER, "python -m helpers inbound list")
        assert forged.name in listed and "refused: named for" in listed, listed
        _terminal(cls, TEACHER, f"python -m helpers inbound remove '{forged.name}'")
        assert not forged.exists()
        _shot(page, "3-teacher-collect-refused")
        row.locator("td.collect a").click()
        _modal_ok(page, "Success")
        page.reload()  # the page as the browser has it: revalidated, its scripts run
        row.locator("td.num-submissions").get_by_text(str(len(LEARNERS))).wait_for()
        _shot(page, "3-teacher-collected")
        assert FORMGRADER_CONSOLE == [], FORMGRADER_CONSOLE
        page.context.close()
        # as docs/classroom.md writes them, in the teacher's terminal
        summary = _terminal(cls, TEACHER, f"python -m helpers autograde {ASSIGNMENT}")
        said = _terminal(cls, TEACHER, "python -m helpers grades")
        assert str(course / "grades.csv") in said, said  # the course's, not ~/grades.csv
        shutil.copy2(course / "grades.csv", course / "grades-auto.csv")
    print(f"\n{summary}")
    assert "no problems" in summary, summary
    assert f"/user/{TEACHER}/formgrader" in summary and "make grade-ui" not in summary, summary

    with TIMES.step("teacher: Formgrader: comments, written answers, one override"):
        _teacher_grades(browser, cls, nb)
    # no page of the Formgrader broke its Content-Security-Policy nor failed a script
    assert FORMGRADER_CONSOLE == [], FORMGRADER_CONSOLE

    with TIMES.step("teacher: python -m helpers feedback; grades"):
        _terminal(
            cls, TEACHER, f"python -m helpers feedback {ASSIGNMENT} --exchange {hub.exchange}"
        )
        _terminal(cls, TEACHER, "python -m helpers grades")

    feedback = {}
    for learner in LEARNERS:
        with TIMES.step(f"learner {learner}: fetch and open feedback"):
            feedback[learner] = _learner_reads_feedback(browser, cls, learner)

    with TIMES.step("access: each learner's account against the others' files"):
        denied = _access_checks(cls)

    (ARTIFACTS / "timings.txt").write_text(TIMES.table() + "\n", encoding="utf-8")

    # feedback: the verdicts, the teacher's comment, no hidden test
    for learner, text in feedback.items():
        assert f"Comment for {learner}" in text, f"{learner}'s feedback lacks the comment"
        assert "BEGIN HIDDEN TESTS" not in text and 'grade("' not in text, (
            f"{learner}'s feedback shows a hidden test"
        )
        assert "test_attention_scaled" in text, f"{learner}'s feedback lacks the verdicts"
    assert MISTAKE.message in feedback[WRONG], "the wrong learner's feedback names the mistake"
    assert MISTAKE.message not in feedback[RIGHT]

    # grades.csv: the manual scores
    auto = _grades(course / "grades-auto.csv")
    final = _grades(course / "grades.csv")
    written = sum(nb.cells[i].metadata["nbgrader"]["points"] for i in _written_cells(nb))
    assert auto[RIGHT] > auto[WRONG] > auto[PART] >= 0, auto
    assert final[RIGHT] == pytest.approx(auto[RIGHT] + written), (auto, final)
    assert final[PART] == pytest.approx(auto[PART]), (auto, final)
    wrong_auto = _auto_score(cls, WRONG, OVERRIDE[0])
    assert final[WRONG] == pytest.approx(auto[WRONG] - wrong_auto + OVERRIDE[1] + written), (
        auto,
        final,
        wrong_auto,
    )

    # access: nothing of the others, nor of the teacher
    readable = {what: users for what, users in denied.items() if users}
    assert not readable, f"learners could read: {readable}"


def _self_check_table(text: str, functions: list[str]) -> dict[str, str]:
    """``function -> verdict`` from the self-check's table (one row per function): the text
    table of a terminal, or the HTML table JupyterLab shows (its rows read with tabs)."""
    found, lines = {}, text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("---")), None)
    if start is None:  # the HTML table: one row a line, its cells between tabs
        rows = [ln.split("\t") for ln in lines if "\t" in ln]
        found = {r[0].strip(): r[1].split()[0] for r in rows if r[0].strip() in functions}
        start = len(lines)
    for line in lines[start + 1 :]:
        words = line.split()
        if not words:
            break  # the table ends; the details of each function follow
        if len(words) >= 2 and words[0] in functions:
            found[words[0]] = words[1]
    assert set(found) == set(functions), f"the self-check lists {sorted(found)}:\n{text}"
    return found


def _grades(path: Path) -> dict[str, float]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: float(row[ASSIGNMENT]) for row in csv.DictReader(fh)}


def _auto_score(cls, learner: str, grade_id: str) -> float:
    """The autograde score of one cell, from the gradebook (read as root)."""
    from nbgrader.api import Gradebook

    course = cls["hub"].course_dir(TEACHER)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade(grade_id, ASSIGNMENT, ASSIGNMENT, learner)
        return float(grade.auto_score or 0.0)


def _access_checks(cls) -> dict[str, list[str]]:
    """``what -> [learners who could read it]`` for every file a learner must not read."""
    hub = cls["hub"]
    course = hub.course_dir(TEACHER)
    exchange = hub.exchange / hub.course_id
    found: dict[str, list[str]] = {}

    def check(what: str, user: str, *cmd: str) -> None:
        found.setdefault(what, [])
        if _can_read(user, *cmd):
            found[what].append(user)

    for learner in LEARNERS:
        for other in LEARNERS:
            if other == learner:
                continue
            home = Path(pwd.getpwnam(other).pw_dir)
            work = home / "positional-encodings" / ASSIGNMENT
            check("another learner's home", learner, "ls", str(home))
            check("another learner's notebook", learner, "cat", str(work / f"{ASSIGNMENT}.ipynb"))
            check("another learner's fetched feedback", learner, "ls", str(work / "feedback"))
        check("the submissions in the exchange", learner, "ls", str(exchange / "inbound"))
        check("the feedback folder of the exchange", learner, "ls", str(exchange / "feedback"))
        check("the course folder", learner, "ls", str(course))
        check("the collected submissions", learner, "ls", str(course / "submitted"))
        check("the gradebook", learner, "cat", str(course / "gradebook.db"))
        check("the grading secret", learner, "cat", str(course / ".grading_secret"))
        check("the grades", learner, "cat", str(course / "grades.csv"))
        check("the passwords", learner, "cat", str(hub.passwords))
        check("the teachers' environment", learner, "ls", str(hub.teacher_env))
        python = str(hub.learner_env / "bin" / "python")
        check("the reference and the checks", learner, python, "-c", "import helpers.teacher")
        # and what a learner must reach: their own work and the released assignment
        own = Path(pwd.getpwnam(learner).pw_dir) / "positional-encodings" / ASSIGNMENT
        assert _can_read(learner, "cat", str(own / f"{ASSIGNMENT}.ipynb")), learner
        assert _can_read(learner, "ls", str(exchange / "outbound" / ASSIGNMENT)), learner
        assert _can_read(learner, python, "-c", "import helpers.grader, nbgrader"), learner
    return found


def test_roster_errors(tmp_path):
    """The roster's mistakes are named: a missing column, a bad account name, no teacher."""
    path = tmp_path / "roster.csv"
    path.write_text("id,name,email,section\nada,Ada,a@x,A\n")
    with pytest.raises(ValueError, match="lms_id"):
        hubroster.read_roster(path)
    path.write_text("id,name,email,lms_id,section,role\nAda Lovelace,Ada,a@x,1,A,teacher\n")
    with pytest.raises(ValueError, match="Linux account"):
        hubroster.read_roster(path)
    path.write_text("id,name,email,lms_id,section\nada,Ada,a@x,1,A\n")
    with pytest.raises(ValueError, match="no teacher"):
        hubroster.read_roster(path)
    path.write_text("id,name,email,lms_id,section,role\nt,T,t@x,0,A,teacher\nada,Ada,a@x,1,A,\n")
    members = hubroster.read_roster(path)
    assert hubroster.teachers(members) == ["t"] and hubroster.learners(members) == ["ada"]


def test_the_hub_refuses_a_course_learners_can_read():
    """``make hub`` refuses while the solutions or the secret are readable by a learner
    account (each folder above counts), names the command that closes them, and starts
    nothing; once the checkout is closed, nothing is exposed."""
    if os.geteuid() != 0:
        pytest.skip("the hub runs as root")
    top = Path(tempfile.mkdtemp(prefix="pe-hub-open-"))
    try:
        top.chmod(0o755)  # a checkout where everyone can look, as /home/<teacher>/ often is
        course = kit.course_with(top, [ASSIGNMENT])
        (course / ".grading_secret").write_text("s")
        (course / ".grading_secret").chmod(0o644)
        hub = hubroster.Hub(top / "state", course, "positional-encodings")
        members = [
            hubroster.Member("pehubnobody-t", "T", "", "", "A", "teacher"),
            hubroster.Member("pehubnobody-l", "L", "", "", "A", "learner"),
        ]
        with pytest.raises(RuntimeError) as refused:
            hubmod.start(hub, members, hubmod._free_port(), ids=[ASSIGNMENT])
        said = str(refused.value)
        assert f"{course / 'source'} (the solutions) is readable" in said, said
        assert ".grading_secret (the grading secret) is readable" in said, said
        assert f"chmod go-rwx {course}" in said, said
        assert not hub.state.exists() and not accounts.account_exists("pehubnobody-l")
        (course / ".grading_secret").chmod(0o600)
        assert [x for x in hubmod.exposed(hub, members) if "secret" in x] == []
        top.chmod(0o700)  # a folder above closes everything below it
        assert hubmod.exposed(hub, members) == []
        top.chmod(0o755)
        subprocess.run(["chmod", "go-rwx", str(course)], check=True)  # the command it names
        assert hubmod.exposed(hub, members) == []
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_hub_commands_name_a_wrong_folder_or_roster(tmp_path):
    """``hub-stop`` with a folder where no hub runs, or none at all, says so and exits
    non-zero; ``hub`` with a roster that does not exist names it in one line; ``make hub``
    without ROSTER reads roster.csv."""
    python = str(Path(kit.REPO) / ".venv" / "bin" / "python")

    def run(*args):
        proc = subprocess.run(
            [python, "-m", "helpers", *args],
            cwd=kit.REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    rc, said = run("hub-stop", "--state", str(tmp_path / "mistyped"))
    assert rc != 0 and f"no hub folder at {tmp_path / 'mistyped'}" in said, (rc, said)
    (tmp_path / "stopped" / "hub").mkdir(parents=True)
    rc, said = run("hub-stop", "--state", str(tmp_path / "stopped"))
    assert rc != 0 and f"no hub runs for {tmp_path / 'stopped'}" in said, (rc, said)
    rc, said = run("hub", "--roster", str(tmp_path / "missing.csv"))
    assert rc != 0 and len(said.strip().splitlines()) == 1, (rc, said)
    assert f"roster {tmp_path / 'missing.csv'} does not exist" in said and "Traceback" not in said
    dry = subprocess.run(
        ["make", "-n", "hub"], cwd=kit.REPO, capture_output=True, text=True, check=True
    )
    assert "--roster roster.csv" in dry.stdout, dry.stdout
