"""Bad inputs hunt 25: the policies' own options and the inputs they read (UPAS, ESC, fair share, EAMC, energy
budgets).

* before: ESC's ``groups`` accepted a group that no entry of ``user_groups`` puts a user in. It applied to no job,
  yet its rule 5 (the mean wait of a group without queued jobs is 0, below any ``lower_wait_s``) switched an idle
  node off at every pass: ``esc -o '{"idle_s": 1e300, "groups": {"ghost": {"lower_wait_s": 100}}}'`` on
  ``esc_57.xml`` and ``demo_taurus16.json`` wrote 820 lines of ``out_pstate_changes.csv`` where the same options
  without the group wrote 2 (79.6 MJ against 742 MJ). Now refused: ``option 'groups': group 'ghost' has no user``.
* before: ESC's ``user_groups`` with a number as a group (``{"u": 1}`` for the group ``"1"``, JSON keys being
  strings) said ``user 'u' is in group 1, which is not defined (groups: 1, default; ...)``, listing the group it
  said was missing. Now ``which is not a group name: a group is named by a string ("1")``.
* before: an EAMC ``ear_model`` whose values make the EPM's scores overflow stopped or spoiled the run: an
  application's ``T_ref`` of 1e-160 s on one module (53 s on the other) stopped it with an ``OverflowError``
  traceback in eq. 5 (exit 1); ``T_ref`` and ``P_ref`` of 1e-300 (energies of 0 J after underflow) likewise, or,
  with ``"epm": "plugin"``, printed numpy's "divide by zero" warnings and ran; ``CPI_ref`` and ``TPI_ref`` of
  1e300 printed "overflow encountered in square" and ran with every eq. 4 score infinite (all frequencies tied).
  Now one line naming the model folder, the application and the partition(s), no output written.

Checked and found clean (earlier hunts or the options' own checks): UPAS ``u_lower`` > ``u_upper`` and ``f_lower_ghz``
> ``f_upper_ghz`` (refused as reversed), a frequency no gear of the platform has, ``interval_s`` 0 or 1e-300,
``wq_threshold`` -1, a platform without ``frequency_ghz_per_state``, hosts with one pstate (f_upper = f_lower =
the top gear runs; any other gear is refused); ESC ``min_on`` above the hosts, ``lower_wait_s`` above
``upper_wait_s`` (top level and per group), a group in ``user_groups`` that ``groups`` lacks, ``groups.default``
against a top-level threshold, a platform without sleep states, ``sleep_pstate`` that is not the sleep pstate; fair
share: shares negative, 0, NaN (not JSON), a string, true, beyond 1e100, ``default_share`` 0, ``half_life_s`` 0,
``damping`` 0 or negative; EAMC: empty ``apps``, ``modules`` or cube files, NaN or inf coefficients and signatures,
an announced count of applications the file does not describe, an application or partition a job names that the
model or platform lacks, a job wider than its partitions, ``t_weight`` 0 (refused) and 1e6 or 1e-300 (run);
budgets: ``budget_j`` with ``budget_fraction``, ``window_end_s`` before ``window_start_s``, ``monitoring_period_s``
below 1 s, a budget below the idle estimate, ``sleep_pstate`` without shutdown or not the sleep pstate.

Noticed and left (see the hunt's report): a fair-share order on a workload without any ``user`` field is FIFO (one
anonymous account: documented in :mod:`wattsched.schedulers.fairshare`; the golden ``fairshare`` runs on such a
workload); ``frequency: eamc`` (and ``min-runtime``, ``min-energy``) composed on a platform without EAR modules
runs every job at the top frequency without a word (the EAMC presets on such a platform warn through their
placement, as hunt tests expect, and refusing the piece would refuse them too); a budget window that starts after
the run ends, or budget options without a budget (``window_*_s`` are also what ``run`` measures its window on),
have no effect; powercap takes ``monitoring_period_s`` and ignores it (the experiments pass it to every budget
preset); ``estimated_comp_w`` below ``estimated_idle_w`` is planned with (the budget's fast path is off when
not monotone); a huge ``interval_s`` (UPAS) or ``monitoring_period_s`` means "never" as other periods do. (A
refused ``upas`` run printed the "dynamic jobs enabled" warning before its error line: fixed since, see hunt 27.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused
from wattsched.energy_models.ear import DATA_DIR

SMALL = REFERENCE / "shutdown-boot"  # 4 hosts with sleep states, 5 jobs
EAMC = Path(__file__).parent / "fixtures" / "eamc"  # 8 + 8 hosts of p1/p2, 80 jobs (the first one of application 6)


def run_refused(capsys, tmp_path: Path, platform: Path, workload: Path, scheduler: str, options: dict,
                *needles: str) -> str:
    """``wattsched run`` refused on one line, nothing written."""
    out = tmp_path / "out"
    line = refused(capsys, ["run", str(platform), str(workload), "-s", scheduler, "-o", json.dumps(options),
                            "-e", str(out / "r"), "-q"], *needles)
    assert not out.exists()
    return line


# ------------------------------------------------------------------------------------------------ 1. ESC
@pytest.mark.parametrize("options", [
    {"groups": {"ghost": {"lower_wait_s": 100}}},
    {"groups": {"ghost": {}}, "idle_s": 600},
    {"groups": {"physics": {"upper_wait_s": 60}, "ghost": {"max_queued": 2}}, "user_groups": {"ann": "physics"}},
])
def test_an_esc_group_no_user_is_in_is_refused(capsys, tmp_path, options):
    """It applied to no job, and with a lower_wait_s switched a node off at every pass."""
    run_refused(capsys, tmp_path, SMALL / "platform.xml", SMALL / "workload.json", "esc", options,
                "option 'groups': group 'ghost' has no user", "'user_groups'")


def test_esc_groups_with_users_and_the_default_group_alone_still_run(tmp_path):
    from wattsched.cli import main

    for k, options in enumerate([{"groups": {"g": {"lower_wait_s": 100}}, "user_groups": {"ann": "g"}},
                                 {"groups": {"default": {"upper_wait_s": 100}}}]):
        argv = ["run", str(SMALL / "platform.xml"), str(SMALL / "workload.json"), "-s", "esc", "-o",
                json.dumps(options), "-e", str(tmp_path / f"o{k}" / "r"), "-q"]
        assert main(argv) == 0


@pytest.mark.parametrize("group, shown", [(1, '("1")'), (2.5, '("2.5")'), (None, "")])
def test_an_esc_user_in_a_group_that_is_not_a_name_is_told_so(capsys, tmp_path, group, shown):
    """It said "user 'ann' is in group 1, which is not defined (groups: 1, default; ...)"."""
    options = {"groups": {"1": {"upper_wait_s": 60}}, "user_groups": {"ann": group}}
    line = run_refused(capsys, tmp_path, SMALL / "platform.xml", SMALL / "workload.json", "esc", options,
                       "option 'user_groups': user 'ann' is in group", "which is not a group name", shown)
    assert "not defined" not in line


# ----------------------------------------------------------------------------------------------- 2. EAMC
def ear_model(tmp_path: Path, app6_module0: str) -> Path:
    """The shipped EAR model with application 6's signature on module 0 (p1) replaced by ``app6_module0``
    (``T_ref P_ref CPI_ref TPI_ref``)."""
    folder = tmp_path / "ear"
    shutil.copytree(DATA_DIR, folder)
    lines = (folder / "apps").read_text().splitlines()
    lines = [f"6 0 4 {app6_module0}" if line.startswith("6 0 ") else line for line in lines]
    (folder / "apps").write_text("\n".join(lines) + "\n")
    return folder


EQ4 = "on partition 'p1': eq. 4 cannot compare its frequencies"


@pytest.mark.parametrize("scheduler, options, signature, needle", [
    # an OverflowError traceback (eq. 5's squares; the plugin's sums of these ratios stay finite: it runs)
    ("eamc-reorder", {}, "1e-160 300 0.99 20.9", "on partitions p1, p2: eq. 5 cannot rank them"),
    # energies of 0 J after underflow: a ZeroDivisionError, then an OverflowError traceback
    ("eamc-reorder", {}, "1e-300 1e-300 0.99 20.9", EQ4),
    ("eamc-priority-inc", {"epm": "plugin"}, "1e-300 1e-300 0.99 20.9", EQ4),
    # numpy's "RuntimeWarning: overflow encountered in square", and a run with every eq. 4 score infinite
    ("eamc-reorder", {}, "50 300 1e300 1e300", EQ4),
    ("min-runtime", {"epm": "plugin"}, "50 300 1e300 1e300", EQ4),
])
def test_an_ear_model_whose_scores_overflow_is_refused_on_one_line(capsys, tmp_path, scheduler, options, signature,
                                                                   needle):
    folder = ear_model(tmp_path, signature)
    run_refused(capsys, tmp_path, EAMC / "platform.xml", EAMC / "workload.json", scheduler,
                {**options, "ear_model": str(folder)}, f"{folder}: application 6: ", needle, "'apps'")
