"""Output a user lives with: no repeated seeding, only real torch APIs in the report's table."""

from __future__ import annotations

import textwrap

from transpiler.convert.pipeline import convert_source


def _convert(source: str):
    result = convert_source(textwrap.dedent(source), "script.py")
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    return result


def test_seeding_torch_then_the_gpus_sets_the_seed_once_and_keeps_the_comments():
    out = _convert("""
        import torch


        def seed_all(seed):
            # seed everything
            torch.manual_seed(seed)
            # and the GPUs
            torch.cuda.manual_seed_all(seed)  # all of them
            torch.cuda.manual_seed(seed)
            return seed
    """).output
    assert out.count("mindspore.set_seed(seed)") == 1, out
    for comment in ("# seed everything", "# and the GPUs", "# all of them"):
        assert comment in out, out
    compile(out, "<out>", "exec")


def test_the_only_seeding_call_and_different_seeds_are_kept():
    out = _convert("""
        import torch

        torch.cuda.manual_seed_all(3)
        x = 1
        torch.manual_seed(3)
        torch.cuda.manual_seed(4)
    """).output
    assert out.count("mindspore.set_seed(3)") == 2, out
    assert out.count("mindspore.set_seed(4)") == 1, out


def test_module_level_repeat_is_dropped():
    out = _convert("""
        import torch

        torch.manual_seed(0)
        torch.cuda.manual_seed_all(0)
        print("seeded")
    """).output
    assert out.count("mindspore.set_seed(0)") == 1, out
    assert 'print("seeded")' in out, out


def test_the_converted_api_table_names_only_torch_apis():
    from transpiler.batch.report import RunReport

    result = _convert("""
        import torch
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter("runs")


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(x)


        net = Net()
        x = torch.zeros(2, 2)
        x.cuda()
        net.train()
        writer.add_scalar("loss", net(x).sum(), 0)
    """)
    report = RunReport()
    report.diagnostics.extend(result.diagnostics)
    text = report.to_markdown()
    table = text.split("## Converted APIs", 1)[1].split("## What each conversion did", 1)[0]
    rows = [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")]
    assert "torch.nn.Linear" in rows and "torch.nn.Module.train" in rows, rows
    assert "torch.utils.tensorboard.SummaryWriter.add_scalar" in rows, rows
    for pseudo in ("forward", "statement", "torch.nn.Module.add_scalar"):
        assert pseudo not in rows, rows
    assert "not a torch API call" in table
    # the rewrites the table leaves out are still listed
    assert "| `forward` |" in text.split("## What each conversion did", 1)[1]


_GAIN = """
    class M(nn.Module):
        def __init__(self, nonlinearity):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            nn.init.xavier_uniform_(self.fc.weight, gain=nn.init.calculate_gain(nonlinearity))
"""


def test_added_standard_library_imports_join_the_files_group_in_order():
    out = _convert('"""Doc."""\nimport os\nimport sys\n\nimport numpy as np\nimport torch\nimport torch.nn as nn\n'
                   + textwrap.dedent(_GAIN)).output
    assert out.startswith('"""Doc."""\nimport math\nimport os\nimport sys\n\nimport numpy as np\nimport mindspore\n'
                          'from mindspore import nn\n'), out


def test_added_standard_library_imports_form_a_group_above_the_others():
    out = _convert("import numpy as np\nimport torch\nimport torch.nn as nn\n" + textwrap.dedent(_GAIN)).output
    assert out.startswith("import math\n\nimport numpy as np\nimport mindspore\nfrom mindspore import nn\n"), out
    unsorted = _convert("import sys\nimport os\nimport torch\nimport torch.nn as nn\n" + textwrap.dedent(_GAIN)).output
    assert unsorted.startswith("import sys\nimport os\nimport math\nimport mindspore\n"), unsorted  # at its end


def test_set_train_is_explained_once_per_file():
    out = _convert("""
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn1 = nn.BatchNorm2d(4)
                self.body = nn.Sequential(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4))
    """).output
    comment = "# .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode\n"
    assert out.count(comment) == 1 and out.count(".set_train()") == 3, out
    assert out.index(comment) < out.index("self.bn1 = nn.BatchNorm2d(4, momentum=0.9).set_train()"), out
