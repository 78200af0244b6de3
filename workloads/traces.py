"""A catalogue of the Parallel Workloads Archive's logs that the papers used, and a checked download.

The logs are the archive's cleaned versions (``*-cln.swf.gz``), gzip-compressed as the archive ships them;
:func:`workloads.swf.read_swf` reads them as they are. A log is looked for, in this order:

1. in the mirror folder: the one given (``--mirror DIR``), ``$WATTSCHED_PWA``, or ``shared/data/pwa`` beside
   the repository (:func:`workloads.pwa.find_pwa`); it is read in place;
2. in the cache folder (``--cache DIR``, ``$WATTSCHED_TRACES``, default ``~/.cache/wattsched/traces``);
3. downloaded from the archive (or from ``$WATTSCHED_PWA_URL``, a base URL holding the same files) into the
   cache, with a progress bar.

Every file is checked against the catalogue's sha256 before use; a file that differs is refused (and a
download that differs is deleted). Cite the archive (Feitelson, Tsafrir, Krakov, JPDC 2014) and each log's
contributors when publishing results on them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from wattsched.base.errors import InputError, OptionError

__all__ = ["ARCHIVE_URL", "TRACES", "Trace", "cache_folder", "fetch_trace", "find_trace", "sha256_of"]

#: The Parallel Workloads Archive's logs folder.
ARCHIVE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload"
ENV_CACHE = "WATTSCHED_TRACES"
ENV_URL = "WATTSCHED_PWA_URL"


@dataclass(frozen=True)
class Trace:
    """One log of the archive.

    Attributes:
        name: short name used on the command line (``sdsc-blue``).
        file: the archive's file name.
        folder: the archive's folder of the log (``l_sdsc_blue``).
        machine: the machine and installation.
        processors: processors of the machine as the header's MaxProcs gives them.
        jobs: job lines in the cleaned file.
        period: the log's first and last day.
        papers: the papers of ``../shared/papers`` that used it.
        sha256: of the gzip file.
    """

    name: str
    file: str
    folder: str
    machine: str
    processors: int
    jobs: int
    period: str
    papers: str
    sha256: str

    def url(self, base: str | None = None) -> str:
        """Where to download it: ``base`` (a folder holding the files), else ``$WATTSCHED_PWA_URL``, else the
        archive."""
        base = base or os.environ.get(ENV_URL)
        if base:
            return f"{base.rstrip('/')}/{self.file}"
        return f"{ARCHIVE_URL}/{self.folder}/{self.file}"


TRACES: tuple[Trace, ...] = (
    Trace("sdsc-blue", "SDSC-BLUE-2000-4.2-cln.swf.gz", "l_sdsc_blue", "SDSC Blue Horizon, IBM SP", 1152, 243306,
          "2000-04-25 … 2003-01-01", "energy budget, UPAS",
          "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658"),
    Trace("curie", "CEA-Curie-2011-2.1-cln.swf.gz", "l_cea_curie", "CEA Curie, Bull", 93312, 312826,
          "2011-02-01 … 2012-10-17", "energy budget (80,640 cores), EFS",
          "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce"),
    Trace("ctc-sp2", "CTC-SP2-1996-3.1-cln.swf.gz", "l_ctc_sp2", "Cornell Theory Center, IBM SP2", 338, 77222,
          "1996-06-26 … 1997-05-31", "UPAS (430 processors)",
          "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4"),
    Trace("sdsc-sp2", "SDSC-SP2-1998-4.2-cln.swf.gz", "l_sdsc_sp2", "SDSC, IBM SP2", 128, 59715,
          "1998-04-24 … 2000-04-29", "UPAS, EFS",
          "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac"),
    Trace("llnl-thunder", "LLNL-Thunder-2007-1.1-cln.swf.gz", "l_llnl_thunder", "LLNL Thunder, Linux cluster",
          4008, 121039, "2007-01-30 … 2007-06-29", "UPAS",
          "00d9bce501efd3a23cd0713bbae591516b7a69217d5f4b851725f601f3b75247"),
    Trace("llnl-atlas", "LLNL-Atlas-2006-2.1-cln.swf.gz", "l_llnl_atlas", "LLNL Atlas, Linux cluster", 9216, 43778,
          "2006-11-10 … 2007-06-29", "UPAS",
          "3b3440db8eff0e067c193cb01fdfb3ffb944d9afccde942dbac8a7acf50d360f"),
    Trace("nasa-ipsc", "NASA-iPSC-1993-3.1-cln.swf.gz", "l_nasa_ipsc", "NASA Ames, Intel iPSC/860", 128, 18239,
          "1993-10-01 … 1993-12-31", "ESC (user jobs; the full log has 42,264 records)",
          "6e520a6c067a2564b15efb16f754c2ecda7645106da99748d64817034c7f675e"),
)


def find_trace(name: str) -> Trace:
    """The catalogue entry of ``name``: its short name or file name, any case.

    Raises:
        OptionError: unknown name (the known ones listed).
    """
    key = name.strip().lower()
    for trace in TRACES:
        if key in (trace.name, trace.file.lower(), trace.file.lower().removesuffix(".swf.gz")):
            return trace
    raise OptionError(f"unknown trace {name!r}; known: {', '.join(t.name for t in TRACES)} ('wattsched traces')")


def cache_folder(explicit: str | os.PathLike | None = None) -> Path:
    """The download cache: ``explicit``, ``$WATTSCHED_TRACES``, or ``~/.cache/wattsched/traces``."""
    if explicit is not None:
        return Path(explicit)
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    return Path.home() / ".cache" / "wattsched" / "traces"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked(path: Path, trace: Trace) -> Path:
    actual = sha256_of(path)
    if actual != trace.sha256:
        raise InputError(path, "sha256", f"is {actual}, the catalogue's {trace.name} is {trace.sha256}: "
                                         "not the archive's file (corrupt or another version)")
    return path


def fetch_trace(name: str | Trace, *, mirror: str | os.PathLike | None = None, cache: str | os.PathLike | None = None,
                base_url: str | None = None, progress: bool = False, download: bool = True) -> Path:
    """The path of a checked copy of a log (module docstring: mirror, then cache, then download).

    Args:
        name: a catalogue name (:func:`find_trace`) or entry.
        mirror: a folder holding the archive's files (default: :func:`workloads.pwa.find_pwa`).
        cache: the download cache (:func:`cache_folder`).
        base_url: download from this folder URL instead of the archive.
        progress: draw a progress bar while downloading.
        download: allow a download (False: mirror and cache only).

    Raises:
        OptionError: unknown trace, an explicit mirror that is not a folder, or nothing found with
            ``download`` False.
        InputError: a file whose sha256 differs; a download that fails (the URL and the reason named).
    """
    from wattsched.workloads.pwa import find_pwa

    trace = name if isinstance(name, Trace) else find_trace(name)
    folder = find_pwa(mirror, option="--mirror")
    if folder is not None and (folder / trace.file).is_file():
        return _checked(folder / trace.file, trace)
    target = cache_folder(cache) / trace.file
    if target.is_file():
        return _checked(target, trace)
    if not download:
        raise OptionError(f"trace {trace.name}: {trace.file} is in no mirror or cache ('wattsched traces fetch "
                          f"{trace.name}' downloads it)")
    return _download(trace, target, trace.url(base_url), progress)


def _download(trace: Trace, target: Path, url: str, progress: bool) -> Path:
    made = [folder for folder in [target.parent, *target.parent.parents] if not folder.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(target.parent, "", f"cannot create the cache folder ({error.strerror or error})") from None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{trace.file}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    done = False
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(url, timeout=60)
            except urllib.error.HTTPError as error:
                raise InputError(url, "", f"cannot download {trace.name} (HTTP {error.code} {error.reason})") from None
            except (urllib.error.URLError, OSError, ValueError) as error:
                reason = getattr(error, "reason", None) or error
                raise InputError(url, "", f"cannot download {trace.name} ({reason})") from None
            with response:
                total = int(response.headers.get("Content-Length") or 0) or None
                _copy(response, out, total, trace.file, progress)
        _checked(tmp, trace)
        os.replace(tmp, target)
        done = True
        return target
    finally:
        tmp.unlink(missing_ok=True)
        for folder in made if not done else []:  # a failed download leaves no cache folder it made
            try:
                folder.rmdir()
            except OSError:
                break


def _copy(source, out, total: int | None, label: str, progress: bool) -> None:
    if not progress:
        shutil.copyfileobj(source, out, 1 << 20)
        return
    from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

    with Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn()) as bar:
        task = bar.add_task(label, total=total)
        for block in iter(lambda: source.read(1 << 16), b""):
            out.write(block)
            bar.advance(task, len(block))
