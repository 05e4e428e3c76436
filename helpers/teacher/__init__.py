"""Everything only the teacher needs: the answers and how they are graded.

The learner build of ``helpers`` is the package without this folder.

- ``reference``: the reference maths of every graded function (the solutions), one
  module per notebook
- ``checks``: one module per notebook: each graded function's cases, its named
  mistakes with the wrong implementations that recognise them, its declaration;
  ``exercises``: where each graded function is taught (read from the notebooks)
- grading, from the bottom up: ``codec`` (values as JSON), ``calling`` (call a learner
  function on a case and capture what it did), ``verdict`` (results and messages),
  ``notebook`` (answer and grade cells), ``kernel`` (grading in the learner's kernel),
  ``worker`` (the isolated process that imports the answer cells), ``channel`` (the pipe
  to it), ``isolated`` (grade a notebook through a worker)
- ``sandbox``: the bubblewrap command line of the grading kernel and worker
- ``nbgrader_plugin``: the nbgrader preprocessors and the sandboxed kernel manager
- ``classroom``: the teacher's commands (release, collect, autograde, feedback, grades),
  one module per job
- ``learner_build``: the wheel for learners, without this folder
"""
