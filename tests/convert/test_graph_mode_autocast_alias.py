"""RAFT's ``try: autocast = torch.cuda.amp.autocast`` / ``except: class autocast: ...``:
the alias resolves where it is entered, ``with autocast(enabled=...):`` is unwrapped like
torch's own context, and the alias with its stand-in goes when nothing else reads it
(transpiler/convert/names.py, structural/grad_mode.py). The forward then compiles in
GRAPH_MODE (a call of the alias returned ``contextlib.nullcontext()``, which graph mode
refuses), values and gradients as torch's; a file that also passes the alias as a value
keeps it, and runs in PyNative."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to, converted_pair, eval_outputs, move_torch_weights
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side
from transpiler.convert.pipeline import convert_source

_STAND_IN = '''
try:
    autocast = torch.cuda.amp.autocast
except:
    # dummy autocast for PyTorch < 1.6
    class autocast:
        def __init__(self, enabled):
            pass
        def __enter__(self):
            pass
        def __exit__(self, *args):
            pass
'''

SOURCE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + _STAND_IN + textwrap.dedent(
    '''

    class FlowHead(nn.Module):
        """RAFT's use: the feature network and the update in the mixed-precision context."""

        def __init__(self, mixed_precision=False):
            super().__init__()
            self.mixed_precision = mixed_precision
            self.fnet = nn.Conv2d(3, 8, 3, padding=1)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, image1, image2):
            with autocast(enabled=self.mixed_precision):
                fmap1 = self.fnet(image1)
                fmap2 = self.fnet(image2)
            corr = (fmap1.float() * fmap2.float()).sum(dim=1, keepdim=True)
            if corr.shape[1] == 1:
                with autocast(enabled=self.mixed_precision):  # the update
                    flow = self.head(F.relu(fmap1)) * corr
            else:
                flow = corr
            return F.interpolate(flow, scale_factor=2, mode="bilinear", align_corners=True)
    '''
)

VALUE_SOURCE = '''
import functools

import torch
import torch.nn as nn
''' + _STAND_IN + '''

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        with autocast(enabled=False):
            return self.fc(x).relu()


def predict(net, x, amp=False):
    run_in = functools.partial(autocast, enabled=amp)
    with run_in():
        return net(x)
'''

_RANDOM = np.random.RandomState(0)
CASES = [Case("FlowHead", [_RANDOM.rand(2, 3, 6, 6).astype(np.float32), _RANDOM.rand(2, 3, 6, 6).astype(np.float32)],
              args=[])]


def convert(code: str) -> tuple[str, list[str]]:
    result = convert_source(textwrap.dedent(code), "alias.py")
    assert result.output is not None
    return result.output, [d.one_line() for d in result.diagnostics]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("autocast_alias")
    source = folder / "flow.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "autocast_alias_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_the_alias_and_its_stand_in_go_and_the_contexts_are_unwrapped(both_sides):
    text = both_sides[0].read_text()
    for gone in ("autocast", "torch_cuda_amp", "contextlib", "try:", "except", "dummy", "import torch"):
        assert gone not in text, text
    assert text.startswith("import mindspore\nfrom mindspore import nn, ops\n\n\nclass FlowHead(nn.Cell):\n"), text
    assert "    def construct(self, image1, image2):\n        fmap1 = self.fnet(image1)\n        fmap2 = " \
           "self.fnet(image2)\n        corr = " in text, text
    assert "        if corr.shape[1] == 1:\n            # the update\n            flow = self.head(ops.relu(fmap1)) " \
           "* corr\n" in text, text


def test_values_and_gradients_in_graph_mode_match_torch(both_sides):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[0], ms_results[0])
    assert not problems, problems


def test_the_report_names_the_removal():
    out, diagnostics = convert(SOURCE)
    assert any("autocast = torch.cuda.amp.autocast removed with the try/except around it (its stand-in for older "
               "torch versions): every use of autocast enters an autocast context, unwrapped" in d
               for d in diagnostics), diagnostics
    assert sum("autocast context unwrapped" in d for d in diagnostics) == 2, diagnostics
    assert convert(out)[0] == out


def test_an_alias_also_passed_as_a_value_stays_and_runs_in_pynative(tmp_path):
    torch_module, converted, text = converted_pair(tmp_path, VALUE_SOURCE)
    assert "try:\n    autocast = torch_cuda_amp.autocast\nexcept:\n    # dummy autocast" in text, text
    assert "    def construct(self, x):\n        return ops.relu(self.fc(x))\n" in text, text
    assert "    run_in = functools.partial(autocast, enabled=amp)\n    with run_in():\n" in text, text
    import mindspore
    import torch

    model, cell = torch_module.Net(), converted.Net()
    move_torch_weights(model, cell)
    x = np.random.RandomState(1).rand(2, 4).astype(np.float32)
    expected, got = eval_outputs(model, cell, x)
    np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        expected = torch_module.predict(model, torch.from_numpy(x))
    got = converted.predict(cell, mindspore.Tensor(x))
    np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_a_plain_alias_line_goes_and_a_grad_mode_alias_as_decorator():
    out, _ = convert(
        '''
        import torch

        def infer(model, x):
            with autocast():  # defined further down: still the alias
                return model(x)

        autocast = torch.autocast
        no_grad = torch.no_grad

        @no_grad()
        def evaluate(model, x):
            return infer(model, x)
        '''
    )
    assert out == "\n\ndef infer(model, x):\n    # defined further down: still the alias\n    return model(x)\n\n\n" \
                  "def evaluate(model, x):\n    return infer(model, x)\n", out


@pytest.mark.parametrize(
    "code",
    [
        # bound again at module level: which binding a call reads is not known
        "import torch\nautocast = torch.cuda.amp.autocast\nautocast = my_autocast\n"
        "def f(x):\n    with autocast():\n        return x\n",
        # declared global and set in a function
        "import torch\nautocast = torch.cuda.amp.autocast\ndef off():\n    global autocast\n    autocast = None\n"
        "def f(x):\n    with autocast():\n        return x\n",
        # not a torch context
        "import torch\nautocast = torch.nn.Identity\ndef f(x):\n    with autocast():\n        return x\n",
    ],
)
def test_a_name_that_is_not_only_the_alias_is_left_as_written(code):
    out, _ = convert(code)
    assert "    with autocast():\n        return x\n" in out, out


def test_a_local_of_the_same_name_keeps_the_alias():
    out, _ = convert(
        '''
        import torch
        autocast = torch.cuda.amp.autocast

        def f(x, autocast):
            with autocast():
                return x

        def g(x):
            with autocast(enabled=True):
                return x
        '''
    )
    assert "autocast = torch_cuda_amp.autocast\n" in out, out
    assert "def f(x, autocast):\n    with autocast():\n        return x\n" in out, out
    assert "def g(x):\n    return x\n" in out, out
