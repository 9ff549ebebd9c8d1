"""Every example embedded in a rule converts to its golden text (or carries
its marker), and converting the output again changes nothing."""

from __future__ import annotations

import pytest

from rewrite_rules.registry import load_rules
from transpiler.convert.rewriter import MARKER_PREFIX
from tests.snippets import convert_full, convert_snippet


def _examples():
    rules = load_rules()
    seen = set()
    for rule in [*rules.calls.values(), *rules.attributes.values(), *(r for rs in rules.methods.values() for r in rs)]:
        for index, example in enumerate(rule.examples):
            key = (rule.torch, index, example.torch)
            if key in seen:
                continue
            seen.add(key)
            yield pytest.param(rule, example, id=f"{rule.torch}-{index}")


EXAMPLES = list(_examples())


@pytest.mark.parametrize("rule, example", EXAMPLES)
def test_example(rule, example):
    converted = convert_snippet(example.torch)
    if example.marked is not None:
        assert MARKER_PREFIX in converted, converted
        marker_lines = [line for line in converted.splitlines() if MARKER_PREFIX in line]
        assert any(example.marked in line for line in marker_lines), converted
    if example.mindspore is not None:
        assert converted.strip() == example.mindspore.strip()


@pytest.mark.parametrize("rule, example", EXAMPLES)
def test_example_is_idempotent(rule, example):
    from transpiler.convert.pipeline import convert_source

    once = convert_full(example.torch)
    twice = convert_source(once, "<again>").output
    assert twice == once


def test_there_are_examples():
    assert len(EXAMPLES) > 30
