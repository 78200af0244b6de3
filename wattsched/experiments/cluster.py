"""The local Dask cluster of a sweep (:mod:`.sweep`) and of the web page's runs (:mod:`wattsched.web.runs`), whose
worker processes leave Ctrl-C to the process that started them.

A terminal's Ctrl-C sends SIGINT to its whole process group, Dask's worker processes included: each raised
``KeyboardInterrupt`` in its own event loop and printed its traceback (``Process Dask Worker process (from
Nanny): Traceback ...``) while ``wattsched`` was closing the cluster itself (``wattsched: interrupted``). Here the
workers ignore SIGINT from their start and only the starting process reacts; closing the cluster stops them:

* SIGINT is blocked in the thread that starts the cluster while it starts, so in the IO-loop thread Dask makes
  then and in the worker processes that thread spawns (a new process inherits the blocked signals through
  ``exec``); this module, the workers' Dask preload, makes them ignore SIGINT, then unblocks it
  (:func:`dask_setup`).
* A Ctrl-C (or SIGTERM) while the cluster starts is held until it has started, then the cluster is closed and the
  signal delivered (interrupted inside Dask's start, the half-started cluster was closed at exit by Dask, with
  its traceback).

Usage::

    cluster = local_cluster(2)      # as LocalCluster(n_workers=2, threads_per_worker=1, ...)
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["check_open_files", "dask_setup", "local_cluster", "open_files_needed"]

#: The local Dask scheduler serves HTTP even without its dashboard, on port 8787 unless told: a second cluster at the
#: same time (another sweep, the web page's runs) found it taken and printed Dask's "Port 8787 is already in use"
#: warning. A free port instead.
NO_DASHBOARD_PORT = {"dashboard_address": ":0"}
#: The signals held while a cluster starts (when their handler is Python's).
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def dask_setup(worker: Any) -> None:
    """Dask preload hook, run in each worker process as it starts: SIGINT ignored, then unblocked."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def local_cluster(n_workers: int, *, processes: bool = True, **kwargs: Any) -> Any:
    """A started :class:`distributed.LocalCluster` of ``n_workers`` one-thread workers, no dashboard, a free port
    for its HTTP server, workers' logs silenced; worker processes that ignore SIGINT (module docstring).

    Args:
        processes: workers are processes (else threads of this process, which keeps its own handling).
        kwargs: more arguments of :class:`~distributed.LocalCluster` (``local_directory``).

    Raises:
        KeyboardInterrupt: as the held signal's handler does, after the cluster is closed.
        OptionError: too few open files allowed for the workers (:func:`check_open_files`).
    """
    from distributed import LocalCluster

    if processes:
        check_open_files(n_workers)
    options = dict(n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=None,
                   scheduler_kwargs=NO_DASHBOARD_PORT, silence_logs=logging.CRITICAL, **kwargs)
    if not processes:
        return LocalCluster(**options)
    with _signals_held() as held:
        cluster = LocalCluster(preload=[__name__], **options)
    if held:
        cluster.close()
        for signum in dict.fromkeys(held):  # each once (uvicorn takes a second SIGINT as 'force exit')
            signal.raise_signal(signum)
    return cluster


def open_files_needed(n_workers: int) -> int:
    """Open files a local cluster of ``n_workers`` worker processes needs in the process that starts it, with some
    room (measured: 2 workers start with 44 but not always with 42, 4 need more than 56: each worker holds a few
    connections, and Dask more when they connect at once)."""
    return 40 + 8 * n_workers


def check_open_files(n_workers: int) -> None:
    """Make room for the open files of a local cluster of ``n_workers`` processes: the soft limit raised up to the
    hard one when it is lower than :func:`open_files_needed`, and a hard limit lower than that refused. Below it, Dask
    printed its workers' tracebacks ("Too many open files") by the thousand, and waited for ever or raised "Nanny
    failed to start.".

    Raises:
        OptionError: the open-file limit (``ulimit -n``) is too low.
    """
    try:
        import resource
    except ImportError:  # (no such limit on this system)
        return
    from wattsched.base.errors import OptionError

    needed = open_files_needed(n_workers)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard == resource.RLIM_INFINITY or hard >= needed:  # twice as many when allowed: the runs open files too
        resource.setrlimit(resource.RLIMIT_NOFILE, (2 * needed if hard == resource.RLIM_INFINITY else
                                                    min(hard, 2 * needed), hard))
        return
    raise OptionError(f"workers (-j) {n_workers}: {hard} open files at most (ulimit -n) is too few for a local Dask "
                      f"cluster of {n_workers} worker processes (at least {needed}); give -j 1 to run in this process, "
                      "or raise the limit")


@contextmanager
def _signals_held() -> Iterator[list[int]]:
    """SIGINT blocked in this thread in the block; :data:`HELD_SIGNALS` arriving meanwhile (whatever thread the
    system gives them) recorded in the yielded list instead of handled, when their handlers are Python's and this
    is the main thread. Multiprocessing's resource tracker unblocks SIGINT in the thread that starts it (CPython
    3.11): it is started first, before the block."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    held: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in HELD_SIGNALS:
            if callable(signal.getsignal(signum)):
                previous[signum] = signal.signal(signum, lambda number, frame: held.append(number))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield held
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a SIGINT pending meanwhile is recorded here
        for number, handler in previous.items():
            signal.signal(number, handler)
