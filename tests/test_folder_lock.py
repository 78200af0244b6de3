"""One sweep or study at a time in a folder (:class:`wattsched.base.fileio.FolderLock`): a second one started in the
``--out`` of a running one is refused at once, in one line, and leaves the folder as it was. Without it the two mixed
their runs and tables, and a Ctrl-C on one removed the other's unfinished outputs (noticed in an earlier session)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.bad_inputs_checks import one_line, refused
from wattsched import api
from wattsched.base.errors import OutputError
from wattsched.base.fileio import FolderLock

ROOT = Path(__file__).resolve().parent.parent
GRID = textwrap.dedent(f"""\
    platforms: [{ROOT / 'platforms' / 'taurus_16.xml'}]
    workloads: [{ROOT / 'workloads' / 'demo_taurus16.json'}]
    schedulers: [easy-backfill]
""")
HOLDER = ("import fcntl, os, sys, time\n"
          "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
          "fcntl.flock(fd, fcntl.LOCK_EX)\n"
          "print('held', flush=True)\n"
          "time.sleep(120)\n")


@pytest.fixture
def held(tmp_path: Path):
    """A folder holding one file, held by another process (as a running sweep holds its --out)."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "note.txt").write_text("from the running sweep\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield folder
    finally:
        holder.kill()
        holder.wait()


def _grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    return path


def test_a_second_sweep_in_a_running_sweeps_folder_is_refused_and_writes_nothing(capsys, tmp_path, held):
    refused(capsys, ["sweep", str(_grid(tmp_path)), "--out", str(held), "-j", "1", "-q"],
            f"--out {held}: another sweep is running in this folder", "give another folder")
    assert sorted(p.name for p in held.iterdir()) == ["note.txt"]


def test_the_api_sweep_is_refused_the_same_way(tmp_path, held):
    with pytest.raises(OutputError) as error:
        api.sweep(_grid(tmp_path), out=held, workers=1, progress=False)
    one_line(error, f"out (--out) {held}: another sweep is running in this folder")
    assert sorted(p.name for p in held.iterdir()) == ["note.txt"]


def test_a_study_in_a_running_studys_folder_is_refused(capsys, held):
    refused(capsys, ["reproduce", "esc", "--out", str(held), "-q"], f"--out {held}: another study is running")
    assert sorted(p.name for p in held.iterdir()) == ["note.txt"]


def test_the_folder_is_free_again_once_the_sweep_ends(capsys, tmp_path):
    out = tmp_path / "fresh" / "out"
    from wattsched.cli import main

    assert main(["sweep", str(_grid(tmp_path)), "--out", str(out), "-j", "1", "-q"]) == 0
    assert (out / "results.csv").is_file()
    with FolderLock(out, "--out"):  # (the sweep's hold ended with it)
        pass


def test_a_hold_in_this_process_refuses_a_second_one_and_a_refused_block_removes_the_folders_it_made(tmp_path):
    out = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError):
        with FolderLock(out, "--out x"):
            assert out.is_dir()
            with pytest.raises(OutputError, match="another sweep is running"):
                with FolderLock(out, "--out x"):
                    pass
            raise RuntimeError("refused grid")
    assert not (tmp_path / "a").exists()  # both folders it made, empty, removed


def test_folders_not_made_by_the_hold_or_not_empty_are_kept(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with FolderLock(out, "--out x"):
            (out / "results.csv").write_text("x\n")
            raise RuntimeError("a failure after writing")
    assert (out / "results.csv").is_file()
    with pytest.raises(RuntimeError):
        with FolderLock(tmp_path, "--out x"):
            raise RuntimeError("refused")
    assert tmp_path.is_dir()


def test_a_place_where_the_folder_cannot_be_made_leaves_the_writers_checks_to_say_why(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    err = refused(capsys, ["sweep", str(_grid(tmp_path)), "--out", str(tmp_path / "file" / "out"), "-q"])
    assert "another" not in err and "file" in err
    assert sorted(os.listdir(tmp_path)) == ["file", "grid.yaml"]
