"""Writing a tool's result: to a file atomically (no half-written file on failure) or to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from wattsched.errors import OptionError


def emit_text(text: str, path: str | os.PathLike | None) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, or to stdout when ``path``
    is None. An unwritable path raises :class:`OptionError` naming it."""
    if path is None:
        sys.stdout.write(text)
        return
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise OptionError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise OptionError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
