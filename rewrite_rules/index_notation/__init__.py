"""Index-notation APIs lowered to plain MindSpore shape ops: ``torch.einsum``
and einops (``rearrange``/``repeat``/``reduce``/``einsum`` and the
``Rearrange``/``Reduce`` layers).

``mindspore.ops.einsum`` has no CPU kernel and einops has no MindSpore
backend, so a literal equation or pattern is planned at conversion time and
written out as reshape/permute/matmul/sum/... calls the reader can check.
"""
