"""torch.nn.Embedding -> mindspore.nn.Embedding (and what has no equivalent).

Differences carried: num_embeddings/embedding_dim -> vocab_size/embedding_size;
MindSpore initialises the table from N(0, 0.01), torch from N(0, 1)
(measured std 0.01 vs 1.0), so ``embedding_table=Normal(1.0)`` is written;
``_weight`` becomes ``embedding_table``; the table Parameter is named
``embedding_table``. max_norm / scale_grad_by_freq / _freeze cannot be carried.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE
from rewrite_rules.nn.shared import DTYPE, P, layer_cases, reset_example
from rewrite_rules.api import ApiRule, Drop, Example, Unsupported


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _embedding_hook(call, ctx):
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


_IDS = {"i": "randint(0, 10, (2, 5))"}

RULES = [
    ApiRule(
        "torch.nn.Embedding",
        "mindspore.nn.Embedding",
        signature="num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
        "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None",
        args={
            "num_embeddings": "vocab_size",
            "embedding_dim": "embedding_size",
            "padding_idx": Unsupported(
                "MindSpore's Embedding lets the padding row receive gradients (torch keeps them zero), "
                "so training would drift; mask the padding ids by hand"
            ),
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
            Example("layer = nn.Embedding(10, 4, padding_idx=0)", marked="padding row receive gradients"),
            # the table is used as given: compare values, no weight copy needed
            *layer_cases("Embedding", [P("num_embeddings", "5"), P("embedding_dim", "3"), P("_weight", "w")],
                         {"i": "randint(0, 5, (2, 4))", "w": "randn(5, 3)"}, call="layer(i)", shapes=("keywords",)),
            Example("layer = nn.Embedding(10, 4, max_norm=1.0)", marked="max_norm"),
            reset_example("Embedding", "10, 4", "randint(0, 10, (2, 5))"),
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
