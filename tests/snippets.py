"""Converting small snippets the way rule examples are written."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.pipeline import convert_source
from transpiler.proof.harness.cases import PRELUDE


def convert_full(code: str) -> str:
    result = convert_source(PRELUDE + code, "<example>")
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    return result.output


def strip_imports(code: str) -> str:
    """The converted snippet without the import block the prelude turned into."""
    module = cst.parse_module(code)
    body = list(module.body)
    while body and isinstance(body[0], cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in body[0].body
    ):
        body.pop(0)
    return module.with_changes(body=body).code


def convert_snippet(code: str) -> str:
    return strip_imports(convert_full(code))
