"""Autograde on a Dask distributed cluster: ``python -m helpers autograde --scheduler ADDRESS``.

``grading.autograde`` hands ``run`` one call per (learner, assignment): a Dask task that
runs ``grading.grade_one`` on a worker, nbgrader's own autograde, as in the local process pool. Workers work on a shared file
system: the course folder (``submitted/``, ``autograded/``, ``.grading_secret``,
``nbgrader_config.py``, ``source/``) at the same path as on the client, the same Python
environment, bubblewrap, and a gradebook they all reach (``--db postgresql://...``; the
default sqlite ``gradebook.db`` only for workers on the client's machine, such as
``local:N``). Everything then ends up where a local run leaves it.

A worker that dies mid-run loses nothing: the scheduler gives its unfinished tasks to
another worker (each task may meet ``ALLOWED_FAILURES`` dead workers) and nbgrader's
``--force`` autograde of a half-written submission starts over; the progress bar counts
each task once, when its result arrives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

__all__ = ["ALLOWED_FAILURES", "client_for", "run"]

# Dead workers a task may meet before it counts as failed (Dask's own default is 3).
ALLOWED_FAILURES = 3


def client_for(scheduler: str):
    """A ``distributed.Client`` for ``tcp://host:port`` (any address Dask takes) or ``local:N``.

    ``local:N`` starts a LocalCluster of N worker processes with one thread each, on
    127.0.0.1, without the dashboard; closing the client closes it.
    """
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as exc:  # the cluster extra is not installed
        raise RuntimeError(
            "--scheduler needs Dask distributed: pip install -e '.[cluster]'"
        ) from exc
    dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES})
    if scheduler.startswith("local:"):
        count = scheduler.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"scheduler must be local:N with N >= 1, got {scheduler!r}")
        cluster = LocalCluster(
            n_workers=int(count),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR: a restarted worker is reported by the summary
        )
        client = Client(cluster)
        client._pe_local_cluster = cluster  # closed with the client in run()
        return client
    if "://" not in scheduler and ":" not in scheduler:
        raise ValueError(
            f"scheduler must be a Dask scheduler address (tcp://host:8786) or local:N, "
            f"got {scheduler!r}"
        )
    return Client(scheduler)


def _workers(client) -> int:
    return max(1, len(client.scheduler_info().get("workers", {})))


def run(
    scheduler, fn: Callable, calls: Sequence[tuple], finish: Callable[[int, object], None]
) -> tuple[str, int]:
    """Run ``fn(*args)`` for each ``args`` of ``calls`` on the cluster, in any order.

    ``scheduler`` is an address, ``local:N`` or a ``distributed.Client``. Each result (or
    the exception of a call that failed, ``KilledWorker`` after ``ALLOWED_FAILURES`` dead
    workers included) is handed to ``finish(index, result)`` as it arrives. Returns a
    description of the engine and the number of workers at the start.
    """
    from distributed import as_completed

    own = isinstance(scheduler, str)
    client = client_for(scheduler) if own else scheduler
    try:
        workers = _workers(client)
        futures = {}
        for index, args in enumerate(calls):
            key = f"autograde-{index}-{os.urandom(6).hex()}"
            futures[client.submit(fn, *args, key=key, pure=False)] = index
        for fut in as_completed(list(futures)):
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001  (handed over, never stops the rest)
                result = exc
            finish(futures[fut], result)
            fut.release()
        where = scheduler if own else "given by its client"
        return f"Dask cluster {where}, {workers} worker(s) at the start", workers
    finally:
        if own:
            cluster = getattr(client, "_pe_local_cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
