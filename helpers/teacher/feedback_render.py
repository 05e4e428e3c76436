"""Feedback pages that stand alone: nbgrader's ``generate_feedback`` with the course's template.

``nbgrader_config.py`` points nbgrader's ``HTMLExporter`` at the template
``feedback_templates/pe_feedback`` (``template_dirs()``) and registers ``FILTERS``. The page
then needs no network and runs no script:

- ``mathml``: every ``$...$`` and ``$$...$$`` formula of the rendered Markdown becomes MathML
  (``latex2mathml``) when the page is generated, instead of loading MathJax from a CDN;
- ``open_hints``: the notebooks' ``<details>`` hints are open (a printed page shows them);
- ``summary``: the table at the top: each function's score, the named mistake it matched,
  the exercise to revisit, the teacher's comments and any late penalty;
- ``say`` and ``page_language``: every label in the assignment's language.

The verdicts come from the autograded notebook (``nbgrader_plugin.VERDICT_KEY`` on each test
cell); hidden tests are removed before the page is made (``HideHiddenTests``).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from helpers.i18n import speaking, split_assignment, tr

TEMPLATE = "pe_feedback"
_SKIP = re.compile(
    r"(<pre\b.*?</pre>|<code\b.*?</code>|<math\b.*?</math>)", re.DOTALL | re.IGNORECASE
)
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE = re.compile(r"(?<![\\$\w])\$(?=\S)([^$<]+?)(?<=\S)\$(?!\$)")  # may span lines
_BRACKETS = re.compile(r"\\\[(.+?)\\\]|\\\((.+?)\\\)", re.DOTALL)


def template_dirs() -> list[str]:
    """nbgrader's own template folder (the base of its feedback template) and the course's."""
    import nbgrader

    ours = Path(__file__).resolve().parent / "feedback_templates"
    theirs = Path(nbgrader.__file__).resolve().parent / "server_extensions/formgrader/templates"
    return [str(theirs), str(ours)]


def _convert(latex: str, display: bool) -> str:
    from latex2mathml.converter import convert

    text = html.unescape(latex).strip()
    try:
        return convert(text, display="block" if display else "inline")
    except Exception:  # noqa: BLE001  (a formula latex2mathml cannot read stays visible as code)
        return f'<code class="pe-math-source">{html.escape(text)}</code>'


def mathml(text: str) -> str:
    """The formulas of rendered Markdown HTML as MathML (code and pre blocks left alone)."""
    parts = _SKIP.split(text or "")
    for i in range(0, len(parts), 2):  # the even parts lie outside code, pre and math
        part = _DISPLAY.sub(lambda m: _convert(m.group(1), True), parts[i])
        part = _BRACKETS.sub(
            lambda m: _convert(m.group(1) or m.group(2), m.group(1) is not None), part
        )
        parts[i] = _INLINE.sub(lambda m: _convert(m.group(1), False), part)
    return "".join(parts)


def open_hints(text: str) -> str:
    """``<details>`` blocks open, so their content shows (and prints)."""
    return re.sub(r"<details(?![^>]*\bopen\b)", "<details open", text or "", flags=re.IGNORECASE)


def language_of(assignment: str | None) -> str:
    """The language of an assignment id (``06_rope_ko``: ``ko``)."""
    return split_assignment(str(assignment or ""))[1]


def labels() -> dict[str, str]:
    """Every label of the template, in the current language (``say`` picks one)."""
    return {
        "Score": tr("Score"),
        "Top": tr("Top"),
        "Your answer": tr("Your answer"),
        "Your task": tr("Your task"),
        "Test cell": tr("Test cell"),
        "Your teacher's comment": tr("Your teacher's comment"),
    }


def say(label: str, assignment: str | None = None) -> str:
    """A label of the page (a key of ``labels()``) in the assignment's language."""
    with speaking(language_of(assignment)):
        said = labels()
    if label not in said:
        raise ValueError(f"label must be one of {', '.join(said)}, got {label!r}")
    return said[label]


def page_language(assignment: str | None) -> str:
    """The page's ``lang`` attribute."""
    return language_of(assignment)


# nbgrader's own comment on an answer cell left as released (SaveAutoGrades), in English
NO_RESPONSE = "No response."


def teacher_comment(comment) -> str:
    """What the teacher wrote on a cell, or "" (nbgrader's automatic "No response." is not
    the teacher's: an unanswered cell already scores 0 and says so in its verdict)."""
    text = str(comment or "").strip()
    return "" if text == NO_RESPONSE else text


def _code(text: str) -> str:
    """Plain text with its `backticked` names as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _num(value) -> str:
    return f"{round(float(value or 0.0), 2):g}"


def summary(nb, resources: dict) -> str:
    """The table at the top of the page: per function its score, the named mistake and the
    exercise to revisit; then the teacher's comments and the late penalty, if any."""
    from helpers.teacher.nbgrader_plugin import VERDICT_KEY
    from helpers.teacher.verdict import section_text

    info = (resources or {}).get("nbgrader", {})
    assignment = info.get("assignment")
    with speaking(language_of(assignment)):
        functions: dict[str, dict] = {}  # function -> its cells' scores, mistake, section
        comments = []
        for cell in nb.cells:
            meta = cell.get("metadata", {})
            grading = meta.get("nbgrader", {})
            said = teacher_comment(grading.get("comment"))
            if said:
                where = grading.get("grade_id", "")
                comments.append(
                    f'<li><a href="#comment-{html.escape(where)}">{html.escape(where)}</a>: '
                    f"{mathml(html.escape(said))}</li>"
                )
            if not grading.get("grade") or grading.get("solution"):
                continue
            record = meta.get(VERDICT_KEY, {})
            gid = str(grading.get("grade_id", ""))
            row = functions.setdefault(
                record.get("function") or gid,
                {"anchor": gid, "score": 0.0, "points": 0.0, "said": "", "section": ""},
            )
            row["score"] += float(grading.get("score") or 0.0)
            row["points"] += float(grading.get("points") or 0.0)
            if record.get("stopped") == "timed out":
                row["said"] = tr("did not finish in time (stopped)")
            elif record.get("stopped") == "crashed":
                row["said"] = tr("ended the grading process (crashed)")
            elif record.get("unfinished"):
                row["said"] = tr("not written yet")
            elif record.get("mistake") and not row["said"]:
                mistake = record["mistake"]
                row["said"] = tr(mistake)
            row["section"] = row["section"] or record.get("section") or ""
        rows = [
            "<tr>"
            f'<td><a href="#{html.escape(r["anchor"])}"><code>{html.escape(name)}</code></a></td>'
            f"<td>{_num(r['score'])} / {_num(r['points'])}</td>"
            f'<td class="pe-mistake">{html.escape(r["said"])}</td>'
            f"<td>{_code(section_text(r['section'])) if r['section'] else ''}</td>"
            "</tr>"
            for name, r in functions.items()
        ]
        out = []
        if rows:
            head = (tr("function"), tr("Score"), tr("Named mistake"), tr("Revisit"))
            out.append(
                '<table class="pe-summary"><thead><tr>'
                + "".join(f"<th>{h}</th>" for h in head)
                + "</tr></thead><tbody>"
                + "".join(rows)
                + "</tbody></table>"
            )
        if comments:
            heading = html.escape(tr("Your teacher's comments"))
            out.append(f'<h2 class="h4">{heading}</h2>')
            out.append("<ul>" + "".join(comments) + "</ul>")
        penalty = float(info.get("late_penalty") or 0.0)
        if penalty > 0:
            out.append(
                '<p class="pe-late">'
                + html.escape(tr("Late submission penalty: -{points} points", points=_num(penalty)))
                + "</p>"
            )
    return "\n".join(out)


_FONT_FACE = re.compile(r"@font-face\s*\{[^{}]*\}")


def no_fonts(css: str) -> str:
    """Stylesheets without their ``@font-face`` rules: bootstrap's glyphicons (and any other
    web font) would be requested from files the page does not have, and its own
    Content-Security-Policy blocks every request anyway."""
    from markupsafe import Markup

    return Markup(_FONT_FACE.sub("", str(css)))


FILTERS = {
    "clean": "helpers.teacher.pages.clean",
    "no_fonts": f"{__name__}.no_fonts",
    "no_script_meta": "helpers.teacher.pages.no_script_meta",
    "mathml": f"{__name__}.mathml",
    "open_hints": f"{__name__}.open_hints",
    "say": f"{__name__}.say",
    "page_language": f"{__name__}.page_language",
    "summary": f"{__name__}.summary",
    "teacher_comment": f"{__name__}.teacher_comment",
}


def _exporter_class():
    from nbconvert.exporters import HTMLExporter

    class FeedbackExporter(HTMLExporter):
        """nbgrader's feedback exporter with the course's template (``c.FeedbackExporter``
        in ``nbgrader_config.py``): the Formgrader's own ``HTMLExporter`` renders a
        submission for manual grading with the course's ``pe_formgrade`` template
        (``helpers.teacher.pages``)."""

    FeedbackExporter.__module__ = __name__
    return FeedbackExporter


def __getattr__(name: str):
    """``FeedbackExporter``, made on first use: it subclasses nbconvert's ``HTMLExporter``,
    and importing nbconvert costs a second that a process reading the course's configuration
    only (every command does) need not pay."""
    if name == "FeedbackExporter":
        globals()["FeedbackExporter"] = made = _exporter_class()
        return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
