"""Writing files atomically: a failed run or tool never leaves a half-written file behind.

Everything is first written to temporary files in the destination folder, which are given the usual
permissions (0666 less the umask) and renamed over the destinations only when all were written.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from wattsched.base.errors import OptionError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_paths(paths: Sequence[str | os.PathLike]) -> Iterator[list[Path]]:
    """Temporary paths to write instead of ``paths``; all renamed to ``paths`` when the block ends
    without an exception, all removed otherwise. Folders are created as needed."""
    targets = [Path(p) for p in paths]
    temps: list[Path] = []
    try:
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            os.close(fd)
            temps.append(Path(name))
        yield temps
        mode = 0o666 & ~_umask()
        for temp, target in zip(temps, targets):
            os.chmod(temp, mode)
            os.replace(temp, target)
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """:func:`atomic_paths` for one file."""
    with atomic_paths([path]) as (tmp,):
        yield tmp


def emit_text(text: str, path: str | os.PathLike | None) -> None:
    """Write ``text`` to ``path`` atomically, or to stdout when ``path`` is None. An unwritable path
    raises :class:`OptionError` naming it."""
    if path is None:
        sys.stdout.write(text)
        return
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OptionError(f"cannot write {path}: {exc.strerror}") from None


def write_if_changed(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically unless the file already holds it (folders created): inputs that
    a resumable study writes once and reuses."""
    target = Path(path)
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
