"""Adding a question is safe: a failed build loses no notebook, an untranslated cell stops
only its translation.

Both run ``python -m helpers generate`` (``cli.generate``) with real nbgrader on a copy of
the course's 01_order (English source, Korean translation file, generated notebooks).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import nbformat
import pytest

from helpers import cli
from helpers.teacher import translate
from tests import classroom_kit as kit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not kit.real_ids(["01_order", "01_order_ko"]), reason="needs 01_order"),
]
BASE = "01_order"


def _course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy2(kit.REPO / "nbgrader_config.py", root)
    for top in ("source", "notebooks"):
        for aid in (BASE, f"{BASE}_ko"):
            shutil.copytree(kit.REPO / top / aid, root / top / aid)
    return root


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_failed_build_leaves_notebooks_byte_identical(tmp_path, capsys):
    """A source notebook nbgrader refuses (two cells with one grade id): generate fails,
    says so, and notebooks/ keeps every file, byte for byte; no scratch folder is left."""
    root = _course(tmp_path)
    path = root / "source" / BASE / f"{BASE}.ipynb"
    nb = nbformat.read(path, as_version=4)
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    graded[1].metadata["nbgrader"]["grade_id"] = graded[0].metadata["nbgrader"]["grade_id"]
    nbformat.write(nb, path)
    before = _digest(root / "notebooks")
    assert cli.generate([BASE], root=root) != 0
    assert "notebooks/ is left as it was" in capsys.readouterr().err
    assert _digest(root / "notebooks") == before
    assert not list(root.glob(".generate-*"))


def test_an_added_english_cell_names_the_korean_cells_and_english_still_builds(tmp_path, capsys):
    """A teacher adds an English Markdown cell: the English notebook is rebuilt with it, the
    Korean one stays as it was, and the message names the cell to translate and the command
    that adds it to the translation file (its translated entries kept)."""
    root = _course(tmp_path)
    path = root / "source" / BASE / f"{BASE}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = nbformat.v4.new_markdown_cell("A note the teacher added for this class.")
    cell.id = "teacher-note"
    nb.cells.insert(1, cell)
    nbformat.write(nb, path)
    korean = _digest(root / "notebooks" / f"{BASE}_ko")
    assert cli.generate([], root=root) == 1  # the English built, the Korean not: not done
    said = capsys.readouterr()
    learner = nbformat.read(root / "notebooks" / BASE / f"{BASE}.ipynb", as_version=4)
    assert learner.cells[1].source == cell.source
    assert _digest(root / "notebooks" / f"{BASE}_ko") == korean
    assert f"{BASE}_ko was not rebuilt" in said.err
    assert "cell 'teacher-note' (Markdown) has no translation" in said.err
    command = f"python -m helpers.teacher.translate skeleton {BASE} --lang ko --write"
    assert command in said.err

    # the command it names keeps every translation and adds the new cell, marked TODO
    yaml_path = translate.translation_path(BASE, "ko", root)
    entries = translate.load(BASE, "ko", root)
    assert translate.main(["skeleton", BASE, "--lang", "ko", "--write"], root=root) == 0
    after = translate.load(BASE, "ko", root)
    assert "teacher-note" in after and set(entries) <= set(after)
    for cid, entry in entries.items():  # every translation kept
        if "markdown" in entry:
            assert after[cid] == entry, cid
        else:
            strings = after[cid].get("strings") or {}
            assert all(strings.get(en) == ko for en, ko in entry["strings"].items()), cid
    assert '"teacher-note":  # TODO translate' in yaml_path.read_text(encoding="utf-8")


def test_a_source_that_does_not_compile_generates_nothing_and_names_the_cell(tmp_path, capsys):
    """A colon lost in the source (``def softmax(x, axis=-1)``): generate exits non-zero, names the
    notebook, the cell and the line, and leaves notebooks/ and the exercise table as they
    were, byte for byte (before, it printed "generated" and the table lost the function)."""
    root = _course(tmp_path)
    (root / "helpers" / "teacher").mkdir(parents=True)
    table = root / "helpers" / "teacher" / "exercises.json"
    shutil.copy2(kit.REPO / "helpers" / "teacher" / "exercises.json", table)
    path = root / "source" / BASE / f"{BASE}.ipynb"
    nb = nbformat.read(path, as_version=4)
    header = "def softmax(x, axis=-1):"
    index, cell = next((i, c) for i, c in enumerate(nb.cells, start=1) if header in c.source)
    line = cell.source.splitlines().index(header) + 1
    cell.source = cell.source.replace(header, header[:-1], 1)
    nbformat.write(nb, path)
    before, table_before = _digest(root / "notebooks"), table.read_bytes()
    for ids in ([BASE], []):
        assert cli.generate(ids, root=root) != 0
        err = capsys.readouterr().err
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        assert f"source/{BASE}/{BASE}.ipynb: cell {index} ({grade_id}), line {line}:" in err, err
        assert "nothing generated" in err
        assert _digest(root / "notebooks") == before
        assert table.read_bytes() == table_before
        assert not list(root.glob(".generate-*"))
