"""torch.nn.Embedding -> mindspore.nn.Embedding (and what has no equivalent).

Differences carried: num_embeddings/embedding_dim -> vocab_size/embedding_size;
MindSpore initialises the table from N(0, 0.01), torch from N(0, 1)
(measured std 0.01 vs 1.0), so ``embedding_table=Normal(1.0)`` is written;
``_weight`` becomes ``embedding_table``; the table Parameter is named
``embedding_table``. max_norm / scale_grad_by_freq / _freeze cannot be carried.
``padding_idx``: MindSpore's Embedding zeroes the padding row at first, as
torch does, but lets it train; a small subclass written above the code keeps
the row out of the gradient, as torch does.

Code that reads the table as torch names it (``emb.weight``: weight tying
``self.lm_head.weight = self.tok_emb.weight``, ``F.linear(x, self.emb.weight)``,
``self.emb.weight.shape``, ``nn.init.normal_(self.emb.weight, std=0.02)``,
``module.weight`` under ``isinstance(module, nn.Embedding)``) reads
``embedding_table`` where the file shows the object is an Embedding (the
rename in ``weights`` applies to attribute reads; tests/rules/test_embedding_research.py).

``nn.Embedding.from_pretrained(embeddings, freeze=True)`` is an Embedding
whose table is ``embeddings``, frozen unless ``freeze=False``: a plain
``nn.Embedding(n, d, embedding_table=embeddings)`` when the table stays
trainable and is a name, else a function written above the code that also
freezes the table.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE
from rewrite_rules.nn.shared import DTYPE, P, layer_cases, reset_example
from rewrite_rules.api import (ApiRule, Drop, Example, NotALiteral, Unconvertible, Unsupported, code_of, define,
                               literal_value)
from rewrite_rules.nn.module_paths import with_module_paths


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


_WITH_PADDING = '''
class {name}(EMBEDDING):
    """torch.nn.Embedding with padding_idx: the padding row starts at zero and receives no gradient (written by ms-migrate)."""

    def construct(self, ids):
        output = super().construct(ids)
        if self.padding_idx is None:
            return output
        # torch leaves the padding row out of the gradient; MindSpore's Embedding would train it
        padding = OPS.expand_dims(ids == self.padding_idx, -1)
        return OPS.where(padding, OPS.stop_gradient(output), output)
'''


def _padding(call, ctx) -> None:
    """padding_idx: MindSpore's Embedding zeroes the row at first as torch does, but trains it: the
    class written above the code keeps its gradient out, as torch does. A negative index counts
    from the end in torch (MindSpore refuses it)."""
    value = call.get("padding_idx")
    if value is None or _is_none(value):
        call.remove("padding_idx")
        return
    if call.for_adapter:
        raise NotALiteral("padding_idx", code_of(value))  # the adapter keeps torch's default, checked
    if call.has("_weight") and not _is_none(call.get("_weight")):
        raise Unconvertible("padding_idx with _weight: MindSpore's Embedding would zero the padding row of the "
                            "given table (torch keeps it)")
    try:
        index = literal_value(value)
    except ValueError:
        index = None
    if isinstance(index, int) and index < 0:
        call.set("padding_idx", cst.BinaryOperation(call.get("num_embeddings"), cst.Subtract(), cst.Integer(str(-index))))
    source = _WITH_PADDING.replace("EMBEDDING", code_of(ctx.ref("mindspore.nn.Embedding")))
    call.func = define(ctx, "EmbeddingWithPadding", source.replace("OPS", code_of(ctx.ref("mindspore.ops"))))


def _embedding_hook(call, ctx):
    _padding(call, ctx)
    init = cst.Call(func=ctx.ref("mindspore.common.initializer.Normal"), args=[cst.Arg(cst.Float("1.0"))])
    if call.has("_weight") and not _is_none(call.get("_weight")):
        call.renamed["_weight"] = "embedding_table"
        weight = call.get("_weight")
        if call.for_adapter:  # the adapter's own _weight, None unless given
            call.set("_weight", cst.IfExp(cst.Comparison(weight, [cst.ComparisonTarget(cst.IsNot(), cst.Name("None"))]),
                                          weight, init))
    else:
        call.remove("_weight")
        call.add_keyword("embedding_table", init)


_FROM_PRETRAINED = '''
def {name}(embeddings, freeze=True):
    """torch.nn.Embedding.from_pretrained (written by ms-migrate)."""
    layer = EMBEDDING(embeddings.shape[0], embeddings.shape[1], embedding_table=embeddings)
    layer.embedding_table.requires_grad = not freeze
    return layer
'''


def _from_pretrained(call, ctx):
    """A table given as a name and left trainable: the plain constructor; else the function above the code."""
    embeddings = call.get("embeddings")
    freeze = call.get("freeze")
    trainable = freeze is not None and isinstance(freeze, cst.Name) and freeze.value == "False"
    if trainable and isinstance(embeddings, cst.Name) and not call.for_adapter:
        shape = [cst.Subscript(cst.Attribute(embeddings, cst.Name("shape")),
                               [cst.SubscriptElement(cst.Index(cst.Integer(str(axis))))]) for axis in (0, 1)]
        call.result = cst.Call(ctx.ref("mindspore.nn.Embedding"), [
            cst.Arg(shape[0]), cst.Arg(shape[1]),
            cst.Arg(embeddings, keyword=cst.Name("embedding_table"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))),
        ])
        return
    function = define(ctx, "embedding_from_pretrained",
                      _FROM_PRETRAINED.replace("EMBEDDING", code_of(ctx.ref("mindspore.nn.Embedding"))))
    args = [cst.Arg(embeddings)]
    if freeze is not None:
        args.append(cst.Arg(freeze, keyword=cst.Name("freeze"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    call.result = cst.Call(function, args)


_IDS = {"i": "randint(0, 10, (2, 5))"}
_PADDING = Unsupported("padding_idx with a given table: MindSpore's Embedding would zero its padding row "
                       "(torch keeps it)")

RULES = [
    ApiRule(
        "torch.nn.Embedding",
        "mindspore.nn.Embedding",
        signature="num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
        "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None",
        args={
            "num_embeddings": "vocab_size",
            "embedding_dim": "embedding_size",
            "max_norm": Unsupported("max_norm renormalisation is not supported by mindspore.nn.Embedding"),
            "norm_type": Drop("only used with max_norm"),
            "scale_grad_by_freq": Unsupported("scale_grad_by_freq is not supported"),
            "sparse": Drop("gradient storage format only"),
            "_freeze": Unsupported("_freeze: make the table a non-trainable Parameter by hand"),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        positional=2,
        hook=_embedding_hook,
        weights={"weight": "embedding_table"},
        attributes={"num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
        # torch draws N(0, 1); padding_idx (which torch zeroes) never reaches the adapter
        reset_parameters=("self.embedding_table.set_data(mindspore.common.initializer.initializer(mindspore.common."
                          "initializer.Normal(1.0), self.embedding_table.shape, self.embedding_table.dtype))",),
        notes="embedding_table=Normal(1.0) matches torch's N(0, 1) init (MindSpore's default is N(0, 0.01)).",
        examples=(
            Example(
                "emb = nn.Embedding(100, 16)",
                "emb = nn.Embedding(100, 16, embedding_table=mindspore.common.initializer.Normal(1.0))",
            ),
            *layer_cases("Embedding", [P("num_embeddings", "10"), P("embedding_dim", "4")], _IDS, call="layer(i)"),
            # padding_idx: the row starts at zero and gets no gradient (tests/rules/test_embedding_research.py)
            Example("layer = nn.Embedding(10, 4, padding_idx=0)\nresult = layer(i), layer.padding_idx", inputs=_IDS,
                    notes="padding_idx"),
            Example("layer = nn.Embedding(10, 4, padding_idx=-1)\nresult = layer(i), layer.padding_idx", inputs=_IDS,
                    notes="padding_idx from the end"),
            Example("layer = nn.Embedding(10, 4, padding_idx=None)\nresult = layer(i)", inputs=_IDS),
            # the table is used as given: compare values, no weight copy needed
            *layer_cases("Embedding", [P("num_embeddings", "5"), P("embedding_dim", "3"), P("_weight", "w")],
                         {"i": "randint(0, 5, (2, 4))", "w": "randn(5, 3)"}, call="layer(i)", shapes=("keywords",)),
            Example("layer = nn.Embedding(10, 4, max_norm=1.0)", marked="max_norm"),
            reset_example("Embedding", "10, 4", "randint(0, 10, (2, 5))"),
        ),
    ),
    ApiRule(
        "torch.nn.Embedding.from_pretrained",
        "mindspore.nn.Embedding",
        signature="embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, "
        "sparse=False",
        args={
            "padding_idx": _PADDING,
            "max_norm": Unsupported("max_norm renormalisation is not supported by mindspore.nn.Embedding"),
            "norm_type": Drop("only used with max_norm"),
            "scale_grad_by_freq": Unsupported("scale_grad_by_freq is not supported"),
            "sparse": Drop("gradient storage format only"),
        },
        hook=_from_pretrained,
        weights={"weight": "embedding_table"},
        attributes={"num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
        notes="an Embedding holding the given table, frozen (requires_grad=False) unless freeze=False",
        proven_by=("tests/rules/test_embedding_research.py::test_from_pretrained_freezes_as_torch_does",),
        examples=(
            Example("layer = nn.Embedding.from_pretrained(w, freeze=False)",
                    "layer = nn.Embedding(w.shape[0], w.shape[1], embedding_table=w)"),
            # frozen or not: tests/rules/test_embedding_research.py (a tensor's requires_grad read is marked)
            Example("layer = nn.Embedding.from_pretrained(w)\nresult = layer(i), layer.weight, layer.weight.shape",
                    inputs={"i": "randint(0, 5, (2, 4))", "w": "randn(5, 3)"}),
            Example("layer = nn.Embedding.from_pretrained(w * 2, freeze=False)\n"
                    "result = layer(i), layer.num_embeddings, layer.embedding_dim",
                    inputs={"i": "randint(0, 5, (2, 4))", "w": "randn(5, 3)"}, notes="an expression, trainable"),
            Example("layer = nn.Embedding.from_pretrained(w, padding_idx=0)", marked="would zero its padding row"),
        ),
    ),
    ApiRule(
        "torch.nn.EmbeddingBag",
        None,
        signature="num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, mode='mean', "
        "sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None, dtype=None",
        notes="MindSpore has no EmbeddingBag; use nn.Embedding and reduce the bags (sum/mean/max) yourself",
        examples=(Example("bag = nn.EmbeddingBag(10, 3, mode='sum')", marked="no EmbeddingBag"),),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
