"""Property-based robustness: on random valid Python (hypothesmith) and on
random calls of every torch API the rules know, conversion never raises, never
hits an internal error, and its output always parses (and compiles whenever
the input did)."""

from __future__ import annotations

import hypothesmith
import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewrite_rules.registry import load_rules
from tests.conversion import compiles
from transpiler.convert.pipeline import convert_source

PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

# Deterministic, so a CI run is reproducible; raise max_examples locally to dig.
PROPERTY = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _check(source: str) -> None:
    result = convert_source(source, "<generated>")  # must not raise
    internal = [d.one_line() for d in result.diagnostics if d.rule == "internal"]
    assert not internal, internal
    if result.status == "failed":
        # only input libcst itself cannot read may fail
        assert all(d.rule in ("syntax", "parse") for d in result.diagnostics), result.diagnostics
        return
    cst.parse_module(result.output)
    if compiles(source):
        assert compiles(result.output), result.output


@PROPERTY
@given(hypothesmith.from_grammar())
def test_random_programs_with_torch_imported(program):
    _check(PRELUDE + program)


@PROPERTY
@given(hypothesmith.from_node())
def test_random_syntax_trees_with_torch_imported(program):
    _check(PRELUDE + program)


# -- random calls of known torch APIs ------------------------------------------
_RULES = load_rules()
_API_NAMES = sorted(name for name in _RULES.calls if name.startswith("torch."))
_METHOD_NAMES = sorted(_RULES.methods)
_KEYWORDS = sorted({p.name for rule in _RULES.calls.values() for p in rule.params} | {"dim", "keepdim", "out"})

_atoms = st.sampled_from(
    ["x", "y", "0", "1", "-1", "2", "0.5", "None", "True", "False", "'mean'", "(2, 3)", "[1, 2]", "x.shape",
     "torch.float32", "*shape", "**options", "lambda t: t", "x[0]", "(x, y)", "nn.ReLU()"]
)


@st.composite
def _arguments(draw) -> str:
    args = draw(st.lists(_atoms, max_size=4))
    keywords = draw(st.lists(st.tuples(st.sampled_from(_KEYWORDS), _atoms.filter(lambda a: not a.startswith("*"))),
                             max_size=3, unique_by=lambda kv: kv[0]))
    return ", ".join([*args, *(f"{k}={v}" for k, v in keywords)])


@st.composite
def _torch_statement(draw) -> str:
    args = draw(_arguments())
    form = draw(st.sampled_from(["call", "method", "value", "inplace", "module"]))
    if form == "call":
        return f"z = {draw(st.sampled_from(_API_NAMES))}({args})\n"
    if form == "method":
        return f"z = x.{draw(st.sampled_from(_METHOD_NAMES))}({args})\n"
    if form == "inplace":
        return f"x.{draw(st.sampled_from(_METHOD_NAMES))}({args})\n"
    if form == "value":
        return f"z = [{draw(st.sampled_from(_API_NAMES))}, ({args})]\n"
    name = draw(st.sampled_from([n for n in _API_NAMES if n.startswith("torch.nn.") and n[9:10].isupper()] or ["nn.Linear"]))
    return (
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.layer = {name}({args})\n\n"
        "    def forward(self, x):\n"
        f"        return self.layer(x).{draw(st.sampled_from(_METHOD_NAMES))}({args})\n"
    )


@PROPERTY
@given(st.lists(_torch_statement(), min_size=1, max_size=6))
def test_random_calls_of_known_apis(statements):
    _check(PRELUDE + "def f(x, y, shape, options):\n    pass\n" + "".join(statements))
