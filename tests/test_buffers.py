"""``register_buffer`` with a value that may be None at run time (torch keeps
an empty slot; timm's Swin registers its attention mask so, None for blocks
whose windows are not shifted): each snippet is converted and run against
torch by the execution harness, and the text shows where the conversion
guards the Parameter and where it does not."""

from __future__ import annotations

import pytest

from rewrite_rules.api import Example
from tests.snippets import convert_snippet
from transpiler.proof.harness import Case, WorkerPool, report, run_case

_MASKED = (
    "class Block(nn.Module):\n"
    "    def __init__(self, shift):\n"
    "        super().__init__()\n"
    "        self.register_buffer('mask', None, persistent=False)\n"
    "        {register}\n\n"
    "    def make_mask(self, shift):\n"
    "        return torch.ones(2) * 3 if shift else None\n\n"
    "    def forward(self, x):\n"
    "        return x if self.mask is None else x * self.mask\n\n\n"
)
_BY_NAME = "mask = self.make_mask(shift)\n        self.register_buffer('mask', mask, persistent=False)"
_BY_CALL = "self.register_buffer('mask', self.make_mask(shift), persistent=False)"
_RUN = "shifted = Block(True)\nplain = Block(False)\nresult = (shifted(x), plain(x), plain.mask is None)"

SNIPPETS = {
    "a name that is None or a tensor": _MASKED.format(register=_BY_NAME) + _RUN,
    "a call that returns None or a tensor": _MASKED.format(register=_BY_CALL) + _RUN,
    "a conditional value": _MASKED.format(
        register="self.register_buffer('mask', torch.ones(2) if shift else None)") + _RUN,
    "filled later": _MASKED.format(register="pass") + "block = Block(True)\n"
                    "block.register_buffer('mask', block.make_mask(True))\nresult = block(x)",
}


@pytest.fixture(scope="module")
def pool():
    workers = WorkerPool()
    yield workers
    workers.close()


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_a_buffer_that_may_be_none_runs_as_in_torch(pool, name):
    prepared, problems = run_case(pool, Case(f"buffers:{name}", name, Example(SNIPPETS[name], inputs={"x": "randn(2)"})))
    assert not problems, report(prepared, problems)


def test_a_name_is_tested_and_a_call_is_bound_once():
    # persistent buffers become Parameters (non-persistent ones stay plain values, None included)
    persistent = _MASKED.replace(", persistent=False", "")
    by_name = convert_snippet(persistent.format(register=_BY_NAME.replace(", persistent=False", "")))
    assert "self.mask = (\n            None\n            if mask is None\n            else mindspore.Parameter(" in by_name
    by_call = convert_snippet(persistent.format(register=_BY_CALL.replace(", persistent=False", "")))
    assert "if (mask := self.make_mask(shift)) is None" in by_call
    assert "mindspore.Parameter(mask, name=" in by_call
    # where the file binds that name already, the value gets another
    taken = convert_snippet(persistent.format(register=_BY_CALL.replace(", persistent=False", "")) + "mask = 0\n")
    assert "if (mask2 := self.make_mask(shift)) is None" in taken
    # a non-persistent buffer is the value itself, None or not
    assert "self.mask = mask\n" in convert_snippet(_MASKED.format(register=_BY_NAME))


@pytest.mark.parametrize("value", [
    "torch.ones(2) * 3",  # arithmetic
    "torch.arange(3).float()",  # a tensor method on a torch call
    "self.table()",  # the file's method, annotated to return a Tensor
    "weights.contiguous()",  # a Tensor method: torch fails on None there too
])
def test_a_value_that_is_a_tensor_is_not_guarded(value):
    code = (
        "class M(nn.Module):\n"
        "    def __init__(self, weights):\n"
        "        super().__init__()\n"
        f"        self.register_buffer('table', {value})\n\n"
        "    def table(self) -> torch.Tensor:\n"
        "        return torch.zeros(2)\n"
    )
    converted = convert_snippet(code)
    assert "self.table = mindspore.Parameter(" in converted
    assert "is None" not in converted
