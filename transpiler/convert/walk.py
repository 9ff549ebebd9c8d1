"""A read-only traversal with libcst's visitor semantics, without its cost.

``node.visit(visitor)`` rebuilds (and re-validates) every node of the tree
even for a read-only ``CSTVisitor``, and looks up four handler names per node
and per field with formatted strings. For the metadata pass over whole files
that costs as much as parsing them. ``walk`` calls the same callbacks in the
same order (``on_visit``, per-field ``on_visit_attribute`` /
``on_leave_attribute``, children in source order, ``on_leave``) but only reads
the tree. Field order comes from libcst's own ``_visit_and_replace_children``,
read once per node type, so it follows libcst exactly. ``rewrite`` does the
same for a transformer (same calls, same tree), re-validating only changed nodes.
"""

from __future__ import annotations

import dataclasses
import dis
import typing
from functools import lru_cache

import libcst as cst
from libcst import MaybeSentinel

_VISIT_HELPERS = frozenset(
    {"visit_required", "visit_optional", "visit_sentinel", "visit_iterable", "visit_sequence",
     "visit_body_iterable", "visit_body_sequence"}
)


@lru_cache(maxsize=None)
def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields libcst visits for this node type, in source order. (A field
    that holds None is visited only through ``visit_optional``; elsewhere
    libcst guards it with a condition, e.g. an f-string's format spec.)"""
    return _visited_fields(node_type)[0]


def _optional_fields(node_type: type) -> frozenset[str]:
    """Fields visited through visit_optional, whose hooks run even for None."""
    return _visited_fields(node_type)[1]


@lru_cache(maxsize=None)
def _visited_fields(node_type: type) -> tuple[tuple[str, ...], frozenset[str]]:
    helpers = _field_helpers(node_type)
    return tuple(helpers), frozenset(field for field, used in helpers.items() if "visit_optional" in used)


@lru_cache(maxsize=None)
def _field_helpers(node_type: type) -> dict[str, frozenset[str]]:
    """Each visited field (in source order) -> the visit_* helpers libcst visits
    it with. Read from the bytecode of ``_visit_and_replace_children``: each
    helper call ``visit_*(self, "field", ...)`` names its field as the first
    string constant after the helper (reading the source with inspect and ast
    costs ten times as much at start-up)."""
    helpers: dict[str, set[str]] = {}  # ImportFrom visits `names` in one of two branches, with two helpers
    helper = None
    for instruction in dis.get_instructions(node_type._visit_and_replace_children):
        if instruction.opname == "LOAD_GLOBAL" and instruction.argval in _VISIT_HELPERS:
            helper = instruction.argval
        elif helper is not None and instruction.opname == "LOAD_CONST":
            if not isinstance(instruction.argval, str):
                raise TypeError(f"cannot read the fields of {node_type.__name__}")
            helpers.setdefault(instruction.argval, set()).add(helper)
            helper = None
    return {field: frozenset(used) for field, used in helpers.items()}


_BODY_HELPERS = frozenset({"visit_body_iterable", "visit_body_sequence"})
_REQUIRED, _OPTIONAL, _SENTINEL = 0, 1, 2  # what a removed child becomes: an error, None, MaybeSentinel


@lru_cache(maxsize=None)
def _field_kinds(node_type: type) -> tuple[tuple[str, bool, int], ...]:
    """(field, holds statements, what a removed single child becomes) for
    each visited field, from the helpers libcst visits it with."""
    kinds = []
    for field, used in _field_helpers(node_type).items():
        removed = _SENTINEL if "visit_sentinel" in used else _OPTIONAL if "visit_optional" in used else _REQUIRED
        kinds.append((field, bool(used & _BODY_HELPERS), removed))
    return tuple(kinds)


def _libcst_base(visitor_type: type) -> type:
    """The libcst class whose typed handlers are all no-ops for this visitor."""
    return cst.CSTTransformer if issubclass(visitor_type, cst.CSTTransformer) else cst.CSTVisitor


@lru_cache(maxsize=None)
def _attribute_hooks(visitor_type: type) -> frozenset[tuple[str, str]]:
    """(node type name, field) pairs the visitor has a visit_/leave_ handler for."""
    hooks = set()
    base = _libcst_base(visitor_type)
    for name in dir(visitor_type):
        if getattr(visitor_type, name) is getattr(base, name, None):
            continue  # libcst's typed visitor defines a no-op for every pair
        for prefix in ("visit_", "leave_"):
            if name.startswith(prefix):
                rest = name[len(prefix) :]
                if "_" in rest:
                    type_name, field = rest.split("_", 1)
                    if isinstance(getattr(cst, type_name, None), type):
                        hooks.add((type_name, field))
    return frozenset(hooks)


# Nodes that hold nothing but layout and punctuation: a visitor that looks
# for names, calls or statements can pass these as ``prune``.
_LAYOUT_BASES = (
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.BaseBinaryOp,
    cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.ImportStar, cst.Asynchronous,
)
# (read from each class's MRO: issubclass on libcst's abstract bases is slow at start-up)
LAYOUT_TYPES: frozenset[type] = frozenset(
    t
    for t in vars(cst).values()
    if isinstance(t, type) and cst.CSTNode in t.__mro__ and any(base in t.__mro__ for base in _LAYOUT_BASES)
)


# Nodes that hold no block of statements (expressions, simple statements, parameters,
# decorators ...): a transformer that works on blocks and compound statements only
# (a function's body, an ``if``, a ``try``) can pass these as ``prune``.
_BLOCK_HOLDERS = frozenset({
    cst.Module, cst.ClassDef, cst.FunctionDef, cst.IndentedBlock, cst.If, cst.Else, cst.For, cst.While, cst.Try,
    cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.With, cst.Match, cst.MatchCase,
})
WITHIN_STATEMENT_TYPES: frozenset[type] = frozenset(
    t for t in vars(cst).values() if isinstance(t, type) and cst.CSTNode in t.__mro__ and t not in _BLOCK_HOLDERS
)


class Subclasses(dict):
    """node type -> whether it is a subclass of ``base`` (a class or a tuple of
    them), found once per type: isinstance on libcst's abstract classes goes
    through abc, slow per node."""

    def __init__(self, base: type | tuple[type, ...]):
        super().__init__()
        self.base = base

    def __missing__(self, node_type: type) -> bool:
        self[node_type] = answer = issubclass(node_type, self.base)
        return answer


IS_STATEMENT: dict[type, bool] = Subclasses(cst.BaseStatement)  # IS_STATEMENT[type(node)]
# the nodes that hold statements (blocks, and the statements and clauses with blocks)
HOLDS_STATEMENTS: dict[type, bool] = Subclasses((cst.Module, cst.BaseCompoundStatement, cst.BaseSuite,
                                                 cst.ExceptHandler, cst.ExceptStarHandler, cst.Else,
                                                 cst.Finally, cst.MatchCase))


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor, prune: frozenset[type] = frozenset()) -> None:
    """Visit ``node`` and its descendants with a read-only visitor; nodes whose
    type is in ``prune`` are not visited at all (no callbacks)."""
    visitor_type = type(visitor)
    dispatch = visitor_type.on_visit in _DISPATCHING and visitor_type.on_leave in _DISPATCHING_LEAVE
    statements = visitor.statements if isinstance(visitor, StatementVisitor) else None
    _walk(node, visitor, _walk_plans(visitor_type, prune), dispatch, prune, statements)


class Visitor(cst.CSTVisitor):
    """A CSTVisitor that finds its ``visit_X`` / ``leave_X`` handlers once per
    node type instead of formatting their names for every node (the same
    calls as libcst's). Subclasses that override on_visit/on_leave and call
    super() get the fast lookup too."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = _plan(type(self), type(node))[0]
        return visit is None or visit(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        leave = _plan(type(self), type(original_node))[1]
        if leave is not None:
            leave(self, original_node)


class StatementVisitor(Visitor):
    """A Visitor that knows the statements enclosing the node it is at
    (``statements``, outermost first), kept by ``walk``: a node's handlers see
    it on the stack when it is a statement itself. The walk keeps the stack so
    that the other nodes of the tree cost no callback of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.statements: list[cst.CSTNode] = []


class Transformer(cst.CSTTransformer):
    """A CSTTransformer (for libcst's ``node.visit``) that finds its handlers
    once per node type, as Visitor does; the same calls as libcst's."""

    # node types ``rewrite`` passes by as they are, without visiting or leaving
    # them: for a transformer that has nothing to do in them (libcst's own
    # ``node.visit`` still calls it there)
    prune: frozenset[type] = frozenset()

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = _plan(type(self), type(node))[0]
        return visit is None or visit(self, node) is not False

    def on_leave(self, original_node, updated_node):
        leave = _plan(type(self), type(original_node))[1]
        return updated_node if leave is None else leave(self, original_node, updated_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if (type(node).__name__, attribute) in _attribute_hooks(type(self)):
            getattr(self, f"visit_{type(node).__name__}_{attribute}")(node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if (type(original_node).__name__, attribute) in _attribute_hooks(type(self)):
            getattr(self, f"leave_{type(original_node).__name__}_{attribute}")(original_node)


_DISPATCHING = (cst.CSTVisitor.on_visit, Visitor.on_visit)
_DISPATCHING_LEAVE = (cst.CSTVisitor.on_leave, Visitor.on_leave)
_HOOKED, _HOOKED_IF_SET = 2, 1  # attribute hooks: always (visit_optional), or when the field is not None


@lru_cache(maxsize=None)
def _plan(visitor_type: type, node_type: type):
    """(visit handler, leave handler, ((field, attribute hook mode), ...)) of a
    visitor for one node type; a handler is None where libcst's is a no-op."""
    name = node_type.__name__
    base = _libcst_base(visitor_type)
    handlers = []
    for prefix in ("visit_", "leave_"):
        handler = getattr(visitor_type, prefix + name, None)
        if handler is not None and handler is getattr(base, prefix + name, None):
            handler = None  # libcst's typed visitor defines a no-op for every node type
        handlers.append(handler)
    hooks = _attribute_hooks(visitor_type)
    optional = _optional_fields(node_type)
    fields = tuple(
        (field, (_HOOKED if field in optional else _HOOKED_IF_SET) if (name, field) in hooks else 0)
        for field in child_fields(node_type)
    )
    return handlers[0], handlers[1], fields


class _WalkPlans(dict):
    """node type -> its ``_plan`` for one visitor type and prune set, without
    the fields that can hold only pruned nodes and have no attribute hook (a
    name's parentheses): the walk does not even look at them."""

    def __init__(self, visitor_type: type, prune: frozenset[type]):
        super().__init__()
        self.visitor_type, self.prune = visitor_type, prune

    def __missing__(self, node_type: type):
        visit, leave, fields = _plan(self.visitor_type, node_type)
        kept = tuple((field, hook) for field, hook in fields if hook or not _holds_only(node_type, field, self.prune))
        self[node_type] = plan = (visit, leave, kept)
        return plan


@lru_cache(maxsize=None)
def _walk_plans(visitor_type: type, prune: frozenset[type]) -> _WalkPlans:
    return _WalkPlans(visitor_type, prune)


def _holds_only(node_type: type, field: str, types: frozenset[type]) -> bool:
    """Whether the field, by its declared type, can hold nothing but nodes of
    ``types`` (a type counts only with all its subclasses), None or MaybeSentinel."""
    declared = _declared_types(node_type).get(field)
    return declared is not None and all(
        kind in (type(None), MaybeSentinel) or (kind in types and _subclasses(kind) <= types) for kind in declared
    )


@lru_cache(maxsize=None)
def _declared_types(node_type: type) -> dict[str, tuple[type, ...]]:
    """Each field -> the classes its annotation names (through Optional,
    Union and Sequence); a field whose annotation cannot be read is left out."""
    try:
        hints = typing.get_type_hints(node_type)
    except Exception:  # an annotation that does not resolve: nothing is skipped
        return {}
    declared = {}
    for field, hint in hints.items():
        classes = _classes_in(hint)
        if classes is not None:
            declared[field] = classes
    return declared


def _classes_in(hint) -> tuple[type, ...] | None:
    arguments = typing.get_args(hint)
    if not arguments:
        return (hint,) if isinstance(hint, type) else None
    found: list[type] = []
    for argument in arguments:
        classes = _classes_in(argument)
        if classes is None:
            return None
        found += classes
    return tuple(found)


@lru_cache(maxsize=None)
def _subclasses(kind: type) -> frozenset[type]:
    found = {kind}
    for subclass in kind.__subclasses__():
        found |= _subclasses(subclass)
    return frozenset(found)


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor, plans: _WalkPlans, dispatch: bool, prune,
          statements: list | None) -> None:
    visit, leave, fields = plans[type(node)]
    is_statement = statements is not None and IS_STATEMENT[type(node)]
    if is_statement:
        statements.append(node)
    if (visit is None or visit(visitor, node) is not False) if dispatch else visitor.on_visit(node):
        for field, hook in fields:
            value = getattr(node, field)
            hooked = hook and (value is not None or hook == _HOOKED)
            if hooked:
                visitor.on_visit_attribute(node, field)
            kind = type(value)
            if kind is tuple or kind is list:
                for child in value:
                    if type(child) not in prune:
                        _walk(child, visitor, plans, dispatch, prune, statements)
            elif value is not None and kind is not MaybeSentinel and kind not in prune:
                _walk(value, visitor, plans, dispatch, prune, statements)
            if hooked:
                visitor.on_leave_attribute(node, field)
    if not dispatch:
        visitor.on_leave(node)
    elif leave is not None:
        leave(visitor, node)
    if is_statement:
        statements.pop()


def rewrite(node: cst.CSTNode, transformer: cst.CSTTransformer):
    """``node.visit(transformer)`` with the same calls in the same order and
    the same result, built more cheaply. libcst rebuilds every visited node
    and validates it again; here a node whose children all come back as they
    were (or as copies of what they were) is copied without validation (it
    was valid), and only a node with a really changed child is rebuilt and
    validated by libcst. Every visited node is still a new object, as with
    libcst: a transformer may tell an updated node from its original. Nodes
    of the types in the transformer's ``prune`` are passed by as they are,
    without callbacks."""
    transformer_type = type(transformer)
    hooks_known = transformer_type.on_visit_attribute is Transformer.on_visit_attribute and (
        transformer_type.on_leave_attribute is Transformer.on_leave_attribute)
    prune = getattr(transformer_type, "prune", frozenset())
    result = _rewrite(node, transformer, _rewrite_plans(transformer_type, hooks_known, prune), prune)[0]
    if isinstance(node, cst.Module) and isinstance(result, cst.RemovalSentinel):
        return node.with_changes(body=(), header=(), footer=())  # as Module.visit does
    return result


class _RewritePlans(dict):
    """node type -> ((field, holds statements, what a removed child becomes,
    attribute hook mode), ...) for one transformer type, without the fields
    that can hold only pruned nodes and have no hook."""

    def __init__(self, transformer_type: type, hooks_known: bool, prune: frozenset[type]):
        super().__init__()
        self.transformer_type, self.hooks_known, self.prune = transformer_type, hooks_known, prune

    def __missing__(self, node_type: type):
        hooks = _plan(self.transformer_type, node_type)[2] if self.hooks_known else None
        fields = []
        for index, (field, body, removed) in enumerate(_field_kinds(node_type)):
            if hooks is not None:
                hook = hooks[index][1]
            else:  # any field may have a hook: libcst calls them as visit_optional does
                hook = _HOOKED if removed == _OPTIONAL else _HOOKED_IF_SET
            if hook or not _holds_only(node_type, field, self.prune):
                fields.append((field, body, removed, hook))
        self[node_type] = plan = tuple(fields)
        return plan


@lru_cache(maxsize=None)
def _rewrite_plans(transformer_type: type, hooks_known: bool, prune: frozenset[type]) -> _RewritePlans:
    return _RewritePlans(transformer_type, hooks_known, prune)


def _rewrite(node, transformer, plans: _RewritePlans, prune):
    """(the result, whether it is ``node`` or a copy of it)."""
    if not transformer.on_visit(node):
        updated = node
    else:
        changes = {}
        copies_only = True
        for field, body, removed, hook in plans[type(node)]:
            value = getattr(node, field)
            hooked = hook and (value is not None or hook == _HOOKED)
            if hooked:
                transformer.on_visit_attribute(node, field)
            kind = type(value)
            if kind is tuple or kind is list:
                changes[field], same = _rewrite_sequence(value, body, transformer, plans, prune)
                copies_only = copies_only and same
            elif value is not None and kind is not MaybeSentinel and kind not in prune:
                new_value, same = _rewrite(value, transformer, plans, prune)
                if not same:
                    _check_replacement(value, new_value, removed)
                    if isinstance(new_value, cst.RemovalSentinel):
                        new_value = None if removed == _OPTIONAL else MaybeSentinel.DEFAULT
                changes[field] = new_value
                copies_only = copies_only and same
            if hooked:
                transformer.on_leave_attribute(node, field)
        updated = _copy(node, changes) if copies_only else node.with_changes(**changes)
    result = transformer.on_leave(node, updated)
    if result is updated:
        return result, updated is node or copies_only
    if not isinstance(result, (cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel)):
        raise cst.CSTValidationError("Expected a node of type CSTNode or a RemovalSentinel, "
                                     f"but got a return value of {type(result).__name__}")
    return result, False


def _check_replacement(child, result, removed: int) -> None:
    """libcst's errors (and their words) for a result the field cannot hold."""
    if isinstance(result, cst.RemovalSentinel) and removed == _REQUIRED:
        raise TypeError(f"We got a RemovalSentinel while visiting a {type(child).__name__}. This "
                        "node's parent does not allow it to be removed.")
    if isinstance(result, cst.FlattenSentinel):
        raise TypeError(f"We got a FlattenSentinel while visiting a {type(child).__name__}. This "
                        "node's parent does not allow for it to be it to be replaced with a sequence.")


def _rewrite_sequence(children, body: bool, transformer, plans: _RewritePlans, prune):
    """(the children rewritten as a tuple, whether each is the child or a copy
    of it); removed children are dropped, flattened ones spliced in, and in a
    body a statement emptied by removals is dropped, as libcst does."""
    result = []
    copies_only = True
    for child in children:
        if type(child) in prune:
            result.append(child)
            continue
        new_child, same = _rewrite(child, transformer, plans, prune)
        if same:
            result.append(new_child)
            continue
        copies_only = False
        if isinstance(new_child, cst.RemovalSentinel):
            continue
        if isinstance(new_child, cst.FlattenSentinel):
            result.extend(c for c in new_child if not (body and not child._is_removable() and c._is_removable()))
        elif not (body and not child._is_removable() and new_child._is_removable()):
            result.append(new_child)
    return tuple(result), copies_only


def _copy(node: cst.CSTNode, changes: dict) -> cst.CSTNode:
    """A new node like ``node`` with ``changes`` (children that are copies of
    its own), without validating it again: it is valid as ``node`` was."""
    copy = object.__new__(type(node))
    for name in _slots(type(node)):
        object.__setattr__(copy, name, changes[name] if name in changes else getattr(node, name))
    return copy


@lru_cache(maxsize=None)
def _slots(node_type: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(node_type))
