"""Load a Batsim JSON workload (jobs + profiles) the way Batsim 4.2.1 does.

Rules reproduced from real Batsim (``tests/fixtures/batsim-reference/README.md``):

* job ids become ``"<workload>!<id>"`` (behaviour 6); the ``job`` object of JOB_SUBMITTED is the workload
  entry with ``id`` rewritten to that string (:attr:`Job.entry`), every other field kept as written;
* jobs are submitted in (subtime, id string) order (behaviour 10): :attr:`Workload.jobs` is sorted so;
* ``walltime`` absent or ``-1`` means no walltime; otherwise it must be strictly positive;
* SIMULATION_BEGINS.profiles carries the profiles as parsed from the file (:attr:`Workload.profiles_json`):
  the recordings show every number with the type it has in the file (``"cpu": 0`` stays an int,
  ``"cpu": 1e10`` becomes ``10000000000.0`` because JSON parsers read it as a double).

Every input passes :mod:`wattsched.base.validate` first: JSON nesting and numbers (finite doubles), ids
and profile names Batsim's CSV files can carry, the number of jobs, the depth of composed profiles and the
number of atomic parts a job runs (a ``repeat`` of 10^12 is refused before anything is expanded), bounded
as :mod:`wattsched.base.limits` says.

Only network-free profiles are supported: ``delay``, ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel`` (with an all-zero ``com`` matrix) and ``composed``.
A job asking more hosts than the platform has is *not* an error here: Batsim submits it and the
scheduler must reject it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any, Mapping, MutableMapping, Union

from wattsched.base.errors import InputError, counted
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import CSV_UNSAFE, check_count, check_csv_name, check_memory, check_number, load_json

__all__ = [
    "DelayProfile", "ParallelProfile", "ComposedProfile", "Profile", "Job", "Workload", "load_workload",
    "load_workload_document", "parse_job", "parse_profile", "is_json_number", "is_json_int",
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
    allocation must have exactly ``nb_res`` hosts). ``source``: the workload file it was read from (named
    when a job runs it on another number of hosts; not part of the profile's value).
    """

    name: str
    kind: str
    cpu: float | tuple[float, ...]
    nb_res: int | None = None
    ret: int = 0
    source: str = field(default="", compare=False, repr=False)

    def flops_per_host(self, nb_hosts: int) -> tuple[float, ...]:
        """Flops each of the ``nb_hosts`` allocated hosts computes (behaviour 19)."""
        if nb_hosts < 1:
            raise ValueError(f"profile '{self.name}': a task needs at least one host, got {nb_hosts}")
        cpu = self.cpu
        if not isinstance(cpu, tuple):  # the two homogeneous kinds
            if self.kind == "parallel_homogeneous_total":
                return (float(cpu) / nb_hosts,) * nb_hosts
            return (float(cpu),) * nb_hosts
        if nb_hosts != len(cpu):  # Batsim fails the same way when the task starts (generate_parallel_task)
            where = f"{self.source}: " if self.source else ""
            raise ValueError(
                f"{where}profile '{self.name}' (parallel) has {counted(len(cpu), 'cpu value')}: it runs on exactly "
                f"{counted(len(cpu), 'host')}, not on the {nb_hosts} of the job's res (real Batsim stops there too)"
            )
        return cpu


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
_NUMBER_TYPES = (int, float)


def is_json_number(value: object) -> bool:
    """A JSON number as rapidjson's ``IsNumber`` reads one: not a bool, not a numeric string."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_json_int(value: object) -> bool:
    """A JSON integer (``IsInt``/``IsInt64``): not a bool, not a float."""
    return isinstance(value, int) and not isinstance(value, bool)


class _ProfileReader:
    def __init__(self, path: str, raw: Mapping[str, object]) -> None:
        self.path = path
        self.raw = raw
        self.done: MutableMapping[str, Profile] = {}
        self.in_progress: list[str] = []
        self.parts: dict[str, int] = {}  # atomic parts a job with this profile runs
        self.depths: dict[str, int] = {}  # composed levels above its atomic parts

    def error(self, name: str, fieldname: str | None, problem: str) -> InputError:
        where = f"profile '{name}'" + (f".{fieldname}" if fieldname else "")
        return InputError(self.path, where, problem)

    def non_negative(self, name: str, desc: dict, key: str) -> float:
        if key not in desc:
            raise self.error(name, key, f"missing '{key}' field")
        return check_number(desc[key], self.path, f"profile '{name}'.{key}", min=0.0)

    def check_no_com(self, name: str, desc: dict, matrix_size: int | None) -> None:
        if "com" not in desc:
            return
        com = desc["com"]
        if matrix_size is None:
            check_number(com, self.path, f"profile '{name}'.com")
            if com != 0:
                raise self.error(name, "com", "network-dependent profiles are not supported (com must be 0)")
            return
        if not isinstance(com, list) or not all(is_json_number(c) and math.isfinite(c) for c in com):
            raise self.error(name, "com", "must be a list of numbers (nb_res x nb_res matrix)")
        if len(com) != matrix_size * matrix_size:
            raise self.error(name, "com", f"has {len(com)} values, expected {matrix_size * matrix_size} (cpu²)")
        if any(c != 0 for c in com):
            raise self.error(name, "com", "network-dependent profiles are not supported (com must be all 0)")

    def ret(self, name: str, desc: dict) -> int:
        ret = desc.get("ret", 0)
        if not is_json_int(ret):
            raise self.error(name, "ret", f"{ret!r} is not an integer")
        if ret <= -2:
            # Batsim 4.2.1 (jobs_execution.cpp, execute_job_process) maps a job's return code to its
            # state: 0 success, > 0 failed, -1 walltime reached, -2 killed (then no JOB_COMPLETED is
            # ever sent: the simulation cannot end), anything else aborts ("unknown return code")
            raise self.error(name, "ret", f"{ret} is not supported (Batsim: -1 means walltime reached, -2 and "
                                          "below make it hang or abort); use 0, a positive code or -1")
        if ret > 2**31 - 1:  # profiles.cpp reads it with rapidjson's GetInt (a 32-bit int: an assertion fails)
            raise self.error(name, "ret", f"{ret} is above 2147483647 (Batsim reads a 32-bit integer)")
        return ret

    def measure(self, profile: Profile) -> tuple[int, int]:
        """(atomic parts a job runs, composed levels) of a profile read before (bounded already)."""
        known = self.parts.get(profile.name)
        if known is not None:
            return known, self.depths[profile.name]
        if isinstance(profile, ComposedProfile):
            subs = [self.measure(p) for p in profile.seq]
            result = (profile.repeat * sum(n for n, _ in subs), 1 + max(d for _, d in subs))
        else:
            result = (1, 0)
        self.parts[profile.name], self.depths[profile.name] = result
        return result

    def get(self, name: str, referrer: str | None = None) -> Profile:
        profile = self.done.get(name)
        if profile is not None:
            return profile
        if name in self.in_progress:
            cycle = " -> ".join(self.in_progress[self.in_progress.index(name):] + [name])
            raise self.error(name, "seq", f"composed profiles form a cycle ({cycle})")
        check_csv_name(name, self.path, f"profile '{name}'", "profile name")
        desc = self.raw[name]
        if not isinstance(desc, dict):
            raise self.error(name, None, "is not a JSON object")
        ptype = desc.get("type")
        if ptype is None:
            raise self.error(name, "type", "missing 'type' field")
        ret = self.ret(name, desc)
        if ptype == "delay":
            delay_s = self.non_negative(name, desc, "delay")
            if delay_s == 0.0:  # Batsim 4.2.1 aborts (profiles.cpp): "non-strictly-positive 'delay' field"
                raise self.error(name, "delay", "0 must be positive (Batsim refuses a delay of 0 s)")
            profile = DelayProfile(name, delay_s, ret)
        elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
            cpu = self.non_negative(name, desc, "cpu")
            self.check_no_com(name, desc, None)
            profile = ParallelProfile(name, ptype, cpu, None, ret, self.path)
        elif ptype == "parallel":
            cpu_list = desc.get("cpu")
            if not isinstance(cpu_list, list) or not cpu_list:
                raise self.error(name, "cpu", "must be a non-empty list of flops (one per host)")
            check_count(len(cpu_list), "hosts", self.path, f"profile '{name}'.cpu", "hosts")
            for v in cpu_list:
                check_number(v, self.path, f"profile '{name}'.cpu", min=0.0)
            self.check_no_com(name, desc, len(cpu_list))
            profile = ParallelProfile(name, ptype, tuple(float(v) for v in cpu_list), len(cpu_list), ret, self.path)
        elif ptype == "composed":
            repeat = desc.get("repeat", 1)
            if not is_json_int(repeat) or repeat < 1:
                raise self.error(name, "repeat", f"{repeat!r} must be an integer >= 1")
            seq = desc.get("seq")
            if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
                raise self.error(name, "seq", "must be a non-empty list of profile names")
            if len(self.in_progress) >= limit("profile_depth"):
                raise self.error(name, "seq", "composed profiles nested too deeply; "
                                 f"{limit_hint('profile_depth', 'levels')}")
            self.in_progress.append(name)
            parts = []
            for sub in seq:
                if sub not in self.raw:
                    raise self.error(name, "seq", f"profile '{sub}' does not exist")
                parts.append(self.get(sub, name))
            self.in_progress.pop()
            measures = [self.measure(p) for p in parts]
            depth = 1 + max(d for _, d in measures)
            if depth > limit("profile_depth"):
                raise self.error(name, "seq", "composed profiles nested too deeply; "
                                 f"{limit_hint('profile_depth', 'levels')}")
            self.depths[name] = depth
            nb_parts = repeat * sum(n for n, _ in measures)
            check_count(nb_parts, "profile_parts", self.path, f"profile '{name}'.repeat",
                        "atomic parts per job (repeat × the parts of seq)")
            self.parts[name] = nb_parts
            profile = ComposedProfile(name, tuple(parts), repeat, ret)
        else:
            raise self.error(name, "type", f"profile type {ptype!r} is not supported "
                             "(delay, parallel_homogeneous, parallel_homogeneous_total, parallel, composed)")
        self.parts.setdefault(name, 1)
        self.depths.setdefault(name, 0)
        self.done[name] = profile
        return profile


#: Memory a parsed workload takes per byte of its JSON file (Python objects), for :func:`check_memory`.
_JSON_BYTES_PER_FILE_BYTE = 12


def load_workload(path: str | os.PathLike, name: str = "w0") -> Workload:
    """Read a Batsim workload; raise :class:`InputError` on anything Batsim would refuse."""
    return load_workload_document(path, name)[0]


def load_workload_document(path: str | os.PathLike, name: str = "w0") -> tuple[Workload, dict[str, Any]]:
    """:func:`load_workload`, and the JSON document it read (untouched: jobs and profiles as in the file), for
    a tool that checks a workload as ``wattsched run`` does and then rewrites it (``wattsched beta``): the
    file is read and parsed once.

    Raises:
        InputError: anything Batsim would refuse, naming the file and the field.
    """
    path = os.fspath(path)
    try:
        require_regular_file(path)
        check_memory(os.path.getsize(path) * _JSON_BYTES_PER_FILE_BYTE, path, "", "reading this workload")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, "", f"cannot read workload file ({e.strerror or e})") from None
    doc = load_json(data, path, unique_keys=True)
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

    check_count(len(raw_jobs), "jobs", path, "jobs", "jobs")
    reader = _ProfileReader(path, raw_profiles)
    profiles = {pname: reader.get(pname) for pname in raw_profiles}

    jobs: list[Job] = []
    seen: set[str] = set()
    max_time_s, max_hosts = limit("time_s"), limit("hosts")
    for index, entry in enumerate(raw_jobs):
        job = parse_job(path, f"jobs[{index}]", entry, name, profiles, max_time_s=max_time_s, max_hosts=max_hosts)
        if job.id in seen:
            raise InputError(path, f"job '{job.id}'.id", "duplicate job id")
        seen.add(job.id)
        jobs.append(job)

    # Batsim's loader refuses a workload without it: present, a JSON integer, positive (it is read, and used
    # only by --mmax-workload); checked here after the jobs, whose errors say more
    if "nb_res" not in doc:
        raise InputError(path, "nb_res", "missing: Batsim needs the workload's number of resources")
    nb_res = doc["nb_res"]
    if type(nb_res) is not int or not 0 < nb_res < 2 ** 31:
        raise InputError(path, "nb_res", f"must be a positive integer, got {json.dumps(nb_res)}")

    jobs.sort(key=lambda j: (j.subtime_s, j.id))
    meta = doc.get("meta")
    workload = Workload(path=path, name=name, jobs=jobs, profiles=profiles, profiles_json=raw_profiles,
                        meta=meta if isinstance(meta, dict) else {})
    return workload, doc


def parse_job(source: str, where: str, entry: object, workload_name: str, profiles: dict[str, Profile], *,
              max_time_s: float | None = None, max_hosts: float | None = None, registered: bool = False) -> Job:
    """One job object of workload ``workload_name`` (a workload file's entry or a REGISTER_JOB's ``job``,
    B44): ``id`` (int or string, prefixed with ``<workload>!`` unless it already is), ``subtime``, ``res``,
    ``profile`` (one of ``profiles``), optional ``walltime``; other fields are kept in :attr:`Job.entry`.
    ``max_time_s`` and ``max_hosts`` are the bounds ``time_s`` and ``hosts`` (:mod:`wattsched.base.limits`,
    read when not given). ``registered``: a REGISTER_JOB's job (a negative ``subtime`` and ``res`` 0 pass, as in
    Batsim). Raises :class:`InputError` naming ``source`` and the field (``where`` locates the
    object)."""
    if max_time_s is None or max_hosts is None:
        max_time_s, max_hosts = limit("time_s"), limit("hosts")
    if not isinstance(entry, dict):
        raise InputError(source, where, "a job must be a JSON object")
    if "id" not in entry:
        raise InputError(source, f"{where}.id", "missing 'id' field")
    prefix = workload_name + "!"
    raw_id = entry["id"]
    if is_json_int(raw_id) and -2**31 <= raw_id < 2**31:  # rapidjson IsInt
        text = str(raw_id)
    elif isinstance(raw_id, str) and raw_id:
        text = raw_id
    else:
        raise InputError(source, f"{where}.id", f"{raw_id!r} must be a 32-bit integer or a non-empty string")
    # Batsim's Job::from_json: an id holding the workload name anywhere is read as '<workload>!<name>'
    # (JobIdentifier: split at runs of '!', exactly two parts), any other is prefixed (and must hold no '!')
    if workload_name not in text:
        if "!" in text:
            raise InputError(source, f"{where}.id",
                             f"{raw_id!r}: a '!' id must start with the workload name '{prefix}'")
        job_id = prefix + text
    else:
        parts = re.split("!+", text)
        if len(parts) != 2 or parts[0] != workload_name:
            raise InputError(source, f"{where}.id", f"{raw_id!r} holds the workload name '{workload_name}': "
                             f"Batsim reads it as '<workload>!<name>' and aborts unless it is '{prefix}<name>'")
        if not parts[1]:  # Batsim takes it, and writes an empty job_id in its CSV files
            raise InputError(source, f"{where}.id", f"{raw_id!r} names no job after '{prefix}' (an empty job id)")
        job_id = prefix + parts[1]
    if not CSV_UNSAFE.isdisjoint(job_id):
        check_csv_name(job_id, source, f"{where}.id", "job id")
    where = f"job '{job_id}'"
    try:
        subtime = entry["subtime"]
        res = entry["res"]
        profile = entry["profile"]
    except KeyError as e:
        raise InputError(source, f"{where}.{e.args[0]}", f"missing '{e.args[0]}' field") from None
    low = -max_time_s if registered else 0.0  # REGISTER_JOB: Batsim only wants a number (B44)
    if not (type(subtime) in _NUMBER_TYPES and low <= subtime <= max_time_s):  # the common case stays cheap
        check_number(subtime, source, f"{where}.subtime", min=low, max=max_time_s)
    if not is_json_int(res):
        raise InputError(source, f"{where}.res", f"{res!r} is not an integer")
    if res < (0 if registered else 1):  # Batsim: res >= 0 (a registered res-0 job can only be rejected)
        raise InputError(source, f"{where}.res", f"{res!r}: a job needs at least {0 if registered else 1} host")
    if res > max_hosts:
        check_count(res, "hosts", source, f"{where}.res", "hosts requested")
    if not isinstance(profile, str):
        raise InputError(source, f"{where}.profile", f"{profile!r} is not a profile name")
    if profile not in profiles:
        raise InputError(source, f"{where}.profile", f"profile '{profile}' does not exist")
    walltime_s: float | None = None
    if "walltime" in entry:
        walltime = entry["walltime"]
        if not (type(walltime) in _NUMBER_TYPES and walltime <= max_time_s):
            check_number(walltime, source, f"{where}.walltime", max=max_time_s)
        if walltime != -1:
            if walltime <= 0:
                raise InputError(source, f"{where}.walltime",
                                 f"{walltime!r} must be strictly positive (or -1 for none)")
            walltime_s = float(walltime)
    mapping = entry.get("smpi_ranks_to_hosts_mapping")
    if "smpi_ranks_to_hosts_mapping" in entry and not (
            isinstance(mapping, list) and all(is_json_int(h) and 0 <= h < res for h in mapping)):
        raise InputError(source, f"{where}.smpi_ranks_to_hosts_mapping",  # Batsim's Job::from_json aborts
                         f"{mapping!r} must be a list of integers in [0, {res})")
    job_entry = dict(entry)
    job_entry["id"] = job_id  # keeps the key's position
    return Job(job_id, float(subtime), res, profile, walltime_s, job_entry)


def parse_profile(source: str, name: str, desc: object, profiles: dict[str, Profile],
                  raw_profiles: dict[str, object]) -> Profile:
    """One more profile ``name`` for a workload that already has ``profiles`` (parsed) and
    ``raw_profiles`` (as read): a REGISTER_PROFILE (B44). A composed profile may name any of them.
    Raises :class:`InputError` naming ``source`` and the field. Neither mapping is copied (each dynamic job
    registers one: copies made a run quadratic in its jobs); the reader's new entries go to maps of its own."""
    reader = _ProfileReader(source, ChainMap({name: desc}, raw_profiles))
    reader.done = ChainMap({}, profiles)
    return reader.get(name)

