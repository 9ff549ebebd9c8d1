"""torch.einsum and einops lowered to MindSpore shape ops: random valid
equations and patterns run under both frameworks (on top of the rule
examples in rewrite_rules/index_notation), a gradient check, and the parsers."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rewrite_rules.index_notation.equations import EquationError, parse_einops_equation, parse_torch_equation
from rewrite_rules.index_notation.layout import ELLIPSIS
from rewrite_rules.spec import Example
from transpiler.proof.harness import Case, WorkerPool, report, run_case
from transpiler.proof.harness.cases import _split
from transpiler.proof.harness.values import compare
from transpiler.proof.harness.worker import Job
from tests.snippets import convert_full

RANDOM = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def pool():
    workers = WorkerPool()
    yield workers
    workers.close()


def _run(pool, snippet: str, inputs: dict[str, str], **tolerances) -> None:
    example = Example(snippet, inputs=inputs, **{"rtol": 1e-4, "atol": 1e-4, **tolerances})
    prepared, problems = run_case(pool, Case("random", "random", example))
    assert not problems, report(prepared, problems)


# -- torch.einsum: random valid equations -------------------------------------

@st.composite
def einsum_calls(draw):
    """A valid equation (diagonals, sums, broadcasting ``...``, implicit
    output, 1-3 operands) and inputs of fitting shapes."""
    letters = draw(st.lists(st.sampled_from("abcdeijkBD"), min_size=1, max_size=6, unique=True))
    size = {label: draw(st.integers(2, 4)) for label in letters}
    rest = draw(st.lists(st.integers(2, 3), max_size=2)) if draw(st.integers(0, 3)) == 0 else None
    operands = []
    for _ in range(draw(st.integers(1, 3))):
        labels = draw(st.lists(st.sampled_from(letters), min_size=1, max_size=4))
        if rest is not None and draw(st.booleans()):
            labels.insert(draw(st.integers(0, len(labels))), ELLIPSIS)
        operands.append(labels)
    with_rest = any(ELLIPSIS in labels for labels in operands)
    used = sorted({label for labels in operands for label in labels if label != ELLIPSIS})
    if draw(st.booleans()):
        output = draw(st.permutations(used))[: draw(st.integers(0, len(used)))]
        if with_rest:
            output.insert(draw(st.integers(0, len(output))), ELLIPSIS)
        arrow = "->" + "".join(output)
    else:
        arrow = ""
    space = draw(st.sampled_from(["", " "]))
    equation = ("," + space).join("".join(labels) for labels in operands) + space + arrow
    inputs = {}
    for i, labels in enumerate(operands):
        shape = []
        for label in labels:
            if label == ELLIPSIS:
                # broadcasting: a suffix of the shared shape, or ones
                tail = rest[len(rest) - draw(st.integers(0, len(rest))):]
                shape += [1 if draw(st.integers(0, 3)) == 0 else n for n in tail]
            else:
                shape.append(size[label])
        inputs[f"x{i}"] = f"randn({', '.join(map(str, shape))},)" if shape else "randn(1)[0]"
    return equation, inputs


@RANDOM
@given(einsum_calls())
def test_random_equations_match_torch(pool, call):
    equation, inputs = call
    _run(pool, f"result = torch.einsum({equation!r}, {', '.join(inputs)})", inputs)


# -- einops: random valid patterns, against einops itself --------------------

@st.composite
def einops_calls(draw):
    """rearrange / repeat / reduce with grouping, splitting, unit axes,
    ``...`` and axis-length keywords; inputs of fitting shapes."""
    operation = draw(st.sampled_from(["rearrange", "repeat", "reduce"]))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "h", "w", "d1", "d2"]), min_size=1, max_size=5, unique=True))
    size = {name: draw(st.integers(2, 3)) for name in names}
    rest = draw(st.lists(st.integers(2, 3), max_size=2)) if draw(st.integers(0, 3)) == 0 else None

    def grouped(axes, may_split):
        groups, i = [], 0
        while i < len(axes):
            n = draw(st.integers(1, 3)) if may_split else 1
            groups.append(axes[i : i + n])
            i += n
        return groups

    left = grouped(list(names), True)
    kept = list(names)
    if operation == "reduce":
        kept = [name for name in names if draw(st.booleans())]
    right_axes = draw(st.permutations(kept))
    new = {}
    if operation == "repeat":
        for extra in draw(st.lists(st.sampled_from(["r", "s", "2"]), max_size=2, unique=True)):
            right_axes.insert(draw(st.integers(0, len(right_axes))), extra)
            if extra != "2":
                new[extra] = draw(st.integers(2, 3))
    right = grouped(right_axes, True)
    for side in (left, right):  # unit axes
        if draw(st.integers(0, 3)) == 0:
            side.insert(draw(st.integers(0, len(side))), [])
    shape = [math.prod(size[a] for a in g) for g in left]
    if rest is not None:
        at = draw(st.integers(0, len(left)))
        left.insert(at, ["..."])
        shape[at:at] = rest
        if operation != "reduce" or draw(st.booleans()):
            right.insert(draw(st.integers(0, len(right))), ["..."])
    # MindSpore indexes tensors of at most 8 axes (torch: 64); the elementary
    # axes of a pattern live in one intermediate tensor
    assume(len(names) + len(rest or ()) + len(new) + right_axes.count("2") + 2 <= 8)
    text = lambda side: " ".join("(" + " ".join(g) + ")" if len(g) != 1 or not g else g[0] for g in side)
    pattern = f"{text(left)} -> {text(right)}"
    lengths = dict(new)
    for group in left:
        if len(group) > 1:
            unknown = draw(st.sampled_from(group + [None]))
            lengths.update({a: size[a] for a in group if a != unknown})
    arguments = "".join(f", {k}={v}" for k, v in lengths.items())
    if operation == "reduce":
        arguments = f", {draw(st.sampled_from(['mean', 'sum', 'max', 'min', 'prod']))!r}" + arguments
    call = f"from einops import {operation}\nresult = {operation}(x, {pattern!r}{arguments})"
    return call, {"x": f"uniform(0.5, 1.5, ({', '.join(map(str, shape))},))"}


@RANDOM
@given(einops_calls())
def test_random_patterns_match_einops(pool, call):
    snippet, inputs = call
    _run(pool, snippet, inputs)


def test_gradients_flow_through_the_lowering(pool):
    converted = convert_full("def score(q, k):\n    return torch.einsum('bhid,bhjd->bhij', q, k)\n")
    ms_imports, ms_statements = _split(converted)
    inputs = {"q": "randn(2, 3, 4, 5)", "k": "randn(2, 3, 6, 5)", "w": "randn(2, 3, 4, 6)"}
    torch_code = (
        "def score(q, k):\n    return torch.einsum('bhid,bhjd->bhij', q, k)\n"
        "q.requires_grad_(True)\nk.requires_grad_(True)\n"
        "grads = torch.autograd.grad((score(q, k) * w).sum(), (q, k))\n"
    )
    ms_code = "".join(ms_statements) + "grads = mindspore.grad(lambda q, k: (score(q, k) * w).sum(), grad_position=(0, 1))(q, k)\n"
    job = Job("einsum-grad", "import torch\n", _split(torch_code)[1], ms_imports + "import mindspore\n",
              _split(ms_code)[1], inputs, ("grads",), 3)
    outcome = pool.run(job)
    assert outcome.ok, outcome.error
    assert compare(outcome.torch["grads"], outcome.mindspore["grads"], rtol=1e-4, atol=1e-5, dtype_map={}) == []


# -- parsers --------------------------------------------------------------------

def test_torch_equations_parse_like_torch():
    assert parse_torch_equation("bhid,bhjd->bhij").inputs == (tuple("bhid"), tuple("bhjd"))
    assert parse_torch_equation("b i d , b j d -> b i j").output == tuple("bij")
    assert parse_torch_equation("aB").output == ("B", "a")  # implicit: sorted, upper case first
    assert parse_torch_equation("ii").output == ()
    assert parse_torch_equation("...ij,jk").output == (ELLIPSIS, "i", "k")
    for bad in ("ij->i->j", "i1", "ij->ii", "ij->k", "......i"):
        with pytest.raises(EquationError):
            parse_torch_equation(bad)


def test_einops_equations_use_names():
    equation = parse_einops_equation("batch head i d, batch head j d -> batch head i j")
    assert equation.inputs[0] == ("batch", "head", "i", "d") and equation.output == ("batch", "head", "i", "j")
    for bad in ("b i, b i", "(b i) -> b", "b 2 -> b"):
        with pytest.raises(EquationError):
            parse_einops_equation(bad)


# -- whole modules ---------------------------------------------------------------

_MODULE = '''"""Patch embedding and attention, einops style."""
import torch
import einops
from torch import nn
from einops import rearrange
from einops.layers.torch import Rearrange, Reduce

HEADS = 2


class Block(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.patches = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p), nn.Identity())
        self.pool = Reduce("b n d -> b d", "mean")

    def forward(self, img):
        x = self.patches(img)
        q = rearrange(x, "b n (h d) -> b h n d", h=HEADS)
        s = torch.einsum("bhid,bhjd->bhij", q, q).softmax(-1)
        o = einops.rearrange(torch.einsum("bhij,bhjd->bhid", s, q), "b h n d -> b n (h d)")
        return self.pool(o)
'''


def test_converted_module_runs_without_torch_and_einops(tmp_path):
    import subprocess
    import sys

    from transpiler.convert.pipeline import convert_source

    converted = convert_source(_MODULE, "block.py").output
    imports = [line for line in converted.splitlines() if line.startswith(("import", "from"))]
    assert imports == ["from mindspore import nn, ops"], converted
    lines = converted.splitlines()
    header_end = lines.index("class EinopsRearrange(nn.Cell):")
    assert all(line.startswith(("import", "from", '"""')) or not line for line in lines[:header_end]), converted
    assert "class EinopsReduce(nn.Cell):" in converted and "\n\n\nHEADS = 2" in converted
    assert "EinopsRearrange(p1=p, p2=p)" in converted
    (tmp_path / "block_ms.py").write_text(converted)
    check = (
        "import sys\n"
        "sys.modules['torch'] = None\nsys.modules['einops'] = None\n"  # importing either fails
        "import numpy as np, mindspore\n"
        "from block_ms import Block\n"
        "net = Block(2)\n"
        "out = net(mindspore.Tensor(np.ones((2, 3, 4, 4), np.float32)))\n"
        "assert out.shape == (2, 12), out.shape\n"
        "assert not net.trainable_params()\n"
        "print('ok', net.patches)\n"
    )
    run = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr[-2000:]
    assert "EinopsRearrange" in run.stdout


def test_a_marked_einops_call_keeps_its_import():
    from transpiler.convert.pipeline import convert_source

    converted = convert_source("import einops\ny = einops.rearrange(x, pattern)\nz = einops.rearrange(x, 'a b -> b a')\n",
                               "m.py").output
    assert "import einops" in converted and "z = x.swapaxes(-2, -1)" in converted
    assert "# TODO(ms-migrate): einops.rearrange: the pattern (pattern) is not a string literal" in converted


def test_the_helper_cell_follows_the_imports_it_uses():
    from transpiler.convert.pipeline import convert_source

    source = ("import sys\nsys.path.insert(0, '.')\nimport torch\nfrom einops.layers.torch import Rearrange\n\n"
              "def make():\n    return Rearrange('b c h w -> b (c h w)')\n")
    converted = convert_source(source, "m.py").output
    assert converted.index("from mindspore import nn") < converted.index("class EinopsRearrange(nn.Cell):")
    assert converted.index("class EinopsRearrange(nn.Cell):") < converted.index("def make():")
