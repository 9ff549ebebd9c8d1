"""Execution cases: every runnable Example of every rule, converted and
checked against its run."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import libcst as cst

from rewrite_rules.spec import Example
from transpiler.proof.harness.values import COMPARE_MODES, compare
from transpiler.proof.harness.worker import Job, Outcome
from transpiler.convert.adapters import WRITTEN_BY
from transpiler.convert.pipeline import convert_source
from transpiler.convert.rewriter import MARKER_PREFIX

# What every example's torch snippet starts with.
PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@dataclass(frozen=True)
class Case:
    case_id: str
    api: str
    example: Example
    module: str = ""  # the rule module that declares the example

    @property
    def seed(self) -> int:
        return zlib.crc32(self.case_id.encode()) & 0x7FFFFFFF


def collect_cases(rules=None) -> list[Case]:
    """One Case per runnable example, in registry order."""
    if rules is None:
        from rewrite_rules.registry import load_rules

        rules = load_rules()
    seen_rules: set[int] = set()
    cases: list[Case] = []
    used_ids: set[str] = set()
    all_rules = [*rules.calls.values(), *rules.attributes.values(), *(r for rs in rules.methods.values() for r in rs)]
    for rule in all_rules:
        if id(rule) in seen_rules:  # aliases share one rule object
            continue
        seen_rules.add(id(rule))
        for index, example in enumerate(rule.examples):
            if not example.runs:
                continue
            base = f"{rule.torch}-{index}" + (f"-{example.notes}" if example.notes.isidentifier() else "")
            case_id, n = base, 1
            while case_id in used_ids:
                n += 1
                case_id = f"{base}~{n}"
            used_ids.add(case_id)
            cases.append(Case(case_id, rule.torch, example, _module_of(rules, rule)))
    return cases


def _module_of(rules, rule) -> str:
    module = rules.modules.get(rule.torch)
    if module is None and hasattr(rule, "receiver"):
        module = rules.modules.get(f"method:{rule.name}:{rule.receiver}")
    return module or ""


def _split(code: str) -> tuple[str, tuple[str, ...]]:
    """(the leading import block, the other top-level statements as text)."""
    module = cst.parse_module(code)
    body = list(module.body)
    imports = []
    while body and isinstance(body[0], cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in body[0].body
    ):
        imports.append(module.code_for_node(body.pop(0)))
    # definitions ms-migrate writes above the code (torch signatures over MindSpore, helper
    # functions) belong to the prelude
    while body and isinstance(body[0], (cst.ClassDef, cst.FunctionDef)) and WRITTEN_BY in module.code_for_node(body[0]):
        imports.append(module.code_for_node(body.pop(0)))
    return "".join(imports), tuple(module.code_for_node(s) for s in body)


def _imported_roots(imports: str) -> set[str]:
    roots = set()
    for line in cst.parse_module(imports).body:
        for statement in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(statement, cst.Import):
                roots |= {cst.Module([]).code_for_node(a.name).split(".", 1)[0] for a in statement.names}
            elif isinstance(statement, cst.ImportFrom) and statement.module is not None and not statement.relative:
                roots.add(cst.Module([]).code_for_node(statement.module).split(".", 1)[0])
    return roots


@dataclass
class Prepared:
    case: Case
    torch_code: str
    converted: str | None
    job: Job | None
    problem: str = ""


def prepare(case: Case, rules=None) -> Prepared:
    """Convert the case's snippet (with ``rules``, default: the rule set); a
    conversion that cannot run is a problem."""
    torch_code = PRELUDE + case.example.torch
    if not torch_code.endswith("\n"):
        torch_code += "\n"
    if case.example.compare not in COMPARE_MODES:
        return Prepared(case, torch_code, None, None, f"unknown compare mode {case.example.compare!r}")
    result = convert_source(torch_code, "<case>", rules=rules)
    if result.output is None:
        problems = "; ".join(d.one_line() for d in result.diagnostics)
        return Prepared(case, torch_code, None, None, f"conversion failed: {problems}")
    converted = result.output
    if MARKER_PREFIX in converted:
        return Prepared(case, torch_code, converted, None, "the converted snippet carries a marker (it cannot run)")
    torch_imports, torch_statements = _split(torch_code)
    if case.example.torch_reference is not None:  # torch cannot run the API here: its documented result
        torch_imports, torch_statements = _split(PRELUDE + case.example.torch_reference + "\n")
    ms_imports, ms_statements = _split(converted)
    if "torch" in _imported_roots(ms_imports):
        return Prepared(case, torch_code, converted, None, "the converted snippet still imports torch")
    left = _imported_roots(ms_imports) & (rules.rule_roots if rules is not None else frozenset())
    if left:
        return Prepared(case, torch_code, converted, None,
                        f"the converted snippet still imports {', '.join(sorted(left))}, whose names the rules convert")
    job = Job(
        case.case_id,
        torch_imports,
        torch_statements,
        ms_imports,
        ms_statements,
        dict(case.example.inputs or {}),
        tuple(case.example.results),
        case.seed,
        check_draws=case.example.compare != "structural",
        rule_files=rules.files if rules is not None else (),
    )
    return Prepared(case, torch_code, converted, job)


def problems_of(prepared: Prepared, outcome: Outcome) -> list[str]:
    example = prepared.case.example
    if not outcome.ok:
        return [f"{outcome.side} failed:\n{outcome.error}"]
    problems: list[str] = []
    for name in example.results:
        problems += compare(
            outcome.torch[name],
            outcome.mindspore[name],
            rtol=example.rtol,
            atol=example.atol,
            dtype_map=example.dtype_map,
            mode=example.compare,
            path=name,
        )
    return problems


def report(prepared: Prepared, problems: list[str]) -> str:
    example = prepared.case.example
    lines = [
        f"case {prepared.case.case_id} ({prepared.case.api})",
        f"inputs: {dict(example.inputs or {})}  seed={prepared.case.seed}  compare={example.compare}",
        "--- torch snippet ---",
        example.torch.rstrip(),
        *(("--- run on the torch side instead (torch cannot run the API here) ---", example.torch_reference.rstrip())
          if example.torch_reference is not None else ()),
        "--- converted snippet ---",
        (prepared.converted or "(none)").rstrip(),
        "--- difference ---",
        *problems,
    ]
    return "\n".join(lines)
