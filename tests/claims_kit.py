"""One executed source notebook, as the claims tests read it.

``executed(nb_id, workdir, skipped)`` runs ``source/<nb_id>/<nb_id>.ipynb`` once with
nbclient, in a copy of its folder under ``workdir``, without the cells whose ids are in
``skipped`` (the explorers and the self-check, which print nothing a claim quotes), and gives
(Markdown source by cell id, printed output by code cell id). ``holds`` is the test of one
pattern.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def executed(
    nb_id: str, workdir: Path, skipped: tuple[str, ...] = ("explorer", "self_check")
) -> tuple[dict[str, str], dict[str, str]]:
    """(Markdown source by cell id, printed output by code cell id) of the executed notebook."""
    folder = workdir / nb_id
    shutil.copytree(ROOT / "source" / nb_id, folder)
    nb = nbformat.read(folder / f"{nb_id}.ipynb", as_version=4)
    nb.cells = [c for c in nb.cells if c.get("id") not in skipped]
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    text = {c.id: c.source for c in nb.cells if c.cell_type == "markdown"}
    printed = {
        c.id: "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in nb.cells
        if c.cell_type == "code"
    }
    return text, printed


def holds(haystack: str, pattern: str) -> bool:
    return re.search(pattern, haystack) is not None
