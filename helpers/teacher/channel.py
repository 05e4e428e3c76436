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
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from helpers.teacher import sandbox, task_cgroup

PACKAGE_DIR = Path(__file__).resolve().parent.parent
# Seconds a worker may take to start (Python, numpy, the sandbox) on a busy machine.
START_TIMEOUT = 60.0
# Limits of the worker process.
MEMORY_LIMIT = 3 * 1024**3
FILE_SIZE_LIMIT = 64 * 1024**2
# Tasks (processes and threads) the sandbox may hold: RLIMIT_NPROC counts, since Linux 5.14,
# the tasks of the sandbox's own uid in its own user namespace, so it bounds this sandbox
# alone. The kernel exempts a root caller's namespaces (its uid is root's outside): there a
# pids cgroup of the sandbox's own holds the same limit (``task_cgroup``).
TASK_LIMIT = 64
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

    def _launch(
        self, workdir: str, argv: list[str] | None, wait: bool = True, zygote: Zygote | None = None
    ) -> None:
        """Start the process (forked from ``zygote`` when given: ``argv`` is then that
        zygote's program); with ``wait``, wait for its ``ready`` (its imports done, no
        limits yet)."""
        self.folder = None  # a folder of its own, removed at ``stop`` (a spare's)
        self.workdir = workdir  # where it runs and may write (a spare's: its own folder)
        self.sandboxed = argv is None  # the worker that runs learner code
        self.cgroup = None  # its pids cgroup where RLIMIT_NPROC cannot bound it (root)
        if zygote is not None:
            self.proc = zygote.spawn()
            self._opened(wait)
            return
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
        self._opened(wait)

    def _opened(self, wait: bool) -> None:
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
        """Send the limits: the process sets them before it reads anything else. A grading
        process of root moves the sandbox into a pids cgroup first (``task_cgroup``)."""
        if self.sandboxed and self.cgroup is None and os.geteuid() == 0:
            self.cgroup = task_cgroup.bound(task_cgroup.process_tree(self.proc.pid), TASK_LIMIT)
        self.send(
            {
                "memory": memory,
                "cpu": int(cpu_seconds) + 1,
                "fsize": FILE_SIZE_LIMIT,
                "tasks": TASK_LIMIT,
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
        if isinstance(self.proc, Forked):
            self.proc.kill()  # through its pidfd: no other process can be hit
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        else:
            _end_group(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if getattr(self, "folder", None) is not None:
            self.folder.cleanup()
            self.folder = None
        if getattr(self, "cgroup", None) is not None:
            task_cgroup.release(self.cgroup)
            self.cgroup = None


# --------------------------------------------------------------------------- zygotes


class Forked:
    """A process forked by a ``Zygote``, with what ``Worker`` uses of ``subprocess.Popen``:
    ``pid``, ``stdin``, ``stdout``, ``poll``, ``wait``, ``kill``. It is not this process's
    child: its exit status comes from the zygote (a pipe), and it is signalled through a
    pidfd, which names this process and no other, even after it ended."""

    def __init__(self, pid: int, pidfd: int, stdin: int, stdout: int, status: int) -> None:
        self.pid, self.pidfd, self.status = pid, pidfd, status
        self.stdin = os.fdopen(stdin, "wb")
        self.stdout = os.fdopen(stdout, "rb")
        self.returncode: int | None = None

    def _read_status(self, timeout: float | None) -> int | None:
        if self.returncode is not None:
            return self.returncode
        with selectors.DefaultSelector() as sel:
            sel.register(self.status, selectors.EVENT_READ)
            sel.register(self.pidfd, selectors.EVENT_READ)  # readable once it ended
            end = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if end is None else max(0.0, end - time.monotonic())
                ready = {key.fd for key, _ in sel.select(left)}
                if self.status in ready:
                    data = os.read(self.status, 4)
                    # nothing: the zygote ended before it could say (the process was killed)
                    code = (
                        int.from_bytes(data, sys.byteorder, signed=True) if len(data) == 4 else -9
                    )
                    self._ended(code)
                    return code
                if self.pidfd in ready and self.status not in ready:
                    # ended, its status not written yet: the zygote reaps it at once
                    sel.unregister(self.pidfd)
                    continue
                if end is not None and time.monotonic() >= end:
                    return None

    def _ended(self, code: int) -> None:
        self.returncode = code
        for fd in (self.status, self.pidfd):
            try:
                os.close(fd)
            except OSError:
                pass

    def poll(self) -> int | None:
        return self._read_status(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._read_status(timeout)
        if code is None:
            raise subprocess.TimeoutExpired("zygote child", timeout or 0.0)
        return code

    def kill(self) -> None:
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except (ProcessLookupError, OSError):
                pass


class Zygote:
    """A process that loaded a program once (``helpers.teacher.zygote``) and forks a fresh
    process of it per ``spawn``; started at once, in the background. ``module`` is the
    program's module (its ``preload()`` and ``main()``): only the course's own code, never
    a learner's, runs in it."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._lock = threading.Lock()
        self.folder = tempfile.TemporaryDirectory(prefix="pe-zygote-")
        home = os.path.realpath(self.folder.name)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-m",
                    "helpers.teacher.zygote",
                    module,
                    str(theirs.fileno()),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=home,
                env=clean_env(home),
                start_new_session=True,
                close_fds=True,
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            ours.close()
            self.folder.cleanup()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.ready = False
        self.started = time.monotonic()

    def loaded(self) -> bool:
        """Whether the zygote has loaded its program (without waiting for it)."""
        with self._lock:
            if not self.ready:
                with selectors.DefaultSelector() as sel:
                    sel.register(self.sock, selectors.EVENT_READ)
                    if not sel.select(0):
                        return False
        return True

    def spawn(self) -> Forked:
        """A new process of the program (raises ``OSError`` or ``WorkerDied`` when the zygote
        cannot fork one; the caller then starts one cold)."""
        child_in, to_child = os.pipe()
        from_child, child_out = os.pipe()
        status_r, status_w = os.pipe()
        theirs = (child_in, child_out, status_w)
        try:
            with self._lock:
                self.sock.settimeout(max(1.0, self.started + START_TIMEOUT - time.monotonic()))
                if not self.ready:
                    if self.sock.recv(1) != b"R":
                        raise WorkerDied("the zygote did not start")
                    self.ready = True
                self.sock.settimeout(START_TIMEOUT)
                socket.send_fds(self.sock, [b"F"], list(theirs))
                msg, fds, _flags, _addr = socket.recv_fds(self.sock, 8, 1)
            if len(msg) != 8 or len(fds) != 1:
                for fd in fds:
                    os.close(fd)
                raise WorkerDied("the zygote did not fork")
        except BaseException:
            for fd in (to_child, from_child, status_r):
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        pid = int.from_bytes(msg, sys.byteorder, signed=True)
        return Forked(pid, fds[0], to_child, from_child, status_r)

    def stop(self) -> None:
        """End the zygote (the processes it forked end when their stdin closes)."""
        try:
            self.sock.close()
        except OSError:
            pass
        _end_group(self.proc)
        self.folder.cleanup()


def _end_group(proc: subprocess.Popen) -> None:
    """Kill a process started in a session of its own, with its group, and wait for it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


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
        self._zygotes: dict[tuple | None, Zygote] = {}
        self._lock = threading.Lock()  # the reference's process may be taken in a thread
        atexit.register(self.stop)

    @staticmethod
    def _key(kind: Sequence[str] | None) -> tuple | None:
        return None if kind is None else tuple(kind)

    def prepare(self, kind: Sequence[str] | None = None) -> None:
        """Keep a process of ``kind`` ready from now on (one is started now)."""
        self._wanted.add(self._key(kind))
        self._refill(self._key(kind))

    def fork_from_zygote(self, kind: Sequence[str], module: str) -> None:
        """From now on, processes of ``kind`` (a program of the course that runs no learner
        code: the reference's process) are forks of a zygote that loaded ``module`` once
        (``Zygote``), not cold starts; a zygote that fails is dropped for cold starts."""
        key = self._key(kind)
        with self._lock:
            if key in self._zygotes:
                return
        try:
            zygote = Zygote(module)
        except OSError:
            return
        with self._lock:
            self._zygotes[key] = zygote

    def _refill(self, key: tuple | None) -> None:
        with self._lock:
            if key not in self._wanted or key in self._waiting:
                return
            zygote = self._zygotes.get(key)
        if zygote is not None and not zygote.loaded():
            return  # not ready yet: ``take`` forks one then (a spare waits from then on)
        self._launch_spare(key, zygote)

    def _launch_spare(self, key: tuple | None, zygote: Zygote | None) -> None:
        folder = tempfile.TemporaryDirectory(prefix="pe-grade-")
        worker = Worker.__new__(Worker)
        argv = None if key is None else list(key)
        try:
            try:
                worker._launch(os.path.realpath(folder.name), argv, False, zygote)
            except (OSError, WorkerDied):
                if zygote is None:
                    raise
                with self._lock:  # the zygote is gone: cold starts from now on
                    if self._zygotes.get(key) is zygote:
                        del self._zygotes[key]
                zygote.stop()
                worker._launch(os.path.realpath(folder.name), argv, False)
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
            zygote = self._zygotes.get(key)
        if spare is None and zygote is not None:
            self._launch_spare(key, zygote)  # forked now: waits for the zygote to load
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
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for worker in waiting:
            worker.stop()
        for zygote in zygotes:
            zygote.stop()


SPARES = Spares()
