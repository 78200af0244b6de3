"""Writing files atomically: a failed run or tool never leaves a half-written file behind.

Everything is first written to temporary files in the destination folder, which are given the usual
permissions (0666 less the umask) and renamed over the destinations only when all were written. A process killed
while writing (SIGKILL) leaves its temporary files: whoever killed it removes them (:func:`remove_temporaries`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from wattsched.base.errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_paths(paths: Sequence[str | os.PathLike]) -> Iterator[list[Path]]:
    """Temporary paths to write instead of ``paths``; all renamed to ``paths`` when the block ends
    without an exception, all removed otherwise (and the folders this created). Folders are created as
    needed.

    Raises:
        OutputError: a folder or temporary file cannot be created, or a target cannot be replaced (it is a
            folder, its parent is a file, the place is read-only); nothing is left behind.
    """
    targets = [Path(p) for p in paths]
    for given, target in zip(paths, targets):
        _check_target(given, target)
    temps: list[Path] = []
    created: list[Path] = []
    done = False
    try:
        try:
            for target in targets:
                _make_folders(target.parent, created)
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
                os.close(fd)
                temps.append(Path(name))
        except OSError as exc:
            raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
        yield temps
        mode = 0o666 & ~_umask()
        for target in targets:
            if target.is_dir():
                raise OutputError(f"cannot write {target}: it is a folder")
        for temp, target in zip(temps, targets):
            try:
                os.chmod(temp, mode)
                os.replace(temp, target)
            except OSError as exc:
                raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
        done = True
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)
        if not done:
            _remove_folders(created)


def _check_target(given: str | os.PathLike, target: Path) -> None:
    """Refuse, before anything is written, a destination that is a folder (or named as one, with a trailing
    slash) or an existing file that is not a regular one: renaming over a device such as ``/dev/null``, a FIFO
    or a socket would replace it with a plain file."""
    text = os.fspath(given)
    if text.endswith(os.sep) or (os.altsep and text.endswith(os.altsep)):
        raise OutputError(f"cannot write {text}: it names a folder (give a file name)")
    try:  # (a target that does not exist yet passes)
        require_regular_file(target)
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror}") from None


def _remove_folders(created: list[Path]) -> None:
    """Remove the folders :func:`_make_folders` made (``created``), innermost first, those left empty only."""
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:  # (not empty: something else was written there)
            pass


def _make_folders(folder: Path, created: list[Path]) -> None:
    """``mkdir -p folder``, remembering in ``created`` the folders it made (outermost first). A folder that
    another process makes between the check and ``mkdir`` is taken as it is."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # made at the same time by another writer (a sweep's parallel runs): not ours to remove
        created.append(path)


#: The name of a temporary file of :func:`atomic_paths` after ``.<target's name>.``: :func:`tempfile.mkstemp`'s eight
#: random characters.
_TEMPORARY_SUFFIX = re.compile(r"[a-z0-9_]{8}")


def remove_temporaries(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Remove the temporary files that :func:`atomic_paths` made for ``paths`` and a process killed while writing
    left in their folders (the names it gives them, nothing else); returns the files removed."""
    removed = []
    for target in map(Path, paths):
        head = f".{target.name}."
        try:
            names = os.listdir(target.parent)
        except OSError:  # no folder: nothing was written there
            continue
        for name in names:
            temp = target.parent / name
            if name.startswith(head) and _TEMPORARY_SUFFIX.fullmatch(name[len(head):]) and temp.is_file() \
                    and not temp.is_symlink():
                temp.unlink(missing_ok=True)
                removed.append(temp)
    return removed


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """:func:`atomic_paths` for one file."""
    with atomic_paths([path]) as (tmp,):
        yield tmp


def system_reason(exc: OSError) -> str:
    """Why an operation on a file failed, in the system's words (a library's wrapping, such as pyarrow's "Error writing
    bytes to file. Detail: [errno 27] ...", left out)."""
    return os.strerror(exc.errno) if exc.errno else exc.strerror or str(exc)


_Target = TypeVar("_Target", bound="str | os.PathLike")


def write_files(saves: Mapping[_Target, Callable[[Path], object]]) -> None:
    """Each file of ``saves`` written by its function (given the temporary path to write), all atomically
    (:func:`atomic_paths`): all renamed into place once every one is written, none otherwise. An error of the writing
    (a full disk, a file size limit: ``ulimit -f``) is :class:`OutputError` naming the file, not a traceback of the
    library writing it.
    """
    targets = list(saves)
    with atomic_paths(targets) as temps:
        for target, tmp in zip(targets, temps):
            try:
                saves[target](tmp)
            except OSError as exc:
                raise OutputError(f"cannot write {target}: {system_reason(exc)}") from None


def emit_text(text: str, path: str | os.PathLike | None) -> None:
    """Write ``text`` to ``path`` atomically, or to stdout when ``path`` is None. An unwritable path
    raises :class:`OutputError` naming it."""
    if path is None:
        sys.stdout.write(text)
        return
    write_files({path: lambda tmp: tmp.write_text(text, encoding="utf-8")})


def write_if_changed(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically unless the file already holds it (folders created): inputs that
    a resumable study writes once and reuses; a file of other contents (not UTF-8 text, too) is replaced.

    Raises:
        OutputError: ``path`` is a folder or no regular file (a FIFO would block the comparison for ever), or it
            cannot be written (a full disk, a file size limit: ``ulimit -f``; it was a traceback).
    """
    target = Path(path)
    try:
        require_regular_file(target)
        if target.read_text(encoding="utf-8") == text:
            return
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):  # (a parent that is a file: below)
        pass
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    write_files({target: lambda tmp: tmp.write_text(text, encoding="utf-8")})


def require_regular_file(path: str | os.PathLike) -> None:
    """Raise :class:`OSError` (``strerror``: why) unless ``path`` is a regular file or does not exist (then the
    caller's ``open`` reports it): a FIFO would block the reader for ever, a device such as ``/dev/zero``
    never ends. Readers call it inside the ``try`` that turns an :class:`OSError` into their one-line error."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "it is a folder, not a file", os.fspath(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file (a FIFO, device or socket)", os.fspath(path))


class FolderLock:
    """An exclusive hold of a folder by this process, for as long as it writes there (a sweep's or a study's
    ``--out``): a second process that asks for it is refused at once with :class:`OutputError` naming the option,
    instead of mixing its runs, generated inputs and tables with the first's, and of having its unfinished outputs
    removed when the first is interrupted (:func:`remove_temporaries`).

    ``flock`` on the folder itself: no file is added to it, and the system releases the hold when the process ends,
    however it ends. The folder is made if needed; the folders made are removed again when the block ends with an
    exception and left them empty (a refused grid leaves nothing). Where it cannot be made, or the system has no such
    locks (a file system without them), nothing is held: the writers' own checks then say what is wrong.

    Example::

        with FolderLock(out, f"--out {out}"):
            ...  # check, then write in out
    """

    def __init__(self, folder: str | os.PathLike, option: str, holder: str = "another sweep") -> None:
        self.folder, self.option, self.holder = Path(folder), option, holder
        self._fd: int | None = None
        self._created: list[Path] = []

    def __enter__(self) -> "FolderLock":
        try:
            _make_folders(self.folder, self._created)
        except OSError:  # (a parent that is a file, a read-only place: the writers' checks say so, naming the file)
            return self
        try:
            self._take()
        except BaseException:
            _remove_folders(self._created)
            raise
        return self

    def _take(self) -> None:
        try:
            import fcntl
        except ImportError:  # (no flock on this system)
            return
        try:
            fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:  # not a folder: the writers say so
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputError(f"{self.option}: {self.holder} is running in this folder (two would mix their runs and "
                              "tables, and stopping one would remove the other's unfinished outputs); wait for it to "
                              "end, or give another folder") from None
        except OSError:  # a file system without locks: nothing held
            os.close(fd)
            return
        self._fd = fd

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if exc_type is not None:
            _remove_folders(self._created)
