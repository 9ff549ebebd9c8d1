"""Functions another file's compiled code calls are compiled code too.

Graph mode compiles a Cell's construct and every function it calls, wherever it is
defined: VITS's attentions.py pads with ``commons.convert_pad_shape(...)``, whose
``[item for sublist in l for item in sublist]`` graph mode refuses ("The 'generators'
supports 1 'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions",
MindSpore 2.10 CPU), and with it the whole construct. The project index
(transpiler/convert/project.py) follows each Cell's forward through the calls it can
resolve across files and tells the callee's file which of its functions are compiled
(``SiblingFacts.compiled``); the graph-mode passes (structural/graph_subset.py) rewrite
them as they rewrite the functions construct calls in its own file.

A three-file project (``import m; m.f(...)``, ``from m import f``, ``Class.method``
through an import, ``self.method`` a base class of another file defines, and a
function that such a method calls in a third file) is converted with the CLI, run in
GRAPH_MODE without torch, and compared with torch (values and gradients).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.convert.test_graph_mode import _GRAPH_MODE, graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side

COMMONS = '''
import torch


def convert_pad_shape(pad_shape):
    """VITS's commons.py."""
    l = pad_shape[::-1]
    pad_shape = [item for sublist in l for item in sublist]
    return pad_shape


def gated(x, scale):
    """An import in the function, and its loop variable read after the loop."""
    from math import sqrt

    for step in range(2):
        x = torch.tanh(x) * sqrt(scale)
    return x * (step + 1)


def relu_all(xs):
    """A lambda reading a global, mapped."""
    return list(map(lambda t: torch.relu(t) + 1, xs))


def unused(pairs):
    """Called by no compiled code: left as written."""
    return [v for pair in pairs for v in pair]


class Pairs:
    @staticmethod
    def flatten(pairs):
        return tuple(v for pair in pairs for v in pair)
'''

LAYERS = '''
import torch
import torch.nn as nn

from xfile_commons import relu_all


class Base(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def mix(self, x):
        """Base's forward does not call it; a subclass in another file does."""
        outs = relu_all([x, x * 2])
        return outs[0] - outs[1]

    def forward(self, x):
        return self.proj(x)
'''

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

import xfile_commons
from xfile_commons import Pairs, gated
from xfile_layers import Base


class Pad(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return F.pad(self.proj(x), xfile_commons.convert_pad_shape([[0, 0], [1, 0], [0, 2]]))


class Mixer(Base):
    def forward(self, x):
        h = gated(self.proj(x), 0.25)
        h = h + self.mix(h)
        a, b, c = Pairs.flatten([(h, x), (h * 2,)])
        return a * b + c
'''


def randn(*shape, seed=0):
    return np.random.RandomState(seed + sum(shape)).randn(*shape).astype(np.float32)


CASES = [
    Case("Pad", [randn(2, 3, 4)], args=[]),
    Case("Mixer", [randn(3, 4)], args=[]),
]


def _write(folder: pathlib.Path) -> pathlib.Path:
    source = folder / "src"
    source.mkdir()
    for name, text in (("xfile_commons", COMMONS), ("xfile_layers", LAYERS), ("xfile_model", MODEL)):
        (source / f"{name}.py").write_text(textwrap.dedent(text))
    return source


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from transpiler.cli import main

    folder = tmp_path_factory.mktemp("cross_file")
    source = _write(folder)
    out = folder / "out"
    assert main(["convert", str(source), "-o", str(out), "--no-cache", "-q"]) == 0
    sys.path.insert(0, str(source))  # the torch side imports its siblings
    try:
        module = load_torch_module(source / "xfile_model.py", "xfile_model_torch")
        torch_results = [torch_side(module, case) for case in CASES]
    finally:
        sys.path.remove(str(source))
    return folder, out, torch_results


@pytest.fixture(scope="module")
def graph_results(project):
    folder, out, torch_results = project
    return graph_mode_side(out / "xfile_model.py", CASES, torch_results, folder)


def test_the_index_names_what_other_files_compiled_code_calls(project):
    from transpiler.convert.project import ProjectIndex

    source = project[0] / "src"
    paths = sorted(str(p) for p in source.glob("*.py"))
    index = ProjectIndex.build(str(source), paths)
    assert index.facts(str(source / "xfile_commons.py")).compiled == {
        "convert_pad_shape", "gated", "Pairs.flatten", "relu_all"}
    assert index.facts(str(source / "xfile_layers.py")).compiled == {"Base.mix"}
    assert index.facts(str(source / "xfile_model.py")).compiled == frozenset()


def test_the_callees_are_rewritten_where_they_are_defined(project):
    out = project[1]
    commons = (out / "xfile_commons.py").read_text()
    assert ("    pad_shape = []\n    for sublist in l:\n        for item in sublist:\n"
            "            pad_shape.append(item)\n    return pad_shape\n") in commons, commons
    assert "from math import sqrt\n" in commons.split("def convert_pad_shape")[0], commons
    assert "    step = None\n    for step in range(2):\n" in commons, commons
    assert "list([ops.relu(t) + 1 for t in xs])" in commons, commons
    assert "        vs = []\n        for pair in pairs:\n" in commons.split("class Pairs")[1], commons
    # called by no compiled code: as the author wrote it
    assert "    return [v for pair in pairs for v in pair]\n" in commons, commons
    layers = (out / "xfile_layers.py").read_text()
    assert "relu_all([x, x * 2])" in layers, layers


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_values_and_gradients_in_graph_mode_match_torch(project, graph_results, index):
    problems = differences(project[2][index], graph_results[index])
    assert not problems, problems


def test_without_the_facts_graph_mode_refuses_the_construct(tmp_path):
    """The sabotage: the same project with SiblingFacts.compiled left empty."""
    from transpiler.convert.pipeline import convert_source
    from transpiler.convert.project import ProjectIndex

    source = _write(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    paths = sorted(str(p) for p in source.glob("*.py"))
    index = ProjectIndex.build(str(source), paths)
    for path in paths:
        facts = dataclasses.replace(index.facts(path), compiled=frozenset())
        result = convert_source(pathlib.Path(path).read_text(), path, siblings=facts)
        (out / pathlib.Path(path).name).write_text(result.output)
    script = tmp_path / "run.py"
    script.write_text(_GRAPH_MODE + textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(out)!r})
        from xfile_model import Pad
        Pad()(mindspore.Tensor(np.ones((2, 3, 4), np.float32)))
        """))
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode != 0 and "comprehension" in done.stderr, done.stderr[-3000:]


def test_relative_imports_of_a_package(tmp_path):
    """``from . import commons`` and ``from .commons import f``; a super() call of a method
    a base class of another file defines. An import the author guards with a ``try`` stays
    where it is (moved above the code, the module would not import without it)."""
    from transpiler.convert.pipeline import convert_source
    from transpiler.convert.project import ProjectIndex

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "commons.py").write_text(textwrap.dedent('''
        import torch


        def flat(l):
            return [v for pair in l for v in pair]


        def total(xs):
            try:
                from fast_sums import fast_sum
            except ImportError:
                fast_sum = sum
            return fast_sum(xs)
        '''))
    (package / "base.py").write_text(textwrap.dedent('''
        import torch.nn as nn


        class Block(nn.Module):
            def scale(self, x):
                return x * 2

            def init_only(self):
                return 1
        '''))
    (package / "model.py").write_text(textwrap.dedent('''
        import torch.nn as nn

        from . import commons
        from .base import Block
        from .commons import total


        class Net(Block):
            def __init__(self):
                super().__init__()
                self.pads = commons.flat([[1, 2]]) + [self.init_only()]

            def forward(self, x):
                return total([super().scale(x), x])


        class Padded(nn.Module):
            def forward(self, x):
                return x[commons.flat([[0, 1]])[0]]
        '''))
    paths = [str(package / name) for name in ("__init__.py", "base.py", "commons.py", "model.py")]
    index = ProjectIndex.build(str(tmp_path), paths)
    assert index.facts(str(package / "commons.py")).compiled == {"flat", "total"}
    # __init__ is not compiled: init_only is not
    assert index.facts(str(package / "base.py")).compiled == {"Block.scale"}
    path = package / "commons.py"
    text = convert_source(path.read_text(), str(path), siblings=index.facts(str(path))).output
    assert "    vs = []\n    for pair in l:\n        for v in pair:\n" in text, text
    assert "    try:\n        from fast_sums import fast_sum\n    except ImportError:\n" in text, text


def test_the_facts_change_the_cache_key_only_when_there_are_some():
    from transpiler.convert.project import SiblingFacts

    empty = SiblingFacts()
    assert SiblingFacts(compiled=frozenset({"f"})).digest() != empty.digest()
    assert SiblingFacts(compiled=frozenset({"f"})).digest() != SiblingFacts(compiled=frozenset({"g"})).digest()
    # a file no other file's compiled code calls keeps the key it had (its cached result stays valid)
    before = "\0".join(["\1", "\1", "\1", "\1", "\2", "\1"])  # the fields' separators; attributes None
    assert empty.digest() == hashlib.blake2b(before.encode(), digest_size=8).hexdigest()
