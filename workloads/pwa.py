"""Where the Parallel Workloads Archive's logs are on this machine (the papers' own traces).

The papers were evaluated on logs of the archive (https://www.cs.huji.ac.il/labs/parallel/workload/);
reproductions use them when a folder holds them and synthetic traces shaped like them otherwise. The
folder is, in this order: the one given (``--pwa DIR``), ``$WATTSCHED_PWA``, or ``shared/data/pwa`` beside
the repository (or beside the current folder), where the project's machines keep a mirror.
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
        OptionError: ``explicit`` is given and is not a folder (the message names it as ``option``).
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_dir():
            raise OptionError(f"{option} {explicit}: no such folder")
        return path
    candidates: list[Path] = []
    if os.environ.get(ENV_PWA):
        candidates.append(Path(os.environ[ENV_PWA]))
    repo = Path(__file__).resolve().parents[1]
    candidates += [repo.parent / "shared" / "data" / "pwa", Path.cwd().parent / "shared" / "data" / "pwa"]
    return next((c.resolve() for c in candidates if c.is_dir()), None)


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
