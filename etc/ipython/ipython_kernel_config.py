# The kernels of the course's environment (installed with pe-course-helpers, as a data file
# of its wheel, into {sys.prefix}/etc/ipython/): a kernel restarted without running the
# notebook's first cell says "run the first cell (helpers.start) again" when a name of the
# course is missing, instead of a bare NameError (helpers/fresh_kernel.py).
c.InteractiveShellApp.extensions.append("helpers.fresh_kernel")  # noqa: F821
# Its kernel_info reports the language's version, 3.11, not the interpreter's 3.11.7: the
# notebooks commit that language_info, so opening one does not mark it modified
# (helpers/kernel_info.py).
c.InteractiveShellApp.extensions.append("helpers.kernel_info")  # noqa: F821
