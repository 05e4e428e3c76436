"""The teacher's workflow around nbgrader: release, collect, autograde a class, feedback, grades.

One module per job; import a name from the module that owns it (this package re-exports
nothing):

==================  ===============================================================
``course``          where the course and the exchange are, the gradebook's URL, the
                    course's nbgrader configuration, ``nbgrader`` commands, course copies
``steps``           the nbgrader steps: register, release, collect, feedback
``submissions``     what came in: each submitted notebook's status and why (``Task``)
``grading``         ``autograde``: the worker pool, nbgrader in each worker, the progress bar
``cluster``         ``autograde --scheduler``: the same grading on a Dask cluster
``summary``         the class report: its printed summary and ``autograde_report.csv``
``grades``          the scores from the gradebook and the grades CSV
``written``         the written answers graded by hand: how many wait, kept through a regrade
``lms``             the grades for Canvas, Moodle and a plain CSV, from a roster
``report``          what the class got wrong: ``reports/index.html``, a page per assignment
``late``            due dates, extensions and the late penalty (nbgrader plugins)
``hub``             the class on a JupyterHub of this machine: accounts, groups, the
                    learners' and the teacher's environments, start and stop
``commands``        the command line: parses the arguments and calls the step
==================  ===============================================================

Every step works on a course directory (the repository, or any folder with the same
``nbgrader_config.py``, ``source/`` and ``notebooks/``) and, for the steps that move files
between teacher and learners, an exchange folder (``--exchange`` or ``PE_COURSE_EXCHANGE``).
"""

from helpers.teacher import quicker_imports

quicker_imports()  # every process that grades or registers imports this package first
