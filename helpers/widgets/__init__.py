"""Interactive explorers, one module per notebook; each factory takes the learner's own functions.

Every factory returns an ``Explorer`` (display it as the last expression of a cell), or
``None`` while nbgrader runs the notebook.
"""
