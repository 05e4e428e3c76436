"""Files written whole or not at all: what a build leaves when it fails half-way.

``write_text`` writes a temporary file beside the target and renames it over the target
(``os.replace``, atomic on one file system): a reader sees the old file or the new one,
never half of one. ``write_csv`` writes a CSV file the same way, every cell through
``untrusted.csv_cell`` (no formula, no line break, no byte a UTF-8 writer refuses), so one
learner's name can neither truncate a record nor run in a spreadsheet. ``replace_folder`` moves a freshly built folder's files over an
existing one the same way, and only then drops the files the new build no longer has.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from helpers.teacher.untrusted import csv_cell

__all__ = ["replace_folder", "write_csv", "write_text"]


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if path.exists():
            shutil.copymode(path, tmp)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_csv(
    path: str | os.PathLike,
    header: Sequence[str],
    rows: Iterable[Sequence | Mapping],
    append: bool = False,
) -> Path:
    """Write ``header`` and ``rows`` (lists, or dicts keyed by the header) to ``path`` as
    CSV, whole or not at all (``write_text``). ``append`` keeps the rows already there."""
    path = Path(path)
    buf = io.StringIO()
    if append and path.is_file():
        buf.write(path.read_text(encoding="utf-8", errors="backslashreplace"))
    writer = csv.writer(buf)
    if not buf.tell():
        writer.writerow([csv_cell(h) for h in header])
    for row in rows:
        if isinstance(row, Mapping):
            row = [row.get(h, "") for h in header]
        writer.writerow([csv_cell(v) for v in row])
    return write_text(path, buf.getvalue())


def replace_folder(new: str | os.PathLike, dest: str | os.PathLike) -> list[Path]:
    """Make ``dest`` hold exactly the files of ``new`` (a folder on the same file system),
    each moved in by a rename; returns the files of ``dest``. ``new`` is used up."""
    new, dest = Path(new), Path(dest)
    moved = []
    for src in sorted(p for p in new.rglob("*") if p.is_file()):
        target = dest / src.relative_to(new)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, target)
        moved.append(target)
    keep = set(moved)
    for old in sorted(p for p in dest.rglob("*") if p.is_file()):
        if old not in keep and ".ipynb_checkpoints" not in old.parts:
            old.unlink()
    return moved
