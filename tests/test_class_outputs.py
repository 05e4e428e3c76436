"""What a teacher takes away from `make demo`'s class: the LMS files, the class report and
the feedback pages, read back and checked against nbgrader's gradebook and the class's plan.

The demo class runs once for the module (``tests.demo``, as ``make demo`` runs it). Expected
scores come from nbgrader's own ``SubmittedAssignment.score`` and ``late_submission_penalty``
(the gradebook) and the roster the demo wrote; expected mistakes from the fixture's catalogue
of named mistakes (one learner each, tests/fixtures/grading_course.py). Late work runs on a
copy of the course with real submission timestamps and due dates set around them.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import html
import io
import re
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from helpers.i18n import split_assignment
from helpers.teacher.classroom import lms
from helpers.teacher.classroom import report as class_report
from helpers.teacher.classroom.course import course_id
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import collect, release
from tests import classroom_kit as kit
from tests import demo
from tests.fixtures import grading_course as gc

pytestmark = pytest.mark.slow

PY = kit.BIN / "python"
FX = gc.ASSIGNMENT
BASES = [demo.REAL, FX]


@pytest.fixture(scope="module")
def demo_class(tmp_path_factory):
    """``make demo``'s class: (course folder, what it printed)."""
    out = tmp_path_factory.mktemp("class") / "demo"
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert demo.main(["--out", str(out), "--jobs", "2"]) == 0
    return out / "course", printed.getvalue()


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _truth(course: Path) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """From nbgrader's gradebook: the max score of each assignment (base id) and each
    learner's score less the late penalty (base id; either language edition)."""
    from nbgrader.api import Gradebook

    url = f"sqlite:///{course / 'gradebook.db'}"
    maxima, scores = {}, {}
    with Gradebook(url, course_id(course)) as gb:
        for assignment in gb.assignments:
            base = split_assignment(assignment.name)[0]
            maxima[base] = float(assignment.max_score)
            for sub in assignment.submissions:
                value = float(sub.score) - float(sub.late_submission_penalty or 0)
                scores[(sub.student.id, base)] = value
    return maxima, scores


def _waiting(course: Path, student: str, base: str) -> int:
    """nbgrader's count of the learner's answers that need manual grading (either edition)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id(course)) as gb:
        subs = [
            s
            for s in gb.find_student(student).submissions
            if split_assignment(s.assignment.name)[0] == base
        ]
        return sum(bool(g.needs_manual_grade) for s in subs for n in s.notebooks for g in n.grades)


def _two(value: float) -> str:
    return f"{round(value, 2):.2f}"


def _roster(course: Path) -> list[dict[str, str]]:
    with open(course / "roster.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- make demo


def test_demo_leaves_the_lms_files_and_the_report_and_prints_them(demo_class):
    course, printed = demo_class
    for name in ("grades-canvas.csv", "grades-moodle.csv", "grades-plain.csv", "roster.csv"):
        assert (course / name).is_file(), name
        assert str(course / name) in printed, name
    assert str(course / "reports" / "index.html") in printed
    assert (course / "grades.csv").is_file()  # nbgrader's name, untouched by the new files
    names = [r["name"] for r in _roster(course)]
    assert any("," in n for n in names) and any(re.search("[가-힣]", n) for n in names)
    assert all(r["email"] and r["lms_id"] for r in _roster(course))


def _total_without(lost: set[str]) -> float:
    """fx_grading's full marks less the points of the functions in ``lost``."""
    return float(sum(sum(points) for fn, (points, _) in gc.FUNCTIONS.items() if fn not in lost))


def test_demo_builds_a_class_to_open(demo_class):
    """`make demo`'s class: scores from the fixture's points, every page and file there."""
    course, printed = demo_class
    with open(course / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    fx = {s: float(r[FX]) for s, r in rows.items()}
    full = float(gc.TOTAL_POINTS)
    want = {"correct": full, "blank": 0.0}
    want["cheater"] = _total_without({"turns"})  # patches numpy and returns zeros for turns
    want["cheater2"] = _total_without({"apply_rope"})  # an object equal to anything
    assert {s: fx[s] for s in want} == want
    for i, (fn, _, _) in enumerate(gc.MISTAKES, start=1):
        # a mistake loses points of its own function (partial credit keeps what it passes)
        assert _total_without({fn}) <= fx[f"mistake{i:02d}"] < full, (i, fn)
    written = kit.written_points(course / "source" / demo.REAL / f"{demo.REAL}.ipynb")
    assert written > 0  # 06_rope's written answer: graded by hand, not in the total yet
    assert float(rows["correct"]["total"]) == float(rows["correct"]["max_total"]) - written
    assert float(rows["blank"]["total"]) == 0.0
    for student in rows:
        for assignment in (FX, demo.REAL_KO if student == demo.KOREAN else demo.REAL):
            assert (course / "autograded" / student / assignment / f"{assignment}.ipynb").exists()
            assert (course / "feedback" / student / assignment / f"{assignment}.html").exists()
    page = (course / "feedback" / "mistake02" / FX / f"{FX}.html").read_text(encoding="utf-8")
    assert gc.MISTAKES[1][1] in page  # the known mistake is named
    assert "demo class ready in" in printed and str(course / "grades.csv") in printed


# --------------------------------------------------------------------------- the LMS files


def test_canvas_file_has_canvas_layout_and_every_cell_from_the_gradebook(demo_class):
    course, _ = demo_class
    maxima, scores = _truth(course)
    rows = _read(course / "grades-canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *BASES]
    assert rows[1] == ["Points Possible", "", "", "", "", *(_two(maxima[b]) for b in BASES)]
    roster = _roster(course)
    assert len(rows) == 2 + len(roster)
    for row, who in zip(rows[2:], roster):
        sid = who["student_id"]
        assert row[:5] == [who["name"], who["lms_id"], sid, who["email"], who["section"]]
        assert row[5:] == [_two(scores[(sid, b)]) for b in BASES], sid
    raw = (course / "grades-canvas.csv").read_text(encoding="utf-8")
    assert '"Lovelace, Ada"' in raw and '"Grace ""Amazing"" Hopper"' in raw and "김민준" in raw
    # the korean learner's 06_rope column is their 06_rope_ko score
    assert ("korean", demo.REAL) in scores
    # nothing but the import's columns: language, status and waiting answers are elsewhere
    details = _read(lms.details_path(course / "grades-canvas.csv"))
    assert f"{demo.REAL} language" in details[0] and f"{FX} status" in details[0]
    by_id = {r[0]: dict(zip(details[0], r)) for r in details[1:]}
    assert by_id["korean"][f"{demo.REAL} language"] == "ko"
    assert by_id["correct"][f"{demo.REAL} language"] == "en"


def test_moodle_file_is_an_id_column_then_one_column_per_grade_item(demo_class):
    course, _ = demo_class
    _, scores = _truth(course)
    rows = _read(course / "grades-moodle.csv")
    assert rows[0] == ["Email address", *BASES]
    roster = _roster(course)
    assert [r[0] for r in rows[1:]] == [w["email"] for w in roster]
    for row, who in zip(rows[1:], roster):
        assert row[1:] == [_two(scores[(who["student_id"], b)]) for b in BASES]


def test_plain_csv_totals_come_from_unrounded_scores(demo_class):
    course, _ = demo_class
    maxima, scores = _truth(course)
    with open(course / "grades-plain.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    names = {w["student_id"]: w for w in _roster(course)}
    assert set(rows) == set(names)
    for sid, row in rows.items():
        assert (row["name"], row["email"]) == (names[sid]["name"], names[sid]["email"])
        for base in BASES:
            assert row[base] == _two(scores[(sid, base)])
            assert row[f"{base} status"] == "graded"
            assert row[f"{base} waiting for manual grading"] == str(_waiting(course, sid, base))
        assert row["total"] == _two(sum(scores[(sid, b)] for b in BASES)), sid
        assert row["max_total"] == _two(sum(maxima[b] for b in BASES))
        for value in [row[b] for b in BASES] + [row["total"]]:
            assert re.fullmatch(r"\d+\.\d\d", value), value
    with open(course / "grades.csv", newline="", encoding="utf-8") as fh:
        legacy = {r["student_id"]: r for r in csv.DictReader(fh)}  # nbgrader's name, kept
    for sid, row in legacy.items():
        assert float(row["total"]) == round(sum(scores[(sid, b)] for b in BASES), 2), sid
        assert [float(row[b]) for b in BASES] == [round(scores[(sid, b)], 2) for b in BASES]


def test_missing_learners_are_blank_and_reported_both_ways(demo_class, tmp_path):
    course, _ = demo_class
    _, scores = _truth(course)
    roster = [w for w in _roster(course) if w["student_id"] != "cheater2"]
    roster.append(
        {
            "student_id": "ghost",
            "name": "O'Brien, Siobhán",
            "email": "g@school.example",
            "lms_id": "49999",
            "section": "Section B",
        }
    )
    path = tmp_path / "roster.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(roster[0]))
        writer.writeheader()
        writer.writerows(roster)
    for zero in (False, True):
        out = tmp_path / f"canvas-{zero}.csv"
        args = ["grades", "--format", "canvas", "--roster", str(path), "--out", str(out)]
        proc = kit.run([str(PY), "-m", "helpers", *args, *(["--missing-as-zero"] * zero)], course)
        said = proc.stdout
        assert re.search(r"1 roster learner\(s\) without a gradebook entry.*: ghost", said), said
        assert re.search(r"1 gradebook learner\(s\) without a roster row: cheater2", said), said
        rows = {r[2]: r for r in _read(out)[2:]}
        assert "cheater2" not in rows
        assert rows["ghost"][0] == "O'Brien, Siobhán"
        assert rows["ghost"][5:] == (["0.00", "0.00"] if zero else ["", ""])
        assert rows["correct"][5:] == [_two(scores[("correct", b)]) for b in BASES]


def test_lms_columns_take_the_names_the_config_gives(demo_class, tmp_path):
    """``c.LmsExport.columns`` names a column as the LMS knows the assignment."""
    course, _ = demo_class
    config = course / "nbgrader_config.py"
    before = config.read_text(encoding="utf-8")
    named = "Grading fixture, week 3 (4321)"
    config.write_text(before + f"\nc.LmsExport.columns = {{{FX!r}: {named!r}}}\n", "utf-8")
    try:
        out = lms.export(course, "canvas", tmp_path / "c.csv", course / "roster.csv").paths[0]
        moodle = lms.export(course, "moodle", tmp_path / "m.csv", course / "roster.csv").paths[0]
    finally:
        config.write_text(before, encoding="utf-8")
    assert _read(out)[0][5:] == [demo.REAL, named]
    assert _read(moodle)[0] == ["Email address", demo.REAL, named]
    assert f'"{named}"' in out.read_text(encoding="utf-8")  # quoted: it has a comma


def test_lms_formats_refuse_without_a_roster_and_name_bad_rosters(demo_class, tmp_path):
    course, _ = demo_class
    with pytest.raises(ValueError, match="needs --roster"):
        lms.export(course, "canvas")
    bad = tmp_path / "bad.csv"
    bad.write_text("student_id,name\nx,X\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the column.*email, lms_id, section"):
        lms.read_roster(bad)
    with pytest.raises(ValueError, match="format must be one of canvas, moodle, csv"):
        lms.export(course, "blackboard")


# --------------------------------------------------------------------------- the class report


def test_report_of_the_demo_class(demo_class):
    course, _ = demo_class
    reports = {r.base: r for r in class_report.build(course)}
    assert list(reports) == BASES
    fx = reports[FX]
    # keyed by (function, mistake): the report's mistakes table has a function column
    want = {(fn, name): [f"mistake{i:02d}"] for i, (fn, name, _body) in enumerate(gc.MISTAKES, 1)}
    assert fx.mistakes == want
    for stats in fx.functions.values():
        assert "correct" in stats.full and "blank" in stats.zero and "blank" in stats.unfinished
    # the function each mistake learner got wrong is not full for them
    for i, (fn, _name, _body) in enumerate(gc.MISTAKES, 1):
        assert f"mistake{i:02d}" not in fx.functions[fn].full, fn
    rope = reports[demo.REAL]
    assert rope.languages["korean"] == "ko" and rope.language == "en"
    source = course / "source" / demo.REAL_KO / f"{demo.REAL_KO}.ipynb"
    from tests import rehearsal

    answers = rehearsal.answer_ids(source)
    stub = answers[5 % len(answers)].removeprefix("answer_")
    assert "korean" in rope.functions[stub].unfinished
    counts = fx.counts()
    assert counts["learners"] == counts["submitted"] == 15
    assert counts["named mistakes"] == len(gc.MISTAKES)
    assert counts["notebooks not graded cleanly"] == counts["written answers waiting"] == 0
    index = (course / "reports" / "index.html").read_text(encoding="utf-8")
    for base in BASES:
        assert f'href="{base}.html"' in index
        page = (course / "reports" / f"{base}.html").read_text(encoding="utf-8")
        pngs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
        assert pngs and all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
        assert "http://" not in page and "https://" not in page and "<script" not in page
    page = (course / "reports" / f"{FX}.html").read_text(encoding="utf-8")
    for _fn, name, _body in gc.MISTAKES:
        assert html.escape(name) in page


def test_report_speaks_korean_for_a_korean_class(demo_class):
    """A class that took the Korean edition gets Korean labels, figures included."""
    from helpers import fonts

    course, _ = demo_class
    rep = next(r for r in class_report.build(course) if r.base == demo.REAL)
    rep.language = "ko"
    page = class_report.assignment_page(rep)
    assert 'lang="ko"' in page and "점수 분포" in page and "함수별" in page
    if fonts.renders_hangul():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # matplotlib warns of every glyph it cannot draw
            class_report.distribution_png(rep)
            class_report.functions_png(rep)


# --------------------------------------------------------------------------- feedback files


def test_feedback_pages_have_no_script_and_name_scores_and_mistakes(demo_class):
    course, _ = demo_class
    pages = sorted((course / "feedback").glob("*/*/*.html"))
    assert len(pages) == 2 * 15
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "cdnjs" not in text, page
        assert 'src="http' not in text and "@import" not in text, page
    fx = (course / "feedback" / "mistake02" / FX / f"{FX}.html").read_text(encoding="utf-8")
    summary = fx.split('class="pe-summary"', 1)[1].split("</table>", 1)[0]
    assert gc.MISTAKES[1][1] in summary  # the named mistake, in the table at the top
    assert "Exercise" in summary or "exercise" in summary.lower()
    ko = (course / "feedback" / "korean" / demo.REAL_KO / f"{demo.REAL_KO}.html").read_text(
        encoding="utf-8"
    )
    assert 'lang="ko"' in ko and "점수" in ko and "아직 작성하지 않음" in ko


def test_feedback_page_shows_the_teachers_comment(demo_class):
    """A comment written in nbgrader's gradebook (as the formgrader does) is on the page."""
    from nbgrader.api import Gradebook

    course, _ = demo_class
    said = "Draw the rotation for one pair, then vectorise: 2 × 2 → (…, d/2)."
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id(course)) as gb:
        comment = gb.find_comment("answer_apply_rope", FX, FX, "mistake02")
        comment.manual_comment = said
        gb.db.commit()
    kit.run(["nbgrader", "generate_feedback", FX, "--force", "--student=mistake02"], course)
    page = (course / "feedback" / "mistake02" / FX / f"{FX}.html").read_text(encoding="utf-8")
    top = page.split('<div class="panel-body">', 1)[0]  # the summary at the top
    assert html.escape(said) in top and html.escape(said) in page.split(top, 1)[1]


# --------------------------------------------------------------------------- late work


def _late_course(tmp_path: Path) -> tuple[Path, Path, Path]:
    course = demo.build_course(tmp_path / "late")
    exchange, homes = tmp_path / "late" / "exchange", tmp_path / "late" / "learners"
    release(course, [FX], exchange)
    cid = course_id(course)
    for student in ("alice", "bob"):
        home = homes / student
        home.mkdir(parents=True)
        demo._exchange_app("fetch", cid, FX, student, home, exchange).start()
        path = home / FX / f"{FX}.ipynb"
        demo._fill(path, course, FX, ("answers", dict(gc.SOLUTIONS)), 0)
        demo._exchange_app("submit", cid, FX, student, home, exchange).start()
    collect(course, [FX], exchange)
    return course, exchange, homes


def _configure(course: Path, due: dt.datetime | None, extensions: dict[str, float]) -> None:
    config = course / "nbgrader_config.py"
    text = config.read_text(encoding="utf-8").split("# -- late test --")[0]
    stamp = {} if due is None else {FX: due.strftime("%Y-%m-%d %H:%M:%S UTC")}
    config.write_text(text + f"# -- late test --\nc.ApplyDueDates.duedates = {stamp!r}\n")
    with open(course / "extensions.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student_id", "assignment", "days"])
        writer.writerows([s, FX, d] for s, d in extensions.items())


def _penalties(course: Path) -> dict[str, tuple[float, float]]:
    """learner -> (score, late penalty) from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id(course)) as gb:
        return {
            s.student.id: (float(s.score), float(s.late_submission_penalty or 0))
            for s in gb.find_assignment(FX).submissions
        }


def test_late_penalties_extensions_and_regrades(tmp_path):
    course, _, _ = _late_course(tmp_path)
    stamp = (course / "submitted" / "bob" / FX / "timestamp.txt").read_text().strip()
    from nbgrader.utils import parse_utc

    submitted = parse_utc(stamp)  # nbgrader's own timestamp of the submission, naive UTC
    full = float(gc.TOTAL_POINTS)
    # due 2.5 days before bob submitted: 3 started days late, 30 %; alice has 3 days more
    _configure(course, submitted - dt.timedelta(days=2.5), {"alice": 3})
    report = autograde(course, [FX], jobs=2, progress=False)
    assert all(t.ok for t in report.tasks)
    got = _penalties(course)
    assert got["alice"] == (full, 0.0)
    assert got["bob"][0] == full and got["bob"][1] == pytest.approx(0.3 * full)
    book = lms.gradebook_entries(course, [FX])
    assert book.entries["bob"].scores[FX] == pytest.approx(0.7 * full)
    out = lms.export(course, "csv", tmp_path / "plain.csv")
    with open(out.paths[0], newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert rows["bob"][FX] == _two(0.7 * full) and rows["bob"][f"{FX} late penalty"] == _two(
        0.3 * full
    )
    grades = export_grades(course, tmp_path / "grades.csv")
    assert {r["student_id"]: r[FX] for r in grades} == {
        "alice": full,
        "bob": pytest.approx(0.7 * full),
    }
    # a regrade recomputes from the file as it is now: bob's 2-day extension leaves half a day
    _configure(course, submitted - dt.timedelta(days=2.5), {"alice": 3, "bob": 2})
    autograde(course, [FX], jobs=1, progress=False)
    assert _penalties(course)["bob"][1] == pytest.approx(0.1 * full)
    # ten days late: the cap, 50 %
    _configure(course, submitted - dt.timedelta(days=10), {})
    autograde(course, [FX], jobs=1, progress=False)
    assert {s: p for s, (_, p) in _penalties(course).items()} == {
        "alice": pytest.approx(0.5 * full),
        "bob": pytest.approx(0.5 * full),
    }
    # no due date any more: no stale penalty survives the regrade (nbgrader #723)
    _configure(course, None, {})
    autograde(course, [FX], jobs=1, progress=False)
    assert _penalties(course) == {"alice": (full, 0.0), "bob": (full, 0.0)}
    grades = export_grades(course, tmp_path / "grades.csv")
    assert {r["student_id"]: r[FX] for r in grades} == {"alice": full, "bob": full}


def test_daily_penalty_rule():
    from helpers.teacher.classroom.late import DailyPenalty, parse_due

    rule = DailyPenalty()
    assert rule.share(0) == 0.0 and rule.share(-5) == 0.0
    assert rule.share(1) == pytest.approx(0.1)  # any part of a day counts as a day
    assert rule.share(86400) == pytest.approx(0.1)
    assert rule.share(86401) == pytest.approx(0.2)
    assert rule.share(30 * 86400) == pytest.approx(0.5)
    assert rule.late_submission_penalty("x", 8.0, 86400 * 2.5) == pytest.approx(2.4)
    rule.grace_minutes = 15
    assert rule.share(14 * 60) == 0.0
    assert parse_due("2026-12-08 23:59:00 +0900") == dt.datetime(2026, 12, 8, 14, 59)
    with pytest.raises(ValueError, match="due date must be"):
        parse_due("next tuesday-ish")


# --------------------------------------------------------------------------- in a browser

PAGE_JS = r"""() => {
  const W = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > W + 1;
  }).map(e => e.tagName + '.' + e.className).slice(0, 10);
  const maths = [...document.querySelectorAll('math')].map(m => {
    const r = m.getBoundingClientRect();
    return {ok: m instanceof MathMLElement && r.width > 0 && r.height > 0,
            text: m.textContent.slice(0, 40)};
  });
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('code, pre, math, style, .highlight')) continue;
    if (/\$[^$\s][^$]*\$|\\\(|\\\[|\\(frac|theta|sum|cos|sin)\b/.test(n.textContent))
      raw.push(n.textContent.slice(0, 80));
  }
  const hints = [...document.querySelectorAll('details')].map(d => ({
    open: d.open,
    height: [...d.children].filter(c => c.tagName !== 'SUMMARY')
      .reduce((a, c) => a + c.getBoundingClientRect().height, 0)}));
  const pads = [...document.querySelectorAll('.rendered_html td, .rendered_html th')]
    .map(td => parseFloat(getComputedStyle(td).paddingLeft));
  const images = [...document.images].map(i => i.naturalWidth);
  return {W, scroll: document.documentElement.scrollWidth, wide, maths, raw, hints, pads,
          images, text: document.body.innerText};
}"""


def _browser_skip() -> str:
    from tests import test_browser

    return test_browser._skip_reason()


@pytest.fixture(scope="module")
def offline_page():
    """A headless Chromium page on which every request but the opened file is refused."""
    from playwright.sync_api import sync_playwright

    from tests import test_browser

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=test_browser.CHROMIUM, args=test_browser.LAUNCH_ARGS, headless=True
        )
        page = chromium.new_page(viewport={"width": 1000, "height": 900})
        page.refused, page.opened = [], set()

        def route(r):
            if r.request.url in page.opened:
                r.continue_()
            else:
                page.refused.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        try:
            yield page
        finally:
            chromium.close()


def _open(page, path: Path, shot: str) -> dict:
    url = path.resolve().as_uri()
    page.opened = {url}
    page.goto(url)
    page.wait_for_load_state("load")
    out = kit.REPO / "artifacts" / "class"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{shot}.png"), full_page=True)
    return page.evaluate(PAGE_JS)


def _secrets(course: Path, assignment: str) -> list[str]:
    """Hidden-test lines of the source that the released notebook does not show anyway."""
    release = (course / "notebooks" / assignment / f"{assignment}.ipynb").read_text("utf-8")
    lines = kit.hidden_test_lines(course / "source" / assignment / f"{assignment}.ipynb")
    return [ln for ln in lines if len(ln) > 8 and ln not in release]


@pytest.mark.browser
@pytest.mark.skipif(bool(_browser_skip()), reason=_browser_skip() or "ready")
@pytest.mark.parametrize(
    "student,assignment",
    [("mistake02", FX), ("mistake02", demo.REAL), ("korean", demo.REAL_KO), ("blank", FX)],
)
def test_feedback_page_offline_in_a_browser(demo_class, offline_page, student, assignment):
    course, _ = demo_class
    path = course / "feedback" / student / assignment / f"{assignment}.html"
    seen = _open(offline_page, path, f"feedback-{student}-{assignment}")
    assert offline_page.refused == [], offline_page.refused
    assert seen["scroll"] <= seen["W"] and seen["wide"] == [], seen["wide"]
    assert all(m["ok"] for m in seen["maths"]), [m for m in seen["maths"] if not m["ok"]]
    assert seen["raw"] == [], seen["raw"]  # no formula left as TeX source
    if assignment != FX:  # the course's notebooks: formulas, hints and tables
        assert len(seen["maths"]) > 20
        assert seen["hints"] and all(h["open"] and h["height"] > 10 for h in seen["hints"])
        assert seen["pads"] and min(seen["pads"]) >= 4
    for line in _secrets(course, assignment):
        assert line not in seen["text"], line
    if student == "mistake02" and assignment == FX:
        assert gc.MISTAKES[1][1] in seen["text"]
    if student == "korean":
        assert "점수" in seen["text"] and "다시 볼 곳" in seen["text"]


@pytest.mark.browser
@pytest.mark.skipif(bool(_browser_skip()), reason=_browser_skip() or "ready")
def test_report_pages_offline_in_a_browser(demo_class, offline_page):
    course, _ = demo_class
    for name in ("index", *BASES):
        seen = _open(offline_page, course / "reports" / f"{name}.html", f"report-{name}")
        assert offline_page.refused == [], offline_page.refused
        assert seen["scroll"] <= seen["W"] and seen["wide"] == [], (name, seen["wide"])
        if name != "index":
            assert len(seen["images"]) == 2 and all(w > 300 for w in seen["images"])
            assert gc.MISTAKES[0][1] in seen["text"] or name != FX
