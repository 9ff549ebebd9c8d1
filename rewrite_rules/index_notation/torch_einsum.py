"""torch.einsum with a literal equation -> matmul/permute/sum/diagonal
(``contraction``): mindspore.ops.einsum has no CPU kernel (measured)."""

from __future__ import annotations

from rewrite_rules.index_notation.build import atom
from rewrite_rules.index_notation.contraction import lower_einsum
from rewrite_rules.index_notation.equations import EquationError, parse_torch_equation
from rewrite_rules.index_notation.literals import argument_choices, by_choice, not_literal, operand_list
from rewrite_rules.api import ApiRule, Example, Unconvertible


def _einsum(call, ctx):
    equation = call.get("equation")
    choices = argument_choices(call, "equation")
    if choices is None:
        raise not_literal("equation", equation)
    operands = operand_list(call.varargs)

    def lowered(text):
        try:
            return lower_einsum(parse_torch_equation(text), operands, ctx.ref)
        except EquationError as error:
            raise Unconvertible(f"equation {text!r}: {error}") from None

    # an equation picked at run time: one lowering per choice; parenthesised when not an atom
    # (the call may be the receiver of a method)
    call.result = atom(by_choice(choices, lowered))


def _run(equation: str, inputs: dict[str, str], operands: str | None = None, **options) -> Example:
    args = operands if operands is not None else ", ".join(inputs)
    tolerances = {"rtol": 1e-4, "atol": 1e-5, **options}
    return Example(f"result = torch.einsum({equation!r}, {args})", inputs=inputs, notes=equation, **tolerances)


_ATTENTION = {"q": "randn(2, 3, 5, 4)", "k": "randn(2, 3, 6, 4)"}

RULES = [
    ApiRule(
        "torch.einsum",
        "mindspore.ops.matmul",
        signature="equation, *operands",
        hook=_einsum,
        aliases=("torch.functional.einsum",),
        notes="a literal equation is lowered to matmul/swapaxes/permute/sum/diagonal (mindspore.ops.einsum has no "
              "CPU kernel); contracted pairwise left to right like torch",
        examples=(
            Example("s = torch.einsum('bhid,bhjd->bhij', q, k)", "s = ops.matmul(q, k.swapaxes(-2, -1))"),
            Example("o = torch.einsum('bhij,bhjd->bhid', attn, v)", "o = ops.matmul(attn, v)"),
            Example("m = torch.einsum('i,j->ij', a, b)", "m = a[:, None] * b"),
            Example("d = torch.einsum('ii->i', x)", "d = x.diagonal(axis1=0, axis2=1)"),
            Example("t = torch.einsum('ii', x).item()", "t = x.diagonal(axis1=0, axis2=1).sum(0).item()"),
            Example("y = torch.einsum('nchw,nkc->nkhw', x, w)",
                    "y = ops.matmul(w[:, None], x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)"),
            Example("y = torch.einsum('i,j->ij', a, b).sum(0)", "y = (a[:, None] * b).sum(0)"),
            Example("y = torch.einsum(eq, a, b)", marked="not a string literal"),
            # an equation picked at run time among known ones (x-transformers' attend.py): one lowering each
            *(Example("eq = 'b j d' if k.ndim == 3 else 'b h j d'\n"
                      "result = torch.einsum(f'b h i d, {eq} -> b h i j', q, k)",
                      inputs={"q": "randn(2, 3, 5, 4)", "k": k}, rtol=1e-4, atol=1e-5)
              for k in ("randn(2, 6, 4)", "randn(2, 3, 6, 4)")),
            Example("y = torch.einsum(f'{s}i,ij->j', a, b)", marked="not a string literal"),
            Example("y = torch.einsum('ij,jk->ik', *pair)", marked="unpacked with *"),
            Example("y = torch.einsum('ij,jk->ik', a)", marked="the equation has 2 operands, the call passes 1"),
            Example("y = torch.einsum('ij->kj', a)", marked="does not appear"),
            Example("y = torch.einsum('...ij->ij', a)", marked="'...' is summed away"),
            Example("y = torch.einsum(a, [0, 1], b, [1, 2], [0, 2])", marked="not a string literal"),
            _run("bhid,bhjd->bhij", _ATTENTION),
            _run("bhij,bhjd->bhid", {"a": "randn(2, 3, 5, 6)", "v": "randn(2, 3, 6, 4)"}),
            _run("bij,bjk->bik", {"a": "randn(2, 3, 4)", "b": "randn(2, 4, 5)"}),
            _run("i,j->ij", {"a": "randn(3)", "b": "randn(4)"}),
            _run("ii->i", {"x": "randn(4, 4)"}),
            _run("ii", {"x": "randn(4, 4)"}),
            _run("...ij,...jk->...ik", {"a": "randn(2, 1, 3, 4)", "b": "randn(5, 4, 2)"}),
            _run("bn,anm,bm->ba", {"x": "randn(2, 3)", "w": "randn(4, 3, 5)", "y": "randn(2, 5)"}),
            _run("nchw,nkc->nkhw", {"x": "randn(2, 3, 4, 5)", "w": "randn(2, 6, 3)"}),
            _run("b i d, b j d -> b i j", {"a": "randn(2, 3, 4)", "b": "randn(2, 5, 4)"}),
            _run("bhnd,bhd->bhn", {"a": "randn(2, 3, 4, 5)", "b": "randn(2, 3, 5)"}),
            _run("ij,jk", {"a": "randn(3, 4)", "b": "randn(4, 5)"}, operands="[a, b]"),
            _run("bi,bi->b", {"a": "randn(3, 4)", "b": "randn(3, 4)"}, operands="(a, b)"),
            _run("ijk,jkl->il", {"a": "randn(2, 3, 4)", "b": "randn(3, 4, 5)"}),
            _run("bhld,lrd->bhlr", {"a": "randn(2, 3, 4, 5)", "b": "randn(4, 6, 5)"}),
            _run("...ii->...i", {"x": "randn(2, 3, 3)"}),
            _run("i...->...i", {"x": "randn(3, 2, 4)"}),
            _run("ij,ij->", {"a": "randint(-5, 5, (3, 4))", "b": "randint(-5, 5, (3, 4))"}, rtol=0, atol=0),
        ),
    ),
]
