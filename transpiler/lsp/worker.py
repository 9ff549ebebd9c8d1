"""What the language server's worker process runs.

Conversions run in a process of their own, not on a thread of the server's:
the converter is Python (and libcst's native parser holds the GIL while it
parses), so a thread would take the interpreter from the event loop for up to a
second at a time on a 1,000-line file (measured: a 10 ms timer fired up to
1.1 s late). In a process it never does: the server answers every request at
once, and only waits where an answer needs the new conversion.

Module-level functions of plain data in and out (a report's rule set and
locator stay in the worker)."""

from __future__ import annotations

import dataclasses
import time

from transpiler.lsp.documents import DocumentReport, Item, check_document, hazard_items, rules_for

WARM_UP = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def forward(self, x):\n" \
          "        return torch.relu(nn.functional.linear(x, x)).view(-1)\n"


def _key(rules) -> tuple:
    return tuple(rules.files), rules.extra_digest


def _plain(report: DocumentReport, cpu: float) -> DocumentReport:
    return dataclasses.replace(report, rules=None, locator=None, rules_key=_key(report.rules), cpu_seconds=cpu)


def convert(text: str, path: str) -> DocumentReport:
    """The conversion's part of the report (``with_hazards`` adds analyze's)."""
    start = time.process_time()
    report = check_document(text, path, hazards=False)
    return _plain(report, time.process_time() - start)


def hazards(text: str, path: str) -> tuple[list[Item], float]:
    """(the hazards ``ms-migrate analyze`` finds in ``text``, the CPU seconds it took)."""
    start = time.process_time()
    rules, _ = rules_for(path)
    found = hazard_items(text, path, rules)
    return found, time.process_time() - start


def catalog(path: str) -> tuple[tuple, dict]:
    """(the rule set's key, API -> rule_catalog.Entry) for the rules that apply to ``path``."""
    from transpiler.lsp.hover import catalog_of

    rules, _ = rules_for(path)
    return _key(rules), catalog_of(rules)


def warm_up() -> tuple[tuple, dict]:
    """Import the converter and analyze, load the rules; ms-migrate's own catalog."""
    check_document(WARM_UP, "warm_up.py")
    return catalog("")
