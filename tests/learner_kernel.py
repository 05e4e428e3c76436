"""A learner's kernel driven as JupyterLab drives it: each cell sent with its ``cellId``.

``LearnerKernel`` starts a real ipykernel (jupyter_client), runs cells one by one and
returns, for each, the reply's status and what the cell showed (stream text, tracebacks
without colours, results). ``run_all`` stops at the first cell whose reply is an error,
as "Run All" does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Self

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Ran:
    """What one cell did: the reply's status ("ok" or "error") and what it showed."""

    cell_id: str
    status: str
    text: str


class LearnerKernel:
    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        from jupyter_client.manager import start_new_kernel

        kernel_env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
        kernel_env.update(env or {})
        self.manager, self.client = start_new_kernel(
            kernel_name="python3", cwd=str(cwd), env=kernel_env
        )

    def run(self, source: str, cell_id: str = "") -> Ran:
        content = {
            "code": source,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg = self.client.session.msg("execute_request", content, metadata={"cellId": cell_id})
        self.client.shell_channel.send(msg)
        texts = []
        while True:
            reply = self.client.get_iopub_msg(timeout=300)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                texts.append(body["text"])
            elif kind == "error":
                texts.append("\n".join(ANSI.sub("", line) for line in body["traceback"]) + "\n")
            elif kind in ("execute_result", "display_data"):
                texts.append(body["data"].get("text/plain", "") + "\n")
            elif kind == "status" and body["execution_state"] == "idle":
                break
        while True:  # the reply to this request (a late kernel_info reply may come first)
            reply = self.client.get_shell_msg(timeout=300)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                break
        return Ran(cell_id, reply["content"]["status"], "".join(texts))

    def run_all(self, nb) -> list[Ran]:
        """Every code cell of ``nb`` in order, up to the first that stops (as Run All)."""
        done = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            done.append(self.run(cell.source, cell.get("id", "")))
            if done[-1].status != "ok":
                break
        return done

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
