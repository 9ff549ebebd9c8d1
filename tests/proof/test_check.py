"""``convert --check-imports``: each converted module imported in a child process,
errors reported as path:line, hanging imports cut off by the timeout."""

from __future__ import annotations

from transpiler.proof.check import check_imports
from transpiler.cli import main

GOOD = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n"
BROKEN = "import torch\n\nx = 1\nimport not_a_module_ms_migrate\n"
HANGS = "import time\n\ntime.sleep(60)\n"


def test_import_errors_are_reported_with_path_and_line(tmp_path, capsys):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "good.py").write_text(GOOD)
    (src / "broken.py").write_text(BROKEN)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "uses_sibling.py").write_text("from .helper import VALUE\n")
    (src / "pkg" / "helper.py").write_text("VALUE = 1\n")
    out = tmp_path / "out"
    status = main(["convert", str(src), "-o", str(out), "-q", "--check-imports"])
    err = capsys.readouterr().err
    assert status == 1
    line = (out / "broken.py").read_text().splitlines().index("import not_a_module_ms_migrate") + 1
    assert f"broken.py:{line}: import failed: ModuleNotFoundError: No module named 'not_a_module_ms_migrate'" in err
    assert "check: 4/5 converted modules import cleanly" in err


def test_a_hanging_import_is_cut_off_and_the_rest_still_checked(tmp_path):
    (tmp_path / "a_hangs.py").write_text(HANGS)
    (tmp_path / "b_broken.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "c_good.py").write_text("VALUE = 1\n")
    problems = check_imports([str(tmp_path / n) for n in ("a_hangs.py", "b_broken.py", "c_good.py")], timeout=20)
    assert [(p.path.rsplit("/", 1)[-1], p.line) for p in problems] == [("a_hangs.py", 1), ("b_broken.py", 1)]
    assert "did not finish within 20s" in problems[0].message
    assert problems[1].message == "RuntimeError: boom"
