"""Checks shared by the bad-input tests: a command refused in one line, an exception of one line, an argparse usage
error, a copy of a recording's outputs to edit by hand, a line or a CSV field of a file replaced, the command line of
an analysis, and small inputs written to a folder."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from wattsched.cli import main

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"


def two_host_inputs(folder: Path, workload: dict) -> tuple[Path, Path]:
    """A 2-host Taurus platform and ``workload`` written to ``folder``: the paths of ``p.xml`` and ``w.json``."""
    from wattsched import api

    platform, path = folder / "p.xml", folder / "w.json"
    platform.write_text(api.taurus_platform(2))
    path.write_text(json.dumps(workload))
    return platform, path


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    """``wattsched ARGV`` exits 2 with one line ``wattsched: error: ...`` holding every needle (no traceback)."""
    status = main(argv)
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("wattsched: error:"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def one_line(error: pytest.ExceptionInfo, *fragments: str, longest: int = 300) -> str:
    """The message of a raised error (the Python API's): one line of at most ``longest`` characters holding every
    fragment."""
    text = str(error.value)
    assert "\n" not in text and len(text) <= longest, text
    for fragment in fragments:
        assert fragment in text, text
    return text


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    """``wattsched ARGV`` is an argparse usage error: one line, exit status 2."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def recording_outputs(folder: Path, name: str, without: tuple[str, ...] = ()) -> Path:
    """``folder`` (made) holding the ``out_*.csv`` files of the recording ``name`` of real Batsim, but those named in
    ``without``."""
    folder.mkdir()
    for path in (REFERENCE / name).glob("out_*.csv"):
        if path.name not in without:
            shutil.copy(path, folder / path.name)
    return folder


def set_line(path: Path, number: int, text: str) -> None:
    """Line ``number`` (1: the first) of ``path`` replaced by ``text``."""
    lines = path.read_text().splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n")


def set_field(path: Path, line: int, column: str, value: str) -> None:
    """The field ``column`` of line ``line`` (1: the header) of the CSV file ``path`` set to ``value``."""
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    rows[line - 1][rows[0].index(column)] = value
    with open(path, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)


def analysis(command: str, outputs: Path, written: Path) -> list[str]:
    """The command line of ``command`` on ``outputs``, writing (when it writes) into ``written``."""
    return [command, str(outputs / "out"), *(["-d", str(written)] if command in ("paraver", "plot") else [])]


def usage_error_making_nothing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                               argv: list[str], reference: Path, *needles: str) -> None:
    """:func:`usage_error` of ``argv`` run in an empty folder, ``{ref}`` and ``{tmp}`` in it replaced by ``reference``
    and a path under ``tmp_path``: nothing is made there nor at ``{tmp}``."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    usage_error(capsys, [a.replace("{ref}", str(reference)).replace("{tmp}", str(tmp_path / "made")) for a in argv],
                *needles)
    assert list(work.iterdir()) == [] and not (tmp_path / "made").exists()
