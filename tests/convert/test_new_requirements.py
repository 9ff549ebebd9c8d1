"""The converted program needs nothing its user did not have, or says what:
``transpiler.convert.requirements`` lists the third-party packages a
converted file imports that its original did not (MindSpore and what it
requires are no new requirement), and the samples show what remains."""

from __future__ import annotations

import pytest

from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source
from transpiler.convert.requirements import import_comment, mindspore_provides, new_third_party_imports


def test_only_third_party_packages_the_original_did_not_import_are_new():
    original = "import os\nimport torch\nimport yaml\nfrom models import net\n"
    converted = ("from __future__ import annotations\nimport os, json\nimport mindspore\nimport numpy as np\n"
                 "from PIL import Image\nimport scipy.special\nimport yaml\nfrom models import net\nfrom . import local\n"
                 "import tensorboardX\nimport skimage.util\n")
    assert new_third_party_imports(original, converted, first_party={"models"}) == ["skimage", "tensorboardX"]
    assert new_third_party_imports(original, "def broken(:\n") == []


def test_mindspore_brings_numpy_pillow_and_protobuf():
    assert {"mindspore", "numpy", "PIL", "google", "scipy"} <= mindspore_provides()
    assert "tensorboardX" not in mindspore_provides() and "skimage" not in mindspore_provides()


def test_a_new_requirement_is_named_on_its_import_and_nothing_else_is():
    assert import_comment("tensorboardX").startswith("# new requirement: pip install tensorboardX")
    assert import_comment("numpy") is None and import_comment("mindspore.nn") is None


@pytest.mark.parametrize("sample", ["train_unet.py", "train_classifier.py", "train_gpt.py", "train_text_trainer.py"])
def test_the_training_samples_need_at_most_the_writer_they_name(sample):
    """save_image / make_grid need nothing new (NumPy and Pillow); SummaryWriter
    needs tensorboardX, named on its import line."""
    original = (ROOT / "samples" / sample).read_text()
    converted = convert_source(original, sample).output
    new = new_third_party_imports(original, converted, first_party={"samples"})
    assert set(new) <= {"tensorboardX"}, new
    for package in new:
        line = next(line for line in converted.splitlines() if line.startswith(f"import {package}"))
        assert "# new requirement: pip install " + package in line


def test_the_run_report_lists_new_requirements_with_their_files():
    """A new requirement is a diagnostic of its file, and the run's summary,
    JSON and Markdown reports name the package and the files that import it."""
    import json

    from transpiler.batch.report import RunReport
    from transpiler.batch.runner import FileSummary

    source = "from torch.utils.tensorboard import SummaryWriter\nwriter = SummaryWriter('runs')\n"
    result = convert_source(source, "log.py")
    notes = [d for d in result.diagnostics if d.rule == "new-requirement"]
    assert [d.message.split(":")[0] for d in notes] == ["tensorboardX"]
    report = RunReport()
    report.add(FileSummary("log.py", "converted", result.diagnostics))
    report.add(FileSummary("plain.py", "converted", convert_source("import torch\nx = torch.zeros(2)\n", "plain.py").diagnostics))
    assert report.new_requirements() == {"tensorboardX": ["log.py"]}
    assert any(line.startswith("new requirements") and "tensorboardX (1 file; pip install tensorboardX)" in line
               for line in report.summary_lines())
    assert json.loads(report.to_json())["new_requirements"] == {"tensorboardX": ["log.py"]}
    assert "tensorboardX" in report.to_markdown()
