"""The web page's workspace: one folder holding every input and run the page made, and nothing it may leave.

Layout (all the page ever reads or writes)::

    WORKSPACE/
        index.json                  the runs, oldest first: id, name, scheduler, created (rebuilt from the
                                    run folders when missing or unreadable)
        inputs/<kind>-<sha>-<name>  uploaded or generated platforms (.xml) and workloads (.json), stored
                                    only once they load like the CLI's inputs
        runs/<id>/run.json          what to simulate: scheduler, options, platform and workload files
        runs/<id>/status.json       state (queued, running, done, failed, interrupted), progress, metrics,
                                    the one-line error of a failed run, the warnings of the simulation
        runs/<id>/out_*.csv         Batsim's five outputs; out.prv/.pcf/.row the Paraver trace
        .dask-scratch/              the scratch space of the server's Dask cluster (not the system's /tmp)

Every path a form or a URL names goes through :meth:`Workspace.inside` (or the id and name patterns below):
a path that resolves outside the workspace, through ``..``, an absolute path or a symbolic link, is refused
with a :class:`WorkspaceError`. Files are written atomically (:mod:`wattsched.base.fileio`): a refused upload
or a failed validation leaves nothing behind.

A run is deleted (:meth:`Workspace.delete_run`) by renaming its folder out of the runs (``runs/.deleted-*``,
no longer a run), then dropping it from the index, then removing the renamed folder: a server stopped at any
point leaves a workspace whose runs and index agree, and :meth:`Workspace.recover` removes what is left of a
deletion cut short.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from wattsched.base.errors import OptionError, OutputError, WattschedError, printable, quoted_cut
from wattsched.base.fileio import atomic_path

__all__ = ["PATH_OPTIONS", "Workspace", "WorkspaceError", "check_run_name", "shipped_ear_models", "shipped_inputs",
           "logged_warnings", "shown_value", "upload_name", "validate_input"]

InputKind = Literal["platform", "workload"]
#: File suffix of each kind of input.
SUFFIX: Final[dict[str, str]] = {"platform": ".xml", "workload": ".json"}
#: A run id: ``20261124-093000-1a2b3c`` (creation time, then random).
RUN_ID: Final = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
#: A stored input's file name: letters, digits, ``.``, ``_``, ``-``; no path separator, no leading dot.
INPUT_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,150}$")
#: Run states; the last three are final.
STATES: Final = ("queued", "running", "done", "failed", "interrupted")
ACTIVE: Final = ("queued", "running")
#: The error of a run the server stopped (``interrupted``).
STOPPED_ERROR: Final = "the server stopped before this run finished; launch it again"
#: Scheduler options whose value names a file or folder of the server. A form never gives such a path: it
#: names a choice (:meth:`Workspace.model_path`), stored as typed in ``run.json`` and resolved when the run
#: starts, so no form can make the server read a folder outside the shipped data and the workspace.
PATH_OPTIONS: Final = frozenset({"ear_model"})
#: Longest run name kept, characters.
NAME_CHARS: Final = 80
#: Characters refused in a run name: control characters (C0, DEL, C1) and the bidirectional overrides and
#: isolates that make a name read other than it is stored.
_BAD_NAME_CHAR: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                                   "\u2028\u2029\ufeff\ud800-\udfff]")


def shown_value(text: str, max_chars: int = 60) -> str:
    """A value from a form or a URL as a message on the page shows it: at most ``max_chars`` characters (a longer
    one keeps its start and ``...``: a field of a megabyte is no error line) and printable (control and
    bidirectional-override characters written as escapes: raw, they would make the message read other than it
    is, :func:`~wattsched.base.errors.printable`)."""
    return printable(text if len(text) <= max_chars else text[:max_chars - 3] + "...")


#: Warnings a run, an upload or a generated input keeps for its page, at most; characters of one, at most.
MAX_WARNINGS = 20
WARNING_CHARS = 500


@contextmanager
def logged_warnings(paths: Mapping[str, str] | None = None) -> Iterator[list[str]]:
    """The warnings wattsched logs in this thread while the block runs (those ``wattsched run``, ``synth`` or
    ``platform`` print on their terminal: shares naming users without a job, a workload meant for hosts of
    another speed, a load the workload cannot reach), one line each for the page, each path of ``paths`` written
    as its value (the absolute paths of the server are not shown): in a worker process, or in a server whose
    log nobody reads, they were lost, and the page showed what it made without them. Filled when the block ends.
    """
    records: list[logging.LogRecord] = []
    thread = threading.get_ident()

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.thread == thread and len(records) < MAX_WARNINGS:
                records.append(record)

    handler = Keep(logging.WARNING)
    log = logging.getLogger("wattsched")
    log.addHandler(handler)
    lines: list[str] = []
    try:
        yield lines
    finally:
        log.removeHandler(handler)
        for record in records:
            try:
                text = record.getMessage()
            except Exception:  # noqa: BLE001 - a message that does not format is no reason to lose the run
                continue
            for path, name in sorted((paths or {}).items(), key=lambda item: -len(item[0])):  # longest first
                text = text.replace(path, name)
            text = " ".join(text.split())
            lines.append(printable(text if len(text) <= WARNING_CHARS else text[:WARNING_CHARS - 3] + "..."))


class WorkspaceError(OptionError):
    """A path or a name from a form or a URL that the workspace does not hold (one line)."""


class RunActiveError(OptionError):
    """A run that cannot be deleted while it is queued or running (one line)."""


class RunDamagedError(OptionError):
    """A run whose ``run.json`` is not one this page writes (edited by hand, written by another version of
    wattsched): one line naming the file and what is wrong with it."""


#: Prefix of a run folder being deleted (not a run: :data:`RUN_ID` does not match it).
DELETED: Final = ".deleted-"


@dataclass(frozen=True)
class RunSpec:
    """What one run simulates (``run.json``).

    Attributes:
        id: the run's folder name (:data:`RUN_ID`).
        name: a label chosen on the form.
        scheduler: a preset of :mod:`wattsched.schedulers.presets`.
        options: its options, as on ``wattsched run -o``.
        platform, workload: input choices (``shipped:NAME`` or ``workspace:NAME``, :meth:`Workspace.input_path`).
        created: creation time, seconds since the epoch.
    """

    id: str
    name: str
    scheduler: str
    options: dict[str, Any]
    platform: str
    workload: str
    created: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "scheduler": self.scheduler, "options": self.options,
                "platform": self.platform, "workload": self.workload, "created": self.created}


def shipped_inputs(kind: InputKind) -> dict[str, Path]:
    """The platforms (``*.xml``) or workloads (``*.json``) installed with wattsched, by file name."""
    if kind == "platform":
        from wattsched import platforms as package
    else:
        from wattsched import workloads as package  # type: ignore[no-redef]
    folder = Path(package.__file__).resolve().parent
    return {p.name: p for p in sorted(folder.glob(f"*{SUFFIX[kind]}"))}


def shipped_ear_models() -> dict[str, Path]:
    """The folders of EAR model data installed with wattsched (``energy_models/data/<name>``), by name."""
    from wattsched.energy_models.ear import DATA_DIR

    return {p.name: p for p in sorted(DATA_DIR.parent.iterdir()) if p.is_dir() and (p / "modules").is_file()}


def upload_name(kind: str, filename: str) -> str:
    """How an uploaded file's name is shown in messages: its last path part, control characters as ``?``,
    and at most 100 characters (a longer name keeps its start and its suffix)."""
    shown = _BAD_NAME_CHAR.sub("?", Path(filename.replace("\\", "/")).name) or f"upload{SUFFIX.get(kind, '')}"
    if len(shown) > 100:
        suffix = Path(shown).suffix[:10]
        shown = shown[:100 - len(suffix) - 3] + "..." + suffix
    return shown


def check_run_name(name: str) -> str:
    """A run name from a form, stripped; :class:`OptionError` naming the field when it holds a control or
    bidirectional-override character (ordinary letters of any script are kept) or more than :data:`NAME_CHARS`
    characters."""
    bad = _BAD_NAME_CHAR.search(name)
    if bad is not None:
        raise OptionError(f"run name: character U+{ord(bad.group()):04X} at position {bad.start() + 1} is not "
                          "allowed (no control or bidirectional-override characters)")
    name = name.strip()
    if len(name) > NAME_CHARS:  # cut, the run would be listed under another name than the one given
        raise OptionError(f"run name: {len(name)} characters, at most {NAME_CHARS}")
    return name


def validate_input(kind: InputKind, path: Path, shown_as: str) -> int:
    """Load ``path`` as the CLI loads a platform or a workload; returns its hosts or jobs.

    Raises:
        InputError: the CLI's one-line message, with ``path`` written as ``shown_as``.
    """
    try:
        if kind == "platform":
            from wattsched.simulator.platform import load_platform

            return len(load_platform(path).hosts)
        from wattsched.simulator.workload import load_workload
        from wattsched.workloads.users import check_job_fields

        workload = load_workload(path)
        check_job_fields((job.entry for job in workload.jobs), path)
        return len(workload.jobs)
    except WattschedError as error:
        raise WattschedError(str(error).replace(str(path), shown_as).replace(str(path.parent), "upload")) from None


class Workspace:
    """The folder of a ``wattsched web`` server (module docstring).

    Args:
        root: the folder; created when missing.

    Raises:
        WorkspaceError: ``root`` cannot be a folder (a file is there, no permission).
    """

    def __init__(self, root: str | Path) -> None:
        if "\x00" in str(root):  # no folder's name (resolve() raised ValueError)
            raise WorkspaceError(f"{printable(str(root))}: cannot be used as a workspace (a NUL character in its name)")
        self.root = Path(root).resolve()
        self.runs_dir = self.root / "runs"
        self.inputs_dir = self.root / "inputs"
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            self.inputs_dir.mkdir(exist_ok=True)
        except OSError as error:
            raise WorkspaceError(f"{root}: cannot be used as a workspace ({error.strerror or error})") from None
        self._lock = threading.Lock()

    # --------------------------------------------------------------------------------- safe paths
    def inside(self, relative: str | Path) -> Path:
        """``root / relative`` resolved; :class:`WorkspaceError` when that is outside the workspace."""
        path = (self.root / relative).resolve()
        if path != self.root and self.root not in path.parents:
            raise WorkspaceError(f"'{relative}' is outside the workspace")
        return path

    def run_dir(self, run_id: str) -> Path:
        """The folder of run ``run_id``; :class:`WorkspaceError` for an id that is not one or no such run."""
        if not RUN_ID.match(run_id):  # (an id in a link is a query parameter of any length: shown cut)
            raise WorkspaceError(f"{quoted_cut(run_id)} is not a run of the workspace")
        folder = self.inside(Path("runs") / run_id)
        if not (folder / "run.json").is_file():
            raise WorkspaceError(f"{quoted_cut(run_id)} is not a run of the workspace")
        return folder

    def prefix(self, run_id: str) -> Path:
        """The output prefix of a run: its Batsim files are ``<prefix>_jobs.csv`` ..."""
        return self.run_dir(run_id) / "out"

    # ------------------------------------------------------------------------------------- inputs
    def stored_inputs(self, kind: InputKind) -> list[str]:
        """The workspace's inputs of ``kind``, by file name."""
        return sorted(p.name for p in self.inputs_dir.glob(f"{kind}-*{SUFFIX[kind]}") if p.is_file())

    def input_choices(self, kind: InputKind) -> list[tuple[str, str]]:
        """``(value, label)`` of every shipped and stored input of ``kind``, for a select."""
        return ([(f"shipped:{name}", f"{name} (shipped)") for name in shipped_inputs(kind)]
                + [(f"workspace:{name}", name) for name in self.stored_inputs(kind)])

    def input_path(self, kind: InputKind, choice: str) -> Path:
        """The file of an input choice: ``shipped:NAME`` (installed with wattsched) or ``workspace:NAME``
        (under ``inputs/``).

        Raises:
            WorkspaceError: anything else, including a name that leaves ``inputs/``.
        """
        origin, _, name = choice.partition(":")
        if origin == "shipped" and name in shipped_inputs(kind):
            return shipped_inputs(kind)[name]
        if origin == "workspace" and "\x00" not in name:  # a NUL: no file's name (resolve() raises ValueError)
            path = self.inside(Path("inputs") / name)
            if INPUT_NAME.match(name) and path.parent == self.inputs_dir and path.is_file() \
                    and name.startswith(f"{kind}-") and name.endswith(SUFFIX[kind]):
                return path
            if path != self.inputs_dir and self.inputs_dir not in path.parents:
                raise WorkspaceError(f"{kind}: '{shown_value(name)}' is outside the workspace's inputs")
        raise WorkspaceError(f"{kind}: no input '{shown_value(choice)}' (choose a shipped one or one of the "
                             "workspace's inputs)")

    def model_path(self, option: str, choice: Any) -> Path:
        """The folder a path option (:data:`PATH_OPTIONS`) names on the page: ``shipped:NAME`` (or ``NAME``), a
        folder of EAR model data installed with wattsched (:func:`shipped_ear_models`), or ``workspace:NAME``,
        a folder (not a link) in the workspace's ``inputs/``. Anything else, an absolute or relative path of
        the server in particular, is refused from its text alone: the server does not look at it.

        Raises:
            WorkspaceError: naming the option, with the choices.
        """
        shipped = shipped_ear_models()
        text = choice if isinstance(choice, str) else ""
        origin, colon, name = text.partition(":")
        if not colon:
            origin, name = "shipped", text
        if origin == "shipped" and name in shipped:
            return shipped[name]
        if origin == "workspace" and INPUT_NAME.match(name):
            path = self.inputs_dir / name
            if not path.is_symlink() and path.is_dir() and path.resolve().parent == self.inputs_dir:
                return path
        shown = json.dumps(choice, ensure_ascii=True)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise WorkspaceError(
            f"option '{option}': {shown} is not a model this page offers: choose "
            f"{' or '.join(f'shipped:{n}' for n in shipped) or 'a shipped model'} (the default), or "
            "workspace:NAME for a folder NAME of the workspace's inputs; a path of the server is not accepted")

    def resolved_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` as stored in ``run.json`` with each path option's choice replaced by its folder
        (:meth:`model_path`): what the scheduler is built with.

        Raises:
            WorkspaceError: a choice the page does not offer (or no longer holds).
        """
        return {name: str(self.model_path(name, value)) if name in PATH_OPTIONS and value is not None else value
                for name, value in options.items()}

    def check_upload(self, kind: InputKind, filename: str, data: bytes, warnings: list[str] | None = None) -> str:
        """Validate ``data`` as a platform or workload uploaded as ``filename`` (in a temporary folder outside
        the workspace); returns the name it is stored under (:meth:`save_input`). Writes nothing. The warnings
        of its loading (:func:`logged_warnings`, naming ``filename``) are added to ``warnings``.

        Raises:
            InputError: the one-line message of ``wattsched run`` on this file, naming ``filename``.
        """
        shown = upload_name(kind, filename)
        stem = (re.sub(r"[^A-Za-z0-9._-]+", "_", Path(shown).stem).strip("._") or kind)[:80]
        with tempfile.TemporaryDirectory(prefix="wattsched-upload-") as tmp:
            path = Path(tmp) / f"{stem}{SUFFIX[kind]}"
            path.write_bytes(data)
            with logged_warnings({str(path): shown, tmp: "upload"}) as kept:
                validate_input(kind, path, shown)
        if warnings is not None:
            warnings += kept
        digest = hashlib.sha256(data).hexdigest()[:10]
        return f"{kind}-{digest}-{stem}{SUFFIX[kind]}"

    def save_input(self, name: str, data: bytes) -> str:
        """Store checked ``data`` (:meth:`check_upload`) under ``inputs/name`` atomically; returns its choice
        value (``workspace:NAME``)."""
        if not INPUT_NAME.match(name):
            raise WorkspaceError(f"'{name}' is not an input name")
        target = self.inside(Path("inputs") / name)
        if not target.exists():
            with atomic_path(target) as temp:
                temp.write_bytes(data)
        return f"workspace:{name}"

    def store_input(self, kind: InputKind, filename: str, data: bytes, warnings: list[str] | None = None) -> str:
        """Validate ``data`` as a platform or workload named ``filename`` and store it; returns its choice
        value (``workspace:NAME``). Nothing is stored when it does not load; the warnings of its loading are
        added to ``warnings``.

        Raises:
            InputError: the one-line message of ``wattsched run`` on this file.
        """
        return self.save_input(self.check_upload(kind, filename, data, warnings), data)

    # --------------------------------------------------------------------------------------- runs
    def new_run(self, *, name: str, scheduler: str, options: dict[str, Any], platform: str,
                workload: str) -> RunSpec:
        """Create a queued run's folder and its entry in the index; nothing is left of it when that fails.

        Raises:
            OutputError: the folder or its files cannot be written (the workspace's ``runs/`` removed or replaced
                behind the server's back, a full or read-only disk), naming them inside the workspace.
        """
        created = time.time()
        run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created)) + "-" + uuid.uuid4().hex[:6]
        spec = RunSpec(run_id, check_run_name(name) or scheduler, scheduler, dict(options), platform, workload, created)
        folder = self.runs_dir / run_id
        try:  # (not created with its parents: a workspace removed while the server runs is not made again here)
            folder.mkdir()
        except OSError as error:
            raise OutputError(f"cannot create the run's folder workspace/runs/{run_id}: {error.strerror or error} "
                              "(the workspace or its runs/ folder was removed or replaced while the page "
                              "was serving it: restart wattsched web)") from None
        try:
            _write_json(folder / "status.json", {"state": "queued", "sim_time_s": 0.0, "jobs_done": 0, "jobs": 0})
            _write_json(folder / "run.json", spec.as_dict())
            with self._lock:
                index = self._read_index()
                index.append({k: spec.as_dict()[k] for k in ("id", "name", "scheduler", "created")})
                _write_json(self.root / "index.json", {"runs": index})
        except BaseException:  # no run folder without its index entry (nor one half-written)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return spec

    def spec(self, run_id: str) -> RunSpec:
        """What run ``run_id`` simulates (``run.json``).

        Raises:
            WorkspaceError: not a run of the workspace.
            RunDamagedError: its ``run.json`` is not one the page writes.
            OSError: the run was deleted while it was read.
        """
        path = self.run_dir(run_id) / "run.json"
        raw = path.read_bytes()
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError as error:  # not UTF-8 or not JSON
            problem: str | None = f"not JSON ({error})"
        else:
            problem = _spec_problem(data, run_id)
        if problem is not None:
            raise RunDamagedError(f"run {run_id}: runs/{run_id}/run.json: {problem}; the page cannot show this run "
                                  "(remove its folder from the workspace)")
        return RunSpec(**{name: data[name] for name in _SPEC_FIELDS})

    def delete_run(self, run_id: str) -> RunSpec:
        """Delete run ``run_id``: its folder, outputs and index entry (module docstring); returns what it was.

        Raises:
            WorkspaceError: ``run_id`` is not a run of the workspace (outside it, a symbolic link out of it).
            RunActiveError: the run is queued or running.
        """
        with self._lock:
            folder = self.run_dir(run_id)
            spec = self.spec(run_id)
            state = self.status(run_id).get("state")
            if state in ACTIVE:
                raise RunActiveError(f"run {run_id} ({spec.name}) is {state}: it can be deleted once it has ended")
            trash = self.runs_dir / f"{DELETED}{run_id}-{uuid.uuid4().hex[:6]}"
            folder.rename(trash)
            index = [entry for entry in self._read_index() if entry.get("id") != run_id]
            _write_json(self.root / "index.json", {"runs": index})
        shutil.rmtree(trash, ignore_errors=True)
        return spec

    def status(self, run_id: str) -> dict[str, Any]:
        """``status.json`` of a run (``state`` ``failed`` with an error saying why when it cannot be read, or is
        not one the page writes)."""
        try:
            data = json.loads((self.run_dir(run_id) / "status.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"state": "failed", "error": "status.json of this run cannot be read"}
        problem = _status_problem(data)
        if problem is not None:
            return {"state": "failed", "error": f"status.json of this run cannot be read ({problem})"}
        return dict(data)

    def set_status(self, run_id: str, **fields: Any) -> dict[str, Any]:
        """Update some fields of a run's status (atomically)."""
        status = {**self.status(run_id), **fields}
        _write_json(self.run_dir(run_id) / "status.json", status)
        return status

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, each its index entry plus its status."""
        with self._lock:
            index = self._read_index()
            return [{**entry, **self.status(entry["id"])} for entry in reversed(index)
                    if RUN_ID.match(str(entry.get("id", ""))) and (self.runs_dir / entry["id"] / "run.json").is_file()]

    def recover(self) -> list[str]:
        """After a restart: runs left queued or running are marked ``interrupted``, and what a deletion cut
        short left behind is removed; returns the ids of the interrupted runs."""
        for leftover in self.runs_dir.glob(f"{DELETED}*"):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
        stopped = []
        for entry in self.runs():
            if entry.get("state") in ACTIVE:
                self.set_status(entry["id"], state="interrupted", error=STOPPED_ERROR)
                stopped.append(entry["id"])
        return stopped

    def _read_index(self) -> list[dict[str, Any]]:
        """The index, rebuilt from the run folders when missing or unreadable."""
        path = self.root / "index.json"
        try:
            runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
            if isinstance(runs, list) and all(isinstance(r, dict) and "id" in r for r in runs):
                return runs
        except (OSError, ValueError, KeyError, TypeError):
            pass
        rebuilt = []
        try:
            folders = sorted(self.runs_dir.iterdir())
        except OSError:  # runs/ removed or replaced behind the server's back: no runs (and no index written)
            return []
        for folder in folders:
            if not RUN_ID.match(folder.name):
                continue
            try:
                data = json.loads((folder / "run.json").read_text(encoding="utf-8"))
                rebuilt.append({k: data[k] for k in ("id", "name", "scheduler", "created")})
            except (OSError, ValueError, KeyError, TypeError):
                continue
        rebuilt.sort(key=lambda r: r["created"])
        try:
            _write_json(path, {"runs": rebuilt})
        except (OSError, OutputError):  # a read-only workspace still shows its runs (rebuilt again next time)
            pass
        return rebuilt


#: The fields of ``run.json`` (:class:`RunSpec`), each with the types it may hold.
_SPEC_FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "id": (str,), "name": (str,), "scheduler": (str,), "options": (dict,), "platform": (str,), "workload": (str,),
    "created": (int, float)}
#: How a value read from JSON is named in messages.
_JSON_KINDS: Final[dict[type, str]] = {dict: "an object", list: "a list", str: "a text", int: "a number",
                                       float: "a number", bool: "a boolean", type(None): "null"}
#: The numbers of ``status.json`` the pages show (progress, wall-clock time, events).
_STATUS_NUMBERS: Final = ("sim_time_s", "jobs_done", "jobs", "wall_s", "events")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _spec_problem(data: Any, run_id: str) -> str | None:
    """What makes ``data`` (a ``run.json`` read as JSON) no :class:`RunSpec` of run ``run_id``, or None (fields
    it does not know, from another version, are left out)."""
    from wattsched.schedulers.presets import PRESETS

    if not isinstance(data, dict):
        return f"{_JSON_KINDS.get(type(data), 'a JSON value')}, not an object"
    for name, types in _SPEC_FIELDS.items():
        if name not in data:
            return f"no '{name}'"
        value = data[name]
        if not isinstance(value, types) or isinstance(value, bool) or (types == (int, float) and not _is_number(value)):
            return f"'{name}' is {json.dumps(value)[:40]}, not {_JSON_KINDS[types[0]]}"
    if data["id"] != run_id:
        return f"'id' is {json.dumps(data['id'])[:40]}, not the folder's name"
    if data["scheduler"] not in PRESETS:
        return f"'scheduler' is {json.dumps(data['scheduler'])[:40]}, not a preset"
    return None


def _status_problem(data: Any) -> str | None:
    """What makes ``data`` (a ``status.json`` read as JSON) not a status the page writes, or None."""
    if not isinstance(data, dict):
        return f"{_JSON_KINDS.get(type(data), 'a JSON value')}, not an object"
    if data.get("state") not in STATES:
        return f"state {json.dumps(data.get('state'))[:40]} is not one of {', '.join(STATES)}"
    for name in _STATUS_NUMBERS:
        if name in data and data[name] is not None and not _is_number(data[name]):
            return f"'{name}' is {json.dumps(data[name])[:40]}, not a number"
    if not isinstance(data.get("error", ""), str):
        return "'error' is not a text"
    warnings = data.get("warnings", [])
    if not (isinstance(warnings, list) and all(isinstance(line, str) for line in warnings)):
        return "'warnings' is not a list of texts"
    if data["state"] == "done":
        metrics = data.get("metrics")
        if not isinstance(metrics, dict):
            return "a finished run without its metrics"
        for name, value in metrics.items():
            if value is not None and not isinstance(value, (int, float)):  # inf shows as inf, None as n/a
                return f"metric '{name}' is {json.dumps(value)[:40]}, not a number"
        hosts = metrics.get("nb_hosts")
        if not (isinstance(hosts, int) and not isinstance(hosts, bool) and hosts >= 1):
            return "metric 'nb_hosts' is not a number of hosts"
    return None


def _write_json(path: Path, value: Any) -> None:
    with atomic_path(path) as temp:
        temp.write_text(json.dumps(value, indent=1, default=str) + "\n", encoding="utf-8")
