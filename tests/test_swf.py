"""SWF → Batsim JSON conversion (workloads/swf.py) on the hand-written tests/fixtures/swf/tiny.swf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.cli import main
from wattsched.workloads.swf import read_swf, swf_to_batsim
from wattsched.base.errors import InputError, OptionError

TINY = Path(__file__).resolve().parent / "fixtures" / "swf" / "tiny.swf"
SPEED = 100e6
GOOD = "  1  100  5  60  2 -1 -1  2  120 -1  1  3  1 -1  1 -1 -1 -1\n"


def _by_id(workload: dict) -> dict[int, dict]:
    return {job["id"]: job for job in workload["jobs"]}


def test_read_swf_skips_comments() -> None:
    records = read_swf(TINY)
    assert [int(r["job_number"]) for r in records] == list(range(1, 9))
    assert records[0]["line"] == 7
    assert records[1]["allocated_processors"] == -1


def test_field_mapping_and_profiles() -> None:
    workload = swf_to_batsim(TINY, speed_flops=SPEED, too_large="keep")
    jobs = _by_id(workload)
    assert sorted(jobs) == [1, 2, 6, 7, 8]
    assert jobs[1] == {"id": 1, "subtime": 0, "res": 2, "profile": "c6000000000", "walltime": 120, "user": 3,
                       "group": 1}
    assert jobs[6]["subtime"] == 80 and jobs[6]["res"] == 16
    assert workload["nb_res"] == 8  # the header's MaxProcs when nb_hosts is not given
    assert workload["meta"]["kept"] == {"too_large": 1}
    assert workload["profiles"]["c6000000000"] == {"type": "parallel_homogeneous", "cpu": 6e9, "com": 0}
    # jobs 1, 7 and 8 all ran 60 s: one shared profile
    assert jobs[1]["profile"] == jobs[7]["profile"] == jobs[8]["profile"]
    assert [j["subtime"] for j in workload["jobs"]] == sorted(j["subtime"] for j in workload["jobs"])


def test_requested_processors_and_walltime_clamp() -> None:
    job = _by_id(swf_to_batsim(TINY, speed_flops=SPEED))[2]
    assert job["res"] == 4  # field 5 is -1: requested processors
    assert job["walltime"] == 100
    assert job["profile"] == "c10000000000"  # runtime 200 s clamped to the 100 s walltime


def test_no_walltime_and_unknown_user() -> None:
    job = _by_id(swf_to_batsim(TINY, speed_flops=SPEED, walltime_rule="none"))[7]
    assert "walltime" not in job
    assert job["user"] == -1


def test_filters_are_counted() -> None:
    workload = swf_to_batsim(TINY, speed_flops=SPEED, nb_hosts=8)
    assert sorted(_by_id(workload)) == [1, 2, 7, 8]
    assert workload["nb_res"] == 8
    meta = workload["meta"]
    assert meta["filtered"] == {"cancelled": 1, "no_runtime": 1, "no_processors": 1, "too_large": 1}
    assert meta["nb_clamped_to_walltime"] == 1
    assert meta["nb_lines"] == 8 and meta["nb_jobs"] == 4


def test_window_max_jobs_and_procs_per_host() -> None:
    workload = swf_to_batsim(TINY, speed_flops=SPEED, start_time_s=120, duration_s=100, nb_hosts=16)
    assert sorted(_by_id(workload)) == [2, 6, 7]
    assert _by_id(workload)[2]["subtime"] == 10  # relative to start_time_s
    assert workload["meta"]["filtered"]["outside_window"] == 2
    assert sorted(_by_id(swf_to_batsim(TINY, speed_flops=SPEED, max_jobs=2))) == [1, 2]
    jobs = _by_id(swf_to_batsim(TINY, speed_flops=SPEED, procs_per_host=4, nb_hosts=4))
    assert (jobs[1]["res"], jobs[2]["res"], jobs[6]["res"], jobs[8]["res"]) == (1, 1, 4, 1)


def test_speed_scales_work() -> None:
    workload = swf_to_batsim(TINY, speed_flops=1e9)
    assert workload["profiles"][_by_id(workload)[1]["profile"]]["cpu"] == 60e9


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("  1 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1\n", r"bad\.swf: line 2: expected 18 fields, found 17"),
        (
            "  1 100 5 6x 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n",
            r"bad\.swf: line 2, field 'run_time': '6x' is not a number",
        ),
        ("  1 100 5 60 2 -1 -1 2 nan -1 1 3 1 -1 1 -1 -1 -1\n", r"line 2, field 'requested_time'"),
        # a field of thousands of digits is cut in the message (it was quoted whole)
        ("  1 100 5 " + "9" * 5000 + " 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n",
         r"line 2, field 'run_time': '9{37}'\.\.\. \(5000 characters\) is beyond the range of a double$"),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("; header\n" + line)
    with pytest.raises(InputError, match=message):
        swf_to_batsim(bad, speed_flops=SPEED)


def test_duplicate_job_number(tmp_path: Path) -> None:
    bad = tmp_path / "dup.swf"
    bad.write_text(GOOD + GOOD)
    with pytest.raises(InputError, match="line 2, field 'job_number': job number 1 already used on line 1"):
        swf_to_batsim(bad, speed_flops=SPEED)


def test_unreadable_header_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A header MaxProcs that is not a number is refused when the machine size comes from it (not guessed from
    the widest job), and ignored when the size is given."""
    bad = tmp_path / "bad-header.swf"
    bad.write_text("; MaxProcs: abc\n" + GOOD)
    with pytest.raises(InputError, match="header MaxProcs: 'abc' is not a number of processors .*--hosts"):
        swf_to_batsim(bad, speed_flops=SPEED)
    assert swf_to_batsim(bad, speed_flops=SPEED, nb_hosts=8)["nb_res"] == 8
    out = tmp_path / "w.json"
    assert main(["swf", str(bad), "--output", str(out)]) == 2
    assert "bad-header.swf: header MaxProcs" in capsys.readouterr().err and not out.exists()


def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        swf_to_batsim(tmp_path / "none.swf", speed_flops=SPEED)
    with pytest.raises(OptionError):
        swf_to_batsim(TINY, speed_flops=0)
    with pytest.raises(OptionError):
        swf_to_batsim(TINY, speed_flops=SPEED, nb_hosts=0)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    assert main(["swf", str(TINY), "--output", str(out), "--speed", "100e6", "--hosts", "8"]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(swf_to_batsim(TINY, speed_flops=SPEED, nb_hosts=8)))
    assert main(["swf", str(tmp_path / "missing.swf")]) == 2
    assert "missing.swf" in capsys.readouterr().err
