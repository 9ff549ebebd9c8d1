"""Data-parallel and distributed training."""

from __future__ import annotations

from typing import Iterator

from transpiler.analyze.facts import Site
from transpiler.analyze.findings import CheckContext, Checker


class Distributed(Checker):
    kind = "distributed"
    family = "distributed"
    why = "torch.distributed, DataParallel/DistributedDataParallel and DistributedSampler have no drop-in " \
        "equivalent: MindSpore sets parallelism globally and launches processes with msrun/mpirun."
    fix = "Call mindspore.communication.init() and set_auto_parallel_context(parallel_mode=" \
        "ParallelMode.DATA_PARALLEL, gradients_mean=True); drop the DDP wrapper; shard datasets with " \
        "num_shards=get_group_size(), shard_id=get_rank(); launch with msrun."
    triggers = (
        "torch.distributed.init_process_group('nccl')",
        "import torch.distributed as dist\nrank = dist.get_rank()",
        "m = nn.parallel.DistributedDataParallel(model)",
        "m = nn.DataParallel(model)",
        "from torch.utils.data.distributed import DistributedSampler\ns = DistributedSampler(ds)",
    )
    passes = (
        "m = model",
        "loader = torch.utils.data.DataLoader(ds, batch_size=2)",
    )

    _NAMES = ("torch.distributed", "torch.nn.parallel", "torch.nn.DataParallel", "torch.utils.data.distributed",
              "torch.utils.data.DistributedSampler", "torch.multiprocessing.spawn")

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, _ in ctx.references(self._NAMES):
            yield site
