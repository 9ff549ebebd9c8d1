"""torch.nn.functional -> mindspore.ops."""
