"""Execution cases in the five call shapes that catch argument bugs.

``call_cases`` turns one description of a call into five Examples:

1. all positional            ``torch.cat([a, b], 1)``
2. all keywords              ``torch.cat(tensors=[a, b], dim=1)``
3. keywords in another order ``torch.cat(dim=1, tensors=[a, b])``
4. defaults omitted          ``torch.cat([a, b])``
5. through variables         ``v_tensors = [a, b]; v_dim = 1; torch.cat(v_tensors, v_dim)``

Shapes that a parameter's kind makes impossible (a keyword-only parameter
cannot be positional, a positional-only one cannot be a keyword) keep that
parameter in its only form; shapes that would repeat another shape exactly are
left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite_rules.api import Example


@dataclass(frozen=True)
class P:
    """One argument of the call.

    value: source text of the value used in the cases.
    default: True if the parameter may be omitted (case 4 omits it).
    kind: "any", "positional" (positional-only) or "keyword" (keyword-only).
    """

    name: str
    value: str
    default: bool = False
    kind: str = "any"


SHAPES = ("positional", "keywords", "reordered", "defaults", "variables")


def _render(params: list[P], shape: str) -> tuple[str, str]:
    """(setup lines, argument text) for one shape."""
    setup = ""
    chosen = [p for p in params if not (shape == "defaults" and p.default)]
    if shape == "variables":
        setup = "".join(f"v_{p.name} = {p.value}\n" for p in chosen)
        values = {p.name: f"v_{p.name}" for p in chosen}
    else:
        values = {p.name: p.value for p in chosen}
    if shape in ("keywords", "reordered"):
        positional = [p for p in chosen if p.kind == "positional"]
        keywords = [p for p in chosen if p.kind != "positional"]
        if shape == "reordered":
            keywords = list(reversed(keywords))
    else:
        positional = [p for p in chosen if p.kind != "keyword"]
        keywords = [p for p in chosen if p.kind == "keyword"]
    parts = [values[p.name] for p in positional] + [f"{p.name}={values[p.name]}" for p in keywords]
    return setup, ", ".join(parts)


def marking(examples: tuple[Example, ...], marked: dict[str, str]) -> tuple[Example, ...]:
    """The examples of the call shapes in ``marked`` (e.g. "variables", for a
    rule that needs literal arguments) must carry a marker with that text."""
    return tuple(Example(e.torch, marked=marked[e.notes], notes=e.notes) if e.notes in marked else e for e in examples)


def call_cases(
    template: str,
    params: list[P],
    inputs: dict[str, str],
    *,
    results: tuple[str, ...] = ("result",),
    rtol: float = 1e-5,
    atol: float = 1e-6,
    dtype_map: dict[str, str] | None = None,
    notes: str = "",
    shapes: tuple[str, ...] = SHAPES,
    compare: str = "values",
    setup: str = "",
) -> tuple[Example, ...]:
    """Examples for ``template`` (text with one ``{args}`` placeholder, e.g.
    ``"result = torch.cat({args})"`` or ``"layer = nn.Linear({args})\\nresult = layer(x)"``)
    in each call shape. ``setup``: statements before the call that the
    argument values may use (they come before the variables of shape 5)."""
    examples: list[Example] = []
    seen: set[str] = set()
    for shape in shapes:
        variables, args = _render(params, shape)
        snippet = setup + variables + template.replace("{args}", args)
        if snippet in seen:
            continue
        seen.add(snippet)
        examples.append(
            Example(
                snippet,
                inputs=dict(inputs),
                results=results,
                rtol=rtol,
                atol=atol,
                dtype_map=dict(dtype_map or {}),
                notes=notes or shape,
                compare=compare,
            )
        )
    return tuple(examples)
