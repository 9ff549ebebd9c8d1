"""x-transformers' idioms in a forward, compiled by graph mode and matching torch:
per-layer caches walked with ``next(it, None)`` (structural/sequence_reads.py), memories
popped under ``if mems`` (the same), ``default``'s ``arg() if callable(arg) else arg``
given a tensor (structural/callable_tests.py), and a helper library converted on its
own whose marked pytree call keeps its torch import out of the function
(structural/library_imports.py), named by the forward in a branch that never runs."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side

LIBRARY = textwrap.dedent(
    '''
    import torch
    from torch.utils._pytree import tree_map, tree_flatten, tree_unflatten


    def tree_map_tensor(fn, tree):
        return tree_map(lambda t: fn(t) if torch.is_tensor(t) else t, tree)


    def tree_flatten_with_inverse(tree):
        flattened, spec = tree_flatten(tree)

        def inverse(out):
            return tree_unflatten(out, spec)

        return flattened, inverse


    def plot(x):
        import matplotlib.pyplot as plt
        plt.plot(x)
    '''
)

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn

    from xt_library import tree_map_tensor


    def exists(v):
        return v is not None


    def default(*args):
        for arg in args:
            if exists(arg):
                return arg() if callable(arg) else arg
        return None


    class Layers(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x, mems=None, caches=None, context=None, detach=False):
            mems = mems.copy() if exists(mems) else [None] * len(self.layers)
            iter_cache = iter(default(caches, ()))
            kv_iter = iter((x * 0.25, x * 0.5))
            context = default(context, x)
            for layer in self.layers:
                mem = mems.pop(0) if mems else None
                x = layer(x) + context * 0.5
                x = self.shift(x, cache=next(iter_cache, None), extra=next(kv_iter, None))
                if exists(mem):
                    x = x + mem
            if detach:
                x = tree_map_tensor(lambda t: t.detach(), x)
            return x

        def shift(self, x, cache=None, extra=None):
            if exists(extra):
                x = x + extra
            return x if cache is None else x + cache
    '''
)

CASES = [Case("Layers", [np.random.RandomState(0).rand(2, 4).astype(np.float32)], args=[])]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xt_idioms")
    library, source = folder / "xt_library.py", folder / "xt_idioms.py"
    library.write_text(LIBRARY)
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    converted_library = convert_to(library, folder / "out")  # apart: a library converted on its own
    target = convert_to(source, folder / "out")
    import sys
    sys.path.insert(0, str(folder))
    try:
        module = load_torch_module(source, "xt_idioms_torch")
        torch_results = [torch_side(module, case) for case in CASES]
    finally:
        sys.path.remove(str(folder))
    return target, converted_library, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_iterators_and_guarded_pops_are_read_and_rebound(both_sides):
    text = both_sides[0].read_text()
    assert "iter_cache = tuple(default(caches, ()))\n" in text, text
    assert "            mem = mems[0] if mems else None\n            mems = mems[1:]\n" in text, text
    assert "cache = iter_cache[0] if iter_cache else None\n" in text and "iter_cache = iter_cache[1:]\n" in text, text
    assert "extra = kv_iter[0] if kv_iter else None\n" in text, text
    assert "next(" not in text and ".pop(" not in text, text
    assert "self.shift(x, cache=cache, extra=extra)" in text, text


def test_a_tensor_default_is_taken_as_it_is(both_sides):
    text = both_sides[0].read_text()
    assert "return arg if ops.is_tensor(arg) else arg() if callable(arg) else arg\n" in text, text


def test_the_librarys_torch_imports_stand_above_its_functions_guarded(both_sides):
    text = both_sides[1].read_text()
    for name in ("tree_map", "tree_unflatten"):
        assert f"try:\n    from torch.utils._pytree import {name}\nexcept ImportError:" in text, text
        assert f"    {name} = None\n" in text, text
    functions = text[text.index("def tree_map_tensor"):]
    assert "from torch" not in functions, text
    assert "# TODO(ms-migrate): torch.utils._pytree.tree_map" in functions, text
    assert "    import matplotlib.pyplot as plt\n" in functions, text  # the author's own import stays


def test_values_and_gradients_in_graph_mode_match_torch(both_sides):
    _, _, torch_results, ms_results = both_sides
    problems = differences(torch_results[0], ms_results[0])
    assert not problems, problems


def test_a_script_keeps_its_marked_imports_where_they_are():
    from transpiler.convert.pipeline import convert_source

    source = ("import torch\n\n\ndef save(x):\n    torch.utils._pytree.tree_map(print, x)\n\n\n"
              "if __name__ == '__main__':\n    save([1])\n")
    output = convert_source(source, "script.py").output
    assert "try:" not in output, output


def test_a_library_function_with_a_relative_import_converts():
    """torch's own source: ``from . import x`` in a library function is no torch import (and
    names no module to test), so nothing moves and nothing fails."""
    from transpiler.convert.pipeline import convert_source

    source = "import torch\n\n\ndef rebuild(t):\n    from . import helpers\n    return helpers.f(torch.relu(t))\n"
    result = convert_source(source, "lib.py")
    assert not [d for d in result.diagnostics if d.rule == "internal"], result.diagnostics
    assert "    from . import helpers\n" in result.output, result.output
