# The kernels of the course's environment (installed with pe-course-helpers, as a data file
# of its wheel, into {sys.prefix}/etc/ipython/): a kernel restarted without running the
# notebook's first cell says "run the first cell (helpers.start) again" when a name of the
# course is missing, instead of a bare NameError (helpers/fresh_kernel.py).
c.InteractiveShellApp.extensions.append("helpers.fresh_kernel")  # noqa: F821
