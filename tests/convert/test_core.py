"""The converter core: name resolution, structural rewrites, markers, layout
preservation and idempotence (issue "The converter core")."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from transpiler.convert.pipeline import convert_source
from transpiler.convert.diagnostics import Outcome, Severity
from transpiler.convert.rewriter import MARKER_PREFIX


def convert(code: str) -> str:
    result = convert_source(textwrap.dedent(code), "m.py")
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    cst.parse_module(result.output)  # the output always parses
    return result.output


def diagnostics(code: str):
    return convert_source(textwrap.dedent(code), "m.py").diagnostics


# -- name resolution -----------------------------------------------------------


@pytest.mark.parametrize(
    "imports, expr",
    [
        ("import torch", "torch.nn.Linear(2, 3)"),
        ("import torch.nn as nn", "nn.Linear(2, 3)"),
        ("from torch import nn", "nn.Linear(2, 3)"),
        ("import torch as t", "t.nn.Linear(2, 3)"),
        ("from torch.nn import Linear", "Linear(2, 3)"),
        ("from torch.nn import Linear as L", "L(2, 3)"),
        ("import torch.nn", "torch.nn.Linear(2, 3)"),
    ],
)
def test_aliases_resolve(imports, expr):
    out = convert(f"{imports}\nlayer = {expr}\n")
    assert out == "from mindspore import nn\nlayer = nn.Dense(2, 3)\n"


def test_functional_alias():
    out = convert("from torch.nn import functional as F\ny = F.relu(x)\n")
    assert out == "from mindspore import ops\ny = ops.relu(x)\n"


def test_shadowed_names_are_left_alone():
    code = """\
    import torch.nn as nn

    def build(nn):
        return nn.Linear(2, 3)

    def other():
        nn = object()
        return nn.Linear(2, 3)

    layer = nn.Linear(2, 3)
    """
    out = convert(code)
    assert out.count("nn.Linear(2, 3)") == 2
    assert "layer = mindspore.nn.Dense(2, 3)" in out  # `nn` still names torch.nn above
    assert "import torch.nn as nn" not in out


def test_shadowing_respects_global_declaration():
    code = """\
    import torch

    def f():
        global torch
        return torch.zeros(2)
    """
    assert "ops.zeros(2)" in convert(code)


def test_class_body_binding_does_not_shadow_methods():
    code = """\
    import torch

    class A:
        torch = 1

        def f(self):
            return torch.zeros(2)
    """
    assert "ops.zeros(2)" in convert(code)


def test_a_function_uses_a_module_import_written_below_it():
    """A function body runs after the whole module is imported: torch imported at
    the bottom (against circular imports) is the torch its calls mean."""
    code = """\
    def zeros_then_check(x):
        y = torch.zeros(3)
        return y, torch._check(x)


    def own(torch):
        return torch.zeros(2)


    import torch
    """
    import mindspore

    out = convert(code)
    assert "y = ops.zeros(3)" in out
    assert "# TODO(ms-migrate): torch._check" in out
    assert "return torch.zeros(2)" in out  # a parameter named torch is not torch
    assert convert(out) == out
    namespace: dict = {}
    exec(compile(out, "bottom_import.py", "exec"), namespace)
    y, _ = namespace["zeros_then_check"](True)  # the marked torch._check still runs where torch is installed
    assert isinstance(y, mindspore.Tensor) and y.shape == (3,)
    assert namespace["own"](type("T", (), {"zeros": staticmethod(lambda n: n)})) == 2


def test_a_tuple_of_layer_classes_matches_the_layers_as_in_torch():
    """minGPT's weight-decay groups: isinstance() against a tuple of torch layer
    classes must accept the converted layers (the MindSpore classes, not adapters)."""
    code = """\
    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3), nn.Embedding(4, 3))
    whitelist = (torch.nn.Linear,)
    blacklist = (torch.nn.LayerNorm, torch.nn.Embedding)
    result = [(isinstance(m, whitelist), isinstance(m, blacklist)) for m in (net[0], net[1], net[2])]
    """
    expected: dict = {}
    exec(compile(textwrap.dedent(code), "torch_side.py", "exec"), expected)
    out = convert(code)
    assert "whitelist = (nn.Dense,)" in out
    converted: dict = {}
    exec(compile(out, "converted.py", "exec"), converted)
    assert converted["result"] == expected["result"] == [(True, False), (False, True), (False, True)]


def test_nested_rewrites():
    out = convert("import torch\ny = torch.cat([torch.zeros(1), torch.ones(2)], dim=0)\n")
    assert "ops.cat([ops.zeros(1), ops.ones(2)], axis=0)" in out
    assert "torch" not in out


def test_files_without_torch_are_unchanged():
    result = convert_source("import numpy as np\n# nothing here\n", "x.py")
    assert result.status == "unchanged"


# -- layout preservation ------------------------------------------------------------


def test_untouched_code_is_byte_identical():
    code = (
        "import torch\n"
        "\n"
        "# a comment   with   odd spacing\n"
        "x = {'a' :1,\n"
        "      'b':2}   # keep me\n"
        "\n\n"
        "def f( a ):\n"
        "    return a+1\n"
        "y = torch.zeros( 3 )  # changed line\n"
    )
    out = convert(code)
    assert out.startswith("from mindspore import ops\n\n# a comment   with   odd spacing\n")
    assert "x = {'a' :1,\n      'b':2}   # keep me\n\n\ndef f( a ):\n    return a+1\n" in out
    assert "y = ops.zeros(3)  # changed line\n" in out


def test_only_changed_statements_are_formatted():
    code = "import torch\na = [1,2,3]\nb = torch.zeros( 2,3 )\nc = [4,5,6]\n"
    out = convert(code)
    assert out == "from mindspore import ops\na = [1,2,3]\nb = ops.zeros((2, 3))\nc = [4,5,6]\n"


def test_crlf_line_endings_are_preserved():
    code = "import torch\r\n# note\r\nx = torch.zeros(2)\r\n"
    out = convert_source(code, "m.py").output
    assert out == "from mindspore import ops\r\n# note\r\nx = ops.zeros(2)\r\n"


def test_comment_above_first_import_stays_on_top():
    out = convert("# header\nimport torch\nx = torch.zeros(1)\n")
    assert out.startswith("# header\nfrom mindspore import ops\n")


def test_comments_of_removed_statements_are_kept():
    code = """\
    import torch

    def run(model, x, device):
        # move to the GPU
        model.to(device)  # really
        return model(x)
    """
    out = convert(code)
    assert "# move to the GPU" in out and "# really" in out
    assert "model.to" not in out


def test_device_moves_that_leave_nothing_go():
    code = """\
    import torch

    def batch(x, y, a, b, device):
        x = x.to(device)
        x, y = x.to(device), y.to(device)
        a, b = b.to(device), a.to(device)
        return x, y, a, b
    """
    out = convert(code)
    assert "x = x" not in out and "x, y = x, y" not in out, out
    assert "a, b = b, a" in out, out  # a swap is no move


# -- structural rewrites ------------------------------------------------------------


def test_module_becomes_cell_and_forward_construct():
    code = """\
    import torch.nn as nn

    class Base(nn.Module):
        def forward(self, x):
            return x

    class Child(Base):
        def forward(self, x):
            y = super().forward(x)
            return self.forward2(y) + self.forward(y)

        def forward2(self, y):
            return y

    class Plain:
        def forward(self, x):
            return x
    """
    out = convert(code)
    assert "class Base(nn.Cell):" in out
    assert out.count("def construct(self, x):") == 2
    assert "super().construct(x)" in out and "self.construct(y)" in out
    assert "class Plain:\n    def forward(self, x):" in out


def test_module_methods():
    code = """\
    import torch
    def f(model, sd):
        a = model.parameters()
        b = model.named_parameters()
        c = model.children()
        d = model.named_modules()
        model.train()
        model.eval()
        s = model.state_dict()
        model.load_state_dict(sd)
        torch.save(model.state_dict(), "w.pth")
        sd2 = torch.load("w.pth", map_location="cpu")
    """
    out = convert(code)
    for expected in (
        "a = model.trainable_params()",
        "b = filter(lambda item: item[1].requires_grad, model.parameters_and_names())",
        "c = model.cells()",
        "d = model.cells_and_names()",
        "model.set_train(True)",
        "model.set_train(False)",
        "s = model.parameters_dict()",
        "mindspore.load_param_into_net(model, sd)",
        'mindspore.save_checkpoint(model, "w.pth")',
        'sd2 = mindspore.load_checkpoint("w.pth.ckpt")',  # save_checkpoint appends .ckpt
    ):
        assert expected in out, expected


def test_containers_parameters_and_buffers():
    code = """\
    import torch
    import torch.nn as nn

    class M(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.seq = nn.Sequential(*layers)
            self.blocks = nn.ModuleList(layers)
            self.heads = nn.ModuleDict({"a": nn.ReLU()})
            self.w = nn.Parameter(torch.zeros(3))
            self.register_buffer("running", torch.ones(3))
    """
    out = convert(code)
    assert "self.seq = nn.SequentialCell(*layers)" in out
    assert "self.blocks = nn.CellList(layers)" in out
    assert 'self.heads = nn.CellDict({"a": nn.ReLU()})' in out
    assert "self.w = mindspore.Parameter(ops.zeros(3))" in out
    assert 'self.running = mindspore.Parameter(\n            ops.ones(3), name="running", requires_grad=False\n        )' in out


def test_non_persistent_buffers_are_plain_tensors():
    """torch keeps a non-persistent buffer out of its state dict: no Parameter
    (MindSpore would save it and want it filled); decided at run time when
    ``persistent`` is a variable."""
    code = """\
    import torch
    import torch.nn as nn

    class M(nn.Module):
        def __init__(self, keep):
            super().__init__()
            self.register_buffer("cache", torch.zeros(3), persistent=False)
            self.register_buffer("mask", torch.ones(3), False)
            self.register_buffer("table", torch.ones(3), persistent=keep)
    """
    out = convert(code)
    assert "self.cache = ops.zeros(3)\n" in out
    assert "self.mask = ops.ones(3)\n" in out
    assert ('self.table = (\n            mindspore.Parameter(ops.ones(3), name="table", requires_grad=False)\n'
            "            if keep\n            else ops.ones(3)\n        )") in out


def test_devices_are_made_inert():
    code = """\
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    x = x.cuda()
    y = y.cpu().numpy()
    z = z.to(device, torch.float16)
    """
    out = convert(code)
    assert 'device = "cuda" if mindspore.get_context("device_target") == "GPU" else "cpu"' in out
    assert "model = Net()\n" in out
    assert "x = x\n" not in out  # a self-assignment left by a device move is dropped
    assert "y = y.numpy()" in out
    assert "z = z.to(mindspore.float16)" in out


def test_no_grad_is_unwrapped():
    code = """\
    import torch

    @torch.no_grad()
    def evaluate(model, x):
        with torch.no_grad():  # inference
            # score it
            out = model(x)
        return out
    """
    out = convert(code)
    assert "no_grad" not in out and "torch" not in out
    assert "def evaluate(model, x):\n    # inference\n    # score it\n    out = model(x)\n    return out\n" in out


def test_dtypes():
    out = convert("import torch\na = x.to(torch.float32)\nb = torch.long\nc = torch.bool\n")
    assert "a = x.to(mindspore.float32)" in out
    assert "b = mindspore.int64" in out
    assert "c = mindspore.bool_" in out


def test_isinstance_of_layer_class_is_renamed():
    out = convert("import torch.nn as nn\nok = isinstance(m, (nn.Conv2d, nn.Linear))\n")
    assert "ok = isinstance(m, (nn.Conv2d, nn.Dense))" in out


# -- markers ------------------------------------------------------------------------


def test_unknown_api_is_marked_and_still_parses():
    code = "import torch\nlayer = torch.nn.utils.spectral_norm(torch.nn.Linear(2, 3))\n"
    out = convert(code)
    assert f"{MARKER_PREFIX}torch.nn.utils.spectral_norm: no MindSpore rule" in out
    # the marked call stays torch, so its import stays
    assert "import torch\n" in out
    assert "layer = torch.nn.utils.spectral_norm(nn.Dense(2, 3))" in out


def test_marked_statement_spells_out_a_torch_alias_mindspore_uses():
    # a local `import torch.nn as nn` would hide MindSpore's nn: the marked
    # statement names torch.nn in full under its own `import torch.nn`
    # (at module level the statement runs on import: it is guarded, so that
    # the module imports without torch)
    # the module imports without torch; without it, `a` fails where it is used, naming the
    # marker (tests/convert/test_module_level_markers.py)
    out = convert("import torch.nn as nn\na = nn.utils.spectral_norm(nn.Linear(2, 3))\n")
    marker_line = out[:out.index(MARKER_PREFIX)].count("\n") + 1
    assert out.startswith("from mindspore import nn\n\n\nclass NotConverted:\n")
    assert out.endswith(
        f"{MARKER_PREFIX}torch.nn.utils.spectral_norm: no MindSpore rule for this API\n"
        "try:\n"
        "    import torch.nn\n"
        "    a = torch.nn.utils.spectral_norm(nn.Dense(2, 3))\n"
        "except ImportError:\n"
        f'    a = NotConverted("a", "m.py:{marker_line}: torch.nn.utils.spectral_norm: no MindSpore rule for this API")\n'
    )


def test_a_name_imported_in_two_places_keeps_its_own_import_above_each_marked_statement():
    # torch._dynamo's style: each function imports its own `config`; the import in
    # force above a marked statement is the function's own (left where it stands), not
    # the file's last
    code = (
        "def inductor_has(key):\n"
        "    from torch._inductor import config\n"
        "    return hasattr(config, key)\n"
        "\n"
        "def dynamo_has(key):\n"
        "    from torch._dynamo import config\n"
        "    return hasattr(config, key)\n"
    )
    out = convert(code)
    first, second = out.split("def dynamo_has")
    assert "from torch._inductor import config\n    # TODO(ms-migrate): torch._inductor.config" in first
    assert "from torch._dynamo import config\n    # TODO(ms-migrate): torch._dynamo.config" in second
    assert convert(out) == out


def test_argument_that_cannot_be_carried_is_marked_never_dropped():
    out = convert("import torch.nn as nn\nc = nn.LSTM(4, 8, proj_size=2)\n")
    assert "proj_size" in out.split(MARKER_PREFIX)[1].splitlines()[0]
    assert "    import torch.nn\n    c = torch.nn.LSTM(4, 8, proj_size=2)" in out


def test_marker_is_not_duplicated_on_reconversion():
    once = convert("import torch\nx = torch.frobnicate(1)\n")
    twice = convert(once)
    assert once == twice
    assert once.count(MARKER_PREFIX) == 1


def test_in_place_in_expression_converts_or_is_marked():
    # a known in-place method on a temporary inside an expression: the updated value is all there is
    known = convert("import torch\nclass A:\n    def f(self, x):\n        return torch.relu(x).add_(1).sum()\n")
    assert "        return ops.relu(x).add(1).sum()\n" in known and MARKER_PREFIX not in known
    # on a name outside a forward: the tensor is updated (ops.assign returns the new value)
    named = convert("import torch\ndef f(x, g):\n    y = x.mul_(g) + 1\n    return y\n")
    assert "    y = ops.assign(x, x.mul(g)) + 1\n" in named
    # on an item: no expression keeps the update
    item = convert("import torch\ndef f(x, g):\n    y = x[0].mul_(g) + 1\n    return y\n")
    assert f"{MARKER_PREFIX}torch.Tensor.mul_: in-place operation on an item inside an expression" in item
    # one no rule knows, on a torch result
    unknown = convert("import torch\nclass A:\n    def f(self, x):\n        return torch.nn.functional.relu(x).frobnicate_()\n")
    assert (f"        {MARKER_PREFIX}torch.Tensor.frobnicate_: in-place method with no rule; no MindSpore form is "
            "known\n        return ops.relu(x).frobnicate_()\n") in unknown
    cst.parse_module(unknown)
    # not a torch result: an object's own method ending in _ is left alone
    plain = convert("import torch\nclass A:\n    def f(self, x):\n        return self.cache.frobnicate_()\n")
    assert MARKER_PREFIX not in plain


# -- reporting ----------------------------------------------------------------------


def test_every_use_is_counted_once():
    code = """\
    import torch
    a = torch.zeros(2)
    b = torch.frobnicate(a)
    c = a.q_scale()
    """
    outcomes = [d.outcome for d in diagnostics(code) if d.outcome is not Outcome.NONE]
    assert outcomes.count(Outcome.CONVERTED) == 1
    assert outcomes.count(Outcome.MARKED) == 1
    assert outcomes.count(Outcome.UNKNOWN) == 1


def test_diagnostics_carry_positions():
    found = diagnostics("import torch\n\nx = 1; y = torch.frobnicate(2)\n")
    marker = next(d for d in found if d.severity is Severity.MARKER)
    assert (marker.path, marker.line, marker.col) == ("m.py", 3, 12)


def test_diagnostics_after_statements_passed_by_keep_their_positions():
    # the statements before the marker hold nothing to convert: their lines are counted from the output
    code = ('import torch\r\n\r\ndef f(a,\r\n      b):  # c\r\n    """doc\r\n    lines"""\r\n    return (a +\r\n'
            '            b)\r\n\r\nclass A:\r\n    def g(self):\r\n        return 1\r\n\r\n'
            '    def h(self):\r\n        return torch.frobnicate(\r\n            1)\r\n')
    marker = next(d for d in diagnostics(code) if d.severity is Severity.MARKER)
    assert (marker.line, marker.col) == (15, 16)


def test_a_warning_on_an_argument_a_rule_rewrote_points_at_the_call():
    # the warning names the rewritten argument, a node the original file does not hold
    found = diagnostics("import torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self, d):\n"
                        "        super().__init__()\n        self.norm = nn.LayerNorm(d)\n")
    warning = next(d for d in found if d.severity is Severity.WARNING and "is an int" in d.message)
    assert (warning.line, warning.col) == (6, 21)


def test_a_diagnostic_round_trips_through_its_dict_with_every_field():
    from dataclasses import fields

    from transpiler.convert.diagnostics import Diagnostic

    full = Diagnostic("m.ipynb", 3, 5, "torch.nn.Linear", Severity.INFO, "converted", Outcome.CONVERTED, cell=2,
                      changes=(("bias", "bias=False -> has_bias=False"),))
    assert list(full.to_dict()) == [f.name for f in fields(Diagnostic)]
    bare = Diagnostic("m.py", 1, 1, "x", Severity.WARNING, "look")
    for diagnostic in (full, bare):
        assert Diagnostic.from_dict(diagnostic.to_dict()) == diagnostic


def test_syntax_error_is_one_diagnostic():
    result = convert_source("import torch\ndef f(:\n", "bad.py")
    assert result.status == "failed"
    [error] = result.diagnostics
    assert error.one_line().startswith("bad.py:2:")
    assert "syntax error" in error.message and "\n" not in error.message


# -- idempotence ----------------------------------------------------------------------


def test_converting_output_again_changes_nothing(tmp_path):
    import pathlib

    for sample in sorted(pathlib.Path(__file__).parents[2].joinpath("samples").glob("*.py")):
        once = convert_source(sample.read_text(), sample.name).output
        twice = convert_source(once, sample.name).output
        assert twice == once, sample.name


def test_marker_on_first_statement_is_not_duplicated():
    once = convert("import torch\n# TODO(ms-migrate): torch.frobnicate: no MindSpore rule for this API\nx = torch.frobnicate(1)\n")
    assert once.count(MARKER_PREFIX) == 1
    assert convert(once) == once


def test_in_place_update_reaches_every_alias():
    """p.mul_() on parameters met in a loop must change the Parameters."""
    import mindspore
    import numpy as np

    code = """\
    import torch
    import torch.nn as nn

    layer = nn.Linear(3, 2)
    before = layer.weight.detach().numpy().copy()
    for p in layer.parameters():
        p.mul_(0.5)
    after = layer.weight.detach().numpy()
    """
    out = convert(code)
    assert "ops.assign(p, p.mul(0.5))" in out or "ops.assign(p, p * 0.5)" in out, out
    namespace: dict = {}
    exec(compile(out, "converted.py", "exec"), namespace)
    np.testing.assert_allclose(namespace["after"], namespace["before"] * 0.5, rtol=1e-6)
    assert isinstance(namespace["layer"], mindspore.nn.Cell)
