"""The feedback page of a submitted notebook that nbgrader could not grade.

``nbgrader generate_feedback`` writes a page only for a notebook it autograded. For the
others (a file that is not a notebook, a notebook saved under another name, a grading that
failed) ``classroom.steps.feedback`` writes this page in nbgrader's place,
``feedback/<learner>/<assignment>/<notebook>.html``, so ``nbgrader release_feedback``
delivers it like any other, in the assignment's language. Every sentence a learner reads
on it is in ``text()``, through the message catalogue (``helpers.i18n``).
"""

from __future__ import annotations

import html

from helpers.i18n import speaking, split_assignment, tr


def text() -> dict[str, str]:
    """Every sentence of the page, in the current language (templates: ``{file}`` ...)."""
    return {
        "title": tr("{assignment}: {file} scored 0"),
        "unreadable": tr(
            "Your submitted file {file} could not be read as a notebook, so it could not be "
            "graded and it scored 0. The file is damaged or is not a notebook (it may have "
            "been edited outside Jupyter, or saved while something else was writing it)."
        ),
        "unreadable_fix": tr(
            "What to do: download the assignment again, paste your answers into the fresh "
            "notebook, save it in Jupyter, and submit again."
        ),
        "missing": tr(
            "Your submission has no notebook named {file}, so it could not be graded and it "
            "scored 0. The notebook you submitted is named {found}."
        ),
        "missing_fix": tr(
            "What to do: keep the notebook's name. Rename your notebook to {file} (or "
            "download the assignment again and paste your answers in), then submit again."
        ),
        "failed": tr("Grading {file} failed, so it scored 0 for now."),
        "failed_fix": tr(
            "What to do: tell your teacher; they have the details. Your answers are kept as "
            "you submitted them."
        ),
        "detail": tr("What the grader saw: {detail}"),
    }


STATUSES = ("unreadable", "missing", "failed")


def page(status: str, assignment: str, file: str, detail: str = "", found: str = "") -> str:
    """The HTML page for a notebook that scored 0 with ``status`` (one of ``STATUSES``), in
    the language of the assignment (``06_rope_ko``: Korean)."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    words = {"assignment": assignment, "file": file, "found": found}
    lang = split_assignment(assignment)[1]
    with speaking(lang):
        said = text()
    title = said["title"].format(**words)
    paragraphs = [said[status].format(**words), said[f"{status}_fix"].format(**words)]
    if detail:
        paragraphs.append(said["detail"].format(detail=detail))
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )
