"""Paths that are not regular files, as inputs and outputs: a FIFO given as a workload must not block the
reader for ever, a device such as ``/dev/zero`` must not be read to the end, and an output path naming a
device, a FIFO or a folder must be refused before anything is written (renaming over ``/dev/null`` would
replace the device with a plain file)."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path

import pytest

from wattsched.base.errors import OutputError
from wattsched.base.fileio import atomic_path, require_regular_file
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def run_cli(*argv: str) -> tuple[int, list[str]]:
    """Exit status and stderr lines of ``wattsched ARGV`` in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(list(argv))
        except SystemExit as stop:
            status = int(stop.code or 0)
    return status, err.getvalue().strip().splitlines()


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv", [
    ["run", PLATFORM, "{fifo}", "-q"],
    ["run", "{fifo}", WORKLOAD, "-q"],
    ["run", PLATFORM, WORKLOAD, "-q", "-s", "energy-bud", "-o", "@{fifo}"],
    ["swf", "{fifo}"],
])
def test_a_fifo_as_input_is_one_error_line_not_a_hang(argv, fifo, tmp_path, monkeypatch):
    """Each reader refuses the FIFO before opening it (opening one blocks until a writer comes)."""
    monkeypatch.chdir(tmp_path)
    status, lines = run_cli(*(a.replace("{fifo}", str(fifo)) for a in argv))
    assert status != 0
    assert len(lines) == 1 and str(fifo) in lines[0] and "not a regular file" in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no output left


def test_require_regular_file(tmp_path, fifo):
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    require_regular_file(plain)
    require_regular_file(tmp_path / "missing.json")  # left to the caller's open()
    with pytest.raises(OSError, match="not a regular file"):
        require_regular_file(fifo)
    with pytest.raises(OSError, match="folder"):
        require_regular_file(tmp_path)


def test_an_output_over_a_fifo_is_refused_and_the_fifo_stays(fifo):
    """The check runs before the block: nothing is computed or written, and the FIFO is still one."""
    with pytest.raises(OutputError, match="not a regular file"):
        with atomic_path(fifo):
            pytest.fail("the block must not run")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in fifo.parent.iterdir()) == ["pipe"]


def test_synth_output_over_a_fifo_or_naming_a_folder(fifo, tmp_path):
    status, lines = run_cli("synth", "--hosts", "4", "--days", "1", "--seed", "1", "--output", str(fifo))
    assert status != 0 and len(lines) == 1 and "not a regular file" in lines[0]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    status, lines = run_cli("synth", "--hosts", "4", "--days", "1", "--seed", "1", "--output", f"{tmp_path}/new/")
    assert status != 0 and "names a folder" in lines[-1]
    assert not (tmp_path / "new").exists()
