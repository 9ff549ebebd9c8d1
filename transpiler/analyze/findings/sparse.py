"""Sparse tensors and sparse gradients."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from transpiler.analyze.facts import Site, keyword
from transpiler.analyze.findings import CheckContext, Checker


class SparseTensor(Checker):
    kind = "sparse-tensor"
    family = "sparse"
    why = "MindSpore's sparse tensors (COOTensor, CSRTensor) cover few ops, run mostly on GPU/Ascend and do not " \
        "follow torch.sparse semantics; ms-migrate does not convert them."
    fix = "Use dense tensors where memory allows; otherwise rewrite with mindspore.COOTensor / CSRTensor and " \
        "the ops that accept them (check the op list for your device)."
    triggers = (
        "s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))",
        "x = torch.randn(2, 2)\ns = x.to_sparse()",
        "y = torch.sparse.mm(s, x)",
        "z = torch.zeros(2, layout=torch.sparse_coo)",
    )
    passes = (
        "x = torch.randn(2, 2)\ny = torch.mm(x, x)",
        "x = torch.randn(2, 2)\ny = x.to_dense() if False else x",
    )

    _NAMES = ("torch.sparse", "torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
              "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor",
              "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc", "torch.optim.SparseAdam",
              "torch.Tensor.to_sparse")
    _METHODS = {"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "sparse_mask",
                "coalesce"}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, _ in ctx.references(self._NAMES):
            yield site
        for site, _ in ctx.method_calls(self._METHODS):
            yield site


class SparseGradient(Checker):
    kind = "sparse-gradient"
    family = "sparse"
    why = "sparse=True asks torch for sparse embedding gradients (for SparseAdam or memory); MindSpore's " \
        "nn.Embedding always produces dense gradients, so the optimizer and memory use differ."
    fix = "Drop sparse=True (ms-migrate does) and use a dense optimizer; for very large tables use MindSpore's " \
        "parameter-server / EmbeddingLookup with sparse updates on the supported devices."
    triggers = (
        "emb = nn.Embedding(10, 4, sparse=True)",
        "i = torch.tensor([1])\nw = torch.randn(10, 4)\ny = F.embedding(i, w, sparse=True)",
        "bag = nn.EmbeddingBag(10, 4, mode='sum', sparse=True)",
    )
    passes = (
        "emb = nn.Embedding(10, 4)",
        "emb = nn.Embedding(10, 4, sparse=False)",
    )

    _EMBEDDINGS = {"torch.nn.Embedding", "torch.nn.EmbeddingBag", "torch.nn.functional.embedding",
                   "torch.nn.functional.embedding_bag", "torch.nn.Embedding.from_pretrained"}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, qualified in ctx.torch_calls():
            if qualified not in self._EMBEDDINGS:
                continue
            value = keyword(site.node, "sparse")
            if value is not None and not (isinstance(value, cst.Name) and value.value in ("False", "None")):
                yield site
