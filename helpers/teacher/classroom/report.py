"""What the class got wrong: ``python -m helpers report [ids]`` writes ``reports/``.

``reports/index.html`` lists the assignments; ``reports/<id>.html`` shows, for one assignment
(its language editions together):

- the score distribution, as a PNG figure embedded in the page (matplotlib);
- per function, the share of learners with full, partial and zero scores (and a figure);
- every named mistake, with how many learners made it and who;
- the functions most often left unfinished (not written, or still raising
  ``NotImplementedError``);
- the notebooks that did not grade cleanly, with their status and reason
  (``autograde_report.csv``);
- the written answers still waiting for manual grading (``written.waiting_cells``: the
  answered written answers without a score, as every other file counts them).

Scores come from nbgrader's gradebook (per cell); the named mistake and whether a function
was left unfinished from the verdict the grader recorded on each test cell of the autograded
notebook (``nbgrader_plugin.VERDICT_KEY``). A page is in Korean, figures included, when most of
the class took the Korean edition. The pages need no network: no script, no link outside.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from helpers.i18n import speaking, split_assignment, tr
from helpers.teacher.classroom import written
from helpers.teacher.classroom.course import assignment_ids, course_id, db_url
from helpers.teacher.classroom.steps import registered
from helpers.teacher.classroom.submissions import NOT_SUBMITTED, is_stand_in
from helpers.teacher.classroom.summary import REPORT_NAME, read_report
from helpers.teacher.pages import NO_SCRIPT_META

OUT_NAME = "reports"
FULL, PARTIAL, ZERO = "full", "partial", "zero"
TOP_UNFINISHED = 5


@dataclass
class FunctionStats:
    """How the class did on one graded function: who scored full, partial and zero."""

    name: str
    full: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    zero: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)

    @property
    def learners(self) -> int:
        """How many learners were graded on it."""
        return len(self.full) + len(self.partial) + len(self.zero)

    def share(self, kind: str) -> float:
        """The share of graded learners with a ``kind`` score (``FULL``, ``PARTIAL``, ``ZERO``)."""
        return len(getattr(self, kind)) / self.learners if self.learners else 0.0


@dataclass
class AssignmentReport:
    """Everything one assignment's page shows."""

    base: str
    language: str
    max_score: float
    scores: dict[str, float | None]  # learner -> score (None: not submitted)
    languages: dict[str, str]
    functions: dict[str, FunctionStats] = field(default_factory=dict)
    # (function, catalogue name of the mistake) -> learners
    mistakes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)  # autograde_report rows not "graded"
    waiting: list[tuple[str, str, str]] = field(default_factory=list)  # learner, notebook, cell

    @property
    def submitted(self) -> list[str]:
        """The learners who submitted it."""
        return [s for s, v in self.scores.items() if v is not None]

    def unfinished(self) -> list[FunctionStats]:
        """The functions left unfinished by at least one learner, most often first."""
        found = [f for f in self.functions.values() if f.unfinished]
        return sorted(found, key=lambda f: (-len(f.unfinished), f.name))[:TOP_UNFINISHED]

    def counts(self) -> dict[str, int]:
        """The page's headline numbers."""
        return {
            "learners": len(self.scores),
            "submitted": len(self.submitted),
            "functions": len(self.functions),
            "named mistakes": len({mistake for _, mistake in self.mistakes}),
            "learners with a named mistake": len({s for w in self.mistakes.values() for s in w}),
            "unfinished functions": sum(1 for f in self.functions.values() if f.unfinished),
            "notebooks not graded cleanly": len(self.problems),
            "written answers waiting": len(self.waiting),
        }


def _verdicts(path: Path) -> dict[str, dict]:
    """``grade_id -> VERDICT_KEY record`` of an autograded notebook."""
    import nbformat

    from helpers.teacher.nbgrader_plugin import VERDICT_KEY

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001  (an unreadable file has no verdicts to show)
        return {}
    out = {}
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        record = cell.get("metadata", {}).get(VERDICT_KEY)
        if gid and isinstance(record, dict):
            out[gid] = record
    return out


def build(course: Path, ids=None, db: str | None = None) -> list[AssignmentReport]:
    """One ``AssignmentReport`` per assignment (language editions together)."""
    from nbgrader.api import Gradebook, MissingEntry

    from helpers.teacher import checks
    from helpers.teacher.classroom import lms
    from helpers.teacher.notebook import function_for_grade_id

    book = lms.gradebook_entries(course, ids, db)
    known = registered(course, db)  # once: each call opens the gradebook
    chosen = [i for i in assignment_ids(course, ids) if i in known]
    report_rows = read_report(course / REPORT_NAME)
    reports = []
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        for base in book.bases:
            scores = {s: e.scores[base] for s, e in book.entries.items()}
            languages = {s: e.languages[base] for s, e in book.entries.items() if e.languages[base]}
            taken = Counter(languages.values())
            language = "ko" if taken.get("ko", 0) > taken.get("en", 0) else "en"
            rep = AssignmentReport(base, language, book.maxima[base], scores, languages)
            variants = {a for a in chosen if split_assignment(a)[0] == base}
            earned: dict[tuple[str, str], tuple[float, float, bool]] = {}
            taken_as = {
                (s, a) for s, lang in languages.items() for a in variants
                if split_assignment(a)[1] == lang
            }  # fmt: skip
            cells = written.waiting_cells(
                db_url(course, db), course_id(course), variants, [s for s, _a in taken_as]
            )
            rep.waiting = [(s, nb, cell) for s, a, nb, cell in cells if (s, a) in taken_as]
            for student, lang in sorted(languages.items()):
                assignment = next(a for a in variants if split_assignment(a)[1] == lang)
                try:
                    sub = gb.find_submission(assignment, student)
                except MissingEntry:
                    continue
                for nb in sub.notebooks:
                    graded = course / "autograded" / student / assignment / f"{nb.name}.ipynb"
                    real = graded.exists() and not is_stand_in(graded)  # unreadable: none
                    records = _verdicts(graded) if real else {}
                    for grade in nb.grades:
                        if grade.cell_type != "code" or not real:
                            continue
                        record = records.get(grade.name, {})
                        name = record.get("function") or function_for_grade_id(
                            grade.name, checks.CHECKS
                        )
                        if not name:
                            continue
                        stats = rep.functions.setdefault(name, FunctionStats(name))
                        top, got, _ = earned.get((name, student), (0.0, 0.0, False))
                        earned[(name, student)] = (
                            top + float(grade.max_score or 0),
                            got + float(grade.score or 0),
                            bool(record.get("unfinished")) or _,
                        )
                        if record.get("mistake"):
                            who = rep.mistakes.setdefault((name, record["mistake"]), [])
                            if student not in who:
                                who.append(student)
            for (name, student), (top, got, unfinished) in earned.items():
                stats = rep.functions[name]
                kind = FULL if top and got >= top - 1e-9 else PARTIAL if got > 0 else ZERO
                getattr(stats, kind).append(student)
                if unfinished:
                    stats.unfinished.append(student)
            rep.problems = [
                r
                for r in report_rows
                if split_assignment(r["assignment"])[0] == base
                and r.get("status") != "graded"
                and r.get("reason") != NOT_SUBMITTED
            ]
            reports.append(rep)
    return reports


# --------------------------------------------------------------------------- figures


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def distribution_png(rep: AssignmentReport) -> str:
    """The score distribution of the learners who submitted, as base64 PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    from helpers import fonts

    if rep.language == "ko":
        fonts.ensure()
    values = [v for v in rep.scores.values() if v is not None]
    top = rep.max_score or max(values, default=1.0) or 1.0
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    bins = np.linspace(0, top, 11)
    ax.hist(values, bins=bins, color="#3b6ea8", edgecolor="white")
    ax.set_xlim(0, top)
    ax.set_xlabel(tr("score (points of {top})", top=f"{top:g}"))
    ax.set_ylabel(tr("learners"))
    ax.set_title(tr("{assignment}: score distribution", assignment=rep.base))
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    data = _png(fig)
    plt.close(fig)
    return data


def functions_png(rep: AssignmentReport) -> str:
    """Per function, the shares of full, partial and zero scores, as base64 PNG."""
    import matplotlib.pyplot as plt

    from helpers import fonts

    if rep.language == "ko":
        fonts.ensure()
    names = list(rep.functions)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(names) + 1.2))
    left = [0.0] * len(names)
    kinds = ((FULL, tr("full"), "#2e7d32"), (PARTIAL, tr("partial"), "#f9a825"))
    for kind, label, color in (*kinds, (ZERO, tr("zero"), "#c62828")):
        shares = [100 * rep.functions[n].share(kind) for n in names]
        ax.barh(names, shares, left=left, color=color, label=label)
        left = [a + b for a, b in zip(left, shares)]
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel(tr("share of learners (%)"))
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=3, fontsize="small", frameon=False)
    fig.tight_layout()
    data = _png(fig)
    plt.close(fig)
    return data


# --------------------------------------------------------------------------- pages

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em;
  line-height: 1.45; overflow-wrap: break-word; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; max-width: 100%; }
th, td { border: 1px solid #c8ccd0; padding: 0.3em 0.7em; text-align: left; vertical-align: top; }
th { background: #f0f2f4; }
td.num { text-align: right; }
img { max-width: 100%; height: auto; }
.muted { color: #666; }
"""


def _e(value) -> str:
    return html.escape(str(value))


def _page(title: str, body: str, lang: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n{NO_SCRIPT_META}\n'
        f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n"
        "</body>\n</html>\n"
    )


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    if not rows:
        return f'<p class="muted">{_e(tr("none"))}</p>'
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def assignment_page(rep: AssignmentReport) -> str:
    """The HTML page of one assignment, in its class's language."""
    with speaking(rep.language):
        values = [v for v in rep.scores.values() if v is not None]
        mean = sum(values) / len(values) if values else 0.0
        title = tr("{assignment}: what the class got wrong", assignment=rep.base)
        parts = [
            f"<h1>{_e(title)}</h1>",
            f'<p><a href="index.html">{_e(tr("all assignments"))}</a></p>',
        ]
        parts.append(
            "<p>"
            + _e(
                tr(
                    "{submitted} of {learners} learners submitted; mean {mean} of {top} points.",
                    submitted=len(values),
                    learners=len(rep.scores),
                    mean=f"{mean:.2f}",
                    top=f"{rep.max_score:g}",
                )
            )
            + "</p>"
        )
        alt = tr("{assignment}: score distribution", assignment=rep.base)
        parts.append(f"<h2>{_e(tr('Score distribution'))}</h2>")
        parts.append(f'<img alt="{_e(alt)}" src="data:image/png;base64,{distribution_png(rep)}">')
        parts.append(f"<h2>{_e(tr('Per function'))}</h2>")
        if rep.functions:
            parts.append(
                f'<img alt="{_e(tr("Per function"))}" '
                f'src="data:image/png;base64,{functions_png(rep)}">'
            )
        rows = [
            [
                f"<code>{_e(f.name)}</code>",
                f'<span class="num">{f.learners}</span>',
                _pct(f.share(FULL)),
                _pct(f.share(PARTIAL)),
                _pct(f.share(ZERO)),
            ]
            for f in rep.functions.values()
        ]
        parts.append(
            _table([tr("function"), tr("learners"), tr("full"), tr("partial"), tr("zero")], rows)
        )
        parts.append(f"<h2>{_e(tr('Named mistakes'))}</h2>")
        rows = [
            [
                f"<code>{_e(function)}</code>",
                _e(tr(name)),
                str(len(who)),
                _e(", ".join(sorted(who))),
            ]
            for (function, name), who in sorted(
                rep.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0])
            )
        ]
        parts.append(
            _table([tr("function"), tr("mistake"), tr("learners"), tr("who")], rows, "mistakes")
        )
        parts.append(f"<h2>{_e(tr('Most often left unfinished'))}</h2>")
        rows = [
            [f"<code>{_e(f.name)}</code>", str(len(f.unfinished)), _e(", ".join(f.unfinished))]
            for f in rep.unfinished()
        ]
        parts.append(_table([tr("function"), tr("learners"), tr("who")], rows))
        parts.append(f"<h2>{_e(tr('Notebooks not graded cleanly'))}</h2>")
        rows = [
            [_e(r["student_id"]), _e(r["notebook"]), _e(r["status"]), _e(r.get("reason", ""))]
            for r in rep.problems
        ]
        parts.append(_table([tr("learner"), tr("notebook"), tr("status"), tr("reason")], rows))
        parts.append(f"<h2>{_e(tr('Written answers waiting for manual grading'))}</h2>")
        rows = [[_e(s), _e(n), f"<code>{_e(c)}</code>"] for s, n, c in rep.waiting]
        parts.append(_table([tr("learner"), tr("notebook"), tr("cell")], rows))
        return _page(title, "\n".join(parts), rep.language)


def index_page(reports: list[AssignmentReport]) -> str:
    """``reports/index.html``: each assignment's headline numbers and a link to its page."""
    rows = []
    for rep in reports:
        c = rep.counts()
        values = [v for v in rep.scores.values() if v is not None]
        mean = sum(values) / len(values) if values else 0.0
        rows.append(
            [
                f'<a href="{_e(rep.base)}.html">{_e(rep.base)}</a>',
                f"{c['submitted']} / {c['learners']}",
                f"{mean:.2f} / {rep.max_score:g}",
                str(c["named mistakes"]),
                str(c["learners with a named mistake"]),
                str(c["unfinished functions"]),
                str(c["notebooks not graded cleanly"]),
                str(c["written answers waiting"]),
            ]
        )
    head = [
        tr("assignment"),
        tr("submitted"),
        tr("mean score"),
        tr("named mistakes"),
        tr("learners with a named mistake"),
        tr("unfinished functions"),
        tr("notebooks not graded cleanly"),
        tr("written answers waiting"),
    ]
    body = f"<h1>{_e(tr('What the class got wrong'))}</h1>\n" + _table(head, rows)
    return _page(tr("What the class got wrong"), body, "en")


def write(course: Path, ids=None, db: str | None = None, out: Path | None = None) -> Path:
    """Write ``index.html`` and one page per assignment to ``out`` (default: the course's
    ``reports/``); returns the index."""
    out = Path(out) if out is not None else course / OUT_NAME
    out.mkdir(parents=True, exist_ok=True)
    reports = build(course, ids, db)
    for rep in reports:
        (out / f"{rep.base}.html").write_text(assignment_page(rep), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_page(reports), encoding="utf-8")
    return index


def add_command(sub) -> None:
    """``python -m helpers report [ids]``."""
    p = sub.add_parser("report", help="what the class got wrong: reports/index.html")
    p.add_argument("ids", nargs="*", help="assignment ids (default: all of source/)")
    p.add_argument("--course", type=Path, default=None, help="course folder (default: repo)")
    p.add_argument("--db", default=None, help="gradebook as an SQLAlchemy URL")
    p.add_argument(
        "--out", type=Path, default=None, help="folder (default: reports/ in the course)"
    )


def run(course: Path, args) -> int:
    """Write the report from parsed arguments and print where it is."""
    out = None if args.out is None else Path(os.getcwd()) / args.out
    print(f"class report: {write(course, args.ids, args.db, out)}")
    return 0
