"""torch.nn.functional odds and ends -> mindspore.ops: linear, bilinear,
embedding, one_hot, normalize, cosine_similarity, pairwise_distance, pdist,
scaled_dot_product_attention.

The families have modules of their own (functional_activations,
functional_conv, functional_pooling, functional_normalization,
functional_dropout, functional_padding, functional_upsampling,
functional_losses).

Measured on MindSpore 2.10 CPU: ``ops.embedding`` has no CPU kernel
("kernel Embedding unregistered"): the lookup is ``ops.gather(weight, ids,
0)`` (padding_idx and max_norm only change training: marked). ``ops`` has no
normalize / pairwise_distance / scaled_dot_product_attention: they are
composed from ops.norm, softmax and matmul (equal to 1e-6).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.cases import SHAPES, call_cases
from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.api import ApiRule, Drop, Example, Unconvertible, Unsupported, code_of


def _is_none(expr) -> bool:
    return expr is None or (isinstance(expr, cst.Name) and expr.value == "None")


def _simple(expr) -> bool:
    """Evaluating it twice costs nothing and changes nothing."""
    return isinstance(expr, (cst.Name, cst.Attribute))


def _need_simple(call, name: str, why: str) -> str:
    expr = call.get(name)
    if not _simple(expr):
        raise Unconvertible(f"{name} is a compound expression used twice in the MindSpore form ({why}); "
                            "assign it to a variable first")
    return code_of(expr)


def _embedding(call, ctx):
    call.result = cst.Call(ctx.ref("mindspore.ops.gather"),
                           [cst.Arg(call.get("weight")), cst.Arg(call.get("input")), cst.Arg(cst.Integer("0"))])


def _one_hot(call, ctx):
    known, classes = literal_or_none(call, "num_classes")
    if known and classes != -1:
        return
    x = _need_simple(call, "input", "num_classes=-1 is the largest index + 1")
    inferred = f"int({x}.max()) + 1"
    if known:
        call.set("num_classes", inferred)
    else:
        v = code_of(call.get("num_classes"))
        call.set("num_classes", f"{v} if {v} >= 0 else {inferred}")


def _normalize(call, ctx):
    x = _need_simple(call, "input", "input / max(norm(input), eps)")
    p, dim, eps = (code_of(call.get(n, d)) for n, d in (("p", "2.0"), ("dim", "1"), ("eps", "1e-12")))
    norm = code_of(ctx.ref("mindspore.ops.norm"))
    call.result = cst.parse_expression(f"{x} / {norm}({x}, {p}, {dim}, keepdim=True).clamp(min={eps})")


def _pairwise_distance(call, ctx):
    x1, x2 = code_of(call.get("x1")), code_of(call.get("x2"))
    p, eps, keepdim = (code_of(call.get(n, d)) for n, d in (("p", "2.0"), ("eps", "1e-06"), ("keepdim", "False")))
    norm = code_of(ctx.ref("mindspore.ops.norm"))
    call.result = cst.parse_expression(f"{norm}({x1} - {x2} + {eps}, {p}, dim=-1, keepdim={keepdim})")


def _sdpa(call, ctx):
    """softmax(q k^T * scale + mask) v, with torch's mask conventions: a bool
    mask keeps True, a float mask is added; is_causal keeps the lower triangle.

    Masked scores get the float32 minimum, not -inf: measured, MindSpore's CPU
    softmax corrupts the rows after a row that is entirely -inf. The
    probabilities are then multiplied by the mask, so a row with every key
    masked is 0, as in torch."""
    known, gqa = literal_or_none(call, "enable_gqa")
    if not known or gqa:
        raise Unconvertible("enable_gqa=True (grouped-query broadcasting) is not composed")
    ops = code_of(ctx.ref("mindspore.ops"))
    ms = code_of(ctx.ref("mindspore"))
    k, v = code_of(call.get("key")), code_of(call.get("value"))
    scale = call.get("scale")
    if _is_none(scale):
        q = _need_simple(call, "query", "the default scale is 1/sqrt(query.shape[-1])")
        scale_text = f"{q}.shape[-1] ** -0.5"
    else:
        q, scale_text = code_of(call.get("query")), code_of(scale)
    scores = f"{ops}.matmul({q}, {k}.swapaxes(-2, -1)) * {scale_text}"

    def keep(mask: str) -> str:
        return f"{ops}.softmax({ops}.masked_fill({scores}, {ops}.logical_not({mask}), -3.4028234663852886e38), axis=-1) * {mask}"

    mask = call.get("attn_mask")
    if not _is_none(mask):
        m = _need_simple(call, "attn_mask", "its dtype decides between keeping and adding")
        masked = f"({keep(m)} if {m}.dtype == {ms}.bool_ else {ops}.softmax({scores} + {m}, axis=-1))"
        # the variable may hold None (timm passes attn_mask=attn_mask either way)
        masked = f"({ops}.softmax({scores}, axis=-1) if {m} is None else {masked})"
    else:
        masked = f"{ops}.softmax({scores}, axis=-1)"
    known_c, causal = literal_or_none(call, "is_causal")
    if not known_c or causal:
        if known_c and not _is_none(mask):
            raise Unconvertible("attn_mask together with is_causal=True (torch raises an error too)")
        q = _need_simple(call, "query", "the causal mask needs the query length")
        k = _need_simple(call, "key", "the causal mask needs the key length")
        causal_probs = keep(f"{ops}.ones(({q}.shape[-2], {k}.shape[-2]), {ms}.bool_).tril()")
        masked = causal_probs if known_c else f"({causal_probs} if {code_of(call.get('is_causal'))} else {masked})"
    known, dropout = literal_or_none(call, "dropout_p")
    if not known or dropout != 0:
        # torch drops attention weights whenever dropout_p > 0 (callers pass 0.0 in eval mode)
        masked = f"{ops}.dropout({masked}, p={code_of(call.get('dropout_p'))})"
    call.result = cst.parse_expression(f"{ops}.matmul({masked}, {v})")


_QKV = {"q": "randn(2, 3, 5, 4)", "k": "randn(2, 3, 6, 4)", "v": "randn(2, 3, 6, 8)"}

RULES = [
    ApiRule(
        "torch.nn.functional.linear",
        "mindspore.ops.dense",
        signature="input, weight, bias=None",
        examples=fn_cases("linear", [P("input", "x"), P("weight", "w"), P("bias", "b", default=True)],
                          {"x": "randn(2, 3, 4)", "w": "randn(5, 4)", "b": "randn(5)"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.bilinear",
        "mindspore.ops.bidense",
        signature="input1, input2, weight, bias=None",
        examples=fn_cases("bilinear", [P("input1", "a"), P("input2", "b"), P("weight", "w"), P("bias", "c", default=True)],
                          {"a": "randn(3, 4)", "b": "randn(3, 6)", "w": "randn(5, 4, 6)", "c": "randn(5)"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.embedding",
        "mindspore.ops.gather",
        signature="input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False",
        args={
            "padding_idx": Unsupported("padding_idx (no gradient for that row) is not carried by a plain gather"),
            "max_norm": Unsupported("max_norm renormalisation is not supported"),
            "norm_type": Drop("only used with max_norm"),
            "scale_grad_by_freq": Unsupported("scale_grad_by_freq is not supported"),
            "sparse": Drop("gradient storage format only"),
        },
        hook=_embedding,
        notes="ops.gather(weight, input, 0): ops.embedding has no CPU kernel.",
        examples=(
            Example("e = F.embedding(ids, table)", "e = ops.gather(table, ids, 0)"),
            *fn_cases("embedding", [P("input", "i"), P("weight", "w")], {"i": "randint(0, 10, (2, 5))", "w": "randn(10, 4)"}),
            Example("e = F.embedding(ids, table, padding_idx=0)", marked="padding_idx"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.one_hot",
        "mindspore.ops.one_hot",
        signature="input, num_classes=-1",
        args={"input": "indices", "num_classes": "depth"},
        positional=2,
        hook=_one_hot,
        notes="num_classes=-1 (torch's default) becomes int(x.max()) + 1.",
        examples=fn_cases("one_hot", [P("input", "i"), P("num_classes", "7", default=True)],
                          {"i": "randint(0, 5, (2, 4))"}),
    ),
    ApiRule(
        "torch.nn.functional.normalize",
        None,
        signature="input, p=2.0, dim=1, eps=1e-12, out=None",
        args={"out": Unsupported("out= is not supported; assign the result instead")},
        hook=_normalize,
        notes="composed: x / ops.norm(x, p, dim, keepdim=True).clamp(min=eps)",
        examples=fn_cases("normalize", [P("input", "x"), P("p", "3.0", default=True), P("dim", "0", default=True),
                                        P("eps", "1e-06", default=True)], {"x": "randn(3, 4)"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.cosine_similarity",
        "mindspore.ops.cosine_similarity",
        signature="x1, x2, dim=1, eps=1e-08",
        examples=fn_cases("cosine_similarity", [P("x1", "a"), P("x2", "b"), P("dim", "0", default=True),
                                                P("eps", "1e-06", default=True)], {"a": "randn(3, 4)", "b": "randn(3, 4)"},
                          atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.pairwise_distance",
        None,
        signature="x1, x2, p=2.0, eps=1e-06, keepdim=False",
        hook=_pairwise_distance,
        notes="composed: ops.norm(x1 - x2 + eps, p, dim=-1, keepdim=keepdim)",
        examples=fn_cases("pairwise_distance", [P("x1", "a"), P("x2", "b"), P("p", "3.0", default=True),
                                                P("eps", "0.001", default=True), P("keepdim", "True", default=True)],
                          {"a": "randn(3, 4)", "b": "randn(3, 4)"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.pdist",
        "mindspore.ops.pdist",
        signature="input, p=2",
        examples=fn_cases("pdist", [P("input", "x"), P("p", "3.0", default=True)], {"x": "randn(4, 5)"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.scaled_dot_product_attention",
        None,
        signature="query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False",
        hook=_sdpa,
        notes="composed: softmax(q k^T * scale + mask) v (no ops form in MindSpore 2.10 for CPU)",
        examples=(
            *fn_cases("scaled_dot_product_attention",
                      [P("query", "q"), P("key", "k"), P("value", "v"), P("attn_mask", "None", default=True),
                       P("dropout_p", "0.0", default=True), P("is_causal", "False", default=True),
                       P("scale", "0.3", default=True, kind="keyword")], _QKV, atol=1e-5, shapes=SHAPES[:4]),
            Example("v_query = q\nv_key = k\nv_value = v\nv_scale = 0.3\n"
                    "result = F.scaled_dot_product_attention(v_query, v_key, v_value, scale=v_scale)",
                    inputs=_QKV, atol=1e-5, notes="variables"),
            *fn_cases("scaled_dot_product_attention", [P("query", "q"), P("key", "k"), P("value", "v"), P("attn_mask", "m")],
                      {**_QKV, "m": "bool(5, 6)"}, shapes=("keywords",), notes="bool mask", atol=1e-5),
            Example("result = F.scaled_dot_product_attention(q, k, v, m)",
                    inputs={**_QKV, "m": "tensor([[True, True, True, True, True, True], [False, False, False, False, False, False], "
                                          "[True, False, True, False, True, False], [False, False, False, False, False, True], "
                                          "[True, True, False, False, True, True]])"},
                    atol=1e-5, notes="fully masked row"),
            *fn_cases("scaled_dot_product_attention", [P("query", "q"), P("key", "k"), P("value", "v"), P("attn_mask", "m")],
                      {**_QKV, "m": "randn(5, 6)"}, shapes=("keywords",), notes="float mask", atol=1e-5),
            *fn_cases("scaled_dot_product_attention", [P("query", "q"), P("key", "k"), P("value", "v"),
                                                       P("is_causal", "True")],
                      {**_QKV, "k": "randn(2, 3, 5, 4)", "v": "randn(2, 3, 5, 8)"}, shapes=("keywords",),
                      notes="causal", atol=1e-5),
            Example("mask = None\ncausal = False\nresult = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, "
                    "is_causal=causal)", inputs=_QKV, atol=1e-5,
                    notes="attn_mask and is_causal through variables, no mask (timm's Attention)"),
            Example("causal = True\nresult = F.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=causal)",
                    inputs={**_QKV, "k": "randn(2, 3, 5, 4)", "v": "randn(2, 3, 5, 8)"}, atol=1e-5,
                    notes="is_causal through a variable"),
            Example("p = 0.0\nresult = F.scaled_dot_product_attention(q, k, v, dropout_p=p)", inputs=_QKV, atol=1e-5,
                    notes="dropout_p through a variable (timm: `self.attn_drop.p if self.training else 0.`)"),
            Example("y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)",
                    "y = ops.matmul(\n"
                    "    ops.dropout(\n"
                    "        ops.softmax(ops.matmul(q, k.swapaxes(-2, -1)) * q.shape[-1] ** -0.5, axis=-1),\n"
                    "        p=0.1,\n"
                    "    ),\n"
                    "    v,\n"
                    ")"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.gumbel_softmax",
        "mindspore.ops.gumbel_softmax",
        signature="logits, tau=1, hard=False, eps=1e-10, dim=-1",
        args={"eps": Drop("deprecated and unused by torch")},
        positional=3,
        notes="Random (Gumbel noise): compared by value, torch's draws replayed (hard samples bitwise equal, "
        "soft ones within 3e-7 measured: the default rtol 1e-5, atol 1e-6).",
        examples=(
            *call_cases("result = F.gumbel_softmax({args})",
                        [P("logits", "x"), P("tau", "0.5", default=True), P("hard", "True", default=True),
                         P("eps", "1e-10", default=True), P("dim", "-1", default=True)], {"x": "randn(3, 5)"}),
            *call_cases("result = F.gumbel_softmax({args})", [P("logits", "x"), P("tau", "2.0")], {"x": "randn(4, 6)"},
                        shapes=("keywords",), notes="soft"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.embedding_bag",
        None,
        signature="input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode='mean', "
        "sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None",
        notes="MindSpore has no embedding_bag; gather with ops.gather and reduce the bags yourself",
        examples=(Example("y = F.embedding_bag(ids, w, offsets)", marked="no embedding_bag"),),
    ),
]
