"""torch.Tensor methods and attributes -> MindSpore Tensor methods or mindspore.ops."""
