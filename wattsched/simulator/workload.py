"""Load a Batsim JSON workload (jobs + profiles) the way Batsim 4.2.1 does.

Rules reproduced from real Batsim (``tests/fixtures/batsim-reference/README.md``):

* job ids become ``"<workload>!<id>"`` (behaviour 6); the ``job`` object of JOB_SUBMITTED is the workload
  entry with ``id`` rewritten to that string (:attr:`Job.entry`), every other field kept as written;
* jobs are submitted in (subtime, id string) order (behaviour 10): :attr:`Workload.jobs` is sorted so;
* ``walltime`` absent or ``-1`` means no walltime; otherwise it must be strictly positive;
* SIMULATION_BEGINS.profiles carries the profiles as parsed from the file (:attr:`Workload.profiles_json`):
  the recordings show every number with the type it has in the file (``"cpu": 0`` stays an int,
  ``"cpu": 1e10`` becomes ``10000000000.0`` because JSON parsers read it as a double).

Only network-free profiles are supported: ``delay``, ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel`` (with an all-zero ``com`` matrix) and ``composed``.
A job asking more hosts than the platform has is *not* an error here: Batsim submits it and the
scheduler must reject it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Union

from wattsched.base.errors import InputError

__all__ = [
    "DelayProfile", "ParallelProfile", "ComposedProfile", "Profile", "Job", "Workload", "load_workload",
    "parse_job", "parse_profile",
]


@dataclass(frozen=True)
class DelayProfile:
    name: str
    delay_s: float
    ret: int = 0


@dataclass(frozen=True)
class ParallelProfile:
    """A computation without communication.

    ``kind`` is ``"parallel_homogeneous"`` (``cpu`` flops on every host), ``"parallel_homogeneous_total"``
    (``cpu`` flops split evenly over the hosts) or ``"parallel"`` (``cpu`` is the per-host tuple and the
    allocation must have exactly ``nb_res`` hosts).
    """

    name: str
    kind: str
    cpu: float | tuple[float, ...]
    nb_res: int | None = None
    ret: int = 0

    def flops_per_host(self, nb_hosts: int) -> tuple[float, ...]:
        """Flops each of the ``nb_hosts`` allocated hosts computes (behaviour 19)."""
        if nb_hosts < 1:
            raise ValueError(f"profile '{self.name}': a task needs at least one host, got {nb_hosts}")
        if self.kind == "parallel_homogeneous":
            return (float(self.cpu),) * nb_hosts
        if self.kind == "parallel_homogeneous_total":
            return (float(self.cpu) / nb_hosts,) * nb_hosts
        assert isinstance(self.cpu, tuple)
        if nb_hosts != len(self.cpu):
            raise ValueError(
                f"profile '{self.name}' (parallel) needs exactly {len(self.cpu)} hosts, got {nb_hosts}"
            )
        return self.cpu


@dataclass(frozen=True)
class ComposedProfile:
    name: str
    seq: tuple["Profile", ...]
    repeat: int = 1
    ret: int = 0


Profile = Union[DelayProfile, ParallelProfile, ComposedProfile]


@dataclass(slots=True)
class Job:
    id: str
    subtime_s: float
    res: int
    profile: str
    walltime_s: float | None
    entry: dict


@dataclass
class Workload:
    path: str
    name: str
    jobs: list[Job]
    profiles: dict[str, Profile]
    profiles_json: dict[str, dict]
    #: The workload's ``meta`` object (not Batsim's: generators record their inputs there), or empty.
    meta: dict = field(default_factory=dict)

    def job_by_id(self, job_id: str) -> Job:
        index = getattr(self, "_by_id", None)
        if index is None:
            index = {j.id: j for j in self.jobs}
            object.__setattr__(self, "_by_id", index)
        return index[job_id]


# --------------------------------------------------------------------------------------------------
def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _ProfileReader:
    def __init__(self, path: str, raw: dict) -> None:
        self.path = path
        self.raw = raw
        self.done: dict[str, Profile] = {}
        self.in_progress: list[str] = []

    def error(self, name: str, fieldname: str | None, problem: str) -> InputError:
        where = f"profile '{name}'" + (f".{fieldname}" if fieldname else "")
        return InputError(self.path, where, problem)

    def non_negative(self, name: str, desc: dict, key: str) -> float:
        if key not in desc:
            raise self.error(name, key, f"missing '{key}' field")
        value = desc[key]
        if not _is_number(value) or not math.isfinite(value):
            raise self.error(name, key, f"{value!r} is not a number")
        if value < 0:
            raise self.error(name, key, f"{value!r} must not be negative")
        return float(value)

    def check_no_com(self, name: str, desc: dict, matrix_size: int | None) -> None:
        if "com" not in desc:
            return
        com = desc["com"]
        if matrix_size is None:
            if not _is_number(com):
                raise self.error(name, "com", f"{com!r} is not a number")
            if com != 0:
                raise self.error(name, "com", "network-dependent profiles are not supported (com must be 0)")
            return
        if not isinstance(com, list) or not all(_is_number(c) for c in com):
            raise self.error(name, "com", "must be a list of numbers (nb_res x nb_res matrix)")
        if len(com) != matrix_size * matrix_size:
            raise self.error(name, "com", f"has {len(com)} values, expected {matrix_size * matrix_size} (cpu²)")
        if any(c != 0 for c in com):
            raise self.error(name, "com", "network-dependent profiles are not supported (com must be all 0)")

    def ret(self, name: str, desc: dict) -> int:
        ret = desc.get("ret", 0)
        if not _is_int(ret):
            raise self.error(name, "ret", f"{ret!r} is not an integer")
        return ret

    def get(self, name: str, referrer: str | None = None) -> Profile:
        profile = self.done.get(name)
        if profile is not None:
            return profile
        if name in self.in_progress:
            cycle = " -> ".join(self.in_progress[self.in_progress.index(name):] + [name])
            raise self.error(name, "seq", f"composed profiles form a cycle ({cycle})")
        desc = self.raw[name]
        if not isinstance(desc, dict):
            raise self.error(name, None, "is not a JSON object")
        ptype = desc.get("type")
        if ptype is None:
            raise self.error(name, "type", "missing 'type' field")
        ret = self.ret(name, desc)
        if ptype == "delay":
            profile = DelayProfile(name, self.non_negative(name, desc, "delay"), ret)
        elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
            cpu = self.non_negative(name, desc, "cpu")
            self.check_no_com(name, desc, None)
            profile = ParallelProfile(name, ptype, cpu, None, ret)
        elif ptype == "parallel":
            cpu_list = desc.get("cpu")
            if not isinstance(cpu_list, list) or not cpu_list:
                raise self.error(name, "cpu", "must be a non-empty list of flops (one per host)")
            for v in cpu_list:
                if not _is_number(v) or not math.isfinite(v) or v < 0:
                    raise self.error(name, "cpu", f"{v!r} is not a non-negative number")
            self.check_no_com(name, desc, len(cpu_list))
            profile = ParallelProfile(name, ptype, tuple(float(v) for v in cpu_list), len(cpu_list), ret)
        elif ptype == "composed":
            repeat = desc.get("repeat", 1)
            if not _is_int(repeat) or repeat < 1:
                raise self.error(name, "repeat", f"{repeat!r} must be an integer >= 1")
            seq = desc.get("seq")
            if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
                raise self.error(name, "seq", "must be a non-empty list of profile names")
            self.in_progress.append(name)
            parts = []
            for sub in seq:
                if sub not in self.raw:
                    raise self.error(name, "seq", f"profile '{sub}' does not exist")
                parts.append(self.get(sub, name))
            self.in_progress.pop()
            profile = ComposedProfile(name, tuple(parts), repeat, ret)
        else:
            raise self.error(name, "type", f"profile type {ptype!r} is not supported "
                             "(delay, parallel_homogeneous, parallel_homogeneous_total, parallel, composed)")
        self.done[name] = profile
        return profile


def load_workload(path: str | os.PathLike, name: str = "w0") -> Workload:
    """Read a Batsim workload; raise :class:`InputError` on anything Batsim would refuse."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, "", f"cannot read workload file ({e.strerror or e})") from None
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}, column {e.colno}", f"malformed JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise InputError(path, "", f"not UTF-8 text ({e.reason})") from None
    if not isinstance(doc, dict):
        raise InputError(path, "", "the workload must be a JSON object with 'jobs' and 'profiles'")
    if "profiles" not in doc:
        raise InputError(path, "profiles", "missing 'profiles' object")
    if "jobs" not in doc:
        raise InputError(path, "jobs", "missing 'jobs' list")
    raw_profiles = doc["profiles"]
    raw_jobs = doc["jobs"]
    if not isinstance(raw_profiles, dict):
        raise InputError(path, "profiles", "must be a JSON object (name -> profile)")
    if not isinstance(raw_jobs, list):
        raise InputError(path, "jobs", "must be a JSON list")

    reader = _ProfileReader(path, raw_profiles)
    profiles = {pname: reader.get(pname) for pname in raw_profiles}

    jobs: list[Job] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw_jobs):
        job = parse_job(path, f"jobs[{index}]", entry, name, profiles)
        if job.id in seen:
            raise InputError(path, f"job '{job.id}'.id", "duplicate job id")
        seen.add(job.id)
        jobs.append(job)

    jobs.sort(key=lambda j: (j.subtime_s, j.id))
    meta = doc.get("meta")
    return Workload(path=path, name=name, jobs=jobs, profiles=profiles, profiles_json=raw_profiles,
                    meta=meta if isinstance(meta, dict) else {})


def parse_job(source: str, where: str, entry: object, workload_name: str, profiles: dict[str, Profile]) -> Job:
    """One job object of workload ``workload_name`` (a workload file's entry or a REGISTER_JOB's ``job``,
    B44): ``id`` (int or string, prefixed with ``<workload>!`` unless it already is), ``subtime``, ``res``,
    ``profile`` (one of ``profiles``), optional ``walltime``; other fields are kept in :attr:`Job.entry`.
    Raises :class:`InputError` naming ``source`` and the field (``where`` locates the object)."""
    if not isinstance(entry, dict):
        raise InputError(source, where, "a job must be a JSON object")
    if "id" not in entry:
        raise InputError(source, f"{where}.id", "missing 'id' field")
    prefix = workload_name + "!"
    raw_id = entry["id"]
    if _is_int(raw_id):
        job_id = prefix + str(raw_id)
    elif isinstance(raw_id, str) and raw_id:
        if raw_id.startswith(prefix):
            job_id = raw_id
        elif "!" in raw_id:
            raise InputError(source, f"{where}.id",
                             f"{raw_id!r}: a '!' id must start with the workload name '{prefix}'")
        else:
            job_id = prefix + raw_id
    else:
        raise InputError(source, f"{where}.id", f"{raw_id!r} must be an integer or a non-empty string")
    where = f"job '{job_id}'"
    try:
        subtime = entry["subtime"]
        res = entry["res"]
        profile = entry["profile"]
    except KeyError as e:
        raise InputError(source, f"{where}.{e.args[0]}", f"missing '{e.args[0]}' field") from None
    if not _is_number(subtime) or not math.isfinite(subtime):
        raise InputError(source, f"{where}.subtime", f"{subtime!r} is not a number")
    if subtime < 0:
        raise InputError(source, f"{where}.subtime", f"{subtime!r} must not be negative")
    if not _is_int(res):
        raise InputError(source, f"{where}.res", f"{res!r} is not an integer")
    if res < 1:
        raise InputError(source, f"{where}.res", f"{res!r}: a job needs at least 1 host")
    if not isinstance(profile, str):
        raise InputError(source, f"{where}.profile", f"{profile!r} is not a profile name")
    if profile not in profiles:
        raise InputError(source, f"{where}.profile", f"profile '{profile}' does not exist")
    walltime_s: float | None = None
    if "walltime" in entry:
        walltime = entry["walltime"]
        if not _is_number(walltime) or not math.isfinite(walltime):
            raise InputError(source, f"{where}.walltime", f"{walltime!r} is not a number")
        if walltime != -1:
            if walltime <= 0:
                raise InputError(source, f"{where}.walltime",
                                 f"{walltime!r} must be strictly positive (or -1 for none)")
            walltime_s = float(walltime)
    job_entry = dict(entry)
    job_entry["id"] = job_id  # keeps the key's position
    return Job(job_id, float(subtime), res, profile, walltime_s, job_entry)


def parse_profile(source: str, name: str, desc: object, profiles: dict[str, Profile],
                  raw_profiles: dict[str, object]) -> Profile:
    """One more profile ``name`` for a workload that already has ``profiles`` (parsed) and
    ``raw_profiles`` (as read): a REGISTER_PROFILE (B44). A composed profile may name any of them.
    Raises :class:`InputError` naming ``source`` and the field."""
    reader = _ProfileReader(source, {**raw_profiles, name: desc})
    reader.done.update(profiles)
    return reader.get(name)

