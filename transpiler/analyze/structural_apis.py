"""torch APIs whose migration is a change of program structure, not of one call:
the training step and the data pipeline. A use of one of these is listed as
"needs a structural rewrite" whatever the converter does with it today."""

from __future__ import annotations

_TRAINING_STEP = ("training step: MindSpore has no backward(); the loop body becomes a forward function, "
                  "grads come from mindspore.value_and_grad(forward_fn, None, optimizer.parameters) and "
                  "optimizer(grads) applies them")
_GRAD = "gradients are functions in MindSpore: mindspore.grad / mindspore.value_and_grad over a forward function"
_DATA = ("data pipeline: a Dataset becomes a plain Python source and DataLoader becomes "
         "mindspore.dataset.GeneratorDataset(source, column_names=...).batch(batch_size)")
_SAMPLER = "data pipeline: samplers become GeneratorDataset(sampler=...) or shuffle/num_shards arguments"

STRUCTURAL_APIS: dict[str, str] = {
    "torch.Tensor.backward": _TRAINING_STEP,
    "torch.optim.Optimizer.step": _TRAINING_STEP,
    "torch.optim.Optimizer.zero_grad": _TRAINING_STEP,
    "torch.autograd.grad": _GRAD,
    "torch.autograd.backward": _GRAD,
    "torch.utils.data.DataLoader": _DATA,
    "torch.utils.data.dataloader.DataLoader": _DATA,
    "torch.utils.data.Dataset": _DATA,
    "torch.utils.data.dataset.Dataset": _DATA,
    "torch.utils.data.IterableDataset": _DATA,
    "torch.utils.data.TensorDataset": _DATA,
    "torch.utils.data.ConcatDataset": _DATA,
    "torch.utils.data.Subset": _DATA,
    "torch.utils.data.random_split": _DATA,
    "torch.utils.data.default_collate": _DATA,
    "torch.utils.data.Sampler": _SAMPLER,
    "torch.utils.data.RandomSampler": _SAMPLER,
    "torch.utils.data.SequentialSampler": _SAMPLER,
    "torch.utils.data.SubsetRandomSampler": _SAMPLER,
    "torch.utils.data.WeightedRandomSampler": _SAMPLER,
    "torch.utils.data.BatchSampler": _SAMPLER,
}

# Optimizer methods that belong to the training step (matched on variables that
# hold a torch.optim optimizer).
OPTIMIZER_STEP_METHODS = {"step": "torch.optim.Optimizer.step", "zero_grad": "torch.optim.Optimizer.zero_grad"}


def structural_reason(api: str) -> str | None:
    return STRUCTURAL_APIS.get(api)
