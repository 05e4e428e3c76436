"""nbgrader configuration of the course: the repository is the course root.

Grading runs outside the learner's kernel: `IsolatedGrades` writes the verdict of every
grade cell, from `helpers.teacher.isolated`, which imports the learner's answer cells in a
separate, limited process and compares with `helpers.reference`. No grade comes from a
kernel, so none is started: `SafeExecute` only marks the cells (`run_kernel = False`).
The random cases of a (learner, assignment) come from a seed derived from the course id,
the learner, the assignment and the teacher-only secret `.grading_secret`
(`helpers.teacher.seeds`): a regrade gives the same grades.
"""

import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = ROOT
c.CourseDirectory.course_id = "positional-encodings"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "rope_report.json",
    "rope_report.md",
    "*.[a-z][a-z].yaml",  # translation files (helpers.teacher.translate): teacher-side
]

# One cell may run this long in the kernel before it is interrupted.
c.Execute.timeout = 120
# A learner who deletes a graded cell still gets it back (scored from the isolated grader),
# also when the answer cell before it was deleted too (RestoreCells: nbgrader's own
# OverwriteCells fails the whole notebook then).
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "helpers.teacher.nbgrader_plugin.RestoreCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# The learner's kernel runs in the bubblewrap sandbox (helpers.teacher.sandbox): it sees its
# own autograded folder, the installed packages and a private /tmp, nothing else of the course.
# SandboxedSafeExecute is the course's SafeExecute with a sandboxed kernel manager
# (nbgrader's Execute passes kernel_manager_class as a keyword, so config cannot set it).
# Without bubblewrap grading warns loudly; PE_COURSE_SANDBOX=require makes it refuse.
# No kernel is started: every grade comes from IsolatedGrades, so SafeExecute only marks
# each code cell as not run (c.SafeExecute.run_kernel = True runs the read-only, answer and
# test cells in the sandboxed kernel again, and run_teaching_cells = True the rest too;
# their outputs are then kept, the grades are the same).
c.SafeExecute.run_kernel = False
c.Autograde.autograde_preprocessors = [
    "helpers.teacher.nbgrader_plugin.SandboxedSafeExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "helpers.teacher.nbgrader_plugin.IsolatedGrades",
    "nbgrader.preprocessors.SaveAutoGrades",
    "helpers.teacher.classroom.late.ApplyDueDates",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Late work (helpers.teacher.classroom.late): each assignment's due date (its English id covers every
# language edition), per-learner extensions from extensions.csv (student_id, assignment, days)
# and the penalty: 10 % of a notebook's score per day or part of a day late, at most 50 %.
# Written into the gradebook at every grading, so a regrade recomputes the penalties from
# what is configured now. No due date: no penalty.
c.ApplyDueDates.duedates = {}  # e.g. {"06_rope": "2026-12-08 23:59:00 +0900"}
c.ApplyDueDates.extensions_file = "extensions.csv"
c.AssignLatePenalties.plugin_class = "helpers.teacher.classroom.late.DailyPenalty"
c.DailyPenalty.per_day = 0.10
c.DailyPenalty.cap = 0.50
# The penalty follows the score: a score given by hand or extra credit (the Formgrader's API,
# any process that reads this file) recomputes the notebook's penalty in the same commit.
from helpers.teacher.classroom import late  # noqa: E402

late.keep_penalties_current(c)

# Feedback shows the grader's messages, never the hidden tests' source (nbgrader #917).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "helpers.teacher.nbgrader_plugin.HideHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

if os.environ.get("PE_COURSE_EXCHANGE"):
    c.Exchange.root = os.environ["PE_COURSE_EXCHANGE"]

# The exchange's plug-ins (helpers.teacher.classroom.exchange), for `nbgrader collect`,
# `python -m helpers collect` and the Formgrader's Collect button alike: collect takes only
# regular files owned by the account an inbound entry names (no link, no device, no forged
# folder, a secret of its own) and dates each submission by the server, never by the
# learner's timestamp.txt; feedback is released for everyone it can be; the exchange and its
# inbound folder get the sticky bit.
c.ExchangeFactory.collect = "helpers.teacher.classroom.exchange.SafeCollect"
c.ExchangeFactory.release_feedback = "helpers.teacher.classroom.exchange.SafeReleaseFeedback"
c.ExchangeFactory.release_assignment = "helpers.teacher.classroom.exchange.SafeReleaseAssignment"

# Feedback pages stand alone (helpers.teacher.feedback_render): formulas as MathML made when
# the page is generated, no script and no request, hints open, verdicts wrapping, and a table
# of each function's score, named mistake and exercise to revisit, in the assignment's language.
from helpers.teacher import feedback_render  # noqa: E402

# (an exporter class of their own: the Formgrader's HTMLExporter keeps nbgrader's template)
# by name: nbconvert is imported when feedback is made, not whenever this file is read
c.GenerateFeedback.exporter_class = "helpers.teacher.feedback_render.FeedbackExporter"
c.FeedbackExporter.template_name = feedback_render.TEMPLATE
c.FeedbackExporter.extra_template_basedirs = feedback_render.template_dirs()
c.FeedbackExporter.filters = feedback_render.FILTERS
c.FeedbackExporter.exclude_anchor_links = True
c.FeedbackExporter.preprocessors = ["helpers.teacher.pages.SafeCells"]
# the notebook validated once, after the preprocessors (SafeCells caps a page to
# pages.MAX_CELLS cells), not after each of them: 13 passes over a 100,000-cell notebook
c.FeedbackExporter.optimistic_validation = True

# The Formgrader's page of a submission (helpers.teacher.pages): the course's template
# pe_formgrade, where what a learner wrote is cleaned (nh3) and no inline script but the
# template's own runs (the teacher's server sends a Content-Security-Policy: grade-ui and
# the hub's teacher load helpers.teacher.pages as a server extension); formulas as MathML,
# as in the feedback; each written answer with its grading guide beside it.
from helpers.teacher import pages  # noqa: E402

c.HTMLExporter.template_name = pages.TEMPLATE
c.HTMLExporter.extra_template_basedirs = pages.template_dirs()
c.HTMLExporter.filters = pages.FILTERS
c.HTMLExporter.exclude_anchor_links = True
c.HTMLExporter.optimistic_validation = True  # as the feedback's
c.HTMLExporter.preprocessors = [
    "helpers.teacher.pages.SafeCells",
    "helpers.teacher.pages.GradingGuide",
    "helpers.teacher.pages.LateScore",
]
c.GradingGuide.course_root = ROOT
c.LateScore.course_root = ROOT
