"""One simulation, from inputs to Batsim's five output files: what ``wattsched run``, a sweep's runs and the
Python API (:mod:`wattsched.api`) all do.

Inputs may be given as files or as objects built in Python: a platform as a path, SimGrid XML text (e.g.
:func:`wattsched.platforms.generate.taurus_platform_xml`) or a loaded
:class:`~wattsched.simulator.platform.Platform`; a workload as a path, a Batsim JSON object (a dict) or a
loaded :class:`~wattsched.simulator.workload.Workload`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO, Union

from wattsched.base.batsim_files import output_paths
from wattsched.base.errors import InputError, OptionError, OutputError, quoted_cut
from wattsched.base.validate import (PATH_MAX_BYTES, check_output_files, check_python_nesting,
                                     control_character_problem, home_folder_problem, option_error)
from wattsched.simulator.drivers import ProgressCallback, RunStats, run_inprocess, run_zmq
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import Platform, load_platform
from wattsched.simulator.workload import Workload, load_workload

PlatformInput = Union[str, os.PathLike, Platform]
WorkloadInput = Union[str, os.PathLike, Mapping[str, Any], Workload]
#: A scheduler's name (preset, entry point, ``module:Class``, ``file.py[:Class]``) or a pybatsim scheduler class.
Scheduler = Union[str, type]

logger = logging.getLogger(__name__)

__all__ = ["PlatformInput", "Scheduler", "WorkloadInput", "as_platform", "as_workload", "check_not_inputs",
           "check_options", "check_eamc_profiles", "check_energy_factors", "check_prefix", "check_preset_platform",
           "check_scheduler", "check_shares", "check_speed", "eamc_reading", "file_identity", "format_sim_time",
           "prefix_folder_problem", "preset_of", "progress_bar", "progress_lines", "run_simulation", "scheduler_name",
           "shorten", "shown_path", "workload_source"]

#: At most this many characters of a user's value are quoted in an error message.
SHOWN_CHARS = 60
#: At most this many characters of a path (a deep folder's is long, and worth reading whole).
_SHOWN_PATH_CHARS = 200


def shorten(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` quoted for an error message: ``repr`` of a string (so a newline shows as ``\\n``), cut to
    about ``limit`` characters; the type's name for other objects whose repr is long."""
    text = " ".join(repr(value).split("\n"))  # a str's repr escapes its line breaks; another object's may not
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown_path(path: str | os.PathLike) -> str:
    """A path for an error message: as it is when short and printable, else :func:`shorten`'s quoted form."""
    text = os.fspath(path)
    return text if isinstance(text, str) and len(text) <= _SHOWN_PATH_CHARS and text.isprintable() \
        else shorten(text, _SHOWN_PATH_CHARS)


def kind_of(value: Any) -> str:
    """What ``value`` is, for a type error: ``None``, ``an int (3)``, ``the class int``, ``a function``."""
    if value is None:
        return "None"
    if isinstance(value, type):
        return f"the class {value.__module__}.{value.__qualname__}" if value.__module__ != "builtins" \
            else f"the class {value.__qualname__}"
    if callable(value) and not isinstance(value, (str, bytes)):
        return f"{type(value).__name__} {shorten(getattr(value, '__qualname__', value))}"
    return f"{type(value).__name__} {shorten(value)}"


@contextmanager
def _named(path: Path, name: str) -> Iterator[None]:
    """Errors about the temporary file ``path`` name the object it holds instead (``<workload object>``)."""
    try:
        yield
    except InputError as error:
        raise InputError(error.source.replace(str(path), name), error.field, error.problem) from None


def prefix_folder_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot be an output prefix when it names a folder (``results/`` or an existing ``results``:
    the files would land beside it, not in it), e.g. ``"'results' is a folder; give a prefix inside it, e.g.
    'results/out'"``; None when it does not."""
    if not prefix or prefix.endswith(("/", os.sep)) or _is_dir(prefix):
        return f"{prefix!r} is a folder; give a prefix inside it, e.g. '{os.path.join(prefix, 'out')}'"
    return None


def _is_dir(path: str) -> bool:
    """``Path.is_dir``, False for a name the system refuses (too long: an OSError), which the check of the files
    written there (:func:`~wattsched.base.validate.check_output_files`) then names."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def check_prefix(prefix: str | os.PathLike) -> dict[str, Path]:
    """The five output paths of ``prefix``, once it is known they can be written (checked before a run).

    Raises:
        OutputError: the prefix holds a control character (a line break, ESC...: no sane file name), names a
            folder (``results/`` or an existing ``results``: the files would land beside it, not in it), or an
            output cannot be written there (a parent is a file, read-only).
    """
    if isinstance(prefix, bytes) or not isinstance(prefix, (str, os.PathLike)) \
            or not isinstance(os.fspath(prefix), str):
        raise OutputError(f"output prefix (out, -e) must be a path (a str or os.PathLike), got {kind_of(prefix)}")
    text = os.fspath(prefix)
    problem = control_character_problem(text) or home_folder_problem(text)
    if problem is not None:  # the system takes it, but it is no sane file name (or not the one meant)
        raise OutputError(f"output prefix (out, -e) {shown_path(text)}: {problem}")
    try:
        problem = prefix_folder_problem(text)
        if problem is not None:
            raise OutputError(f"output prefix {problem}")
        paths = output_paths(text)
        # (names too long are caught here, not when the outputs are written after the whole run)
        check_output_files(list(paths.values()), f"output prefix {shown_path(text)}")
    except (OSError, ValueError) as error:  # a name too long, a NUL byte: the system refuses the path itself
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise OutputError(f"output prefix {shown_path(text)}: cannot write there ({reason})") from None
    return paths


def file_identity(path: str | os.PathLike) -> tuple[int, int] | str:
    """What makes two paths one file: device and inode of an existing file (through links, hard or
    symbolic), else the resolved path."""
    try:
        st = os.stat(path)
        return st.st_dev, st.st_ino
    except (OSError, ValueError):
        return os.path.realpath(path)


def check_not_inputs(outputs: Mapping[str, Path] | list[Path], inputs: Mapping[str, Any], option: str,
                     instead: str = "give another prefix") -> None:
    """Refuse, before a run, output files that are one of its input files (``wattsched run run_schedule.csv
    run_jobs.csv -e run`` would replace both inputs by its outputs), also through a symbolic or hard link.

    Args:
        outputs: the files a run writes (``{kind: path}`` of :func:`check_prefix`, or a list).
        inputs: ``{what: input}`` (``{"platform": ..., "workload": ...}``); inputs that are not paths (XML or
            JSON text, dicts) are skipped, loaded platforms and workloads are compared by their ``path``.
        option: names the outputs in the message (``"output prefix run"``).
        instead: what the message asks for (``"give another prefix"``).

    Raises:
        OutputError: naming ``option``, the output file and the input.
    """
    files = {}
    for what, value in inputs.items():
        path = getattr(value, "path", value)
        is_text = isinstance(path, str) and (not path or path.lstrip().startswith(("<", "{", "["))
                                             or len(path) > PATH_MAX_BYTES or "\0" in path)
        if isinstance(path, os.PathLike) or (isinstance(path, str) and not is_text):
            files[file_identity(path)] = (what, os.fspath(path))
    for out in (outputs.values() if isinstance(outputs, Mapping) else outputs):
        found = files.get(file_identity(out))
        if found is not None:
            raise OutputError(f"{option}: {out} is the {found[0]} file {found[1]}: the run would overwrite its "
                              f"input; {instead}")


def check_scheduler(scheduler: Any, classes: bool = False) -> Scheduler:
    """``scheduler`` when it is a string that can name a scheduler, or (``classes``: the Python API's
    :func:`run_simulation` and ``api.simulate``) a subclass of pybatsim's ``BatsimScheduler``.

    Raises:
        OptionError: not a string (None, an instance, another class), or one holding a line break or a NUL.
    """
    if classes and isinstance(scheduler, type):
        try:
            from pybatsim.batsim.batsim import BatsimScheduler
        except ImportError:
            raise OptionError(f"scheduler {scheduler_name(scheduler)}: a scheduler class needs pybatsim "
                              "(pip install --no-deps pybatsim==4.0.0a0)") from None
        if issubclass(scheduler, BatsimScheduler):
            return scheduler
        raise OptionError(f"scheduler {scheduler_name(scheduler)}: a scheduler class must be a subclass of "
                          "pybatsim's BatsimScheduler")
    if not isinstance(scheduler, str):
        wanted = "string or a pybatsim BatsimScheduler class" if classes else "string"
        raise OptionError(f"scheduler must be a preset name, 'module:Class' or 'file.py[:Class]' {wanted}, got "
                          f"{kind_of(scheduler)}")
    if any(c in scheduler for c in "\n\r\0") or len(scheduler) > PATH_MAX_BYTES:
        raise OptionError(f"unknown scheduler {shorten(scheduler)}: a scheduler is a preset name, 'module:Class' or "
                          "'file.py[:Class]' (see 'wattsched schedulers')")
    return scheduler


def scheduler_name(scheduler: Scheduler) -> str:
    """How results and messages name a scheduler: the string itself, or a class's ``module:Class``."""
    return scheduler if isinstance(scheduler, str) else f"{scheduler.__module__}:{scheduler.__qualname__}"


def check_options(options: Any) -> dict[str, Any]:
    """``options`` as a dict, when it is a mapping of option names to values that JSON could hold (as the
    CLI's ``-o`` JSON object): string keys, finite numbers (NaN and ±Infinity refused, at any depth).

    Raises:
        OptionError: naming the option (and where in it) and the value.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionError(f"options must be a mapping (a dict of option names to values), got {kind_of(options)}")
    check_python_nesting(options, "options", option_error)  # (before the recursive walk)

    from wattsched.schedulers.options import _plain_number, is_numpy_bool

    def walk(value: Any, where: str) -> Any:
        """``value`` with numpy's numbers and bools as Python's (JSON holds them: a sweep's run key, its table), the
        keys of its mappings strings (a number's as the pieces read it, ``str(1)``) and every string text (no lone
        surrogate), as JSON has them."""
        if is_numpy_bool(value):
            return bool(value)
        value = _plain_number(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise OptionError(f"option {where}: {value!r} is not a finite number (options are JSON values)")
        if isinstance(value, str) and not value.isascii():
            _check_text(value, where)
        if isinstance(value, Mapping):
            return {key: walk(item, f"{where}.{key}") for key, item in _json_keys(value, where).items()}
        if isinstance(value, (list, tuple)):
            return type(value)(walk(item, f"{where}[{i}]") for i, item in enumerate(value))
        return value

    out = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise OptionError(f"options: option names are strings, got {kind_of(key)}")
        out[key] = walk(value, repr(key))
    return out


def _json_keys(mapping: Mapping[Any, Any], where: str) -> dict[str, Any]:
    """``mapping`` with string keys, as a JSON object has them: a number's (a YAML grid's ``shares: {1: 2}``, numpy's
    too), a bool's or None's as ``str()`` writes it, as the pieces read user and group names; a key of another type
    (a tuple: no JSON for it) or two keys that say one name (``1`` and ``"1"``) refused. A sweep hashes the options'
    JSON: a tuple key gave a TypeError, keys ``1`` and ``"alice"`` in one mapping another (no order between them).

    Raises:
        OptionError: naming where and the key.
    """
    from wattsched.schedulers.options import _plain_number

    out: dict[str, Any] = {}
    given: dict[str, Any] = {}
    for key, item in mapping.items():
        name = key if isinstance(key, str) else _plain_number(key)
        if isinstance(name, (int, float, bool)) or name is None:
            if isinstance(name, float) and not math.isfinite(name):
                raise OptionError(f"option {where}: the key {name!r} is not a finite number (options are JSON values)")
            name = str(name)
        if not isinstance(name, str):
            raise OptionError(f"option {where}: keys are strings, as in a JSON object, got {kind_of(key)}")
        if not name.isascii():
            _check_text(name, f"{where} key")
        if name in out:
            raise OptionError(f"option {where}: the keys {shorten(given[name])} and {shorten(key)} both name "
                              f"{shorten(name)}: give it once")
        out[name], given[name] = item, key
    return out


def _check_text(text: str, where: str) -> None:
    """A string of the options is text: no half of a UTF-16 surrogate pair (``"\\ud800"`` alone: no UTF-8 for it,
    which no output could carry), as the options the CLI reads from JSON.

    Raises:
        OptionError: naming where.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise OptionError(f"option {where}: a string holds half of a UTF-16 surrogate pair ({shorten(text)}): "
                          "not text") from None


def as_platform(platform: PlatformInput, *, hold_warnings: bool = False) -> Platform:
    """A loaded platform from a path, SimGrid XML text or a :class:`Platform` (``hold_warnings``: the loader's
    warnings kept in :attr:`Platform.held_warnings`, for a run to say once its scheduler took the platform).

    Raises:
        InputError: unreadable or malformed platform (file and element named).
    """
    if isinstance(platform, Platform):
        return platform
    if not isinstance(platform, (str, os.PathLike)) or not isinstance(os.fspath(platform), str):
        raise InputError("platform", "", "must be a SimGrid XML path, XML text or a loaded Platform, got "
                         f"{kind_of(platform)}")
    text = os.fspath(platform)
    stripped = text.lstrip()
    if stripped.startswith("<"):  # XML text, not a path
        return _load_text(stripped, "platform.xml", "<platform XML text>",
                          lambda path: load_platform(path, hold_warnings=hold_warnings))
    _check_path_text(text, "platform", "SimGrid XML text (starting with '<')")
    return load_platform(platform, hold_warnings=hold_warnings)


def _check_path_text(text: str, what: str, other: str) -> None:
    """Refuse a string that cannot be a file path (a line break, a NUL, longer than PATH_MAX) and is no text
    either, with a short message (not the whole string as a file name)."""
    if any(c in text for c in "\n\r\0") or len(text) > PATH_MAX_BYTES:
        raise InputError(shorten(text), "", f"a string that is neither a file path nor {other}: pass the {what} "
                                            "as a path or a loaded object")


def _load_text(text: str, file_name: str, name: str, load: Any) -> Any:
    """``load`` of ``text`` written to a temporary file, its errors naming ``name``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / file_name
        try:
            path.write_text(text, encoding="utf-8")
        except UnicodeEncodeError as error:
            raise InputError(name, f"character {error.start}", "a string holds half of a UTF-16 surrogate pair "
                                                               f"({text[error.start]!r}): not text") from None
        except OSError as error:  # a full disk, a file size limit (ulimit -f): it was a traceback
            raise OutputError(f"cannot write {path}, the temporary file of the {name}: {error.strerror or error}"
                              ) from None
        with _named(path, name):
            return load(path)


def workload_source(workload: WorkloadInput) -> str | None:
    """What names a workload given as data, which is read from a temporary file (its errors and warnings name this,
    not the file): ``"<workload object>"`` for a dict, ``"<workload JSON text>"`` for JSON text; None for a path or
    a loaded :class:`Workload` (its path names it)."""
    if isinstance(workload, Mapping):
        return "<workload object>"
    if isinstance(workload, str) and workload.lstrip().startswith(("{", "[")):
        return "<workload JSON text>"
    return None


def as_workload(workload: WorkloadInput) -> Workload:
    """A loaded workload from a path, a Batsim JSON object or a :class:`Workload`.

    Raises:
        InputError: unreadable or malformed workload (file, job or profile named).
    """
    if isinstance(workload, Workload):
        return workload
    source = workload_source(workload)
    if isinstance(workload, Mapping):
        assert source is not None
        check_python_nesting(workload, source)  # json.dumps recurses
        try:  # NaN and ±Infinity written as JSON's non-standard constants: the loader refuses them by path
            text = json.dumps(workload)
        except (TypeError, ValueError) as error:
            raise InputError(source, "", f"not JSON data ({error})") from None
        return _load_text(text, "workload.json", source, load_workload)
    if not isinstance(workload, (str, os.PathLike)) or not isinstance(os.fspath(workload), str):
        raise InputError("workload", "", "must be a Batsim JSON path, JSON text, a workload dict or a loaded "
                         f"Workload, got {kind_of(workload)}")
    text = os.fspath(workload)
    if source is not None:  # JSON text, not a path
        return _load_text(text.lstrip(), "workload.json", source, load_workload)
    _check_path_text(text, "workload", "JSON text")
    return load_workload(workload)


def format_sim_time(t_s: float) -> str:
    """Simulated time as ``1d02:03:04.5`` or ``02:03:04.5``."""
    days, rest = divmod(t_s, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{int(days)}d{int(h):02d}:{int(m):02d}:{s:04.1f}" if days else f"{int(h):02d}:{int(m):02d}:{s:04.1f}"


#: Off a terminal, :func:`progress_bar` writes a line at most this often (wall-clock seconds).
PROGRESS_LINE_INTERVAL_S = 60.0
#: ... and estimates the time left from the pace over about this much wall-clock time (seconds).
PROGRESS_PACE_WINDOW_S = 600.0


def format_wall_time(t_s: float) -> str:
    """Wall-clock time as ``1:02:03``."""
    h, rest = divmod(int(round(t_s)), 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


@contextmanager
def progress_lines(nb_jobs: int, interval_s: float = PROGRESS_LINE_INTERVAL_S,
                   stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic
                   ) -> Iterator[ProgressCallback]:
    """Progress for a log file: a plain line on stderr (``stream``) at most every ``interval_s`` of wall-clock
    time, and one at the end, each with the jobs done, the simulated time reached, the time elapsed and an
    estimate of the time left: the jobs still to do at the pace of the last :data:`PROGRESS_PACE_WINDOW_S` (the
    whole run's pace while the run is younger; ``~`` while no job ended). A whole trace slows down as its
    backlog grows: the whole run's average pace would promise an end far too early. ``clock``: wall-clock
    seconds (tests give their own)."""
    out = sys.stderr if stream is None else stream
    t0_s = clock()
    last = {"wall_s": t0_s, "now_s": 0.0, "done": 0, "total": nb_jobs}
    #: (wall-clock time, jobs done) at each line written; the first is the newest at least a window old
    samples: deque[tuple[float, float]] = deque([(t0_s, 0)])

    def line(wall_s: float) -> str:
        elapsed_s = wall_s - t0_s
        done, total = last["done"], last["total"]
        while len(samples) > 1 and wall_s - samples[1][0] >= PROGRESS_PACE_WINDOW_S:
            samples.popleft()
        since_s, done_then = samples[0]
        if done > done_then and wall_s > since_s:
            left = format_wall_time((wall_s - since_s) * (total - done) / (done - done_then))
        else:
            left = format_wall_time(elapsed_s * (total - done) / done) if done else "~"
        samples.append((wall_s, done))
        return (f"simulating {done:,}/{total:,} jobs  t={format_sim_time(last['now_s'])}  "
                f"elapsed {format_wall_time(elapsed_s)}  left {left}")

    def show(now_s: float, done: int, total: int) -> None:
        last.update(now_s=now_s, done=done, total=total)
        wall_s = clock()
        if wall_s - last["wall_s"] >= interval_s:
            last["wall_s"] = wall_s
            print(line(wall_s), file=out, flush=True)

    yield show
    print(line(clock()), file=out, flush=True)


@contextmanager
def progress_bar(nb_jobs: int, enabled: bool = True) -> Iterator[ProgressCallback | None]:
    """A rich progress bar on stderr (jobs done, simulated time reached, wall-clock time and an estimate of the
    time left, from the jobs done) and the callback that moves it; ``None`` when disabled. The bar is redrawn
    when a job ends or an hour of simulated time passed. Off a terminal (stderr sent to a file, where rich would
    draw the bar only at the end), :func:`progress_lines` writes a line a minute instead."""
    if not enabled:
        yield None
        return
    if not sys.stderr.isatty():
        with progress_lines(nb_jobs) as show_lines:
            yield show_lines
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from rich.console import Console

    # on stderr, as documented: stdout carries the metrics (``wattsched run --json``)
    with Progress(TextColumn("[bold]simulating"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("jobs  t={task.fields[sim_time]}"), TimeElapsedColumn(), TextColumn("left"),
                  TimeRemainingColumn(), console=Console(stderr=True)) as bar:
        task = bar.add_task("sim", total=nb_jobs, sim_time="0")
        last = [-1, 0.0]

        def show(now_s: float, done: int, total: int) -> None:
            if done != last[0] or now_s - last[1] > 3600.0:
                last[0], last[1] = done, now_s
                bar.update(task, completed=done, total=total, sim_time=format_sim_time(now_s))

        yield show
        bar.update(task, completed=bar.tasks[0].total)


def check_speed(platform: Platform, workload: Workload, source: str | None = None) -> None:
    """Warn (one line) when a workload converted for a host speed (its ``meta.speed_flops``, e.g. from
    ``wattsched swf --speed``) runs on hosts of another top speed: its jobs would run longer or shorter than the
    trace says, and be killed at their walltime. ``source`` names the workload (default: its path; a dict given to
    the API is read from a temporary file, which the warning named)."""
    speed = workload.meta.get("speed_flops")
    if not isinstance(speed, (int, float)) or not platform.hosts:
        return
    top = max(platform.hosts[0].model.speeds_flops)
    if top == top and abs(top - speed) > 1e-9 * max(abs(top), abs(speed)):  # top == top: not NaN
        logger.warning("%s: meta.speed_flops: the workload's work is meant for hosts of %g flop/s, the platform's "
                       "top speed is %g flop/s: run times scale by %.3g", source or workload.path, speed, top,
                       speed / top)


#: Users named at most in a warning line (a trace may have thousands).
_USERS_SHOWN = 5


def _names(users: list[str]) -> str:
    """The first user names, each cut (a name of megabytes is no warning line), and how many more."""
    shown = ", ".join(quoted_cut(u) for u in users[:_USERS_SHOWN])
    return shown + (f" and {len(users) - _USERS_SHOWN} more" if len(users) > _USERS_SHOWN else "")


def check_shares(workload: Workload, options: Mapping[str, Any], source: str | None = None) -> None:
    """Warn (one line) when the fair-share orders' option ``shares`` (:mod:`wattsched.schedulers.fairshare`)
    names users that no job of the workload has: a misspelt user name would silently change the order (the
    user's jobs get the default share, and the unknown name's share weighs in eq. 1's sum); ESC's
    ``user_groups`` likewise (the misspelt user's jobs stay in the default group). Not an error:
    shares may list accounts that submitted nothing in this extract of a trace. ``source`` names the workload
    (default: its path)."""
    naming = [(name, options[name]) for name in ("shares", "user_groups")
              if isinstance(options.get(name), Mapping) and options[name]]
    if not naming:
        return
    users = {str(job.entry["user"]) for job in workload.jobs if job.entry.get("user") is not None}
    for name, named in naming:
        unknown = sorted(str(user) for user in named if str(user) not in users)
        if unknown:
            known = f"its users: {_names(sorted(users))}" if users else "its jobs have no 'user' field"
            logger.warning("option '%s': %s %s no job in %s (%s)", name, _names(unknown),
                           "has" if len(unknown) == 1 else "have", source or workload.path, known)


def check_energy_factors(workload: Workload, source: str | None = None) -> None:
    """Every job's ``energy_factor`` (the EFS paper's per-job factor, read by the energy fair-share orders) is a
    finite number > 0 when given: refused before the run, naming the workload and the job, rather than when
    the job's energy is first charged (or never, by a scheduler that does not read it).

    Raises:
        InputError: naming ``source`` (default: the workload's path), the job and the field.
    """
    from wattsched.energy_models.accounting import ENERGY_FACTOR_FIELD, parse_energy_factor

    for job in workload.jobs:
        value = job.entry.get(ENERGY_FACTOR_FIELD)
        if value is not None:
            try:
                parse_energy_factor(value)
            except ValueError as error:
                raise InputError(source or workload.path, f"job {job.id}.{ENERGY_FACTOR_FIELD}", str(error)) from None


def check_eamc_profiles(handler: Any, platform: Platform, workload: Workload, source: str | None = None) -> None:
    """With EAMC's placement ``partitions`` (:mod:`wattsched.schedulers.eamc`) on a platform with EAR models, every
    job with an application runs the model's time, scaled from its profile's run time at the top frequency: a
    ``delay`` or ``parallel_homogeneous`` profile. Refused before the run (a ``composed`` one, such as ``wattsched
    beta`` writes, stopped it at the job's start without naming the workload).

    Raises:
        InputError: naming ``source`` (default: the workload's path), the job and its profile.
    """
    from wattsched.energy_models.ear import APP_FIELD
    from wattsched.schedulers.eamc import PartitionPlacement

    placement = getattr(getattr(handler, "policy", None), "placement", None)
    if not isinstance(placement, PartitionPlacement) \
            or not any(host.properties.get("ear_model") is not None for host in platform.hosts):
        return
    for job in workload.jobs:
        kind = workload.profiles_json.get(job.profile, {}).get("type")
        if job.entry.get(APP_FIELD) is not None and kind not in ("delay", "parallel_homogeneous"):
            raise InputError(source or workload.path, f"job {job.id}.profile",
                             f"'{job.profile}' is {kind!r}: EAMC's placement 'partitions' scales a job's run time at "
                             "the top frequency of its partition, given by a 'delay' or 'parallel_homogeneous' profile")


def check_replacement_ids(workload: Workload, source: str | None = None) -> None:
    """No job's id is ``resized.<id>`` beside a job ``<id>``: with dynamic jobs it is the id the scheduler gives the
    replacement of job ``<id>`` when it slows it down (``w0!resized.7``, :mod:`wattsched.schedulers.core`), and
    the run stopped at that registration ("REGISTER_JOB: field 'job_id': job w0!resized.7 already exists"), or,
    had the job another profile, its outputs read the user's job as the replacement.

    Raises:
        InputError: naming ``source`` (default: the workload's path) and the job.
    """
    from wattsched.base.batsim_files import REPLACEMENT_WORKLOAD, original_job_id

    ids = {job.id for job in workload.jobs}
    for job in workload.jobs:
        original = original_job_id(job.id)
        if original != job.id and original in ids:
            raise InputError(source or workload.path, f"job {job.id}.id",
                             f"with dynamic jobs, '{REPLACEMENT_WORKLOAD}.<id>' is the id of the replacement of job "
                             f"'<id>' ({original}) when the scheduler re-registers it: rename the job")


#: The module of the pybatsim classes of our presets (one per preset: ``setup.cfg``'s ``pybatsim.schedulers``).
ADAPTER_MODULE = "wattsched.schedulers.adapter"


def preset_of(scheduler: Scheduler) -> str | None:
    """The preset ``scheduler`` runs, reading its options as the preset does: its name, or the pybatsim class of one,
    itself or named as pybatsim names a class (``wattsched.schedulers.adapter:EamcReorder``); None for any other
    scheduler (a pybatsim class of another package, ``file.py``: its options are its own)."""
    from wattsched.schedulers.presets import PRESETS

    if isinstance(scheduler, type):
        preset = getattr(scheduler, "preset", None) if scheduler.__module__ == ADAPTER_MODULE else None
        return preset if isinstance(preset, str) and preset in PRESETS else None
    if not isinstance(scheduler, str):
        return None
    spec = scheduler.strip()
    if spec in PRESETS:
        return spec
    module, _, name = spec.partition(":")
    if module.strip() != ADAPTER_MODULE or not name.strip().isidentifier():
        return None
    try:
        from wattsched.schedulers import adapter
    except ImportError:  # no pybatsim: the run says so
        return None
    cls = getattr(adapter, name.strip(), None)
    preset = getattr(cls, "preset", None) if isinstance(cls, type) else None
    return preset if isinstance(preset, str) and preset in PRESETS else None


def eamc_reading(scheduler: Scheduler, options: Mapping[str, Any]) -> tuple[str | None, bool]:
    """How the scheduler reads the inputs' EAMC fields, checked before a run of ``wattsched run`` or the web page
    (:func:`~wattsched.workloads.eamc.check_eamc_inputs`): the folder of EAR model data a preset's options name (None: the shipped one), which the
    applications are checked against, and whether its placement keeps a job on its partitions (then a job wider than
    each of them is refused; EASY's first-fit runs it on any hosts). The options are checked first, as the preset
    checks them. The model was read from the options of any scheduler: a preset without the option (``fcfs``) was
    refused for a folder that is no EAR model instead of for an unknown option, and an empty name read the current
    folder ("./modules: missing"). A preset's pybatsim class reads them as its preset (:func:`preset_of`: a model of
    its options used to be ignored here, its jobs checked against the shipped model's applications). The options of
    another scheduler (a pybatsim class, ``file.py``) are its own: an ``ear_model`` there is none of ours, and its
    placement is unknown.
    """
    from wattsched.schedulers.eamc import check_ear_model_name
    from wattsched.schedulers.pieces import REGISTRY
    from wattsched.schedulers.placement import Placement
    from wattsched.schedulers.presets import PRESETS

    preset = PRESETS.get(preset_of(scheduler) or "")
    if preset is None:
        return None, False
    chosen, values = preset.validate(options)
    ear_model = values.get("ear_model")
    if ear_model is not None:
        check_ear_model_name(ear_model)
    placement = REGISTRY["placement"][chosen["placement"]]
    return ear_model, issubclass(placement, Placement) and placement.partitioned


def check_preset_platform(platform: Platform) -> None:
    """Our presets read each host's pstates and powers from the properties SIMULATION_BEGINS sends, Batsim sending no
    speeds (:meth:`~wattsched.energy_models.power.PlatformPower.from_properties`): a host they cannot read (its
    ``sleep_pstates`` without ``wattage_per_state`` or ``speed_per_state``: its pstates cannot be counted), which Batsim
    and the loader accept, is refused before the run, naming the platform file, the host and the property (every preset
    refused it at SIMULATION_BEGINS, naming neither file nor host).

    Raises:
        InputError: naming the file, the first such host and the property.
    """
    from wattsched.energy_models.power import ModelTextError, NodeModel

    keys = ("speed_per_state", "wattage_per_state", "wattage_off", "sleep_pstates")
    seen: set[tuple] = set()
    for host in platform.hosts:
        key = tuple(host.properties.get(k) for k in keys)
        if key in seen:  # hosts of one kind are read once (a cluster's share their properties)
            continue
        seen.add(key)
        try:
            NodeModel.from_properties(host.properties)
        except ModelTextError as exc:
            raise InputError(platform.path, f"host {shorten(host.name)}.{exc.field}", exc.problem) from None


def check_run_scheduler(scheduler: Any, options: Any, platform: Platform | None = None, *,
                        dynamic_jobs: bool = False) -> None:
    """``scheduler`` built with ``options`` as a run builds it and, one of our presets, started on ``platform``'s
    hosts as SIMULATION_BEGINS starts it: what the run would refuse at once (an unknown scheduler, a bad option, an
    option the platform cannot serve: a sleep pstate it lacks, UPAS without gears) is refused before a sweep starts,
    not reported as a failed run after the other runs.

    Raises:
        OptionError: as the run would.
        InputError: a host the presets cannot read (:func:`check_preset_platform`).
    """
    from wattsched.schedulers.core import PolicyScheduler

    handler = _handler(check_scheduler(scheduler), check_options(options))
    policy = getattr(handler, "policy", None)
    if platform is not None and isinstance(policy, PolicyScheduler):
        check_preset_platform(platform)
        properties = [dict(host.properties) for host in platform.hosts]
        policy.start(len(properties), properties=properties, dynamic_jobs=dynamic_jobs or policy.needs_dynamic_jobs)


def _handler(scheduler: Scheduler, options: dict[str, Any]) -> Any:
    """:func:`~wattsched.schedulers.protocol.scheduler_handler`, a long name shortened in its errors."""
    from wattsched.schedulers.protocol import scheduler_handler

    try:
        return scheduler_handler(scheduler, options)
    except OptionError as error:
        if not isinstance(scheduler, str):
            raise
        name = scheduler.strip()
        target = name.rpartition(":")[0] or name  # file.py[:Class]: a path is worth reading whole
        if len(name) <= SHOWN_CHARS or name not in str(error) or os.path.exists(name) or os.path.exists(target):
            raise
        raise OptionError(str(error).replace(f"'{name}'", shorten(name)).replace(name, shorten(name)[1:-1])) from None


def run_simulation(platform: PlatformInput, workload: WorkloadInput, prefix: str | os.PathLike, *,
                   scheduler: Scheduler = "easy-backfill", options: Mapping[str, Any] | None = None,
                   dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool | None = None,
                   connect: str | None = None, progress: ProgressCallback | None = None,
                   show_progress: bool = False, timeout_s: float | None = None) -> RunStats:
    """Simulate ``workload`` on ``platform`` with a scheduler and write Batsim's five files to ``prefix``
    (atomically: a failed run writes nothing).

    Args:
        scheduler: a preset, a pybatsim entry-point name, ``package.module:Class`` or ``file.py[:Class]``, or a
            subclass of pybatsim's ``BatsimScheduler`` (built with ``cls(options)``, as pybatsim does).
        options: the scheduler's options (validated before the simulation starts).
        dynamic_jobs: the simulator accepts dynamic job registration (``--enable-dynamic-jobs``); enabled
            anyway (with acknowledgements) for a preset that slows jobs down (UPAS).
        acknowledge_dynamic_jobs: registrations are acknowledged (default: as ``dynamic_jobs``).
        connect: instead of loading a scheduler, act as Batsim for a scheduler process listening there.
        progress: called with (simulated time, jobs done, jobs) after every Batsim message.
        show_progress: draw a progress bar on stderr (:func:`progress_bar`), with ``progress`` if also given.
        timeout_s: give up when the scheduler does not answer a message within this many seconds; with
            ``connect`` the default is :data:`~wattsched.simulator.drivers.DEFAULT_TIMEOUT_S`, in this process there
            is no limit unless it is given (a scheduler that loops or blocks: from the main thread only).

    Raises:
        InputError: a bad platform or workload (file and field named).
        OptionError: a bad scheduler or option.
        OutputError: ``prefix`` cannot be written (checked before the simulation starts).
        ProtocolError: a scheduler reply Batsim would refuse, a peer that dies, stops answering or sends
            malformed messages.
    """
    from wattsched.schedulers.core import PolicyScheduler
    from wattsched.schedulers.protocol import needs_dynamic_jobs, scheduler_handler

    check_scheduler(scheduler, classes=True)
    options = check_options(options)
    paths = check_prefix(prefix)
    check_not_inputs(paths, {"platform": platform, "workload": workload}, f"output prefix {shown_path(prefix)}")
    handler = _handler(scheduler, options) if connect is None else None
    # a preset that slows jobs down (UPAS) re-registers them with their longer walltime: said once the scheduler took the
    # platform (a run refused is one line, not this note and then the error)
    turned_on = handler is not None and needs_dynamic_jobs(handler) and not dynamic_jobs
    if turned_on:
        dynamic_jobs, acknowledge_dynamic_jobs = True, True
    # a workload given as a dict or JSON text is read from a temporary file: warnings and the errors of the checks
    # below name it as the loader's errors do (the JSON text's named the temporary file, gone when they are read)
    source = workload_source(workload)
    # the platform's warnings (a host without wattage_per_state...) are said once the scheduler took it, as the note
    # above: a run refused before (a platform the presets cannot read, a bad workload) is one line
    platform, workload = as_platform(platform, hold_warnings=True), as_workload(workload)
    if isinstance(getattr(handler, "policy", None), PolicyScheduler):
        check_preset_platform(platform)
    check_speed(platform, workload, source)
    check_energy_factors(workload, source)
    from wattsched.workloads.users import check_job_fields

    check_job_fields((job.entry for job in workload.jobs), source or workload.path)  # as 'wattsched run' does
    # the jobs' EAMC fields, for the scheduler as it reads them (the API's run refused a bad one at its submission,
    # naming JOB_SUBMITTED instead of the workload); with connect, every application is the listening scheduler's to
    # judge (its own EAR model, unknown here: one was refused against the shipped model)
    from wattsched.workloads.eamc import check_eamc_inputs

    ear_model, by_partition = eamc_reading(scheduler, options or {}) if handler is not None else (None, False)
    check_eamc_inputs((host.properties for host in platform.hosts), (job.entry for job in workload.jobs),
                      source or workload.path, ear_model, by_partition=by_partition, any_app=handler is None)
    if handler is not None:
        check_shares(workload, options or {}, source)
        check_eamc_profiles(handler, platform, workload, source)
    if dynamic_jobs:
        check_replacement_ids(workload, source)
    sim = Simulation(platform, workload, dynamic_jobs=dynamic_jobs,
                     acknowledge_dynamic_jobs=dynamic_jobs if acknowledge_dynamic_jobs is None else acknowledge_dynamic_jobs)
    with progress_bar(len(sim.jobs), show_progress) as bar:
        callbacks = [c for c in (bar, progress) if c is not None]
        noted = not turned_on

        def callback(now_s: float, done: int, total: int) -> None:
            nonlocal noted
            if platform.held_warnings:  # once the scheduler took the platform (SIMULATION_BEGINS answered)
                platform.release_warnings()
            if not noted:  # the note, likewise
                noted = True
                logger.warning("%s lowers jobs' gears: dynamic jobs enabled (as Batsim's --enable-dynamic-jobs "
                               "--acknowledge-dynamic-jobs) so that a slowed job runs with its longer walltime",
                               scheduler_name(scheduler))
            for call in callbacks:
                call(now_s, done, total)

        held = bool(platform.held_warnings)
        if handler is not None:
            stats = run_inprocess(sim, handler, progress=callback if callbacks or turned_on or held else None,
                                  timeout_s=timeout_s)
        else:
            assert connect is not None
            stats = run_zmq(sim, connect, progress=callback if callbacks or held else None, timeout_s=timeout_s)
    platform.release_warnings()  # a run whose first reply ended it
    write_outputs(sim, prefix, scheduling_time_s=stats.scheduling_time_s, simulation_time_s=stats.simulation_time_s)
    return stats
