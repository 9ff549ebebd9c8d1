"""Running ``convert`` again over an output the user edited never loses the
edit: the new conversion is merged into the edited file three-way (base =
what ms-migrate wrote last time), with git-style markers where both changed
the same lines; without a record of what was written, a differing file is
refused unless --force."""

from __future__ import annotations

import os
import shutil

import pytest

from transpiler.cli import main

SOURCE = """import torch


def first(x):
    return torch.zeros(2, 3)


def middle(x):
    return x


def second(x):
    return torch.ones(2, 3)
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "model.py").write_text(SOURCE)
    (root / "other.py").write_text("import torch\ny = torch.zeros(1)\n")
    return root


def convert(*args: str) -> int:
    return main(["convert", *args, "-q"])


def test_an_appended_edit_survives_the_same_command(project, tmp_path, capsys):
    out = tmp_path / "out"
    assert convert(str(project), "-o", str(out)) == 0
    with open(out / "model.py", "a") as handle:
        handle.write("# fixed by hand\n")
    assert convert(str(project), "-o", str(out)) == 0
    assert (out / "model.py").read_text().endswith("# fixed by hand\n")


def test_an_editor_save_by_rename_is_continued_and_kept(project, tmp_path, capsys):
    """Editors save by writing a new file and renaming it over the old one: the
    output directory changes, and is still this conversion's output."""
    out = tmp_path / "out"
    assert convert(str(project), "-o", str(out)) == 0
    edited = (out / "model.py").read_text().replace("    return x\n", "    return x * 2  # mine\n")
    (out / "model.py.tmp").write_text(edited)
    os.replace(out / "model.py.tmp", out / "model.py")
    assert convert(str(project), "-o", str(out)) == 0, capsys.readouterr().err
    assert (out / "model.py").read_text() == edited


def test_a_new_conversion_is_merged_into_the_edited_file(project, tmp_path, capsys):
    out = tmp_path / "out"
    assert convert(str(project), "-o", str(out)) == 0
    converted = (out / "model.py").read_text()
    assert "ops.zeros((2, 3))" in converted and "ops.ones((2, 3))" in converted
    (out / "model.py").write_text(converted.replace("    return x\n", "    return x * 2  # mine\n"))
    (project / "model.py").write_text(SOURCE.replace("torch.ones(2, 3)", "torch.ones(4, 5)"))
    capsys.readouterr()
    assert convert(str(project), "-o", str(out)) == 0
    merged = (out / "model.py").read_text()
    assert "    return x * 2  # mine\n" in merged and "ops.ones((4, 5))" in merged
    assert "<<<<<<<" not in merged
    err = capsys.readouterr().err
    assert f"{out / 'model.py'}: merged your edits" in err
    assert "your edits: merged into 1 file, 0 conflicted" in err
    # the merged file is the output now: the next run leaves it alone
    assert convert(str(project), "-o", str(out)) == 0
    assert (out / "model.py").read_text() == merged


def test_both_sides_changing_a_line_leaves_both_between_markers(project, tmp_path, capsys):
    out = tmp_path / "out"
    assert convert(str(project), "-o", str(out)) == 0
    converted = (out / "model.py").read_text()
    mine = converted.replace("ops.ones((2, 3))", "ops.ones((2, 3), mindspore.float16)")
    (out / "model.py").write_text(mine)
    (project / "model.py").write_text(SOURCE.replace("torch.ones(2, 3)", "torch.ones(4, 5)"))
    capsys.readouterr()
    assert convert(str(project), "-o", str(out)) == 1
    text = (out / "model.py").read_text()
    assert "<<<<<<< your edit\n    return ops.ones((2, 3), mindspore.float16)\n=======\n" in text
    assert "=======\n    return ops.ones((4, 5))\n>>>>>>> new conversion\n" in text
    err = capsys.readouterr().err
    assert "model.py: 1 place where your edit and the new conversion changed the same lines" in err
    assert "1 conflicted (resolve the markers in:" in err
    # unresolved, it is reported again; resolved, the run is clean and the resolution stays
    assert convert(str(project), "-o", str(out)) == 1
    assert "still holds conflict markers" in capsys.readouterr().err
    resolved = text.split("<<<<<<< your edit\n")[0] + "    return ops.ones((4, 5), mindspore.float16)\n"
    (out / "model.py").write_text(resolved)
    assert convert(str(project), "-o", str(out)) == 0
    assert (out / "model.py").read_text() == resolved


def test_without_a_record_a_differing_file_is_refused_and_the_batch_goes_on(project, tmp_path, capsys,
                                                                             monkeypatch):
    out = tmp_path / "out"
    assert convert(str(project), "-o", str(out)) == 0
    (out / "model.py").write_text("# my own file\n")
    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(tmp_path / "fresh-cache"))  # the state is lost
    capsys.readouterr()
    assert convert(str(project), "-o", str(out)) == 2  # the directory is not known to be this conversion's
    assert "--force" in capsys.readouterr().err
    assert convert(str(project), "-o", str(out), "--force") == 0
    assert "ops.zeros((2, 3))" in (out / "model.py").read_text()
    # a record of the directory, none of the file (what was written is lost)
    (out / "model.py").write_text("# my own file\n")
    shutil.rmtree(tmp_path / "fresh-cache" / "runs" / "written")
    (project / "new.py").write_text("import torch\ny = torch.zeros(8)\n")
    capsys.readouterr()
    assert convert(str(project), "-o", str(out)) == 1
    err = capsys.readouterr().err
    assert (out / "model.py").read_text() == "# my own file\n"
    assert "ops.zeros(8)" in (out / "new.py").read_text()  # the rest of the batch went on
    lines = [line for line in err.splitlines() if "not written" in line]
    assert len(lines) == 1 and "model.py" in lines[0] and "--force" in lines[0], err
    assert convert(str(project), "-o", str(out), "--force") == 0
    assert "ops.zeros((2, 3))" in (out / "model.py").read_text()


def test_a_single_file_is_merged_as_well(project, tmp_path, capsys):
    target = tmp_path / "model_ms.py"
    assert convert(str(project / "model.py"), "-o", str(target)) == 0
    edited = target.read_text() + "# note\n"
    target.write_text(edited)
    assert convert(str(project / "model.py"), "-o", str(target)) == 0
    assert target.read_text() == edited
    (project / "model.py").write_text(SOURCE.replace("torch.zeros(2, 3)", "torch.zeros(9)"))
    assert convert(str(project / "model.py"), "-o", str(target)) == 0
    assert "ops.zeros(9)" in target.read_text() and target.read_text().endswith("# note\n")
    other = tmp_path / "not_mine.py"
    other.write_text("# someone's\n")
    assert convert(str(project / "model.py"), "-o", str(other)) == 1
    assert other.read_text() == "# someone's\n"
