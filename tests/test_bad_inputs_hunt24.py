"""Bad inputs hunt 24: interruptions and leftovers; a recording's Batsim command line with flags written as docopt
also takes them.

* before: ``replay`` of a recording whose ``batsim-args.txt`` writes a flag's value in the same word, as Batsim's
  command line (docopt) takes it (``--export=out``, ``-eout``, ``--platform=platform.xml``), was refused with
  ``argument 5 '--export=out': not a Batsim flag the replay knows; known: ..., --export, ...``, the list naming the
  flag it had just refused. Now the flag is read with its value; a flag without a value written with one
  (``--energy=1``) is refused as taking none, an empty one (``--export=``) as needing one, and ``--export=out`` after
  ``-e out`` as given twice, as for the separate words.

Checked and found clean (no test added here: earlier hunts have them): ``run`` stopped by SIGINT or SIGTERM during
the simulation and while writing (exit 130, ``wattsched: interrupted``, no ``.out_*`` temporary file, no folder
made); ``sweep -j 1`` and ``-j 2`` stopped by either (exit 130, finished runs whole, the interrupted run's folder
without a file, no results table, no worker process left) and resumed (only the missing runs simulated);
``replay`` (with and without ``--keep-outputs``) and ``serve`` while it waits (its ``ipc://`` socket file removed).

Noticed and left (see the hunt's report): Ctrl-C at a terminal (SIGINT to the whole process group) on ``sweep -j 2``
or ``web`` with Dask workers running prints each worker process's ``KeyboardInterrupt`` traceback (Dask's nanny
child, outside our code; blocking SIGINT while the cluster starts does not reach the processes, Dask's IO-loop
thread has its own signal mask); a Dask worker still running a simulation when its cluster closes is killed by
the nanny after 4 s, whatever it was writing; ``web`` stopped with a run going leaves it ``failed: task
cancelled``, then the still running task may set it back to ``running`` or ``done`` (the restart marks a
``running`` one interrupted). ``run --acknowledge-dynamic-jobs`` without ``--enable-dynamic-jobs`` is accepted
and has no effect, as in Batsim 4 (``batsim.cpp`` reads both flags independently).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused
from wattsched.cli import main

RECORDING = REFERENCE / "shutdown-boot"


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    folder = tmp_path / "rec"
    shutil.copytree(RECORDING, folder)
    return folder


# ------------------------------------------------------------------------------ replay: batsim-args.txt
@pytest.mark.parametrize("args", [
    "-p platform.xml -w workload.json --export=out --energy",
    "-pplatform.xml --workload=workload.json -eout -E",
    "--platform=platform.xml -w workload.json -e out --socket-endpoint=tcp://127.0.0.1:1 --verbosity=quiet",
])
def test_a_flag_with_its_value_in_the_same_word_is_read_as_batsim_reads_it(recording, capsys, args):
    """It said "'--export=out': not a Batsim flag the replay knows; known: ..., --export, ..."."""
    (recording / "batsim-args.txt").write_text(args + "\n")
    assert main(["replay", str(recording)]) == 0
    assert "identical" in capsys.readouterr().out


@pytest.mark.parametrize("args, needles", [
    ("-p platform.xml -w workload.json -e out --energy=1", ["'--energy=1'", "--energy takes no value"]),
    ("-p platform.xml -w workload.json -e out --enable-dynamic-jobs=yes", ["--enable-dynamic-jobs takes no value"]),
    ("-p platform.xml -w workload.json --export= -E", ["'--export='", "needs a value"]),
    ("-p platform.xml -w workload.json -e out --export=out", ["'--export=out'", "given twice"]),
])
def test_a_value_written_in_the_same_word_is_checked_as_a_separate_one(recording, capsys, args, needles):
    (recording / "batsim-args.txt").write_text(args + "\n")
    refused(capsys, ["replay", str(recording)], "batsim-args.txt", *needles)
