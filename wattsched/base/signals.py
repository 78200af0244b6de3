"""SIGTERM handled as Ctrl-C, for the commands that must clean up when stopped (``timeout``, ``docker stop``, a
cancelled CI job send SIGTERM): ``wattsched serve`` removes its socket file, ``traces fetch`` its partial download."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["terminate_as_interrupt"]


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
