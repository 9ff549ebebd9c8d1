"""Statements that run when a module is imported (module and class level), as
public research code and training scripts write them (DESIGN 4).

The trivial runtime queries convert, so such statements are not marked at all:
torch version checks take torch 2.x's branch, device and dtype queries get the
answer of the machine the converted code runs on. A statement that truly cannot
be converted never leaves a name silently undefined: without torch, the name
fails where it is used, with a message naming the marker's file and line.

Each check imports the converted module in a child process where importing
torch fails (transpiler.proof.no_torch), as on a machine without torch."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tests.conversion import convert_to
from transpiler.convert.diagnostics import MARKER_PREFIX
from transpiler.convert.pipeline import convert_source

# the shapes of module-level code measured on public repositories
SHAPES = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from packaging import version

# a training script's precision choice, and the table read sixty lines later
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]

# version checks: a list of ints read by functions, a major version, packaging, a branch
_TORCH_VER = [int(x) for x in torch.__version__.split(".")[:2]]
TORCH_MAJOR = int(torch.__version__.split('.')[0])
NEW_ENOUGH = version.parse(torch.__version__) >= version.parse("1.8")
BEFORE_2_2 = torch.__version__ < "2.2"
if torch.__version__ >= "1.10":
    MODE = "new"
else:
    MODE = "old"

# feature flags
HAS_COMPILE = hasattr(torch, "compile")
FLASH = hasattr(F, "scaled_dot_product_attention")

# runtime queries and settings
ngpu = torch.cuda.device_count()
default_dtype = torch.get_default_dtype()
mps = torch.backends.mps.is_available()
cudnn = torch.backends.cudnn.is_available()
torch.set_float32_matmul_precision("high")
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device = 'cuda' if torch.cuda.is_available() else 'cpu'


def meshgrid(*tensors):
    if _TORCH_VER >= [1, 10]:
        return torch.meshgrid(*tensors, indexing="ij")
    else:
        return torch.meshgrid(*tensors)
'''

# what no rule converts: a value, a class attribute, a branch defining a function, a call for its effect
UNCONVERTIBLE = '''\
import torch
import torch.nn as nn

TABLE = torch.frobnicate(3)

if torch.frobnicate_more():
    def act(x):
        return x
else:
    def act(x):
        return -x

torch.frobnicate_settings(True)


def lookup(key):
    return TABLE[key]


class Rows:
    def __len__(self):
        return 2

    def __getitem__(self, index):
        return (float(TABLE[index]),)


class Net(nn.Module):
    scale = torch.frobnicate(2)

    def forward(self, x):
        return x * self.scale
'''


def _run_without_torch(directory: pathlib.Path, code: str) -> dict:
    script = textwrap.dedent(f"""
        import json, sys, warnings
        warnings.simplefilter("always")
        from transpiler.proof.no_torch import block_torch
        block_torch()
        sys.path.insert(0, {str(directory)!r})
        result = {{}}
    """) + textwrap.dedent(code) + "\nprint('RESULT ' + json.dumps(result))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(l for l in done.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _convert(tmp_path: pathlib.Path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return convert_to(path, out).read_text()


def _line_of(code: str, text: str) -> int:
    return code[:code.index(text)].count("\n") + 1


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("shapes")
    converted = _convert(tmp_path, "shapes.py", SHAPES)
    result = _run_without_torch(tmp_path / "out", """
        import numpy as np, mindspore
        import shapes
        names = ["dtype", "_TORCH_VER", "TORCH_MAJOR", "NEW_ENOUGH", "BEFORE_2_2", "MODE", "HAS_COMPILE", "FLASH",
                 "ngpu", "mps", "cudnn", "device"]
        result.update({name: getattr(shapes, name) for name in names})
        result["ptdtype"] = str(shapes.ptdtype)
        result["default_dtype"] = str(shapes.default_dtype)
        grid = shapes.meshgrid(mindspore.Tensor(np.arange(2.0)), mindspore.Tensor(np.arange(3.0)))
        result["meshgrid"] = [list(g.shape) for g in grid]
    """)
    return converted, result


def test_runtime_queries_and_version_checks_convert_without_markers(shapes):
    converted, _ = shapes
    assert MARKER_PREFIX not in converted
    assert "torch" not in converted.replace("torch 2", "")
    assert "NotConverted" not in converted  # nothing left to stand in for
    assert '_TORCH_VER = [int(x) for x in "2.13.0".split(".")[:2]]' in converted
    assert "NEW_ENOUGH = True" in converted and "BEFORE_2_2 = False" in converted
    assert "if True:" in converted  # torch.__version__ >= "1.10"
    assert "default_dtype = mindspore.float32" in converted and "mps = False" in converted


def test_converted_module_takes_torch_2_branches_without_torch(shapes):
    _, result = shapes
    # the answers of torch 2.13 on this CPU machine
    assert result["dtype"] == "float16" and result["ptdtype"] == "Float16"
    assert result["_TORCH_VER"] == [2, 13] and result["TORCH_MAJOR"] == 2
    assert result["NEW_ENOUGH"] is True and result["BEFORE_2_2"] is False and result["MODE"] == "new"
    assert result["FLASH"] is True and isinstance(result["HAS_COMPILE"], bool)
    assert result["ngpu"] == 0 and result["mps"] is False and result["cudnn"] is False
    assert result["default_dtype"] == "Float32" and result["device"] == "cpu"
    # a function reading the version list runs its torch >= 1.10 branch
    assert result["meshgrid"] == [[2, 3], [2, 3]]


def test_torch_answers_as_the_converted_code_does():
    import torch

    namespace: dict = {}
    exec(SHAPES.split("\n\ndef meshgrid")[0], namespace)  # torch itself, here
    assert namespace["dtype"] == "float16" and namespace["MODE"] == "new" and namespace["BEFORE_2_2"] is False
    assert namespace["ngpu"] == 0 and namespace["mps"] is False and namespace["cudnn"] is False
    assert namespace["_TORCH_VER"][0] == 2 and namespace["default_dtype"] is torch.float32


@pytest.fixture(scope="module")
def unconvertible(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("unconvertible")
    converted = _convert(tmp_path, "research.py", UNCONVERTIBLE)
    folder = str(tmp_path / "out")
    result = _run_without_torch(tmp_path / "out", f"""
        import research  # imports without torch
        from transpiler.proof.marked_lines import marked_frame
        uses = [("lookup", lambda: research.lookup(1)), ("class", lambda: research.Net.scale * 2),
                ("function", lambda: research.act(3)), ("repr", lambda: repr(research.TABLE))]
        for name, use in uses:
            try:
                result[name] = use()
            except NotImplementedError as exc:
                result[name] = str(exc)
                found = marked_frame(exc, {folder!r})
                result[name + " marker"] = None if found is None else [found[1], found[2]]
        # inside a MindSpore data pipeline, which raises its own RuntimeError quoting the user's
        import mindspore
        rows = mindspore.dataset.GeneratorDataset(research.Rows(), column_names=["x"], shuffle=False)
        try:
            list(rows.create_tuple_iterator())
        except RuntimeError as exc:
            found = marked_frame(exc, {folder!r})
            result["pipeline marker"] = None if found is None else [found[1], found[2]]
    """)
    warned = _run_without_torch(tmp_path / "out", """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import research
        result["warnings"] = [str(w.message) for w in caught]
    """)
    return converted, result, warned["warnings"]


def test_unconvertible_value_fails_where_it_is_used_naming_its_marker(unconvertible):
    converted, result, _ = unconvertible
    line = _line_of(converted, MARKER_PREFIX + "torch.frobnicate: no MindSpore rule for this API\ntry:\n    import torch\n"
                    "    TABLE")
    assert ('    TABLE = NotConverted("TABLE", "research.py:%d: torch.frobnicate: no MindSpore rule for this API")\n'
            % line) in converted
    assert result["lookup"] == ("TABLE is undefined: ms-migrate could not convert the statement that defines it "
                                f"(TODO(ms-migrate) at research.py:{line}: torch.frobnicate: no MindSpore rule for "
                                "this API)")
    # benchmarks and verify attribute the failure to the marker, also through a data pipeline
    assert result["lookup marker"] == [line, "torch.frobnicate: no MindSpore rule for this API"]
    assert result["pipeline marker"] == result["lookup marker"]
    assert result["repr"].startswith("<TABLE is undefined")  # readable in a debugger, not a failure


def test_unconvertible_class_attribute_fails_where_it_is_used(unconvertible):
    converted, result, _ = unconvertible
    line = _line_of(converted, "    " + MARKER_PREFIX + "torch.frobnicate: no MindSpore rule for this API\n    try:")
    assert result["class"].startswith("scale is undefined") and f"research.py:{line}: torch.frobnicate" in result["class"]
    assert result["class marker"][0] == line


def test_unconvertible_branch_defining_a_function_gives_a_function_that_raises(unconvertible):
    converted, result, _ = unconvertible
    line = _line_of(converted, MARKER_PREFIX + "torch.frobnicate_more")
    assert result["function"] == ("act needs torch: ms-migrate could not convert it (TODO(ms-migrate) at "
                                  f"research.py:{line}: torch.frobnicate_more: no MindSpore rule for this API)")
    assert result["function marker"][0] == line


def test_unconvertible_statement_defining_nothing_warns_that_it_did_not_run(unconvertible):
    converted, _, warned = unconvertible
    line = _line_of(converted, MARKER_PREFIX + "torch.frobnicate_settings")
    assert warned == ["not run: this statement needs torch, and ms-migrate could not convert it (TODO(ms-migrate) at "
                      f"research.py:{line}: torch.frobnicate_settings: no MindSpore rule for this API)"]


DEVICE_READ = '''\
import torch
torch.frobnicate_settings(True)


def place(x):
    return torch.zeros(2, device=x.device), x.device
'''


def test_converting_the_output_again_changes_nothing():
    # (a device read stays read once through torch_device: the torch import standing under
    # a marker in its try is no sign of torch code)
    for source in (SHAPES, UNCONVERTIBLE, DEVICE_READ):
        once = convert_source(source, "m.py").output
        assert convert_source(once, "m.py").output == once


def test_names_bound_in_many_ways_each_get_a_stand_in():
    code = ("import torch\n"
            "a, (b, *c) = torch.frobnicate()\n"
            "for i in torch.frobnicate():\n    d: int = i\n    with open(i) as e:\n        pass\n"
            "    class K: pass\n"
            "    f = [j for j in i]\n"
            "try:\n    g = torch.frobnicate()\nexcept ValueError as h:\n    pass\n")
    out = convert_source(code, "m.py").output
    for name in "abcdefgi":
        assert f'    {name} = NotConverted("{name}", "m.py:' in out, name
    assert "    class K:\n        def __init__(self, *args, **kwargs):\n            raise NotImplementedError(" in out
    assert 'NotConverted("j"' not in out and 'NotConverted("h"' not in out  # not bound in the module after it ran


def test_torch_imports_inside_a_guarded_statement_get_no_stand_in():
    # dino's eval script: a marked branch holding a marked statement of its own
    code = ("import torch\nfrom torchvision import models as tv\n"
            "if ARCH in tv.__dict__.keys():\n    model = torch.hub.load('x', ARCH)\nelse:\n    model = None\n")
    out = convert_source(code, "m.py").output
    assert 'model = NotConverted("model", "m.py:' in out
    assert 'NotConverted("torch"' not in out and 'NotConverted("tv"' not in out


def test_presence_checks_as_training_scripts_write_them():
    # timm's train.py: has_native_amp
    code = ("import torch\nimport torch.nn.functional as F\nhas_native_amp = False\ntry:\n"
            "    if getattr(torch.cuda.amp, 'autocast') is not None:\n        has_native_amp = True\n"
            "except AttributeError:\n    pass\n"
            "no_sdpa = getattr(F, 'scaled_dot_product_attention') is None\n"
            "missing = getattr(torch, 'frobnicate') is None\n")
    out = convert_source(code, "m.py").output
    assert "    if True:\n        has_native_amp = True\n" in out
    assert "no_sdpa = False\nmissing = True\n" in out and "torch" not in out


def test_print_options_are_numpy_s():
    code = ("import torch\ntorch.set_printoptions(linewidth=320, precision=5, profile='long')\n"
            "torch.set_printoptions(sci_mode=False)\n")
    out = convert_source(code, "m.py").output
    assert out == ("import numpy as np\nnp.set_printoptions(precision=5, linewidth=320)\n"
                   "np.set_printoptions(suppress=True)\n")


def test_a_failure_inside_a_guarded_statement_is_found_under_its_marker(tmp_path):
    from transpiler.proof.marked_lines import marker_above

    path = tmp_path / "guarded.py"
    path.write_text(f"x = 1\n{MARKER_PREFIX}torch.frobnicate: no MindSpore rule for this API\ntry:\n"
                    "    import torch\n    y = torch.frobnicate(x)\nexcept ImportError:\n    pass\n")
    assert marker_above(str(path), 5) == "torch.frobnicate: no MindSpore rule for this API"
    assert marker_above(str(path), 1) is None


def test_a_stand_in_failure_is_found_in_a_renamed_file(tmp_path):
    from transpiler.proof.marked_lines import marked_frame

    source = tmp_path / "model.py"
    source.write_text("import torch\nTABLE = torch.frobnicate(3)\n\n\ndef lookup(key):\n    return TABLE[key]\n")
    converted = convert_source(source.read_text(), "model.py").output
    renamed = tmp_path / "model_ms.py"  # convert model.py -o model_ms.py
    renamed.write_text(converted)
    namespace = {"__name__": "model_ms"}
    exec(compile(converted.replace("    import torch\n", "    raise ImportError\n"), str(renamed), "exec"), namespace)
    with pytest.raises(NotImplementedError) as failure:
        namespace["lookup"](1)
    line = _line_of(converted, MARKER_PREFIX)
    assert marked_frame(failure.value, str(tmp_path)) == (str(renamed), line,
                                                          "torch.frobnicate: no MindSpore rule for this API")


def test_a_comment_between_the_marker_and_the_try_does_not_hide_the_marker_line():
    # llm.c: a trailing comment the rewrite moved above the statement, under its marker
    out = convert_source("import torch\ntorch._inductor.config.coordinate_descent_tuning = True # suggested\n",
                         "train.py").output
    line = _line_of(out, MARKER_PREFIX)
    assert f"{MARKER_PREFIX}torch._inductor.config.coordinate_descent_tuning" in out and "# suggested" in out
    assert f'(TODO(ms-migrate) at train.py:{line}: torch._inductor.config.coordinate_descent_tuning: ' in out


MARKED_FUNCTION = """
import torch
from torch.autograd import Function


class DetachMultiple(Function):
    @staticmethod
    def forward(ctx, *tensors, **options):
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return grads


detach_multiple = DetachMultiple.apply
zeros = torch.zeros(2)
"""


def test_a_marked_autograd_function_read_through_apply_at_module_level(tmp_path):
    """x-transformers' ``detach_multiple = DetachMultiple.apply`` under a Function
    the conversion marks (here for its ``**options``): the module imports without torch, and calling the
    function raises naming the marker (before, ``DetachMultiple()`` ran at import)."""
    code = _convert(tmp_path, "fns.py", MARKED_FUNCTION)
    assert "detach_multiple = DetachMultiple.apply" in code
    result = _run_without_torch(tmp_path / "out", """
        import fns
        result["zeros"] = fns.zeros.asnumpy().tolist()
        try:
            fns.detach_multiple(1)
        except NotImplementedError as exc:
            result["error"] = str(exc)
    """)
    assert result["zeros"] == [0.0, 0.0]
    assert f"TODO(ms-migrate) at fns.py:{_line_of(code, MARKER_PREFIX)}" in result["error"]
