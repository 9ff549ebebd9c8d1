"""Function-compliance checkers: code that MindSpore restricts or handles
differently (dynamic shapes, sparse tensors, higher-order autograd, hooks, jit,
distributed, AMP).

Fixit style: a checker is one class with an id, the reason it matters, the
suggested fix and embedded examples (``triggers`` must produce the finding,
``passes`` must not); the test suite runs every example. Checkers are found by
walking this package, so a new finding kind is a new class in a module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import libcst as cst

from transpiler.analyze.facts import FileFacts, Site, method_name
from transpiler.analyze.model import Finding
from transpiler.analyze.tensor_values import TensorValueCache

MAX_CODE = 100


@dataclass
class CheckContext:
    facts: FileFacts
    values: TensorValueCache

    def torch_calls(self) -> Iterator[tuple[Site, str]]:
        """Calls whose callee resolves to a torch name."""
        for site in self.facts.calls:
            qualified = self.facts.callee(site.node)
            if qualified is not None and qualified.startswith("torch"):
                yield site, qualified

    def method_calls(self, names) -> Iterator[tuple[Site, str]]:
        """``receiver.name(...)`` where the receiver is a value, not an imported module."""
        for site in self.facts.calls:
            name = method_name(site.node)
            if name in names and self.facts.callee(site.node) is None and not _module_receiver(site.node, self.facts):
                yield site, name

    def references(self, prefixes: tuple[str, ...]) -> Iterator[tuple[Site, str]]:
        """Resolved names (callees included) equal to or under one of ``prefixes``."""
        for site in self.facts.references:
            qualified = self.facts.qualified_of[id(site.node)]
            if any(qualified == p or qualified.startswith(p + ".") for p in prefixes):
                yield site, qualified

    def tensor_valued(self, expr: cst.CSTNode, site: Site) -> bool:
        return self.values.is_tensor_valued(expr, site.function)


def _module_receiver(call: cst.Call, facts: FileFacts) -> bool:
    node = call.func.value  # type: ignore[union-attr]
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value in facts.analysis.imports


class Checker:
    """One finding kind. Subclasses set the class attributes and ``check``."""

    kind: str = ""
    family: str = ""
    why: str = ""
    fix: str = ""
    triggers: tuple[str, ...] = ()  # each must produce at least one finding of this kind
    passes: tuple[str, ...] = ()  # none may produce a finding of this kind

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        raise NotImplementedError


@lru_cache(maxsize=1)
def all_checkers() -> tuple[Checker, ...]:
    import transpiler.analyze.findings as package

    found: list[Checker] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Checker) and value is not Checker and value.kind:
                if value.__module__ == module.__name__:
                    found.append(value())
    kinds = [c.kind for c in found]
    duplicates = {k for k in kinds if kinds.count(k) > 1}
    if duplicates:
        raise ValueError(f"duplicate finding kinds: {sorted(duplicates)}")
    return tuple(found)


def _headline(facts: FileFacts, node: cst.CSTNode) -> str:
    """The construct as written; compound statements by their header line only."""
    if isinstance(node, cst.ClassDef):
        bases = ", ".join(facts.code(b.value) for b in node.bases)
        return f"class {node.name.value}({bases})" if bases else f"class {node.name.value}"
    if isinstance(node, (cst.If, cst.While)):
        keyword = "while" if isinstance(node, cst.While) else "if"
        return f"{keyword} {facts.code(node.test)}:"
    return facts.code(node)


def run_checkers(facts: FileFacts, checkers=None) -> list[Finding]:
    ctx = CheckContext(facts, TensorValueCache(facts))
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for checker in checkers or all_checkers():
        for site in checker.check(ctx):
            key = (checker.kind, site.line)
            if key in seen:  # one finding per kind and line
                continue
            seen.add(key)
            code = _headline(facts, site.node)
            if len(code) > MAX_CODE:
                code = code[: MAX_CODE - 3] + "..."
            findings.append(
                Finding(checker.kind, checker.family, facts.path, site.line, site.col, code, checker.why, checker.fix)
            )
    findings.sort(key=lambda f: (f.line, f.col, f.kind))
    return findings
