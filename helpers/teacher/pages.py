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
import hashlib
import logging
import re
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
# inline, styles only the page's own, nothing fetched, no form, no frame.
NO_SCRIPT = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'"
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
        "frame-src 'none'; frame-ancestors 'self'"
    )


def _transform_class():
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
            self.page = self.formgrader and "/formgrader/static/" not in request.path
            if self.page:
                request.headers.pop("If-None-Match", None)

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if self.formgrader:
                page = chunk.decode("utf-8", "replace") if finishing else ""
                headers["Content-Security-Policy"] = formgrader_csp(page)
                headers["X-Content-Type-Options"] = "nosniff"
            if self.page:
                headers["Cache-Control"] = "no-store"
            return status_code, headers, chunk

    return FormgraderCSP


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
    """The course's guard on the teacher's Jupyter server: the Formgrader's CSP header (and
    a missing exchange said once in its log)."""
    serverapp.web_app.transforms.insert(0, _transform_class())
    serverapp.log.addFilter(_SayOnce())
    serverapp.log.info("pe-course: Content-Security-Policy on the Formgrader's pages")


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


def _preprocessors():
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Unicode

    class SafeCells(Preprocessor):
        """What the templates put in attributes made safe: no cell tags (nbconvert writes
        them into ``class``), a plain cell id and grade id, no attachments, raw cells empty."""

        def preprocess_cell(self, cell, resources, index):
            meta = cell.setdefault("metadata", {})
            meta.pop("tags", None)
            cell.pop("attachments", None)
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
        (``resources["pe_score"]``): the Formgrader's page says both, with labels."""

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
            resources["pe_score"] = {
                "score": f"{score:g}",
                "max": f"{top:g}",
                "penalty": f"{penalty:g}" if penalty > 0 else "",
                "after": f"{max(score - penalty, 0.0):g}",
            }
            return nb, resources

    for cls in (SafeCells, GradingGuide, LateScore):
        cls.__module__ = __name__
    return SafeCells, GradingGuide, LateScore


SafeCells, GradingGuide, LateScore = _preprocessors()


def no_script_meta(_: str = "") -> str:
    """The ``<meta>`` Content-Security-Policy of a page that runs no script."""
    return NO_SCRIPT_META


FILTERS = {
    "clean": f"{__name__}.clean",
    "no_script_meta": f"{__name__}.no_script_meta",
    "mathml": "helpers.teacher.feedback_render.mathml",
}
