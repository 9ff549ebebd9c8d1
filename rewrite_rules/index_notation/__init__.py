"""Index-notation APIs lowered to plain MindSpore shape ops: ``torch.einsum``,
einops (``rearrange``/``repeat``/``reduce``/``einsum`` and the
``Rearrange``/``Reduce`` layers) and einx's element-wise operations.

``mindspore.ops.einsum`` has no CPU kernel and einops and einx have no
MindSpore backend, so a literal equation or pattern is planned at conversion time and
written out as reshape/permute/matmul/sum/... calls the reader can check.
"""
