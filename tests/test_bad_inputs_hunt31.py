"""Bad inputs hunt 31: platforms and workloads given to ``wattsched run``.

* before: a job id ``"w0!"`` (or ``"w0!!"``), which Batsim reads as workload ``w0`` and an empty job name, was taken:
  the run simulated, wrote its five outputs with an empty ``job_id``, then stopped on its own jobs file (``o_jobs.csv:
  line 2, column 'job_id': empty``), the outputs left beside the error. Now refused before the simulation, naming the
  workload and ``jobs[0].id``.
* before: a compute task whose time is beyond a double (``cpu`` 1e308 on a host of ``0.5f``; 1e9 flops on a host of
  ``1e-320f``, a subnormal speed SimGrid reads) gave a ``ZeroDivisionError`` traceback (its rate underflowed to 0), or
  numpy's "overflow encountered in divide" warnings and then a run ending at t=+inf whose outputs held ``inf`` and
  ``nan`` (refused when read back, after being written); on hosts of two speeds the loads were NaN even when the
  job's walltime cut it. A switch through a transition pstate of ``1e-320f`` reached t=+inf too, then gave an
  ``OverflowError`` traceback while writing. Now a task cut by its walltime (or a DVFS change) runs with finite loads
  and energies, and a task or switch that would end at t=+inf is refused in one line naming the platform's host
  and speed (the job and its profile), no output written.
* before: an attribute SimGrid's DTD does not give an element read here (``<host pstat="1">`` for ``pstate``,
  ``<cluster pstate="...">``, ``<prop valeu=...>``, ``<zone foo=...>``, ``<platform x=...>``) was ignored, the host
  left at its default, while SimGrid refuses the file ("Bad attribute `pstat' in `host' element start tag."); a
  ``<prop>`` holding elements (EMPTY in the DTD) was taken with its content ignored. Both refused now.

Checked and found clean (earlier hunts have them): jobs of res 0 or wider than the platform, duplicate ids (also
``1`` beside ``"1"`` or ``"w0!1"``), ids with commas, quotes, line breaks or a NUL, subtimes NaN/negative/huge/as
strings, walltimes 0/negative/-1/null, ``nb_res`` missing, 0, a float, a string; every profile type Batsim 4 knows
(unsupported ones named), delay 0, ``com`` of the wrong size, composed cycles, unknown parts, ``repeat`` of 1e12;
platform versions, speeds ``1e400f``/empty/negative/``1 Gf``/hex, ``wattage_per_state`` and ``sleep_pstates``
against the pstates, duplicate hosts, masters, routings, XXE, billion laughs, zones 5,000 deep, UTF-16.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused
from wattsched.cli import main

MASTER = '<host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:100"/></host>'
SLEEPY = '100Mf, 1e-9Mf, 0.1f, 0.01f'


def _host(name: str, speed: str, attrs: str = "", props: str = "") -> str:
    pstates = len(speed.split(","))
    watts = ", ".join(["95:190"] + ["9:9"] * (pstates - 1))
    sleep = '<prop id="sleep_pstates" value="1:2:3"/>' if pstates == 4 else ""
    return f'<host id="{name}" speed="{speed}"{attrs}><prop id="wattage_per_state" value="{watts}"/>{sleep}{props}</host>'


def _platform(tmp_path: Path, body: str, zone_attrs: str = "", platform_attrs: str = "") -> Path:
    path = tmp_path / "p.xml"
    path.write_text(f'<?xml version="1.0"?>\n<platform version="4.1"{platform_attrs}>\n'
                    f'<zone id="AS0" routing="Full"{zone_attrs}>{body}</zone>\n</platform>\n')
    return path


def _workload(tmp_path: Path, jobs: list[dict], cpu: float = 1e9) -> Path:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 2, "jobs": jobs,
                                "profiles": {"x": {"type": "parallel_homogeneous", "cpu": cpu}}}))
    return path


def _job(**fields: object) -> dict:
    return {"id": 1, "subtime": 0, "res": 1, "profile": "x", **fields}


def _refused_writing_nothing(capsys, tmp_path: Path, platform: Path, workload: Path, *needles: str,
                             scheduler: tuple[str, ...] = ()) -> None:
    out = tmp_path / "out"
    refused(capsys, ["run", str(platform), str(workload), "-e", str(out / "o"), "-q", *scheduler], *needles)
    assert not out.exists() or not list(out.iterdir())


# ------------------------------------------------------------------------------ a job id naming no job
@pytest.mark.parametrize("job_id", ["w0!", "w0!!"])
def test_an_id_naming_no_job_after_the_workload_name_is_refused(capsys, tmp_path, job_id):
    """It ran, wrote its outputs with an empty job_id, then said 'o_jobs.csv: line 2, column 'job_id': empty'."""
    platform = _platform(tmp_path, MASTER + _host("h0", "100Mf") + _host("h1", "100Mf"))
    workload = _workload(tmp_path, [_job(id=job_id)])
    _refused_writing_nothing(capsys, tmp_path, platform, workload, "w.json: jobs[0].id", "names no job")


# ------------------------------------------------------------------------------ times beyond a double
@pytest.mark.parametrize("speeds, cpu, slowest", [
    (("0.5f", "0.5f"), 1e308, "h0"),  # 2e308 s: inf (a ZeroDivisionError-free run to t=+inf, inf and nan outputs)
    (("1f", "0.5f"), 1e308, "h1"),  # two speeds: NaN loads too
    (("1e-320f", "100Mf"), 1e9, "h0"),  # the rate underflows to 0: a ZeroDivisionError traceback
])
def test_a_task_that_would_end_at_infinity_is_refused_naming_the_host(capsys, tmp_path, speeds, cpu, slowest):
    platform = _platform(tmp_path, MASTER + _host("h0", speeds[0]) + _host("h1", speeds[1]))
    workload = _workload(tmp_path, [_job(res=2)], cpu=cpu)
    _refused_writing_nothing(capsys, tmp_path, platform, workload, f"p.xml: host '{slowest}'.speed",
                             "job w0!1's task (profile 'x' of", "w.json", "t=+inf")


@pytest.mark.parametrize("speeds, energy_j", [
    (("1f", "0.5f"), 33250.0),  # 100 s: 2 x 95 W idle + 95 W on the slowest (load 1) + 47.5 W on the other (load 0.5)
    (("1e-320f", "1e-320f"), 38000.0),  # both loaded (a rate of 0 gave a ZeroDivisionError)
])
def test_such_a_task_cut_by_its_walltime_runs_with_finite_energies(capsys, tmp_path, speeds, energy_j):
    """On hosts of two speeds the loads were NaN (numpy warnings, then 'consumed_energy: nan' refused)."""
    platform = _platform(tmp_path, MASTER + _host("h0", speeds[0]) + _host("h1", speeds[1]))
    workload = _workload(tmp_path, [_job(res=2, walltime=100)], cpu=1e308)
    out = tmp_path / "out"
    assert main(["run", str(platform), str(workload), "-e", str(out / "o"), "-q", "--json"]) == 0
    assert capsys.readouterr().err == ""
    with open(out / "o_jobs.csv", newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert float(row["consumed_energy"]) == pytest.approx(energy_j)


@pytest.mark.parametrize("virtual", [2, 3])
def test_a_switch_through_a_transition_pstate_of_subnormal_speed_is_refused(capsys, tmp_path, virtual):
    """It reached t=+inf, then gave an OverflowError traceback while writing the jobs file."""
    speeds = ["100Mf", "1e-9Mf", "0.1f", "0.01f"]
    speeds[virtual] = "1e-320f"
    speed = ", ".join(speeds)
    platform = _platform(tmp_path, MASTER + _host("h0", speed) + _host("h1", speed))
    workload = _workload(tmp_path, [_job()])
    _refused_writing_nothing(capsys, tmp_path, platform, workload, "p.xml: host 'h0'.speed", f"pstate {virtual} at",
                             "a switch through it", "t=+inf", scheduler=("-s", "energy-bud", "-o", '{"shutdown": true}'))


# ------------------------------------------------------------------------------ attributes outside the DTD
def _cluster(attrs: str = "") -> str:
    return (f'<zone id="z" routing="Full">{MASTER}</zone><cluster id="c" prefix="n" suffix="" radical="0-1" '
            f'speed="1Gf" bw="1e300Bps" lat="0"{attrs}><prop id="wattage_per_state" value="95:190"/></cluster>')


@pytest.mark.parametrize("body, zone_attrs, platform_attrs, needle", [
    (MASTER + _host("h0", SLEEPY, attrs=' pstat="0"') + _host("h1", SLEEPY), "", "", "host 'h0'.pstat"),
    (MASTER + _host("h0", SLEEPY, attrs=' cores="1"') + _host("h1", SLEEPY), "", "", "host 'h0'.cores"),
    (_cluster(' pstate="0"'), "", "", "cluster 'c'.pstate"),
    (MASTER + _host("h0", SLEEPY, props='<prop id="a" value="b" valeu="c"/>') + _host("h1", SLEEPY), "", "",
     "host 'h0'.prop 'a'.valeu"),
    (MASTER + _host("h0", SLEEPY) + _host("h1", SLEEPY), ' foo="1"', "", "<zone id='AS0'>.foo"),
    (MASTER + _host("h0", SLEEPY) + _host("h1", SLEEPY), "", ' x="1"', "platform.x"),
])
def test_an_attribute_simgrid_does_not_give_the_element_is_refused(capsys, tmp_path, body, zone_attrs,
                                                                   platform_attrs, needle):
    """A misspelt pstate left the host at pstate 0 without a word; SimGrid refuses the file ("Bad attribute")."""
    platform = _platform(tmp_path, body, zone_attrs, platform_attrs)
    workload = _workload(tmp_path, [_job()])
    _refused_writing_nothing(capsys, tmp_path, platform, workload, f"p.xml: {needle}", "unknown attribute")


def test_a_prop_holding_elements_is_refused(capsys, tmp_path):
    prop = '<prop id="a" value="b"><prop id="wattage_per_state" value="1:1"/></prop>'
    platform = _platform(tmp_path, MASTER + _host("h0", SLEEPY, props=prop) + _host("h1", SLEEPY))
    workload = _workload(tmp_path, [_job()])
    _refused_writing_nothing(capsys, tmp_path, platform, workload, "p.xml: host 'h0'.prop 'a'", "inside a <prop>")


# ------------------------------------------------------------------------------ the network and the rest of the DTD
HOSTS = MASTER + _host("h0", SLEEPY) + _host("h1", SLEEPY)
LINK = '<link id="l" bandwidth="1e300Bps" latency="0"/>'


@pytest.mark.parametrize("body, platform_head, needle, problem", [
    (HOSTS + '<link id="l" bandwith="1e300Bps"/>', "", "zone 'AS0'.<link 'l'>.bandwith", "unknown attribute of <link>"),
    (HOSTS + '<link id="l" latency="0"/>', "", "zone 'AS0'.<link 'l'>.bandwidth", "missing 'bandwidth' attribute"),
    (HOSTS + '<link id="l" bandwidth="1e300Bps" sharing_policy="shared"/>', "", "<link 'l'>.sharing_policy",
     "'shared' is not one of SHARED, SPLITDUPLEX"),
    (HOSTS + LINK + '<route src="h0" dst="h1"><link_ctn id="l" direction="up"/></route>', "",
     "<route 'h0'>.<link_ctn 'l'>.direction", "'up' is not one of UP, DOWN, NONE"),
    (HOSTS + LINK + '<route src="h0" dst="h1" symmetric="NO"><link_ctn id="l"/></route>', "",
     "<route 'h0'>.symmetric", "unknown attribute of <route>"),
    (HOSTS + LINK + '<route src="h0"><link_ctn id="l"/></route>', "", "<route 'h0'>.dst", "missing 'dst'"),
    (HOSTS + LINK + f'<route src="h0" dst="h1">{LINK}</route>', "", "<route 'h0'>.<link>",
     "<link> inside a <route> (SimGrid's DTD: a <route> holds <link_ctn>)"),
    (HOSTS + '<router id="r" coordinate="0 0 0"/>', "", "zone 'AS0'.<router 'r'>.coordinate", "unknown attribute"),
    (MASTER + _host("h0", SLEEPY, props='<disk id="d" read_bw="1e9Bps"/>') + _host("h1", SLEEPY), "",
     "host 'h0'.<disk 'd'>.write_bw", "missing 'write_bw'"),
    (HOSTS, '<config><prop id="network/model"/></config>', "platform.<config>.<prop 'network/model'>.value",
     "missing 'value'"),
    (HOSTS, '<config id="c"><link_ctn id="l"/></config>', "platform.<config 'c'>.<link_ctn>",
     "(SimGrid's DTD: a <config> holds <prop>)"),
])
def test_the_network_and_other_elements_read_by_simgrid_only_are_checked(capsys, tmp_path, body, platform_head,
                                                                          needle, problem):
    """These elements are ignored by the embedded simulator (a zero-cost network), and their attributes were not read:
    a misspelt ``bandwith``, a missing ``dst``, a ``direction="up"`` went through, while SimGrid refuses the file
    ("Bad attribute `bandwith' in `link' element start tag.", "Required attribute `dst' not set for `route'
    element.")."""
    path = _platform(tmp_path, body)
    path.write_text(path.read_text().replace('<platform version="4.1">\n', f'<platform version="4.1">{platform_head}\n'))
    workload = _workload(tmp_path, [_job()])
    _refused_writing_nothing(capsys, tmp_path, path, workload, "p.xml: ", needle, problem)


def test_the_network_written_as_simgrid_reads_it_is_taken(capsys, tmp_path):
    body = (MASTER + _host("h0", SLEEPY, props='<disk id="d" read_bw="1e9Bps" write_bw="1e9Bps"/>') + _host("h1", SLEEPY)
            + '<router id="r"/>' + LINK + '<link id="m" bandwidth="1e300Bps" sharing_policy="FATPIPE"><prop id="a" '
            'value="b"/></link><route src="h0" dst="h1" symmetrical="no"><link_ctn id="l" direction="NONE"/>'
            '<link_ctn id="m"/></route>')
    path = _platform(tmp_path, body)
    path.write_text(path.read_text().replace('<platform version="4.1">\n', '<platform version="4.1"><config id="c">'
                                             '<prop id="network/model" value="CM02"/></config>\n'))
    workload = _workload(tmp_path, [_job()])
    assert main(["run", str(path), str(workload), "-e", str(tmp_path / "out" / "o"), "-q"]) == 0
    assert capsys.readouterr().err == ""
