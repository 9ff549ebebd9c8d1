"""A marked statement in ``construct`` does not keep graph mode from compiling
the method when the statement is not reached.

Graph mode refuses a whole ``construct`` holding an ``import`` ("Unsupported
statement 'Import'", MindSpore 2.10 CPU), even in a branch that never runs;
the torch import a marked statement needs moves above the code, guarded
(transpiler/convert/structural/graph_subset.py). Without torch, the marked
statement still fails where it runs, at its own line under its marker.

A loop variable read after its loop, which graph mode refuses, is set to None
before the loop, as graph mode's message asks.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, sample=False):
            y = self.fc(x)
            if sample:
                y = torch.distributions.Gamma(y, y).sample()
            return F.relu(y)


    class Loops(nn.Module):
        """Loop variables read after their loops."""

        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x)
            k = 1
            for k in range(2):
                x = x + k
            for row in x:
                x = x - row
            return x * i + k + row
    '''
)

# run in a process without torch: GRAPH_MODE with the branch not taken, then
# PyNative with and without it
_CHILD = textwrap.dedent(
    '''
    import json, sys, traceback
    sys.modules["torch"] = None  # no torch here
    import numpy as np
    import mindspore
    sys.path.insert(0, sys.argv[1])
    import graph_markers as m

    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    net = m.Net()
    x = mindspore.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
    graph = net(x).asnumpy()
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    pynative = net(x).asnumpy()
    try:
        net(x, True)
        failed = None
    except Exception as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        failed = [type(error).__name__, frame.filename, frame.lineno]
    loops = m.Loops()
    loops_pynative = loops(x).asnumpy()
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    loops_graph = loops(x).asnumpy()
    print(json.dumps({"graph": graph.tolist(), "pynative": pynative.tolist(), "failed": failed,
                      "loops": [loops_graph.tolist(), loops_pynative.tolist()]}))
    '''
)


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("graph_markers")
    source = folder / "graph_markers.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    return convert_to(source, folder / "out")


def test_the_marked_statements_import_stands_above_the_code_guarded(converted):
    text = converted.read_text()
    construct = text[text.index("def construct"):]
    assert "import" not in construct, text
    assert "try:\n    import torch\nexcept ImportError:" in text and "    torch = None\n" in text, text
    marker = "# TODO(ms-migrate): torch.distributions.Gamma"
    assert marker in construct, text
    lines = construct.splitlines()
    at = next(i for i, line in enumerate(lines) if marker in line)
    assert lines[at + 1].strip() == "y = torch.distributions.Gamma(y, y).sample()", text


def test_converting_the_output_again_leaves_the_guarded_import_unmarked(converted):
    # `torch = None` assigns the name: it is no use of torch's API to mark
    from transpiler.convert.pipeline import convert_source

    text = converted.read_text()
    assert convert_source(text, "again.py").output == text


def test_graph_mode_compiles_it_and_the_marked_line_fails_where_it_runs(converted, tmp_path):
    script = tmp_path / "child.py"  # a file: graph mode reads the source of what it compiles
    script.write_text(_CHILD)
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script), str(converted.parent)], capture_output=True, text=True,
                          timeout=900, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(result["graph"], result["pynative"], atol=1e-6)
    kind, filename, line = result["failed"]
    lines = converted.read_text().splitlines()
    assert pathlib.Path(filename).name == converted.name, result
    assert lines[line - 1].strip() == "y = torch.distributions.Gamma(y, y).sample()", result
    assert lines[line - 2].strip().startswith("# TODO(ms-migrate): torch.distributions.Gamma"), result
    assert kind == "AttributeError", result  # torch is None without torch
    np.testing.assert_allclose(*result["loops"], rtol=1e-5, atol=1e-6)


def test_a_loop_variable_read_after_its_loop_is_defined_before_it(converted):
    """Graph mode: "The local variable 'i' defined in the 'for' loop body cannot
    be used outside of the loop body. Please define variable 'i' before 'for'"."""
    text = converted.read_text()
    loops = text[text.index("class Loops"):]
    assert "        i = None\n        for i, layer in enumerate(self.layers):" in loops, text
    assert "        row = None\n        for row in x:" in loops, text
    assert "k = None" not in loops and "layer = None" not in loops, text  # bound before, or not read after


def test_an_authors_own_import_in_forward_moves_above_the_code_unguarded():
    from transpiler.convert.pipeline import convert_source

    source = ("import torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def forward(self, x):\n"
              "        import math\n        return x * math.pi\n")
    output = convert_source(source, "a.py").output
    assert "\nimport math\n" in output and "        import math" not in output, output
    assert "try:" not in output, output
