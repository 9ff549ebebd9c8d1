"""Crashes and invalid output found by converting torch's own source tree,
each reduced to the construct that caused it."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.pipeline import convert_source


def _convert(code: str) -> str:
    result = convert_source(code, "<regression>")
    assert result.status != "failed", [d.one_line() for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.rule == "internal"]
    compile(result.output, "<regression>", "exec", dont_inherit=True)
    return result.output


def test_method_call_that_does_not_bind_to_the_torch_signature_is_marked_not_crashed():
    # torch/utils/_pytree.py: TreeSpec.unflatten(leaves) is not Tensor.unflatten(dim, sizes)
    out = _convert("import torch\n\ndef f(treespec, leaves):\n    return treespec.unflatten(leaves)\n")
    assert out.endswith(
        "def f(treespec, leaves):\n"
        "    # TODO(ms-migrate): torch.Tensor.unflatten: missing argument 'sizes' for torch.Tensor.unflatten\n"
        "    return treespec.unflatten(leaves)\n"
    ), out


def test_rewritten_call_keeps_the_parentheses_its_line_breaks_need():
    # torch/_higher_order_ops/map.py: a parenthesised method chain whose last call is rewritten
    code = (
        "import torch\n\n"
        "def f(t, batch_size):\n"
        "    return (\n"
        "        t.unsqueeze(0)\n"
        "        .expand(batch_size, *t.shape)\n"
        "        .clone()\n"
        "    )\n"
    )
    out = _convert(code)
    cst.parse_module(out)
    # clone() -> copy(), expand -> ops.broadcast_to; the changed statement is reformatted, so it
    # fits one line without the parentheses
    assert out.endswith(
        "def f(t, batch_size):\n    return ops.broadcast_to(t.unsqueeze(0), (batch_size, *t.shape)).copy()\n"), out


def test_import_whose_last_use_went_with_a_dropped_argument_is_removed():
    # torch/optim/sparse_adam.py: the only use left was in memory_format=, which is dropped;
    # keeping `import torch` made a second conversion remove it (not idempotent)
    code = "import torch\n\ndef f(p):\n    return torch.zeros_like(p, memory_format=torch.preserve_format)\n"
    out = _convert(code)
    assert "import torch" not in out
    assert convert_source(out, "<again>").output == out


def test_import_still_used_is_kept():
    code = "import torch\n\ndef f(p):\n    return torch.zeros_like(p), torch.no_such_api(p)\n"
    out = _convert(code)
    assert "import torch\n" in out and convert_source(out, "<again>").output == out


def test_integer_index_made_a_receiver_keeps_its_parentheses():
    # found by test_random_calls_of_known_apis: `x.index_add(x, 0, x)` became `0.int()`, which does not parse
    out = _convert("import torch\n\ndef f(x):\n    return x.index_add(x, 0, x), x.index_copy(0, 1, x)\n")
    cst.parse_module(out)
    assert "(0).int()" in out and "(1).int()" in out, out


def test_a_seeded_randint_without_low_draws_from_zero():
    # torch/utils/data/sampler.py: torch.randint(high=n, size=(32,), generator=generator) (an internal error before)
    out = _convert("import torch\n\ndef f(n, g):\n    return torch.randint(high=n, size=(32,), dtype=torch.int64, generator=g)\n")
    assert "g.randint(0, n, (32,))" in out, out
