"""Call a learner's function on one case and capture what it did.

One function, ``call``, serves both places learner code runs: the learner's own kernel
(``helpers.teacher.kernel``: ``grade`` and the self-check) and the isolated worker
process (``helpers.teacher.worker``). It returns a plain description (JSON-able): the
value as ``helpers.teacher.codec`` encodes it, or the error, and whether the call
changed its arguments. The verdict is made elsewhere (``helpers.teacher.verdict``).

The worker imports this module before any learner code runs.
"""

from __future__ import annotations

import json
import os

from helpers.teacher.codec import encode

__all__ = ["ANSWERS", "MAX_REPORT_FILE", "call", "error_of", "read_small", "report_names"]

# The file name under which the answer cells are compiled (error lines point into it).
ANSWERS = "<answers>"
# The largest file of a "files" check the grader reads.
MAX_REPORT_FILE = 1024**2


def error_of(exc: BaseException) -> dict:
    """A plain description of an exception raised by learner code.

    ``line`` is the line of the answer cells (compiled as ``ANSWERS``) where it was
    raised, or None.
    """
    try:
        message = str(exc)[:500]
    except BaseException:  # noqa: BLE001  (a learner's exception whose str fails)
        message = ""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == ANSWERS:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == ANSWERS:
        line = exc.lineno
    return {
        "type": type(exc).__name__,
        "message": message,
        "line": line,
        "value_error": isinstance(exc, ValueError),
        "not_implemented": isinstance(exc, NotImplementedError),
    }


def _snapshot(args: tuple, kwargs: dict) -> str:
    return json.dumps(encode([list(args), kwargs]))


def call(
    target,
    kind: str,
    args: tuple,
    kwargs: dict,
    check_mutation: bool,
    reraise: tuple[type[BaseException], ...] = (),
) -> dict:
    """Run ``target(*args, **kwargs)`` (or read the constant ``target``) once.

    Returns ``{"value": <encoded>}`` or ``{"error": error_of(exc)}``, with
    ``"mutated": True/False`` when ``check_mutation``: whether the arguments differ after
    the call (compared as encoded data). Every exception of the learner's code is
    captured, ``SystemExit`` too, except those in ``reraise`` (the kernel's time limit).
    """
    before = _snapshot(args, kwargs) if check_mutation else None
    out: dict = {}
    try:
        value = target if kind == "constant" else target(*args, **kwargs)
        out["value"] = encode(value)
    except reraise:
        raise
    except BaseException as exc:  # noqa: BLE001  (SystemExit too: it is the learner's answer)
        out["error"] = error_of(exc)
    if before is not None:
        try:
            out["mutated"] = _snapshot(args, kwargs) != before
        except BaseException:  # noqa: BLE001  (an argument the learner made unreadable)
            out["mutated"] = True
    return out


def report_names(case) -> tuple[str, str]:
    """The two file names of a "files" case (basenames of its first two string args)."""
    names = [os.path.basename(str(a)) for a in case.args if isinstance(a, str | os.PathLike)]
    if len(names) >= 2 and names[0] and names[1] and names[0] != names[1]:
        return names[0], names[1]
    return "rope_report.json", "rope_report.md"


def read_small(path: str) -> str | None:
    """The text of a regular file of at most MAX_REPORT_FILE bytes, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > MAX_REPORT_FILE:
            return None
        data = os.read(fd, MAX_REPORT_FILE + 1)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")
