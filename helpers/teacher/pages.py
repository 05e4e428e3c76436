"""Pages a teacher opens that show what learners wrote: nothing a learner wrote runs there.

Three kinds of page show learner content (written answers, Markdown and code cells, outputs,
file names): the Formgrader's submission pages, the feedback pages and the class report.
Two defences, each enough alone for script:

- ``clean``: every piece of learner HTML (a rendered Markdown cell, a cell's outputs, a
  Markdown output) goes through ammonia (``nh3``) with an allowlist: text, layout, tables,
  MathML, images only as ``data:image/...``, links only to ``http(s)``, ``mailto`` and
  ``#anchors``. No script, no event handler, no ``style``, no frame, form or object.
- a Content-Security-Policy that forbids inline script: a ``<meta>`` of the feedback and
  report pages (``NO_SCRIPT``; they run no script at all) and, on the teacher's Jupyter
  server, a header on every ``/formgrader`` page (``FormgraderCSP``, a server extension:
  ``python -m helpers grade-ui`` and the hub's teacher server load it, see
  ``server_args``). That policy allows the Formgrader's own script files and only those
  inline scripts that are nbgrader's own (``var name = "value";`` lines with plain values,
  and the course's formgrade template's fixed scripts, by hash).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

EXTENSION = __name__
TEMPLATE = "pe_formgrade"
TEMPLATE_DIR = Path(__file__).resolve().parent / "feedback_templates"

_TEXT_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd",
    "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "tr", "u", "ul", "var",
}  # fmt: skip
_MATH_TAGS = {
    "math", "maction", "menclose", "merror", "mfenced", "mfrac", "mi", "mmultiscripts", "mn",
    "mo", "mover", "mpadded", "mphantom", "mprescripts", "mroot", "mrow", "ms", "mspace",
    "msqrt", "mstyle", "msub", "msubsup", "msup", "mtable", "mtd", "mtext", "mtr", "munder",
    "munderover", "none", "semantics", "annotation",
}  # fmt: skip
_MATH_ATTRIBUTES = {
    "accent", "accentunder", "align", "columnalign", "columnlines", "columnspacing",
    "columnspan", "depth", "display", "displaystyle", "encoding", "fence", "form", "frame",
    "height", "largeop", "linethickness", "lspace", "mathsize", "mathvariant", "maxsize",
    "minsize", "movablelimits", "notation", "rowalign", "rowlines", "rowspacing", "rowspan",
    "rspace", "scriptlevel", "separator", "separators", "stretchy", "symmetric", "width",
    "xmlns", "open", "close",
}  # fmt: skip
ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir", "align"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start", "type"},
    "li": {"value"},
    "details": {"open"},
    "col": {"span"},
    **{tag: _MATH_ATTRIBUTES for tag in _MATH_TAGS},
}
_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)
_LINK = re.compile(r"(https?:|mailto:|#)", re.IGNORECASE)
# Content-Security-Policy of the pages that run no script (feedback, report): images only
# inline, styles only the page's own, nothing fetched, no form, no frame, framed by no one
# (a page of the same origin, a learner's own server on a hub without subdomains, included).
NO_SCRIPT = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
# A file of a submission that the Formgrader serves (``/formgrader/submissions/<id>/<path>``:
# nbgrader's SubmissionFilesHandler, any file autograde copied from ``submitted/``): never
# active content on the teacher's origin. It is sent in a sandbox (an opaque origin, no
# script, no form, no plug-in) and, unless it is a plain image, as a download.
SUBMISSION_FILE_CSP = (
    "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_INERT_IMAGE = re.compile(r"image/(png|jpeg|gif|webp)$")
_SUBMISSION_FILE = re.compile(
    r"/formgrader/submissions/(?!components/)[^/]+/"
    r"(?!(next_incorrect|prev_incorrect|next|prev)/?$)[^?]+"
)
NO_SCRIPT_META = f'<meta http-equiv="Content-Security-Policy" content="{NO_SCRIPT}">'


def _attribute(tag: str, attribute: str, value: str) -> str | None:
    """What ammonia's allowlist cannot say: images only inline, links only out or within
    the page, ids kept apart from the page's own (``c-`` prefix)."""
    value = value.strip()
    if tag == "img" and attribute == "src":
        return value if _IMAGE.match(value) else None
    if tag == "a" and attribute == "href":
        return value if _LINK.match(value) else None
    if attribute == "id":
        return "c-" + value
    return value


def clean(html: str | None) -> str:
    """Learner HTML as the allowlist keeps it (see the module's docstring)."""
    import nh3

    return nh3.clean(
        str(html or ""),
        tags=_TEXT_TAGS | _MATH_TAGS,
        clean_content_tags={"script", "style", "iframe", "object", "embed", "template"},
        attributes=ATTRIBUTES,
        attribute_filter=_attribute,
        url_schemes={"http", "https", "mailto", "data"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


# --------------------------------------------------------------------------- the Formgrader


def template_dirs() -> list[str]:
    """The course's template folder (``pe_formgrade``, ``pe_feedback``, ``pe_safe``) after
    nbgrader's formgrader templates (their macros) and nbconvert's."""
    import nbgrader

    theirs = Path(nbgrader.__file__).resolve().parent / "server_extensions/formgrader/templates"
    return [str(theirs), str(TEMPLATE_DIR)]


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)
# nbgrader's inline scripts on its list pages set variables from the URL: allowed only when
# every statement is ``var name = "plain value";`` (nothing that could end the string).
_VARS = re.compile(r'\s*(?:var [A-Za-z_]+ = "[A-Za-z0-9_.:+/@ -]*";\s*)+')
# the inline event handlers of nbgrader's pages and the course's formgrade template
# ('unsafe-hashes': these exact texts only): "Add new assignment...", "Add new student...",
# "Show All Names" and the eye beside a name
HANDLERS = (
    "createAssignmentModal();",
    "createStudentModal();",
    "toggleAllNames()",
    "toggle_name(true);",
    "toggle_name(false);",
)


def _template_scripts() -> list[str]:
    """The fixed inline scripts of the course's formgrade template."""
    text = Path(__file__).resolve().parent / "feedback_templates" / TEMPLATE / "index.html.j2"
    found = []
    for attrs, body in _SCRIPT.findall(text.read_text(encoding="utf-8")):
        if "src=" not in attrs and "{{" not in body and "{%" not in body:
            found.append(body)
    return found


def formgrader_csp(page: str) -> str:
    """The Content-Security-Policy of one Formgrader page: scripts from the server itself,
    inline only nbgrader's variable lines and the course template's own scripts."""
    allowed = {_sha256(s) for s in _template_scripts()} | {_sha256(h) for h in HANDLERS}
    for attrs, body in _SCRIPT.findall(page):
        if "src=" not in attrs.lower() and _VARS.fullmatch(body):
            allowed.add(_sha256(body))
    return (
        "default-src 'self'; script-src 'self' 'unsafe-hashes' "
        + " ".join(sorted(allowed))
        + "; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-src 'none'; frame-ancestors 'none'"
    )


def _transform_class(settings: dict | None = None):
    """The transform of every response (``settings``: the server's, where nbgrader keeps
    its gradebook's URL; without them, the policy only)."""
    from tornado.web import OutputTransform

    class FormgraderCSP(OutputTransform):
        """Sets the Content-Security-Policy of every ``/formgrader`` response (the page's
        own inline scripts by hash; a page sent in parts gets no inline script at all).

        The policy is computed from the page it is sent with, so a Formgrader page is
        always sent whole: its ``If-None-Match`` is dropped (Tornado would answer a
        revalidation with ``304`` and no body, whose policy, computed from nothing,
        would replace the cached page's in the browser and block nbgrader's own inline
        scripts: a reloaded page stayed empty) and the page says ``no-store`` (it shows
        grades and learners' work, nothing a browser should keep on disk)."""

        def __init__(self, request):
            super().__init__(request)
            self.formgrader = "/formgrader" in request.path
            # the feedback pages and the report, opened through the server (a <meta>
            # policy cannot forbid frames: only a header can)
            self.served_file = any(f"/{p}/" in request.path for p in ("files", "view"))
            self.path = request.path
            self.page = self.formgrader and "/formgrader/static/" not in request.path
            self.learner_file = bool(_SUBMISSION_FILE.search(request.path))
            if self.learner_file:
                self.page = False
            if self.page:
                request.headers.pop("If-None-Match", None)

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if self.formgrader:
                if finishing and status_code == 200 and settings is not None:
                    chunk = _after_penalty(self.path, headers, chunk, settings)
                page = chunk.decode("utf-8", "replace") if finishing else ""
                headers["Content-Security-Policy"] = formgrader_csp(page)
                headers["X-Content-Type-Options"] = "nosniff"
            if self.learner_file:
                headers["Content-Security-Policy"] = SUBMISSION_FILE_CSP
                headers["Cache-Control"] = "no-store"
                kind = headers.get("Content-Type", "").split(";")[0].strip().lower()
                if not _INERT_IMAGE.match(kind):
                    headers["Content-Disposition"] = "attachment"
                    headers["Content-Type"] = "application/octet-stream"
            if self.page:
                headers["Cache-Control"] = "no-store"
            if self.served_file:
                policy = headers.get("Content-Security-Policy", "")
                policy = re.sub(r"frame-ancestors[^;]*;?", "", policy).strip().rstrip(";")
                headers["Content-Security-Policy"] = "; ".join(
                    p for p in (policy, "frame-ancestors 'none'") if p
                )
            return status_code, headers, chunk

    return FormgraderCSP


# --------------------------------------------------------------------------- late penalty
# nbgrader's list pages (Manage Students, a learner's assignments and notebooks, Manual
# Grading's assignments, notebooks and submissions, an assignment's submissions) draw the
# scores its API sends, which are before the late penalty. The transform rewrites those
# answers: each "score" (an average: "average_score") becomes the score after the penalty,
# the score before it and the penalty ride along ("pe_score_before_penalty",
# "pe_late_penalty"), and the pages' score columns say so, in the teacher's language.


def teacher_language(environ=None) -> str:
    """The teacher's language: Korean under a Korean locale (``LANG=ko_KR.UTF-8``, or
    ``PE_COURSE_LANG=ko``), else English."""
    environ = os.environ if environ is None else environ
    for key in ("PE_COURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(key, "")
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    return "en"


@dataclass
class Penalties:
    """The late penalties of a gradebook: ``(assignment, notebook, student) -> points``,
    and how many submissions each assignment and notebook has (for averages)."""

    each: dict[tuple[str, str, str], float] = field(default_factory=dict)
    assignments: dict[str, int] = field(default_factory=dict)
    notebooks: dict[tuple[str, str], int] = field(default_factory=dict)

    def of(self, assignment=None, notebook=None, student=None) -> float:
        """The penalties of every submitted notebook that matches what is given."""
        return sum(
            p
            for (a, n, s), p in self.each.items()
            if assignment in (None, a) and notebook in (None, n) and student in (None, s)
        )


_PENALTIES_SQL = """
SELECT a.name, n.name, sa.student_id, sn.late_submission_penalty
FROM submitted_notebook sn
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN notebook n ON sn.notebook_id = n.id
JOIN assignment a ON sa.assignment_id = a.id
"""


def penalties(db_url: str) -> Penalties:
    """The late penalties of the gradebook at ``db_url`` (nbgrader's tables, read only)."""
    import sqlalchemy

    engine = _engine(db_url)
    found = Penalties()
    with engine.connect() as db:
        for assignment, notebook, student, penalty in db.execute(sqlalchemy.text(_PENALTIES_SQL)):
            found.notebooks[(assignment, notebook)] = (
                found.notebooks.get((assignment, notebook), 0) + 1
            )
            if penalty:
                key = (assignment, notebook, student)
                found.each[key] = found.each.get(key, 0.0) + float(penalty)
        for (assignment,) in db.execute(
            sqlalchemy.text(
                "SELECT a.name FROM submitted_assignment sa JOIN assignment a "
                "ON sa.assignment_id = a.id"
            )
        ):
            found.assignments[assignment] = found.assignments.get(assignment, 0) + 1
    return found


@functools.lru_cache(maxsize=4)
def _engine(db_url: str):
    import sqlalchemy

    return sqlalchemy.create_engine(db_url)


def _less(row: dict, key: str, penalty: float) -> None:
    """``row[key]`` after ``penalty`` (never below 0), with what it was and the penalty."""
    if not isinstance(row, dict) or not isinstance(row.get(key), (int, float)):
        return
    before = float(row[key])
    row["pe_score_before_penalty"] = before
    row["pe_late_penalty"] = penalty
    row[key] = max(before - penalty, 0.0) if penalty else before


def _rows(data) -> list:
    return data if isinstance(data, list) else [data]


# the API answers that carry a learner's score: what each row is keyed by
_API = re.compile(
    r"/formgrader/api/(?:"
    r"(?P<students>students)|student/(?P<student>[^/]+)"
    r"|student_submissions/(?P<s_student>[^/]+)"
    r"|student_notebook_submissions/(?P<sn_student>[^/]+)/(?P<sn_assignment>[^/]+)"
    r"|submitted_notebooks/(?P<nb_assignment>[^/]+)/(?P<nb_notebook>[^/]+)"
    r"|submissions/(?P<subs_assignment>[^/]+)|submission/(?P<sub_assignment>[^/]+)/[^/]+"
    r"|(?P<assignments>assignments)|assignment/(?P<assignment>[^/]+)"
    r"|notebooks/(?P<notebooks>[^/]+)"
    r")/?$"
)


def rewrite_scores(path: str, data, pen: Penalties):
    """An API answer of nbgrader (``data``, parsed) with its scores after the penalty."""
    from urllib.parse import unquote

    found = _API.search(path)
    if not found:
        return data
    g = {k: unquote(v) if v else v for k, v in found.groupdict().items()}
    for row in _rows(data):
        if not isinstance(row, dict):
            continue
        if g["students"] or g["student"]:
            _less(row, "score", pen.of(student=row.get("id")))
        elif g["s_student"]:
            _less(row, "score", pen.of(row.get("name"), student=g["s_student"]))
        elif g["sn_student"]:
            _less(row, "score", pen.of(g["sn_assignment"], row.get("name"), g["sn_student"]))
        elif g["nb_assignment"]:
            _less(row, "score", pen.of(g["nb_assignment"], g["nb_notebook"], row.get("student")))
        elif g["subs_assignment"] or g["sub_assignment"]:
            assignment = g["subs_assignment"] or g["sub_assignment"]
            _less(row, "score", pen.of(assignment, student=row.get("student")))
        elif g["assignments"] or g["assignment"]:
            name = row.get("name")
            count = pen.assignments.get(name, 0)
            _less(row, "average_score", pen.of(name) / count if count else 0.0)
        elif g["notebooks"]:
            count = pen.notebooks.get((g["notebooks"], row.get("name")), 0)
            share = pen.of(g["notebooks"], row.get("name")) / count if count else 0.0
            _less(row, "average_score", share)
    return data


# nbgrader's score columns on its list pages, and what they say of the penalty
_COLUMNS = re.compile(r'<th class="text-center">(Overall Score|Avg\. Score|Score)</th>')


def label_scores(page: str, lang: str) -> str:
    """A list page of nbgrader with its score column labelled "after the late penalty" and
    a line above its table saying which scores are after it (unchanged if it has none)."""
    from helpers.i18n import tr

    def column(found: re.Match) -> str:
        text = {
            "Overall Score": tr("Overall score after the late penalty", lang=lang),
            "Avg. Score": tr("Average score after the late penalty", lang=lang),
            "Score": tr("Score after the late penalty", lang=lang),
        }[found.group(1)]
        return f'<th class="text-center pe-after-penalty">{text}</th>'

    labelled, count = _COLUMNS.subn(column, page)
    if not count:
        return page
    note = tr(
        "Scores after the late penalty: nbgrader's score minus the submission's late "
        "penalty. Code, written and task scores are before it; a submission's page shows "
        "both.",
        lang=lang,
    )
    return labelled.replace("<table", f'<p class="pe-late-note">{note}</p>\n<table', 1)


def _after_penalty(path: str, headers, chunk: bytes, settings: dict) -> bytes:
    """A Formgrader answer with its learners' scores after the late penalty (see above)."""
    import json

    kind = str(headers.get("Content-Type", ""))
    try:
        if "/formgrader/api/" in path:
            db_url = settings.get("nbgrader_db_url")
            if not db_url or not _API.search(path):
                return chunk
            data = rewrite_scores(path, json.loads(chunk), penalties(db_url))
            chunk = json.dumps(data).encode("utf-8")
        elif kind.startswith("text/html"):
            page = chunk.decode("utf-8")
            labelled = label_scores(page, teacher_language())
            if labelled == page:
                return chunk
            chunk = labelled.encode("utf-8")
        else:
            return chunk
    except Exception:  # an answer it cannot read is sent as nbgrader made it
        logging.getLogger(__name__).exception("pe-course: scores left before the penalty")
        return chunk
    headers["Content-Length"] = str(len(chunk))
    headers.pop("Etag", None)
    return chunk


def _jupyter_server_extension_points():
    return [{"module": EXTENSION}]


EXCHANGE_NOISE = "Unwritable directory"


class _SayOnce(logging.Filter):
    """nbgrader's Formgrader probes the exchange at every request and logs a missing one as
    critical each time: said once, as a warning, with what to do."""

    def __init__(self):
        super().__init__()
        self.said: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if not text.startswith(EXCHANGE_NOISE):
            return True
        if text in self.said:
            return False
        self.said.add(text)
        record.msg, record.args = (
            text + " (the Formgrader's release and collect need the exchange: set "
            "PE_COURSE_EXCHANGE; said once)",
            (),
        )
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _load_jupyter_server_extension(serverapp) -> None:
    """The course's guard on the teacher's Jupyter server: the Formgrader's CSP header, its
    scores after the late penalty (``_after_penalty``), and a missing exchange said once in
    its log."""
    serverapp.web_app.transforms.insert(0, _transform_class(serverapp.web_app.settings))
    _render_off_the_loop()
    serverapp.log.addFilter(_SayOnce())
    serverapp.log.info("pe-course: Content-Security-Policy on the Formgrader's pages")


def _render_off_the_loop() -> None:
    """nbgrader's page of one submission, rendered in a thread of its own instead of the
    server's event loop: a notebook of 100,000 cells (6.3 MB) took 227-290 s to render, and
    the teacher's whole server (Lab, terminals, the Formgrader) waited. Pages are rendered
    one at a time (one exporter); everything else of nbgrader's handler is as it was."""
    import asyncio
    import concurrent.futures

    from nbgrader.api import MissingEntry
    from nbgrader.server_extensions.formgrader import handlers
    from tornado import web

    cls = handlers.SubmissionHandler
    if getattr(cls, "_pe_off_the_loop", False):
        return
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pe-formgrade")

    @web.authenticated
    @handlers.check_xsrf
    @handlers.check_notebook_dir
    async def get(self, submission_id):
        try:
            submission = self.gradebook.find_submission_notebook_by_id(submission_id)
            assignment_id = submission.assignment.assignment.name
            notebook_id = submission.notebook.name
            student_id = submission.student.id
        except MissingEntry:
            raise web.HTTPError(404, f"Invalid submission: {submission_id}") from None
        if os.path.split(self.request.path)[1] == submission_id:
            url = self.request.path + "/"
            if self.request.query:
                url += "?" + self.request.query
            return self.redirect(url, permanent=True)
        folder = self.coursedir.format_path(
            self.coursedir.autograded_directory, student_id, assignment_id
        )
        filename = os.path.join(os.path.abspath(folder), f"{notebook_id}.ipynb")
        indices = self.api.get_notebook_submission_indices(assignment_id, notebook_id)
        resources = {
            "assignment_id": assignment_id,
            "notebook_id": notebook_id,
            "submission_id": submission.id,
            "index": indices.get(submission.id, -2),
            "total": len(indices),
            "base_url": self.base_url,
            "student": student_id,
            "last_name": submission.student.last_name,
            "first_name": submission.student.first_name,
            "notebook_path": self.url_prefix + "/" + os.path.relpath(filename, self.coursedir.root),
        }
        if not os.path.exists(filename):
            resources["filename"] = filename
            html = self.render("formgrade_404.tpl", resources=resources)
            self.clear()
            self.set_status(404)
            self.write(html)
            return
        loop = asyncio.get_running_loop()
        html, _ = await loop.run_in_executor(
            pool, lambda: self.exporter.from_filename(filename, resources=resources)
        )
        self.write(html)

    cls.get = get
    cls._pe_off_the_loop = True


def server_args() -> list[str]:
    """The Jupyter server options that load the guard (``grade-ui``, the hub's teacher)."""
    return [f"--ServerApp.jpserver_extensions={EXTENSION}=True"]


def enable_in(env: Path) -> Path:
    """Loads the guard in every Jupyter server of the environment ``env`` (the hub's
    teachers): ``etc/jupyter/jupyter_server_config.d/zz-pe-course-pages.json``."""
    import json

    path = env / "etc" / "jupyter" / "jupyter_server_config.d" / "zz-pe-course-pages.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {EXTENSION: True}}}, indent=2),
        encoding="utf-8",
    )
    return path


# --------------------------------------------------------------------------- preprocessors

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_GUIDE = re.compile(r"^### BEGIN SOLUTION\s*$(.*?)^### END SOLUTION\s*$", re.DOTALL | re.MULTILINE)


_ATTACHMENT_REF = re.compile(r"attachment:(?=([^\s)\"'>]*))")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


# A page shows at most MAX_CELLS cells, and every graded cell after them up to MAX_GRADED:
# a 100,000-cell notebook took the Formgrader 227-290 s in the server's event loop, and the
# teacher's whole server (Lab, terminals) waited.
MAX_CELLS, MAX_GRADED = 2000, 500


def _graded(cell) -> bool:
    grading = cell.get("metadata", {}).get("nbgrader")
    return isinstance(grading, dict) and bool(grading.get("grade") or grading.get("solution"))


def _capped(cells: list, resources: dict) -> list:
    """``cells`` as a page shows them: all of them, or the first ``MAX_CELLS`` and the
    graded ones after them, then a note that names the file."""
    if len(cells) <= MAX_CELLS:
        return cells
    from nbformat.v4 import new_markdown_cell

    later = [c for c in cells[MAX_CELLS:] if _graded(c)][:MAX_GRADED]
    where = resources.get("notebook_path") or "the notebook's file"
    note = new_markdown_cell(
        f"**This notebook has {len(cells):,} cells: the page shows the first {MAX_CELLS:,} "
        f"and {len(later):,} graded cells after them.** The whole file: `{where}`."
    )
    return [*cells[:MAX_CELLS], note, *later]


def _plain_attachments(found) -> dict:
    """The attachments of a cell that are plain images in base64, by name."""
    kept = {}
    if not isinstance(found, dict):
        return kept
    for name, data in found.items():
        if not isinstance(name, str) or not isinstance(data, dict):
            continue
        for mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            value = data.get(mime)
            if isinstance(value, str) and _BASE64.fullmatch(value):
                kept[name] = {mime: value}
                break
    return kept


def _preprocessors():
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Unicode

    class SafeCells(Preprocessor):
        """What the templates put in attributes made safe: no cell tags (nbconvert writes
        them into ``class``), a plain cell id and grade id, raw cells empty, attachments only
        as plain images (base64 PNG, JPEG, GIF, WebP). A reference to an attachment the
        cell does not hold no longer stops the page (nbconvert raised "missing
        attachment", and the Formgrader answered 500, feedback stopped for the class):
        it becomes a link the sanitizer drops."""

        def preprocess(self, nb, resources):
            nb.cells = _capped(nb.cells, resources)
            return super().preprocess(nb, resources)

        def preprocess_cell(self, cell, resources, index):
            meta = cell.setdefault("metadata", {})
            meta.pop("tags", None)
            kept = _plain_attachments(cell.pop("attachments", None))
            if cell.get("cell_type") == "markdown":
                if kept:
                    cell["attachments"] = kept
                if isinstance(cell.get("source"), str):
                    cell["source"] = _ATTACHMENT_REF.sub(
                        lambda m: m[0] if m[1] in kept else "missing-attachment:",
                        cell["source"],
                    )
            if "id" in cell and not _SAFE_ID.fullmatch(str(cell["id"])):
                cell["id"] = f"cell-{index}"
            grading = meta.get("nbgrader")
            if (
                isinstance(grading, dict)
                and "grade_id" in grading
                and not _SAFE_ID.fullmatch(str(grading["grade_id"]))
            ):
                grading["grade_id"] = f"cell-{index}"
            if cell.get("cell_type") == "raw":
                cell["source"] = ""
            return cell, resources

    class GradingGuide(Preprocessor):
        """Each written answer (a graded Markdown cell) gets its grading guide from the
        instructor notebook, ``source/<assignment>/<notebook>.ipynb`` (``course_root``), as
        ``metadata.pe_guide``: the Formgrader's page shows it beside the answer."""

        course_root = Unicode("", help="the course folder (its source/)").tag(config=True)

        def preprocess(self, nb, resources):
            guides = self.guides(resources.get("assignment_id"), resources.get("notebook_id"))
            for cell in nb.cells:
                grading = cell.get("metadata", {}).get("nbgrader", {})
                if cell.get("cell_type") == "markdown" and grading.get("grade"):
                    guide = guides.get(grading.get("grade_id"))
                    if guide:
                        cell.metadata["pe_guide"] = guide
            return nb, resources

        def guides(self, assignment, notebook) -> dict[str, str]:
            """``grade_id -> guide`` of the instructor notebook (empty if none)."""
            import nbformat

            if not (self.course_root and assignment and notebook):
                return {}
            path = Path(self.course_root) / "source" / str(assignment) / f"{notebook}.ipynb"
            try:
                source = nbformat.read(path, as_version=4)
            except Exception:  # noqa: BLE001  (no instructor notebook: no guide to show)
                return {}
            out = {}
            for cell in source.cells:
                grading = cell.get("metadata", {}).get("nbgrader", {})
                found = _GUIDE.search(cell.source) if cell.cell_type == "markdown" else None
                if grading.get("grade") and found:
                    out[grading["grade_id"]] = found.group(1).strip()
            return out

    class LateScore(Preprocessor):
        """The submission's score before and after its late penalty, from the gradebook
        (``resources["pe_score"]``): the Formgrader's page says both, with labels in the
        teacher's language (``teacher_language``)."""

        course_root = Unicode("", help="the course folder (its gradebook.db)").tag(config=True)
        db_url = Unicode("", help="the gradebook (default: the course's gradebook.db)").tag(
            config=True
        )

        def preprocess(self, nb, resources):
            who = [resources.get(k) for k in ("notebook_id", "assignment_id", "student")]
            url = self.db_url or (
                f"sqlite:///{Path(self.course_root) / 'gradebook.db'}" if self.course_root else ""
            )
            if not (url and all(who)):
                return nb, resources
            from nbgrader.api import Gradebook, MissingEntry

            try:
                with Gradebook(url) as gb:
                    sub = gb.find_submission_notebook(*who)
                    score, top = float(sub.score or 0.0), float(sub.max_score or 0.0)
                    penalty = float(sub.late_submission_penalty or 0.0)
            except (MissingEntry, OSError, ValueError):
                return nb, resources
            from helpers.i18n import tr

            lang = teacher_language()
            resources["pe_score"] = {
                "labels": {
                    "after": tr("Score after the late penalty", lang=lang),
                    "before": tr("before the penalty", lang=lang),
                    "penalty": tr("late penalty", lang=lang),
                    "score": tr("Score", lang=lang),
                    "on_time": tr("on time: no late penalty", lang=lang),
                },
                "score": f"{score:g}",
                "max": f"{top:g}",
                "penalty": f"{penalty:g}" if penalty > 0 else "",
                "after": f"{max(score - penalty, 0.0):g}",
            }
            return nb, resources

    for cls in (SafeCells, GradingGuide, LateScore):
        cls.__module__ = __name__
    return SafeCells, GradingGuide, LateScore


def __getattr__(name: str):
    """``SafeCells``, ``GradingGuide``, ``LateScore``: made on first use (they subclass
    nbconvert's ``Preprocessor``: importing nbconvert costs a second that the commands which
    only link to these pages need not pay)."""
    if name in ("SafeCells", "GradingGuide", "LateScore"):
        made = dict(zip(("SafeCells", "GradingGuide", "LateScore"), _preprocessors(), strict=True))
        globals().update(made)
        return made[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def no_script_meta(_: str = "") -> str:
    """The ``<meta>`` Content-Security-Policy of a page that runs no script."""
    return NO_SCRIPT_META


FILTERS = {
    "clean": f"{__name__}.clean",
    "no_script_meta": f"{__name__}.no_script_meta",
    "mathml": "helpers.teacher.feedback_render.mathml",
}
