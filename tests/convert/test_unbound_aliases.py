"""``F.dropout`` in a torch file that never binds ``F`` (facebookresearch/deit's models_v2.py):
read as torch.nn.functional (transpiler/convert/unbound_aliases.py), so graph mode compiles
the branch torch never runs; a file that binds ``F`` or may through a star import is left."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side
from transpiler.convert.pipeline import convert_source

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self, rate=0.0):
            super().__init__()
            self.rate = rate
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            if self.rate:
                x = F.dropout(x, p=float(self.rate), training=self.training)
            return self.fc(x)
    '''
)

CASES = [Case("Head", [np.random.RandomState(0).rand(3, 4).astype(np.float32)], args=[])]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unbound_aliases")
    source = folder / "head.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "unbound_aliases_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_the_unbound_alias_reads_as_torch_nn_functional(both_sides):
    text = both_sides[0].read_text()
    assert "x = ops.dropout(x, p=float(self.rate), training=self.training)" in text, text
    assert "F." not in text, text


def test_graph_mode_compiles_and_matches_torch(both_sides):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[0], ms_results[0])
    assert not problems, problems


def test_the_report_says_so_at_the_first_use():
    result = convert_source(SOURCE, "head.py")
    notes = [d for d in result.diagnostics if d.rule == "F"]
    assert len(notes) == 1 and notes[0].line == 14, result.diagnostics
    assert "never imported" in notes[0].message


@pytest.mark.parametrize("source", [
    "import torch\nfrom helpers import *\n\ndef f(x):\n    return F.relu(x)\n",  # a star import may bind F
    "import torch\n\ndef f(x, F):\n    return F.relu(x)\n",  # a parameter
    "import numpy as np\n\ndef f(x):\n    return F.relu(x)\n",  # not a torch file
])
def test_a_name_that_may_be_bound_stays(source):
    result = convert_source(source, "f.py")
    assert "F.relu(x)" in (result.output or source)
    assert not [d for d in result.diagnostics if d.rule == "F"]
