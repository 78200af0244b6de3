"""SIGTERM handled so that what is being written is cleaned up (``timeout``, ``docker stop``, a cancelled CI job send
SIGTERM): the commands take it as Ctrl-C (:func:`terminate_as_interrupt`: ``wattsched serve`` removes its socket
file, ``run`` its temporary outputs); the Python API cleans up, then terminates as the signal would have
(:func:`clean_up_on_terminate`)."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["clean_up_on_terminate", "terminate_as_interrupt"]


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """In the block, SIGTERM raises :class:`KeyboardInterrupt` as SIGINT does, so that the ``finally`` clauses
    run; the previous handler is put back at the end. Only in the main thread, where Python handles signals
    (elsewhere the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Terminated(BaseException):
    """SIGTERM arrived in :func:`clean_up_on_terminate`'s block (not an :class:`Exception`: nothing catches it
    on the way out but ``finally`` clauses)."""


@contextmanager
def clean_up_on_terminate() -> Iterator[None]:
    """For a library call that writes files (:func:`wattsched.api.simulate`): when SIGTERM would kill the process
    (its handler is the default one), SIGTERM in the block first unwinds it, so that its ``finally`` clauses
    remove temporary files, then terminates the process by the same signal, as it would have been (exit status
    -15). A handler of the caller's own is left alone, and so is a block outside the main thread."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # the default action: the process ends here
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
