"""A pytest plugin for nbgrader's own tests run against the course's exchange plug-ins.

nbgrader's apps read the course's ``ExchangeFactory`` lines from the ``nbgrader_config.py``
that ``JUPYTER_CONFIG_PATH`` names (as any nbgrader command would); ``NbGraderAPI`` (the
Formgrader's side, built in ``test_api.py`` from a ``Config`` of its own) gets the same file
merged into its configuration here. Loaded with ``-p tests.nbgrader_peer_plugin`` by
``tests/test_nbgrader_peer.py``.
"""

from __future__ import annotations

import os


def pytest_configure(config) -> None:
    from nbgrader.apps import api
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    folder = os.environ["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0]
    course = PyFileConfigLoader("nbgrader_config.py", path=folder).load_config()
    init = api.NbGraderAPI.__init__

    def with_course(self, *args, **kwargs):
        merged = Config()
        merged.merge(kwargs.get("config") or Config())
        merged.merge(Config({"ExchangeFactory": course.ExchangeFactory}))
        kwargs["config"] = merged
        init(self, *args, **kwargs)

    api.NbGraderAPI.__init__ = with_course
