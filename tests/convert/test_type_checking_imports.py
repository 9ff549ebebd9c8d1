"""A new requirement (tensorboardX, for torch's SummaryWriter) that only annotations
name, in a file that postpones annotations and imports for type checkers under
``if TYPE_CHECKING:`` (MONAI's visualize and handlers modules), is imported there: the
converted module imports without it, as the original imported nothing for it at run
time. Everywhere else the import stays at the top and the report names it."""

import builtins
import textwrap

import pytest

from transpiler.convert.pipeline import convert_source

_ANNOTATED = '''
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter


def log(writer: SummaryWriter, x: torch.Tensor) -> float:
    value = x.mean().item()
    writer.add_scalar("x", value, 0)
    return value
'''


def _converted(source: str):
    result = convert_source(textwrap.dedent(source), "viz.py")
    assert result.output is not None
    return result


def _without_tensorboardx(monkeypatch):
    real = builtins.__import__

    def guarded(name, *args, **kwargs):
        if name.split(".")[0] == "tensorboardX":
            raise ImportError("No module named 'tensorboardX'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)


def test_an_import_only_annotations_need_goes_under_type_checking(monkeypatch):
    result = _converted(_ANNOTATED)
    block = result.output.split("if TYPE_CHECKING:\n", 1)[1].split("\n\n", 1)[0]
    assert block.strip().startswith("import tensorboardX  # for type checkers"), result.output
    assert "pass" not in block, block
    assert not any(d.rule == "new-requirement" for d in result.diagnostics)
    _without_tensorboardx(monkeypatch)
    namespace: dict = {}
    exec(compile(result.output, "viz.py", "exec"), namespace)

    import mindspore

    class Writer:
        def add_scalar(self, tag, value, step):
            self.logged = (tag, value, step)

    writer = Writer()
    assert namespace["log"](writer, mindspore.Tensor([1.0, 3.0])) == pytest.approx(2.0)
    assert writer.logged == ("x", pytest.approx(2.0), 0)


@pytest.mark.parametrize("change", ["no future import", "used at run time", "no TYPE_CHECKING block"])
def test_elsewhere_the_import_stays_at_the_top(change):
    source = textwrap.dedent(_ANNOTATED)
    if change == "no future import":  # annotations are evaluated when the function is defined
        source = source.replace("from __future__ import annotations\n", "")
    elif change == "used at run time":
        source += "\n\ndef make():\n    return SummaryWriter()\n"
    else:
        source = source.replace("if TYPE_CHECKING:\n    from torch", "from torch")
    result = _converted(source)
    head = result.output.split("\n\n\n", 1)[0]
    assert any(line.startswith("import tensorboardX  # new requirement") for line in head.splitlines()), result.output
    assert any(d.rule == "new-requirement" for d in result.diagnostics)
