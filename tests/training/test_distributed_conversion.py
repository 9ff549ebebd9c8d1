"""What a DDP script becomes (text only; tests/training/test_distributed_msrun.py
runs one under msrun and torchrun and compares them)."""

from __future__ import annotations

import textwrap

from transpiler.convert.pipeline import convert_source


def convert(code: str) -> str:
    return convert_source(textwrap.dedent(code), "ddp.py").output


def test_launcher_environment_reads_are_msruns():
    out = convert("""
        import os
        import torch.distributed as dist
        env = {key: os.environ[key] for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")}
        local_rank = int(os.environ["LOCAL_RANK"])
        if "WORLD_SIZE" in os.environ:
            world = int(os.getenv("WORLD_SIZE", 1))
        rank = os.environ.get("RANK", -1)
        os.environ["MASTER_ADDR"] = "localhost"
        other = os.environ["HOME"]
        dist.barrier()
    """)
    assert '("MS_SCHED_HOST", "MS_SCHED_PORT", "RANK_ID", "RANK_SIZE")' in out
    assert 'int(os.environ.get("DEVICE_ID", "0"))' in out  # msrun's scheduler has none (test_launcher_scheduler.py)
    assert 'if "RANK_SIZE" in os.environ:' in out and 'os.getenv("RANK_SIZE", 1)' in out
    assert 'os.environ.get("RANK_ID", -1)' in out
    assert 'os.environ["MASTER_ADDR"] = "localhost"' in out  # a write stays
    assert 'os.environ["HOME"]' in out
    assert "mindspore.mint.distributed.barrier()" in out


def test_environment_reads_stay_without_torch_distributed():
    out = convert("""
        import os
        import torch
        rank = int(os.environ["RANK"])
        x = torch.zeros(2)
    """)
    assert 'os.environ["RANK"]' in out


def test_ddp_step_averages_gradients_and_the_step_starts_after_the_optimizer():
    out = convert("""
        import torch
        import torch.nn as nn
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def example(rank, world_size):
            dist.init_process_group("gloo", rank=rank, world_size=world_size)
            model = nn.Linear(10, 10).to(rank)
            ddp_model = DDP(model, device_ids=[rank])
            loss_fn = nn.MSELoss()
            optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.001)
            outputs = ddp_model(torch.randn(20, 10).to(rank))
            labels = torch.randn(20, 10).to(rank)
            loss_fn(outputs, labels).backward()
            optimizer.step()
    """)
    lines = [line.strip() for line in out.splitlines()]
    assert "mindspore.communication.init()" in lines
    assert "ddp_model = broadcast_parameters(model)" in lines
    assert "grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True)" in lines
    assert lines.index("grads = grad_reducer(grads)") == lines.index("optimizer(grads)") - 1
    # the model and the optimizer are made before the forward function, not inside it
    assert lines.index("optimizer = mindspore.experimental.optim.SGD(ddp_model.trainable_params(), lr=0.001)") \
        < lines.index("def forward_fn(rank):")
    assert "TODO(ms-migrate)" not in out


def test_conditional_ddp_reduces_only_with_a_process_group():
    out = convert("""
        import torch
        import torch.nn as nn

        def train(model, loader, distributed):
            if distributed:
                model = nn.parallel.DistributedDataParallel(model)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
    """)
    assert ("grad_reducer = (\n        nn.DistributedGradReducer(optimizer.parameters, mean=True)\n"
            "        if mindspore.mint.distributed.is_initialized()\n        else ops.identity\n    )") in out
    assert "grads = grad_reducer(grads)" in out


def test_no_ddp_no_reducer():
    out = convert("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in [(torch.zeros(1, 2), torch.zeros(1, 2))]:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    """)
    assert "grad_reducer" not in out


def test_spawn_sampler_epoch_and_no_sync():
    out = convert("""
        import torch
        import torch.multiprocessing as mp
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        def main(rank, world_size, ds, model):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            torch.cuda.set_device(rank)
            loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds))
            for epoch in range(2):
                loader.sampler.set_epoch(epoch)
                with model.no_sync():
                    pass
            dist.destroy_process_group()

        if __name__ == "__main__":
            mp.spawn(main, args=(2, [], None), nprocs=2, join=True)
    """)
    assert 'main(int(os.environ["RANK_ID"]), 2, [], None)' in out
    assert "set_device" not in out
    assert "loader.children[0].sampler.sampler.set_epoch(epoch)" in out  # the loader's sampler, torch's order
    assert "sampler=TorchOrderDistributedSampler(ds)" in out  # world size and rank: the process group's
    assert "with contextlib.nullcontext():" in out or "with nullcontext():" in out
    assert "mindspore.mint.distributed.destroy_process_group()" in out
    assert "TODO(ms-migrate)" not in out
