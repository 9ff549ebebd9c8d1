"""Neither the converted code nor ms-migrate's own tools call MindSpore APIs the
installed MindSpore (2.10) deprecates.

MindSpore announces a deprecation on its own logger, not as a Python
DeprecationWarning (``-W error::DeprecationWarning`` does not see it):
``'ops.randint' is deprecated from version 2.10.0 ...``. ``DEPRECATED`` lists
the public functions a conversion could name, each with a call; the first test
measures that each of them does warn on the installed version (so the list is
the installed MindSpore's, not a memory of it). The others scan what the
converter writes for them: the rules' targets, the rules' golden MindSpore
text, the code the rules and the pipeline spell out, and the converted samples.

MindSpore 2.10 also deprecates its uniform sampling primitives (UniformReal,
UniformInt: behind ops.rand and ops.uniform) in favour of mint.rand and
mint.randint, which have no CPU kernel; the functions themselves are not
deprecated and are what runs on CPU, so they are not listed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rewrite_rules.registry import load_rules
from tests.golden_files import ROOT, convert_sample, sample_paths

# name as code writes it -> a call that makes the installed MindSpore log its deprecation
DEPRECATED = {
    "mindspore.dtype_to_nptype": "mindspore.dtype_to_nptype(mindspore.float32)",
    "mindspore.dtype_to_pytype": "mindspore.dtype_to_pytype(mindspore.float32)",
    "mindspore.pytype_to_dtype": "mindspore.pytype_to_dtype(float)",
    "mindspore.get_py_obj_dtype": "mindspore.get_py_obj_dtype(1.0)",
    "mindspore.ops.rand_like": "ops.rand_like(x)",
    "mindspore.ops.randint_like": "ops.randint_like(i, 0, 5)",
    "mindspore.ops.random_gamma": "ops.random_gamma((2,), mindspore.Tensor([1.0]))",
    "mindspore.ops.random_poisson": "ops.random_poisson((2,), mindspore.Tensor([1.0]))",
    "mindspore.ops.eps": "ops.eps(x)",
}
# deprecated too, still written by the torch.randint rule (see the report of this change): measured, not scanned
STILL_WRITTEN = {"mindspore.ops.randint": "ops.randint(0, 5, (3,))"}

MEASURE = """
import json, logging, sys
import numpy as np
import mindspore
from mindspore import ops
from mindspore.common import _decorator
import mindspore.log as mslog

messages = []
class Keep(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
mslog._get_logger().setLevel(logging.WARNING)
mslog._get_logger().addHandler(Keep())
x = mindspore.Tensor(np.ones((2, 3)), mindspore.float32)
i = mindspore.Tensor(np.ones((2, 3)), mindspore.int32)
warned = {}
for name, call in json.loads(sys.argv[1]).items():
    _decorator.DEPRECATE_SET.clear()
    del messages[:]
    try:
        eval(call)
    except Exception as exc:
        pass  # the warning comes before the arguments are checked
    warned[name] = [m for m in messages if "deprecated" in m]
print(json.dumps(warned))
"""


def test_each_listed_api_is_deprecated_in_the_installed_mindspore(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GLOG_v"}
    run = subprocess.run([sys.executable, "-c", MEASURE, json.dumps({**DEPRECATED, **STILL_WRITTEN})],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    warned = json.loads(run.stdout.strip().splitlines()[-1])
    assert {name for name, found in warned.items() if not found} == set()


def _spellings(name: str) -> list[str]:
    """How code names it: mindspore.ops.randint, ops.randint, and the ctx.ref("...") that writes it."""
    short = name.replace("mindspore.ops.", "ops.")
    return [re.escape(name) + r"\b", r"(?<![\w.])" + re.escape(short) + r"\("]


def _hits(text: str) -> list[str]:
    return [name for name in DEPRECATED if any(re.search(p, text) for p in _spellings(name))]


def test_no_rule_targets_a_deprecated_api():
    rules = load_rules()
    targets = {r.torch: r.target for r in rules.calls.values() if getattr(r, "target", None)}
    assert {torch: t for torch, t in targets.items() if t in DEPRECATED} == {}


def test_no_rule_example_writes_a_deprecated_api():
    rules = load_rules()
    found = {}
    for rule in [*rules.calls.values(), *rules.attributes.values(), *(r for rs in rules.methods.values() for r in rs)]:
        for example in rule.examples:
            if example.mindspore and _hits(example.mindspore):
                found[rule.torch] = _hits(example.mindspore)
    assert found == {}


@pytest.mark.parametrize("package", ["rewrite_rules", "transpiler"])
def test_the_code_that_writes_mindspore_names_no_deprecated_api(package):
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        hits = _hits(code)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}


@pytest.mark.parametrize("sample", sample_paths(), ids=lambda p: p.name)
def test_converted_samples_call_no_deprecated_api(sample):
    assert _hits(convert_sample(sample)) == []


def test_the_scan_sees_a_deprecated_call():
    assert _hits("import mindspore\nt = mindspore.dtype_to_nptype(x.dtype)\n") == ["mindspore.dtype_to_nptype"]
    assert _hits("from mindspore import ops\ny = ops.rand_like(x)\n") == ["mindspore.ops.rand_like"]
    assert _hits("y = ops.rand(x.shape)\n") == []
