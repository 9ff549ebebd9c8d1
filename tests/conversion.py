"""Test helper: convert a torch source file (optionally with other rules) into
a directory and import both sides."""

from __future__ import annotations

import dataclasses
import pathlib
import textwrap
import warnings

from transpiler.convert.pipeline import convert_source
from transpiler.proof.verify import load_module


def convert_to(source: pathlib.Path | str, out_dir: pathlib.Path, rules=None, text: str | None = None) -> pathlib.Path:
    source = pathlib.Path(source)
    text = source.read_text(encoding="utf-8") if text is None else text
    result = convert_source(text, str(source), rules=rules)
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    out = out_dir / source.name
    out.write_text(result.output, encoding="utf-8")
    return out


def compiles(code: str) -> bool:
    """Whether ``code`` compiles under this Python (warnings silenced)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


_counter = iter(range(10**9))


def load(path) -> object:
    return load_module(str(path), f"_ms_migrate_test_{next(_counter)}")


def lines_under(text: str, comment: str) -> list[str]:
    """The lines (stripped) right below each line of ``text`` that is the comment ``comment``."""
    lines = [line.strip() for line in text.splitlines()]
    return [lines[i + 1] for i, line in enumerate(lines[:-1]) if line == comment]


def converted_pair(folder: pathlib.Path, source: str) -> tuple[object, object, str]:
    """``source`` (dedented) written to folder/model.py and converted into folder/out:
    the torch module, the converted module, and the converted text."""
    path = folder / "model.py"
    path.write_text(textwrap.dedent(source))
    (folder / "out").mkdir()
    converted = convert_to(path, folder / "out")
    return load(path), load(converted), converted.read_text()


def move_torch_weights(model, cell):
    """torch ``model``'s weights mapped onto ``cell`` (every key placed) and loaded strictly; the report."""
    import mindspore

    from transpiler.proof.weights import map_weights

    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    return report


def eval_outputs(model, cell, *inputs):
    """torch ``model`` and MindSpore ``cell``, both in eval mode, on the same NumPy ``inputs``."""
    import mindspore
    import torch

    model.eval()
    cell.set_train(False)
    with torch.no_grad():
        expected = model(*(torch.from_numpy(x) for x in inputs))
    return expected, cell(*(mindspore.Tensor(x) for x in inputs))


def with_rule(rules, torch_name: str, **changes):
    """A copy of ``rules`` with one ApiRule changed (for wrong-rule tests), under each
    name it answers to (``torch.nn.BatchNorm1d`` is also ``torch.nn.modules.BatchNorm1d``)."""
    calls = dict(rules.calls)
    rule = calls[torch_name]
    changed = dataclasses.replace(rule, **changes)
    for name, other in calls.items():
        if other is rule:
            calls[name] = changed
    return dataclasses.replace(rules, calls=calls)
