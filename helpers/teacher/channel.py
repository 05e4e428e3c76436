"""The channel to an isolated worker: starting it, JSON lines each way, deadlines, its end.

``Worker(workdir, cpu_seconds)`` starts ``python -I -m helpers.teacher.worker`` (inside
the bubblewrap sandbox of ``helpers.teacher.sandbox`` when it works: ``workdir`` is there a
folder of its own in memory, of a fixed size, and no new process can start) with a clean
environment and sends it its limits; its stderr (the learner's prints) goes nowhere; ``send`` and ``receive`` move one JSON object each
way before a deadline (``WorkerTimeout``); a worker that ends or sends something
unreadable raises ``WorkerDied`` with what happened in plain words.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from helpers.teacher import sandbox

PACKAGE_DIR = Path(__file__).resolve().parent.parent
# Seconds a worker may take to start (Python, numpy, the sandbox) on a busy machine.
START_TIMEOUT = 60.0
# Limits of the worker process.
MEMORY_LIMIT = 3 * 1024**3
FILE_SIZE_LIMIT = 64 * 1024**2
# The largest reply line the grading process accepts from a worker.
MAX_REPLY = 64 * 1024**2


def worker_command(workdir: str | os.PathLike, seccomp_fd: int | None = None) -> list[str]:
    """The worker's command line, inside the grading sandbox.

    ``python -I`` ignores the environment's Python variables and the user site; the
    worker may write only in ``workdir``, which inside is a folder in memory of its own
    (``sandbox.SCRATCH_SIZE``): the host's ``workdir`` stays empty. ``seccomp_fd`` holds
    ``sandbox.no_fork_filter()``.
    """
    argv = [sys.executable, "-I", "-m", "helpers.teacher.worker"]
    return sandbox.wrap(argv, scratch=[str(workdir)], cwd=str(workdir), seccomp_fd=seccomp_fd)


def _filter_fd() -> int | None:
    """A pipe's read end holding the no-fork seccomp program, or None (no program here)."""
    program = sandbox.no_fork_filter()
    if program is None or not sandbox.available():
        return None
    read, write = os.pipe()
    try:
        os.write(write, program)  # a few hundred bytes: the pipe holds them
    finally:
        os.close(write)
    return read


class WorkerDied(Exception):
    """The worker ended (the message says how, in plain words)."""


class WorkerTimeout(Exception):
    """The worker did not answer before the deadline."""


def clean_env(workdir: str) -> dict[str, str]:
    env = {
        "PATH": os.defpath,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "NBGRADER_EXECUTION": "autograde",
    }
    # OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set on machines whose processor older
    # OpenBLAS builds misdetect: numpy in the worker must see them too.
    for key in ("PE_COURSE_SANDBOX", "PE_COURSE_BWRAP", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class Worker:
    """One worker process and its JSON-lines channel."""

    def __init__(
        self,
        workdir: str,
        cpu_seconds: float,
        argv: list[str] | None = None,
        memory: int = MEMORY_LIMIT,
    ) -> None:
        """``argv`` runs another program on the same channel, outside the sandbox (the
        reference's process of ``helpers.teacher.standins``), with ``memory`` as its limit."""
        self._launch(workdir, argv)
        self.configure(cpu_seconds, memory)

    def _launch(self, workdir: str, argv: list[str] | None, wait: bool = True) -> None:
        """Start the process; with ``wait``, wait for its ``ready`` (its imports done, no
        limits yet)."""
        self.folder = None  # a folder of its own, removed at ``stop`` (a spare's)
        fd = _filter_fd() if argv is None else None
        try:
            self.proc = subprocess.Popen(
                worker_command(workdir, fd) if argv is None else argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=clean_env(workdir),
                start_new_session=True,
                close_fds=True,
                pass_fds=() if fd is None else (fd,),
            )
        finally:
            if fd is not None:
                os.close(fd)
        self.buffer = b""
        self.reply = self.proc.stdout.fileno()
        os.set_blocking(self.reply, False)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.started = time.monotonic()
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait for the process's ``ready`` (``START_TIMEOUT`` from its start)."""
        try:
            self.receive(self.started + START_TIMEOUT)
        except BaseException:
            self.stop()
            raise

    def configure(self, cpu_seconds: float, memory: int = MEMORY_LIMIT) -> None:
        """Send the limits: the process sets them before it reads anything else."""
        self.send(
            {
                "memory": memory,
                "cpu": int(cpu_seconds) + 1,
                "fsize": FILE_SIZE_LIMIT,
                "package_dir": str(PACKAGE_DIR),
            },
            time.monotonic() + START_TIMEOUT,
        )

    def send(self, obj: dict, deadline: float) -> None:
        data = (json.dumps(obj) + "\n").encode("utf-8")
        fd = self.proc.stdin.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkerTimeout()
                if not sel.select(left):
                    continue
                try:
                    n = os.write(fd, data)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, OSError) as exc:
                    raise WorkerDied(self.death()) from exc
                data = data[n:]

    def receive(self, deadline: float) -> dict:
        with selectors.DefaultSelector() as sel:
            sel.register(self.reply, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkerTimeout()
                if not sel.select(left):
                    continue
                try:
                    chunk = os.read(self.reply, 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise WorkerDied(self.death())
                self.buffer += chunk
                if len(self.buffer) > MAX_REPLY:
                    self.stop()
                    raise WorkerDied("its output was too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError) as exc:
            self.stop()
            raise WorkerDied("it sent something unreadable") from exc
        if not isinstance(reply, dict):
            self.stop()
            raise WorkerDied("it sent something unreadable")
        return reply

    def death(self) -> str:
        """How the worker ended, in plain words."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            return "the process stopped answering"
        if code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            why = {
                "SIGXCPU": " (CPU time limit)",
                "SIGSEGV": " (a crash)",
                "SIGKILL": " (killed, maybe out of memory)",
            }.get(sig, "")
            return f"the process was ended by {sig}{why}"
        return f"the process exited with code {code} (os._exit or a crash)"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if getattr(self, "folder", None) is not None:
            self.folder.cleanup()
            self.folder = None


# --------------------------------------------------------------------------- spares


class Spares:
    """Workers started ahead of need, one of each kind, each fresh and used once.

    A grading process that grades notebook after notebook calls ``prepare(kind)`` once;
    ``take(workdir, cpu_seconds, kind, memory)`` then hands out the process started
    earlier (in a folder of its own; it did its imports while the grading process did other
    work, and no learner code has run in it), with its limits set, and starts the next one
    in its place; without a spare, or when the spare did not start well, it starts one as
    ``Worker`` does. A kind is ``None`` (the sandboxed worker) or the ``argv`` of another
    program (the reference's process). Nothing is shared between two notebooks: each gets
    a process and a folder no other code ran in; only the wait for its start is gone.

    The processes are started by the thread that calls (bubblewrap's ``--die-with-parent``
    ends a sandbox when the thread that started it ends).
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple | None, Worker] = {}
        self._wanted: set[tuple | None] = set()
        self._lock = threading.Lock()  # the reference's process may be taken in a thread
        atexit.register(self.stop)

    @staticmethod
    def _key(kind: Sequence[str] | None) -> tuple | None:
        return None if kind is None else tuple(kind)

    def prepare(self, kind: Sequence[str] | None = None) -> None:
        """Keep a process of ``kind`` ready from now on (one is started now)."""
        self._wanted.add(self._key(kind))
        self._refill(self._key(kind))

    def _refill(self, key: tuple | None) -> None:
        with self._lock:
            if key not in self._wanted or key in self._waiting:
                return
        folder = tempfile.TemporaryDirectory(prefix="pe-grade-")
        worker = Worker.__new__(Worker)
        try:
            worker._launch(os.path.realpath(folder.name), None if key is None else list(key), False)
        except Exception:  # noqa: BLE001  (``take`` then starts one itself and says why)
            folder.cleanup()
            return
        worker.folder = folder
        with self._lock:
            self._waiting[key] = worker

    def take(
        self,
        workdir: str,
        cpu_seconds: float,
        kind: Sequence[str] | None = None,
        memory: int = MEMORY_LIMIT,
    ) -> Worker:
        """A started process of ``kind`` with its limits set: the spare when one was
        prepared and is alive, else a new one in ``workdir``; the next spare starts."""
        key = self._key(kind)
        with self._lock:
            spare = self._waiting.pop(key, None)
        if spare is not None:
            try:
                spare.wait_ready()
                spare.configure(cpu_seconds, memory)
            except (WorkerDied, WorkerTimeout, OSError):
                spare.stop()
                spare = None
        self._refill(key)
        if spare is None:
            return Worker(workdir, cpu_seconds, None if kind is None else list(kind), memory)
        return spare

    def last(self) -> None:
        """The notebook being graded is this process's last: the spares waiting serve it,
        none is started after them."""
        with self._lock:
            self._wanted.clear()

    def stop(self) -> None:
        """End the processes waiting and prepare no more (at exit, or when grading ends)."""
        with self._lock:
            self._wanted.clear()
            waiting, self._waiting = list(self._waiting.values()), {}
        for worker in waiting:
            worker.stop()


SPARES = Spares()
