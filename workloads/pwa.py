"""Where the Parallel Workloads Archive's logs are on this machine (the papers' own traces).

The papers were evaluated on logs of the archive (https://www.cs.huji.ac.il/labs/parallel/workload/);
reproductions use them when a folder holds them and synthetic traces shaped like them otherwise. The
folder is, in this order: the one given (``--pwa DIR``), ``$WATTSCHED_PWA``, or ``shared/data/pwa`` beside
the repository, where the project's machines keep a mirror. A given folder or a set ``$WATTSCHED_PWA`` that is
not a folder is refused (never passed over for the next place).
"""

from __future__ import annotations

import os
from pathlib import Path

from wattsched.base.errors import OptionError

#: The environment variable naming the folder of the archive's logs.
ENV_PWA = "WATTSCHED_PWA"


def find_pwa(explicit: str | os.PathLike | None = None, option: str = "--pwa") -> Path | None:
    """The folder of the archive's logs (see the module docstring); None when there is none.

    Raises:
        OptionError: ``explicit`` is given and is not a folder (the message names it as ``option``), or
            ``$WATTSCHED_PWA`` is set and is not a folder.
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_dir():
            raise OptionError(f"{option} {explicit}: no such folder")
        return path
    if os.environ.get(ENV_PWA):
        path = Path(os.environ[ENV_PWA])
        if not path.is_dir():
            what = "not a folder" if path.exists() else "no such folder"
            raise OptionError(f"environment variable {ENV_PWA}={os.environ[ENV_PWA]}: {what} (unset it or "
                              "name the folder of the archive's logs)")
        return path.resolve()
    beside = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pwa"
    return beside.resolve() if beside.is_dir() else None


def find_log(name: str, explicit: str | os.PathLike | None = None) -> Path | None:
    """The log file ``name`` (e.g. ``NASA-iPSC-1993-3.1-cln.swf.gz``) in the archive's folder, or None.

    Raises:
        OptionError: ``explicit`` is given and does not hold it.
    """
    folder = find_pwa(explicit)
    path = folder / name if folder is not None else None
    if path is not None and path.is_file():
        return path
    if explicit is not None:
        raise OptionError(f"--pwa {explicit}: no {name} there")
    return None
