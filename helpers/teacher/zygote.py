"""A process that loads a program once and forks a fresh process of it for each request.

``python -I -m helpers.teacher.zygote MODULE FD`` imports ``MODULE`` (and calls its
``preload()``: numpy and the reference for ``helpers.teacher.standins``), then serves the
Unix socket ``FD``. Each request carries three file descriptors (the new process's stdin
and stdout, and a pipe for its exit status); the zygote forks, and the child, in a session
of its own with those as its stdin and stdout and no other descriptor, runs
``MODULE.main()``. The zygote answers with the child's pid and a pidfd of it (so the
grading process can signal it with no risk of a reused pid), reaps it when it ends and
writes its exit status (``os.waitstatus_to_exitcode``, four bytes) into the status pipe.

The zygote itself never runs a request: every child is a fork of the same state, loaded
before any request came, so nothing one child does reaches another (each has its own
memory, its own CPU time from zero for ``RLIMIT_CPU``, and sets its own limits as a
process started cold does). It ends when the socket closes (the grading process ended).
``helpers.teacher.channel.Zygote`` is the other end. Only code of the course runs in it
(the reference's process): learner code never does, which is why the sandboxed worker is
not started this way.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import select
import signal
import socket
import struct
import sys

PID = struct.Struct("=q")
STATUS = struct.Struct("=i")


def _reap(status: dict[int, int]) -> None:
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = status.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, STATUS.pack(os.waitstatus_to_exitcode(wait_status)))
            os.close(fd)


def _child(module, fds: list[int]) -> None:
    """In the forked child: its own session, the request's pipes as stdin and stdout, no
    other descriptor of the zygote; then the program."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        stdin, stdout, _status = fds
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.closerange(3, 1 << 16)  # the socket, the wake-up pipe, the status pipe, the rest
        module.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001  (a child never returns into the zygote's loop)
        code = 1
    finally:
        os._exit(code)


def serve(name: str, fd: int) -> None:
    module = importlib.import_module(name)
    preload = getattr(module, "preload", None)
    if preload is not None:
        preload()
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    status: dict[int, int] = {}
    sys.stdout.flush()
    sock.sendall(b"R")
    while True:
        try:
            ready, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 512)
            _reap(status)
        if sock not in ready:
            continue
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 1, 3)
        except OSError:
            break
        if not msg:
            break  # the grading process ended
        if len(fds) != 3:
            for extra in fds:
                os.close(extra)
            continue
        pid = os.fork()
        if pid == 0:
            _child(module, fds)
        pidfd = os.pidfd_open(pid)  # not reaped yet: the pid is this child's
        os.close(fds[0])
        os.close(fds[1])
        status[pid] = fds[2]
        try:
            socket.send_fds(sock, [PID.pack(pid)], [pidfd])
        except OSError:
            break
        finally:
            os.close(pidfd)
        _reap(status)
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
