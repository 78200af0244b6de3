"""A catalogue of the Parallel Workloads Archive's logs that the papers used, and a checked download.

The logs are the archive's cleaned versions (``*-cln.swf.gz``), gzip-compressed as the archive ships them;
:func:`workloads.swf.read_swf` reads them as they are. A log is looked for, in this order:

1. in the mirror folder: the one given (``--mirror DIR``), ``$WATTSCHED_PWA``, or ``shared/data/pwa`` beside
   the repository (:func:`workloads.pwa.find_pwa`); it is read in place;
2. in the cache folder (``--cache DIR``, ``$WATTSCHED_TRACES``, default ``~/.cache/wattsched/traces``);
3. downloaded from the archive (or from ``$WATTSCHED_PWA_URL``, a base URL holding the same files) into the
   cache, with a progress bar.

Every file is checked against the catalogue's sha256 before use; a file that differs is refused (a cached
one is never replaced: the message says to delete it; a download that differs is deleted). A download is
bounded (:mod:`wattsched.base.limits`): it fails when slower than 1 KiB/s over any minute, or when longer than the
catalogue's size of the file; SIGTERM, like SIGINT, stops it without leaving a partial file. Cite the archive (Feitelson, Tsafrir, Krakov, JPDC 2014) and each log's
contributors when publishing results on them.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from wattsched.base.errors import InputError, OptionError
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit
from wattsched.base.signals import terminate_as_interrupt

__all__ = ["ARCHIVE_URL", "TRACES", "Trace", "cache_folder", "fetch_trace", "find_trace", "sha256_of"]

#: The Parallel Workloads Archive's logs folder.
ARCHIVE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload"
ENV_CACHE = "WATTSCHED_TRACES"
ENV_URL = "WATTSCHED_PWA_URL"

logger = logging.getLogger(__name__)


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
        size_bytes: of the gzip file (None: unknown; a download is then bounded by ``download_bytes``).
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
    size_bytes: int | None = None

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
          "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658", 4070091),
    Trace("curie", "CEA-Curie-2011-2.1-cln.swf.gz", "l_cea_curie", "CEA Curie, Bull", 93312, 312826,
          "2011-02-01 … 2012-10-17", "energy budget (80,640 cores), EFS",
          "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce", 3629411),
    Trace("ctc-sp2", "CTC-SP2-1996-3.1-cln.swf.gz", "l_ctc_sp2", "Cornell Theory Center, IBM SP2", 338, 77222,
          "1996-06-26 … 1997-05-31", "UPAS (430 processors)",
          "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4", 1487336),
    Trace("sdsc-sp2", "SDSC-SP2-1998-4.2-cln.swf.gz", "l_sdsc_sp2", "SDSC, IBM SP2", 128, 59715,
          "1998-04-24 … 2000-04-29", "UPAS, EFS",
          "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac", 1205570),
    Trace("llnl-thunder", "LLNL-Thunder-2007-1.1-cln.swf.gz", "l_llnl_thunder", "LLNL Thunder, Linux cluster",
          4008, 121039, "2007-01-30 … 2007-06-29", "UPAS",
          "00d9bce501efd3a23cd0713bbae591516b7a69217d5f4b851725f601f3b75247", 1312559),
    Trace("llnl-atlas", "LLNL-Atlas-2006-2.1-cln.swf.gz", "l_llnl_atlas", "LLNL Atlas, Linux cluster", 9216, 43778,
          "2006-11-10 … 2007-06-29", "UPAS",
          "3b3440db8eff0e067c193cb01fdfb3ffb944d9afccde942dbac8a7acf50d360f", 468426),
    Trace("nasa-ipsc", "NASA-iPSC-1993-3.1-cln.swf.gz", "l_nasa_ipsc", "NASA Ames, Intel iPSC/860", 128, 18239,
          "1993-10-01 … 1993-12-31", "ESC (user jobs; the full log has 42,264 records)",
          "6e520a6c067a2564b15efb16f754c2ecda7645106da99748d64817034c7f675e", 193781),
)


def find_trace(name: str) -> Trace:
    """The catalogue entry of ``name``: its short name or file name (``.swf.gz``, or ``.swf`` as uncompressed, or
    neither), any case.

    Raises:
        OptionError: unknown name (the known ones listed).
    """
    key = name.strip().lower()
    for trace in TRACES:
        file = trace.file.lower()
        if key in (trace.name, file, file.removesuffix(".gz"), file.removesuffix(".swf.gz")):
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
                                         "not the archive's file (corrupt or another version); delete it "
                                         "to download it again")
    return path


def fetch_trace(name: str | Trace, *, mirror: str | os.PathLike | None = None, cache: str | os.PathLike | None = None,
                base_url: str | None = None, progress: bool = False, download: bool = True) -> Path:
    """The path of a checked copy of a log (module docstring: mirror, then cache, then download).

    A file in the cache whose sha256 differs is refused, never replaced (the message says to delete it): it may
    be a file the user put there.

    Args:
        name: a catalogue name (:func:`find_trace`) or entry.
        mirror: a folder holding the archive's files (default: :func:`workloads.pwa.find_pwa`).
        cache: the download cache (:func:`cache_folder`).
        base_url: download from this folder URL instead of the archive.
        progress: draw a progress bar while downloading.
        download: allow a download (False: mirror and cache only).

    Raises:
        OptionError: unknown trace, an explicit mirror (or ``$WATTSCHED_PWA``) that is not a folder, nothing
            found with ``download`` False, or a download bound that is not a positive number.
        InputError: a file whose sha256 differs; a cache place that is not a regular file (a folder, a FIFO);
            a download that fails, is too slow or too large (the URL and the reason named).
    """
    from wattsched.workloads.pwa import find_pwa

    trace = name if isinstance(name, Trace) else find_trace(name)
    folder = find_pwa(mirror, option="--mirror")
    if folder is not None and (folder / trace.file).is_file():
        return _checked(folder / trace.file, trace)
    target = cache_folder(cache) / trace.file
    try:  # a folder or a FIFO where the download goes: refused before downloading
        require_regular_file(target)
    except OSError as error:
        raise InputError(target, "", f"cannot be the cached copy of {trace.name}: {error.strerror}") from None
    if target.is_file():
        return _checked(target, trace)
    if not download:
        raise OptionError(f"trace {trace.name}: {trace.file} is in no mirror or cache ('wattsched traces fetch "
                          f"{trace.name}' downloads it)")
    return _download(trace, target, trace.url(base_url), progress)


# ------------------------------------------------------------------------------------------------ download
def _content_length(response) -> int | None:
    """The Content-Length the server announced; None when absent or not a number of bytes."""
    text = response.headers.get("Content-Length")
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        if text is not None:
            logger.info("Content-Length %r is not a number of bytes: the size is unknown", text)
        return None
    return value if value >= 0 else None


def _download(trace: Trace, target: Path, url: str, progress: bool) -> Path:
    min_rate, window_s = limit("download_min_rate"), limit("download_rate_window_s")
    cap = trace.size_bytes if trace.size_bytes is not None else int(limit("download_bytes"))
    made = [folder for folder in [target.parent, *target.parent.parents] if not folder.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{trace.file}.", suffix=".part", dir=target.parent)
    except OSError as error:
        raise InputError(target.parent, "", f"cannot write in the cache folder ({error.strerror or error})") from None
    tmp = Path(tmp_name)
    done = False
    try:
        with terminate_as_interrupt(), os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(url, timeout=min(60.0, window_s))
            except urllib.error.HTTPError as error:
                raise InputError(url, "", f"cannot download {trace.name} (HTTP {error.code} {error.reason})") from None
            except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
                reason = getattr(error, "reason", None) or error
                raise InputError(url, "", f"cannot download {trace.name} ({reason})") from None
            with response:
                total = _content_length(response)
                if total is not None and total > cap:
                    raise InputError(url, "Content-Length", f"{total} bytes, more than {_cap_text(trace, cap)}")
                content_type = response.headers.get("Content-Type") or "unknown"
                received, head = _copy(response, out, total, trace, url, progress, cap, min_rate, window_s)
        if total is not None and received < total:
            raise InputError(url, "", f"cannot download {trace.name}: truncated ({received} of {total} bytes)")
        actual = sha256_of(tmp)
        if actual != trace.sha256:
            why = (f"not gzip (Content-Type {content_type})" if not head.startswith(b"\x1f\x8b")
                   else "corrupt or another version")
            raise InputError(url, "sha256", f"the downloaded {trace.file} ({received} bytes) is {actual}, the "
                                            f"catalogue's {trace.name} is {trace.sha256}: {why}; nothing was kept")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it 0600; a cached log is an ordinary file
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


def _cap_text(trace: Trace, cap: int) -> str:
    if trace.size_bytes is not None:
        return f"the catalogue's size of {trace.file} ({cap} bytes)"
    return f"{cap} bytes (raise with WATTSCHED_LIMIT_DOWNLOAD_BYTES)"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _copy(source, out, total: int | None, trace: Trace, url: str, progress: bool, cap: int, min_rate: float,
          window_s: float) -> tuple[int, bytes]:
    """Copy the body into ``out`` within the bounds (:mod:`wattsched.base.limits`); the bytes copied and the body's
    first bytes."""
    bar = task = None
    if progress:
        from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

        bar = Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn())
        task = bar.add_task(trace.file, total=total)
        bar.start()
    try:
        read = getattr(source, "read1", source.read)
        received, head = 0, b""
        start = time.monotonic()
        marks: deque[tuple[float, int]] = deque([(start, 0)])  # (time, bytes so far), the last window_s seconds
        while True:
            try:
                block = read(1 << 16)  # what has arrived: a trickling server cannot hold a read
            except (OSError, http.client.HTTPException) as error:
                if isinstance(error, TimeoutError):
                    raise InputError(url, "", f"cannot download {trace.name}: no data for {min(60.0, window_s):g} s "
                                              "(a stalled server)") from None
                raise InputError(url, "", f"cannot download {trace.name} ({error})") from None
            if not block:
                return received, head
            received += len(block)
            if len(head) < 2:
                head += block[:2]
            if received > cap:
                raise InputError(url, "", f"cannot download {trace.name}: more than {_cap_text(trace, cap)}")
            out.write(block)
            if bar is not None and task is not None:
                bar.advance(task, len(block))
            now = time.monotonic()
            marks.append((now, received))
            while len(marks) > 1 and marks[1][0] <= now - window_s:
                marks.popleft()
            if now - start >= window_s and received - marks[0][1] < min_rate * window_s:
                raise InputError(url, "", f"cannot download {trace.name}: under {min_rate:g} bytes/s over "
                                          f"{window_s:g} s ({received} bytes in {now - start:.0f} s; set "
                                          "WATTSCHED_LIMIT_DOWNLOAD_MIN_RATE or _DOWNLOAD_RATE_WINDOW_S to change)")
    finally:
        if bar is not None:
            bar.stop()
