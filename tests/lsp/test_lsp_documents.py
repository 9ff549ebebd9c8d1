"""The language server's plain-data part (transpiler/lsp/documents.py): ranges
from the converter's start positions, client units, hazards carried over an
edit. No server, no conversion."""

from __future__ import annotations

from transpiler.lsp.documents import (
    HAZARD, MARKER, DocumentReport, Item, Locator, Span, beside_path, carried_hazards, from_client, split_lines,
    to_client,
)


def _text(source: str, span: Span) -> str:
    lines = split_lines(source)
    (l0, c0), (l1, c1) = span.start, span.end
    if l0 == l1:
        return lines[l0][c0:c1]
    return "\n".join([lines[l0][c0:], *lines[l0 + 1:l1], lines[l1][:c1]])


def test_a_rule_names_which_of_the_calls_starting_together_it_is_about():
    source = "import torch\ny = torch.zeros(2).view(1, 2)\n"
    locator = Locator(source)
    span, hover = locator.spans(1, 4, "torch.zeros")
    assert (_text(source, span), _text(source, hover)) == ("torch.zeros(2)", "torch.zeros")
    span, hover = locator.spans(1, 4, "torch.Tensor.view")
    assert (_text(source, span), _text(source, hover)) == ("torch.zeros(2).view(1, 2)", "view")


def test_a_property_or_a_base_class_is_the_name_itself():
    source = "if p.grad is None:\n    pass\nclass O(Optimizer):\n    pass\n"
    locator = Locator(source)
    span, hover = locator.spans(0, 3, "torch.Tensor.grad")
    assert (_text(source, span), _text(source, hover)) == ("p.grad", "grad")
    assert _text(source, locator.spans(2, 8, "torch.optim.optimizer.Optimizer")[0]) == "Optimizer"


def test_a_finding_is_about_the_outermost_node_and_a_statement_its_first_line():
    source = "if x.sum() > 0:\n    y = x[x > 0].nonzero()\n"
    locator = Locator(source)
    assert _text(source, locator.spans(0, 0, None)[0]) == "if x.sum() > 0:"
    assert _text(source, locator.spans(1, 8, None)[0]) == "x[x > 0].nonzero()"


def test_a_call_over_several_lines_is_one_range():
    source = "w = torch.randn(2, 3,\n                device='cuda')\n"
    span, hover = Locator(source).spans(0, 4, "torch.randn")
    assert span == Span((0, 4), (1, 30)) and _text(source, hover) == "torch.randn"


def test_columns_count_code_points_after_non_ascii_text():
    source = 'a = "\U0001F600é"; b = torch.ones(1)\n'
    col = source.index("torch")
    span, _ = Locator(source).spans(0, col, "torch.ones")
    assert _text(source, span) == "torch.ones(1)"


def test_a_file_python_cannot_parse_still_gets_a_range():
    source = "x = torch.zeros(2\nprint(\n"
    span, _ = Locator(source).spans(0, 4, "torch.zeros")
    assert _text(source, span) == "torch.zeros"


def test_client_units():
    lines = split_lines('s = "\U0001F600é" + t\n')
    index = lines[0].index("+")
    assert to_client(lines, (0, index), "utf-16") == (0, index + 1)  # the emoji takes two units
    assert to_client(lines, (0, index), "utf-8") == (0, index + 4)  # 4 bytes + 2 bytes, less 2 code points
    assert to_client(lines, (0, index), "utf-32") == (0, index)
    assert from_client(lines, 0, index + 1, "utf-16") == (0, index)
    assert from_client(lines, 0, index + 4, "utf-8") == (0, index)
    assert split_lines("a\r\nb\rc\n") == ["a", "b", "c", ""]


def _report(text: str, items) -> DocumentReport:
    return DocumentReport("m.py", text, "converted", text, list(items))


def test_hazards_stay_on_the_lines_an_edit_left_alone():
    old = "a\nb\nif x:\n    pass\nc\n"
    hazard = Item(HAZARD, "tensor-control-flow", "why", Span((2, 0), (2, 5)), Span((2, 0), (2, 5)))
    on_b = Item(HAZARD, "k", "why", Span((1, 0), (1, 1)), Span((1, 0), (1, 1)))
    marker = Item(MARKER, "torch.x", "will be marked", Span((4, 0), (4, 1)), Span((4, 0), (4, 1)))
    previous = _report(old, [on_b, hazard, marker])
    new = "new line\na\nB\nif x:\n    pass\nc\n"  # a line added above, b changed
    (carried,) = carried_hazards(previous, new)
    assert carried.code == "tensor-control-flow" and carried.span == Span((3, 0), (3, 5))
    assert carried_hazards(None, new) == []


def test_beside_path():
    assert beside_path("/p/model.py") == "/p/model_mindspore.py"
