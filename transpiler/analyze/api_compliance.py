"""API compliance: every torch API use in a file, classified by how it migrates.

The classification is read from the real conversion of the file (the
diagnostics of ``convert_source``: path, line, col, rule, outcome), so analysis
and conversion never disagree. Analysis adds what conversion does not report:
argument-level differences of converted calls (from the rule data), tensor
methods on untyped receivers that no rule checked, and optimizer calls that
belong to the training step.
"""

from __future__ import annotations

import re

import libcst as cst

from rewrite_rules.registry import RuleSet
from rewrite_rules.tensor.methods_data import SHARED_TENSOR_METHODS
from transpiler.analyze.facts import FileFacts, method_name
from transpiler.analyze.model import ApiUse, ArgNote, Category, EcosystemImport
from transpiler.analyze.structural_apis import OPTIMIZER_STEP_METHODS, structural_reason
from transpiler.convert.diagnostics import Diagnostic, Outcome
from transpiler.convert.names import ECOSYSTEM_ROOTS


def _builtin_method_names() -> frozenset[str]:
    names: set[str] = set()
    for kind in (str, list, dict, set, tuple, bytes, int, float):
        names.update(n for n in dir(kind) if not n.startswith("_"))
    return frozenset(names)


# Tensor methods MindSpore shares by name, minus names builtin types also have
# (``"a,b".split(",")`` is not a tensor).
_UNCHECKED_METHODS = SHARED_TENSOR_METHODS - _builtin_method_names()


def classify(diagnostics: list[Diagnostic], facts: FileFacts, rules: RuleSet) -> list[ApiUse]:
    uses: list[ApiUse] = []
    for d in diagnostics:
        if d.outcome is Outcome.NONE:
            continue
        uses.append(_classify_one(d, rules))
    reported = {(u.line, u.col) for u in uses}
    uses += _optimizer_steps(facts, reported)
    uses += _unchecked_methods(facts, rules, reported)
    uses.sort(key=lambda u: (u.line, u.col, u.api))
    return uses


def _classify_one(d: Diagnostic, rules: RuleSet) -> ApiUse:
    outcome = d.outcome.value
    reason = structural_reason(d.rule)
    if reason is not None:
        return ApiUse(d.rule, d.path, d.line, d.col, Category.STRUCTURAL, outcome, reason)
    if d.outcome is Outcome.MARKED:
        return ApiUse(d.rule, d.path, d.line, d.col, Category.MARKED, outcome, d.message)
    if d.outcome is Outcome.UNKNOWN:
        return ApiUse(d.rule, d.path, d.line, d.col, Category.UNKNOWN, outcome, d.message)
    if not (d.rule.startswith("torch") or d.rule in rules.rule_names):
        # a structural transform the converter applied (forward -> construct ...)
        return ApiUse(d.rule, d.path, d.line, d.col, Category.STRUCTURAL, outcome, f"done by convert: {d.message}")
    # what the conversion changed beyond the name, as it reported it: each argument, or the whole call
    notes = tuple(ArgNote(name, change) for name, change in d.changes)
    if not notes and _rewritten_as_a_whole(d, rules):
        notes = (ArgNote("the call", f"rewritten by the rule's code: {d.message.partition(' -> ')[2]}"),)
    category = Category.ARGUMENTS if notes else Category.AS_IS
    return ApiUse(d.rule, d.path, d.line, d.col, category, outcome, d.message, notes)


_CALL = re.compile(r"^([\w.]+)\((.*)\)$", re.S)


def _rewritten_as_a_whole(d: Diagnostic, rules: RuleSet) -> bool:
    """Whether a rule's code made something other than its target called with the same arguments
    (``torch.compile(m) -> jit_compile(m)``, a helper written above the file): not "converted as is"."""
    try:
        rule = rules.calls.get(d.rule)
    except Exception:  # noqa: BLE001 - a rule that cannot load is no reason to misreport the use
        return False
    if rule is None or getattr(rule, "hook", None) is None:
        return False
    before, sep, after = d.message.partition(" -> ")
    if not sep:
        return False
    after = after.split(": ", 1)[0]
    target = (rule.target or "").rsplit(".", 1)[-1]
    if re.fullmatch(r"[\w.]+", after.strip()) and re.fullmatch(r"[\w.]+", before.strip()):  # a name, not called
        return after.strip().rsplit(".", 1)[-1] != target
    old, new = _CALL.match(before.strip()), _CALL.match(after.strip())
    if old is None or new is None:
        return True  # not a call any more (a value, an expression around the call)
    return new.group(1).rsplit(".", 1)[-1] != target or " ".join(old.group(2).split()) != " ".join(new.group(2).split())


def _optimizer_variables(facts: FileFacts) -> set[str]:
    """Names and ``self.x`` attributes assigned a torch.optim optimizer."""
    names: set[str] = set()
    for site in facts.assigns:
        value = site.node.value
        if not isinstance(value, cst.Call):
            continue
        qualified = facts.callee(value) or ""
        if not qualified.startswith("torch.optim.") or ".lr_scheduler." in qualified or ".swa_utils." in qualified:
            continue
        targets = [t.target for t in site.node.targets] if isinstance(site.node, cst.Assign) else [site.node.target]
        names.update(facts.code(t) for t in targets)
    return names


def _optimizer_steps(facts: FileFacts, reported: set) -> list[ApiUse]:
    optimizers = _optimizer_variables(facts)
    uses = []
    for site in facts.calls:
        name = method_name(site.node)
        if name not in OPTIMIZER_STEP_METHODS or (site.line, site.col) in reported:
            continue
        if facts.code(site.node.func.value) not in optimizers:
            continue
        api = OPTIMIZER_STEP_METHODS[name]
        uses.append(ApiUse(api, facts.path, site.line, site.col, Category.STRUCTURAL, "not reported",
                           structural_reason(api) or ""))
    return uses


def _unchecked_methods(facts: FileFacts, rules: RuleSet, reported: set) -> list[ApiUse]:
    uses = []
    for site in facts.calls:
        call = site.node
        name = method_name(call)
        if name not in _UNCHECKED_METHODS or name in rules.methods or (site.line, site.col) in reported:
            continue
        if facts.callee(call) is not None or _receiver_is_module_or_self(call, facts):
            continue
        uses.append(ApiUse(
            f"torch.Tensor.{name}", facts.path, site.line, site.col, Category.UNKNOWN, "not reported",
            f".{name}() on an untyped receiver: MindSpore's Tensor has a method of this name, but no rule "
            f"checked its arguments; if the receiver is a tensor, compare the signatures",
        ))
    return uses


def _receiver_is_module_or_self(call: cst.Call, facts: FileFacts) -> bool:
    receiver = call.func.value  # type: ignore[union-attr]
    if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls", "super"):
        return True  # a method of the class itself or a submodule call
    through_call = False
    while isinstance(receiver, (cst.Attribute, cst.Subscript, cst.Call)):
        through_call = through_call or isinstance(receiver, cst.Call)
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    if not isinstance(receiver, cst.Name) or receiver.value not in facts.analysis.imports:
        return False
    # np.mean(x), os.path.join(...): a module function. torch.randn(3).sum(): a tensor method.
    binding = facts.analysis.imports[receiver.value]
    return not (through_call and binding.qualified.split(".", 1)[0] == "torch")


def ecosystem_imports(facts: FileFacts) -> list[EcosystemImport]:
    found = []
    for site in facts.imports:
        node = site.node
        if isinstance(node, cst.ImportFrom):
            if node.relative or node.module is None:
                continue
            module = facts.code(node.module)
            names = ["*"] if isinstance(node.names, cst.ImportStar) else [facts.code(a.name) for a in node.names]
            entries = [f"{module}.{n}" if n != "*" else f"{module}.*" for n in names]
        else:
            entries = [facts.code(a.name) for a in node.names]
        for entry in entries:
            root = entry.split(".", 1)[0]
            if root in ECOSYSTEM_ROOTS:
                found.append(EcosystemImport(root, entry, facts.path, site.line))
    return found
