"""The forms of ``torch.autograd.Function`` research code writes beyond the
textbook one, converted to Cells with a ``bprop`` and proven by running: forward
values and gradients (inputs and parameters) of the torch source and of its
conversion, on the same inputs and weights (tests/gradient_check.py; the
converted side runs where importing torch fails).

- ``*args`` on either side (x-transformers' ``DetachMultiple``: ``forward(ctx,
  *tensors)``, ``backward(ctx, *grads)``, written as classmethods), a leading
  input before ``*args``, ``backward(ctx, *grad_outputs)`` of one output;
- ``requires_grad_()`` in forward (torch runs forward without recording: it
  changes no value) goes;
- ctx attributes holding inputs (a function backward calls stays on the Cell:
  MindSpore gives a bprop None for it), computed numbers, tensors and shapes;
- ``Fn.apply`` called, and read as a value, in another file of the project;
- staticmethods that never use ctx.

A reversible network (RevNet, Reformer: forward runs the blocks without
recording, backward rebuilds their inputs from the outputs and calls
``torch.autograd.backward`` on each) converts with its blocks kept on the Cell
(MindSpore gives a bprop None for a Cell input): its forward matches torch, and
its backward stops at the marked ``torch.autograd.backward``, whose import stays
local so that the module imports without torch.

Where a form cannot be converted (``**kwargs``, a classmethod reading its class)
the class is marked, and the module still imports without torch: a module-level
``fn = Fn.apply`` defines ``fn``, and calling it fails with the marker's text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.gradient_check import Case, differences, load_torch_module, mindspore_side, torch_side
from transpiler.cli import main

FUNCTIONS = textwrap.dedent('''
import torch
from torch.autograd import Function


class DetachMultiple(Function):
    """Classmethods, *args on both sides (x-transformers' belief-state wrapper)."""

    @classmethod
    def forward(self, ctx, *tensors):
        detached_tensors = tuple(t.detach() for t in tensors)

        for detached_tensor in detached_tensors:
            detached_tensor.requires_grad_()

        return detached_tensors

    @classmethod
    def backward(self, ctx, *grads):

        return grads


detach_multiple = DetachMultiple.apply


class ScaleAll(Function):
    """A leading input, then *args; the gradients as *grads; ctx keeps an input."""

    @staticmethod
    def forward(ctx, scale, *xs):
        ctx.scale = scale
        return tuple(x * scale for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, *[g * ctx.scale for g in grads])


class WeightedSum(Function):
    """*args forward with one output; ctx keeps a number forward computes."""

    @staticmethod
    def forward(ctx, *xs):
        ctx.count = len(xs)
        return sum(x * (i + 1) for i, x in enumerate(xs))

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad * (i + 1) for i in range(ctx.count))


class Softsign(Function):
    """backward(ctx, *grad_outputs) of one output; ctx keeps a tensor and a shape forward computes."""

    @staticmethod
    def forward(ctx, x):
        denom = 1 + x.abs()
        ctx.denom = denom
        ctx.shape = x.shape
        return x / denom

    @staticmethod
    def backward(ctx, *grad_outputs):
        grad, = grad_outputs
        return (grad / ctx.denom ** 2).reshape(ctx.shape)


class MulAdd(Function):
    """Fixed inputs, *grad_outputs, ctx used only to save: no state on the Cell (compiles in graph mode)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y + x

    @staticmethod
    def backward(ctx, *grad_outputs):
        x, y = ctx.saved_tensors
        g = grad_outputs[0]
        return g * (y + 1), g * x


class ApplyFn(Function):
    """A function as an input, kept on ctx and called again by backward."""

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        return fn(*args)

    @staticmethod
    def backward(ctx, grad):
        return (None, ctx.fn(grad))


class PlainSTE(Function):
    """Staticmethods that never use ctx."""

    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1, 1)


class Halve(Function):
    """backward's gradient has the name of forward's input (as in the framework's own tests)."""

    @staticmethod
    def forward(ctx, input):
        return input * 0.5

    @staticmethod
    def backward(ctx, input):
        return input * 0.5
''')

MODEL = textwrap.dedent('''
import torch
import torch.nn as nn

from af_forms_functions import (ApplyFn, DetachMultiple, Halve, MulAdd, PlainSTE, ScaleAll, Softsign,
                                WeightedSum, detach_multiple)

weighted_sum = WeightedSum.apply  # apply read as a value in another file


def detach_pair(a, b):
    x, y = detach_multiple(a * 2, b)
    return x * y


def scale_all(a, b):
    return ScaleAll.apply(1.5, a, b)


def weighted(a, b, c):
    return weighted_sum(a, b, c) + weighted_sum(c, a)


def softsign(x):
    return Softsign.apply(x)


def half(t):
    return t * 0.5


def apply_fn(x):
    return ApplyFn.apply(half, x) * x


def mul_add(x, y):
    return MulAdd.apply(x, y) + PlainSTE.apply(x)


def halve(x):
    return Halve.apply(x) * x


class Belief(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, a, b):
        x, y = DetachMultiple.apply(self.proj(a), b)
        p, q = ScaleAll.apply(0.5, x, y)
        return weighted_sum(p, q, Softsign.apply(a)) + MulAdd.apply(x, b)
''')


def _cases() -> list[Case]:
    rng = np.random.RandomState(5)

    def randn(*shape):
        return rng.randn(*shape).astype(np.float32)

    return [
        Case("detach_pair", [randn(2, 3), randn(2, 3)]),
        Case("scale_all", [randn(2, 3), randn(3)]),
        Case("weighted", [randn(4), randn(4), randn(4)]),
        Case("softsign", [randn(2, 3)]),
        Case("apply_fn", [randn(2, 3)]),
        Case("mul_add", [randn(2, 3), randn(2, 3)]),
        Case("mul_add", [randn(2, 3), randn(2, 3)], jit=True),
        Case("halve", [randn(2, 3)]),
        Case("Belief", [randn(2, 3), randn(2, 3)], args=[]),
    ]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("autograd_forms")
    source, out = folder / "src", folder / "out"
    source.mkdir()
    (source / "af_forms_functions.py").write_text(FUNCTIONS)
    (source / "af_forms_model.py").write_text(MODEL)
    assert main(["convert", str(source), "-o", str(out), "-q"]) == 0
    return source, out


@pytest.fixture(scope="module")
def both_sides(converted, tmp_path_factory):
    source, out = converted
    sys.path.insert(0, str(source))  # the model imports its sibling file
    try:
        module = load_torch_module(source / "af_forms_model.py", "af_forms_model")
        cases = _cases()
        torch_results = [torch_side(module, case) for case in cases]
    finally:
        sys.path.remove(str(source))
        sys.modules.pop("af_forms_functions", None)
    ms_results = mindspore_side(out / "af_forms_model.py", cases, torch_results, tmp_path_factory.mktemp("runs"))
    return cases, torch_results, ms_results


def test_the_forms_become_cells_with_a_bprop(converted):
    _, out = converted
    functions = (out / "af_forms_functions.py").read_text()
    model = (out / "af_forms_model.py").read_text()
    assert "TODO(ms-migrate)" not in functions + model and "torch" not in functions + model, functions + model
    assert functions.count("(nn.Cell):") == 8 and functions.count("def bprop(self") == 8
    assert "classmethod" not in functions and "requires_grad" not in functions
    assert textwrap.dedent('''
        class DetachMultiple(nn.Cell):
            """Classmethods, *args on both sides (x-transformers' belief-state wrapper)."""

            def construct(self, *tensors):
                detached_tensors = tuple(ops.stop_gradient(t) for t in tensors)

                return detached_tensors

            def bprop(self, *args):
                grads = args[-1]
        ''') in functions
    assert "        scale, grads = args[0], args[-1]\n        return (None, *[g * scale for g in grads])\n" in functions
    assert "    def bprop(self, x, out, dout):\n        grad_outputs = dout if isinstance(dout, tuple) else (dout,)\n" \
        in functions
    # MindSpore gives a bprop None for an input that is a function (measured): what backward calls stays on self
    assert "        self.fn = fn\n" in functions and "return (None, self.fn(grad))" in functions
    assert "detach_multiple = DetachMultiple()\n" in functions  # keeps nothing on self: one instance serves
    # one that keeps state on self gets an instance per call
    assert "weighted_sum = lambda *args: WeightedSum()(" in model
    assert "    def bprop(self, input, out, grad_input):\n        return (grad_input * 0.5,)\n" in functions
    assert "DetachMultiple()(self.proj(a), b)" in model and "ScaleAll()(1.5, a, b)" in model


@pytest.mark.parametrize("index", range(len(_cases())), ids=[c.name + ("-jit" * c.jit) for c in _cases()])
def test_values_and_gradients_match_torch(both_sides, index):
    cases, torch_results, ms_results = both_sides
    assert any(k.startswith("dx") for k in torch_results[index])
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems


def test_the_parameters_behind_a_detaching_function_get_their_gradients(both_sides):
    cases, torch_results, ms_results = both_sides
    index = [c.name for c in cases].index("Belief")
    keys = [k for k in torch_results[index] if k.startswith("dw:")]
    assert keys and all(np.abs(torch_results[index][k]).sum() > 0 for k in keys)
    assert all(k in ms_results[index] for k in keys)


def test_a_wrong_bprop_is_caught(converted, tmp_path):
    """Sabotage: DetachMultiple's bprop passing zeros must fail the comparison."""
    source, out = converted
    text = (out / "af_forms_functions.py").read_text()
    sabotaged = tmp_path / "out"
    sabotaged.mkdir()
    (sabotaged / "af_forms_functions.py").write_text(
        text.replace("        grads = args[-1]\n", "        grads = tuple(g * 0 for g in args[-1])\n"))
    (sabotaged / "af_forms_model.py").write_text((out / "af_forms_model.py").read_text())
    sys.path.insert(0, str(source))
    try:
        module = load_torch_module(source / "af_forms_model.py", "af_forms_model_sabotage")
        cases = [Case("detach_pair", [np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)])]
        torch_results = [torch_side(module, case) for case in cases]
    finally:
        sys.path.remove(str(source))
        sys.modules.pop("af_forms_functions", None)
    problems = differences(torch_results[0], mindspore_side(sabotaged / "af_forms_model.py", cases, torch_results,
                                                            tmp_path)[0])
    assert problems and all(p.startswith("dx") for p in problems), problems


UNCONVERTIBLE = textwrap.dedent('''
    import torch


    class Options(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, **options):
            ctx.scale = options.get("scale", 1.0)
            return x * ctx.scale

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.scale


    class ReadsClass(torch.autograd.Function):
        factor = 2.0

        @classmethod
        def forward(cls, ctx, x):
            return x * cls.factor

        @classmethod
        def backward(cls, ctx, grad):
            return grad * cls.factor


    options = Options.apply
    doubled = ReadsClass.apply


    def run(x):
        return options(x, scale=2.0)
    ''')


def test_an_unconvertible_form_is_marked_and_fails_only_where_used(tmp_path):
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    (source / "af_unconvertible.py").write_text(UNCONVERTIBLE)
    assert main(["convert", str(source), "-o", str(out), "-q"]) == 0
    text = (out / "af_unconvertible.py").read_text()
    markers = [line for line in text.splitlines() if line.startswith("# TODO(ms-migrate): torch.autograd.Function")]
    assert len(markers) == 2, text
    assert "**kwargs" in markers[0] and "reads its class cls" in markers[1], markers
    script = textwrap.dedent('''
        import sys
        from transpiler.proof.no_torch import block_torch
        block_torch()
        sys.path.insert(0, sys.argv[1])
        import af_unconvertible  # the module-level `options = Options.apply` defines options
        import mindspore
        for call in (lambda: af_unconvertible.run(mindspore.Tensor([1.0])), lambda: af_unconvertible.doubled(1.0)):
            try:
                call()
            except NotImplementedError as exc:
                print(exc)
        ''')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2, done.stdout
    assert "Options needs torch" in lines[0] and "**kwargs" in lines[0] and "TODO(ms-migrate) at af_unconvertible.py:" \
        in lines[0]
    assert "ReadsClass needs torch" in lines[1] and "reads its class" in lines[1]


REVERSIBLE = textwrap.dedent('''
import torch
import torch.nn as nn
from torch.autograd import Function


class RevBlock(nn.Module):
    def __init__(self, f, g):
        super().__init__()
        self.f = f
        self.g = g

    def forward(self, x):
        x1, x2 = torch.chunk(x, 2, dim=1)
        with torch.no_grad():
            y1 = x1 + self.f(x2)
            y2 = x2 + self.g(y1)
        return torch.cat([y1, y2], dim=1)

    def backward_pass(self, y, dy):
        y1, y2 = torch.chunk(y, 2, dim=1)
        dy1, dy2 = torch.chunk(dy, 2, dim=1)
        with torch.enable_grad():
            y1.requires_grad = True
            gy1 = self.g(y1)
            torch.autograd.backward(gy1, dy2)
        with torch.no_grad():
            x2 = y2 - gy1
            dx1 = dy1 + y1.grad
        with torch.enable_grad():
            x2.requires_grad = True
            fx2 = self.f(x2)
            torch.autograd.backward(fx2, dx1)
        with torch.no_grad():
            x1 = y1 - fx2
            dx2 = dy2 + x2.grad
        return torch.cat([x1, x2.detach()], dim=1), torch.cat([dx1, dx2], dim=1)


class Reversible(Function):
    @staticmethod
    def forward(ctx, x, blocks):
        for block in blocks:
            x = block(x)
        ctx.y = x.detach()
        ctx.blocks = blocks
        return x

    @staticmethod
    def backward(ctx, dy):
        y = ctx.y
        for block in ctx.blocks[::-1]:
            y, dy = block.backward_pass(y, dy)
        return dy, None


class RevNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([RevBlock(nn.Linear(2, 2), nn.Linear(2, 2)) for _ in range(2)])

    def forward(self, x):
        return Reversible.apply(x, self.blocks)
''')

_REVERSIBLE_CHILD = textwrap.dedent('''
    import json, linecache, sys, traceback
    from transpiler.proof.no_torch import block_torch
    block_torch()
    import numpy as np
    import mindspore
    from transpiler.proof.weights import map_weights

    directory, data = sys.argv[1], np.load(sys.argv[2])
    sys.path.insert(0, directory)
    import af_reversible
    net = af_reversible.RevNet()
    params, report = map_weights({k[2:]: data[k] for k in data.files if k.startswith("w:")}, net)
    assert report.ok and not mindspore.load_param_into_net(net, params)[0]
    x = mindspore.Tensor(data["x0"])
    result = {"out": net(x).asnumpy().tolist()}
    try:
        mindspore.grad(lambda x: net(x).sum())(x)
    except Exception as exc:
        frame = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith("af_reversible.py")][-1]
        above = [linecache.getline(frame.filename, n).strip() for n in range(frame.lineno - 3, frame.lineno)]
        result["failure"] = {"error": type(exc).__name__, "above": above}
    print(json.dumps(result))
    ''')


def test_a_reversible_network_runs_forward_and_its_backward_stops_at_the_marker(tmp_path):
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    (source / "af_reversible.py").write_text(REVERSIBLE)
    assert main(["convert", str(source), "-o", str(out), "-q"]) == 0
    text = (out / "af_reversible.py").read_text()
    assert "        self.blocks = blocks\n" in text and "for block in self.blocks[::-1]:" in text, text
    assert "\nimport torch" not in text and text.count("        import torch\n") == 2, text
    module = load_torch_module(source / "af_reversible.py", "af_reversible_torch")
    case = Case("RevNet", [np.random.RandomState(2).randn(3, 4).astype(np.float32)], args=[])
    expected = torch_side(module, case)
    arrays = {"x0": case.inputs[0], **{k: v for k, v in expected.items() if k.startswith("w:")}}
    np.savez(tmp_path / "data.npz", **arrays)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", _REVERSIBLE_CHILD, str(out), str(tmp_path / "data.npz")],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert np.allclose(np.array(result["out"], np.float32), expected["out0"], rtol=1e-4, atol=1e-5)
    failure = result["failure"]
    assert failure["error"] == "ModuleNotFoundError", failure
    assert failure["above"][-1].startswith("# TODO(ms-migrate): torch.autograd.backward:"), failure


SAVES_COMPUTED = '''
import torch


class SparseProduct(torch.autograd.Function):
    """pyGAT's SpecialSpmmFunction, in short: forward keeps a tensor it computed."""

    @staticmethod
    def forward(ctx, x, w):
        scaled = x * 2
        ctx.save_for_backward(scaled, w)
        ctx.rows = x.shape[0]
        return scaled @ w

    @staticmethod
    def backward(ctx, grad):
        scaled, w = ctx.saved_tensors
        return grad @ w.t() * 2, scaled.t() @ grad


class SavesInputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w.t(), x.t() @ grad
'''


def test_a_bprop_reading_state_construct_sets_is_reported_as_pynative_only(tmp_path):
    """What forward computes and keeps on ctx stays on the Cell: graph mode compiles the
    bprop apart from the construct and fails on the attribute (pyGAT's sparse layer under
    convert --jit: "object has no attribute 'saved_tensors'"). The conversion says so; a
    Function that saves only its inputs reads them from bprop's arguments and is not named."""
    from transpiler.convert.pipeline import convert_source

    result = convert_source(SAVES_COMPUTED, str(tmp_path / "functions.py"))
    notes = [d.message for d in result.diagnostics if "PyNative mode only" in d.message]
    assert notes == ["SparseProduct's bprop reads self.saved_tensors, set in construct: this runs in PyNative mode "
                     "only; graph mode (mindspore.jit, convert --jit) compiles the bprop apart from the construct and "
                     "fails on the attribute (measured: pyGAT's SpecialSpmmFunction)"], notes
    lines = result.output.splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("# graph mode cannot compile this Cell")]
    assert [(lines[i], lines[i + 1]) for i in marks] == [(
        "# graph mode cannot compile this Cell's bprop: it reads self.saved_tensors, set in construct "
        "(PyNative trains through it)", "class SparseProduct(nn.Cell):")], result.output
    assert "def bprop(self, x, w, out, grad):\n        x, w = x, w" in result.output or \
        "def bprop(self, x, w, out, grad):\n        return" in result.output, result.output
