"""A DDP script converted and launched with msrun on 2 CPU workers trains as the
original does under torchrun (gloo) on 2 processes.

Both start from the same weights (torch's initial state_dict, converted with
``ms-migrate weights``) and the same data (13 rows); each rank trains on its own
shard: one epoch of a DistributedSampler with shuffle=False (padded to 14 rows:
4 steps), then two epochs of a shuffled one (seed=5, drop_last=True, the world
size and rank from the process group: 3 steps each), with ``sampler.set_epoch``
and ``loader.sampler.set_epoch`` before each. Compared: every rank's loss and
rows at every step (the shuffled epochs in torch's order, a new one each epoch),
the all-reduced total, the launcher's LOCAL_RANK/WORLD_SIZE as read by the
script, and the final parameters, which must be identical across the ranks. The sabotage drops the gradient averaging from the converted step
and shows the ranks' parameters then drift apart.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
WORKERS = 2
ROWS = 13
STEPS = 4 + 3 + 3  # the unshuffled epoch (7 rows a rank), then two shuffled ones (6 rows a rank: drop_last)

SCRIPT = '''\
"""A tiny DDP training script: 2 processes, an MLP, 3 epochs (one unshuffled, two shuffled)."""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main(out_dir):
    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    model = MLP()
    model.load_state_dict(torch.load(os.path.join(out_dir, "init.pt")))
    model = DDP(model)
    data = np.load(os.path.join(out_dir, "data.npz"))
    dataset = TensorDataset(torch.tensor(data["x"]), torch.tensor(data["y"]))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=False)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler)
    shuffled = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, seed=5, drop_last=True))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    criterion = nn.CrossEntropyLoss()
    losses = []
    rows = []
    for epoch, batches in [(0, loader), (0, shuffled), (1, shuffled)]:
        sampler.set_epoch(epoch)
        batches.sampler.set_epoch(epoch)
        for x, y in batches:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            rows.append(x[:, 0].tolist())
    total = torch.tensor([sum(losses)])
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    top = torch.tensor([max(losses)])
    dist.all_reduce(top, op=dist.ReduceOp.MAX)
    low = torch.tensor([min(losses)])
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    with model.no_sync():
        pass
    dist.barrier()
    with open(os.path.join(out_dir, f"losses_{rank}.txt"), "w") as f:
        f.write(f"{local_rank} {world_size} {total.item()} {top.item()} {low.item()}\\n")
        f.write(" ".join(repr(v) for v in losses) + "\\n")
        f.write(" ".join(",".join(repr(round(v, 4)) for v in r) for r in rows) + "\\n")
        for name, param in model.module.state_dict().items():
            f.write(name + " " + " ".join(repr(float(v)) for v in param.flatten().tolist()) + "\\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher_env() -> dict:
    """msrun starts its workers as ``python``: the venv's bin comes first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def run_torchrun(script: pathlib.Path, out: pathlib.Path) -> None:
    command = [str(BIN / "torchrun"), f"--nproc_per_node={WORKERS}", f"--master_port={free_port()}",
               str(script), str(out)]
    done = subprocess.run(command, cwd=out, env=launcher_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def run_msrun(script: pathlib.Path, out: pathlib.Path) -> None:
    logs = out / "msrun_log"
    command = [str(BIN / "msrun"), f"--worker_num={WORKERS}", f"--local_worker_num={WORKERS}",
               f"--master_port={free_port()}", "--join=True", f"--log_dir={logs}", str(script), str(out)]
    done = subprocess.run(command, cwd=out, env=launcher_env(), capture_output=True, text=True, timeout=600)
    worker_logs = "".join(p.read_text(errors="replace")[-3000:] for p in sorted(logs.glob("worker_*.log")))
    assert done.returncode == 0, done.stderr[-2000:] + worker_logs


def read_results(out: pathlib.Path) -> list[dict]:
    ranks = []
    for rank in range(WORKERS):
        lines = (out / f"losses_{rank}.txt").read_text().splitlines()
        local_rank, world, total, top, low = lines[0].split()
        params = {}
        for line in lines[3:]:
            name, *values = line.split()
            params[name] = np.array([float(v) for v in values])
        ranks.append({"local_rank": int(local_rank), "world": int(world), "total": float(total),
                      "top": float(top), "low": float(low),
                      "losses": [float(v) for v in lines[1].split()], "rows": lines[2].split(), "params": params})
    return ranks


def prepare(directory: pathlib.Path) -> None:
    import torch

    sys.path.insert(0, str(directory))
    try:
        namespace: dict = {}
        exec(compile(SCRIPT.split("def main")[0], "ddp_train.py", "exec"), namespace)
        torch.manual_seed(0)
        torch.save(namespace["MLP"]().state_dict(), directory / "init.pt")
    finally:
        sys.path.remove(str(directory))
    rng = np.random.default_rng(0)
    np.savez(directory / "data.npz", x=rng.standard_normal((ROWS, 4)).astype(np.float32),
             y=rng.integers(0, 3, ROWS).astype(np.int64))


def convert(torch_dir: pathlib.Path, ms_dir: pathlib.Path) -> pathlib.Path:
    converted = ms_dir / "ddp_train.py"
    cli = str(BIN / "ms-migrate")
    done = subprocess.run([cli, "convert", str(torch_dir / "ddp_train.py"), "-o", str(converted)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for name in ("data.npz", "init.pt"):
        shutil.copy(torch_dir / name, ms_dir / name)
    done = subprocess.run([cli, "weights", str(torch_dir / "init.pt"), str(ms_dir / "init.pt.ckpt"),
                           "--model", f"{converted}:MLP"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return converted


def test_converted_ddp_script_matches_torchrun(tmp_path):
    """One test (xdist would run a shared fixture once per worker): the comparison, then the sabotage."""
    torch_dir, ms_dir = tmp_path / "torchrun", tmp_path / "msrun"
    torch_dir.mkdir()
    ms_dir.mkdir()
    (torch_dir / "ddp_train.py").write_text(SCRIPT)
    prepare(torch_dir)
    converted = convert(torch_dir, ms_dir)
    run_torchrun(torch_dir / "ddp_train.py", torch_dir)
    run_msrun(converted, ms_dir)
    check_equal(read_results(torch_dir), read_results(ms_dir), converted)
    without_gradient_averaging_the_ranks_drift_apart(converted, ms_dir)


def check_equal(torch_ranks, ms_ranks, converted):
    text = converted.read_text()
    for written in ("mindspore.communication.init()", "nn.DistributedGradReducer", "grads = grad_reducer(grads)",
                    'os.environ["DEVICE_ID"]', "mindspore.mint.distributed.all_reduce(total",
                    "sampler=TorchOrderDistributedSampler(dataset, seed=5, drop_last=True)",
                    "mindspore.dataset.dataloader.DistributedSampler(", "sampler.set_epoch(epoch)",
                    "batches.children[0].sampler.sampler.set_epoch(epoch)"):
        assert written in text, written
    assert not [line for line in text.splitlines() if "torch" in line.split("#")[0].replace("torch's", "")]
    for rank, (theirs, ours) in enumerate(zip(torch_ranks, ms_ranks)):
        assert ours["local_rank"] == theirs["local_rank"] == rank
        assert ours["world"] == theirs["world"] == WORKERS
        assert len(ours["losses"]) == len(theirs["losses"]) == STEPS
        assert ours["rows"] == theirs["rows"]  # the same rows at every step: torch's shard and order
        np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-5, atol=1e-6)
        assert theirs["rows"][4:7] != theirs["rows"][7:]  # the shuffled epochs: a new order each
        for reduced in ("total", "top", "low"):
            np.testing.assert_allclose(ours[reduced], theirs[reduced], rtol=1e-5)
        assert ours["params"].keys() == theirs["params"].keys()
        for name in theirs["params"]:
            np.testing.assert_allclose(ours["params"][name], theirs["params"][name], rtol=1e-5, atol=1e-6)
    # each rank trains on its own shard, and the total is summed over the ranks
    assert ms_ranks[0]["losses"] != ms_ranks[1]["losses"]
    for epoch in (slice(4, 7), slice(7, None)):
        shards = [",".join(rank["rows"][epoch]).split(",") for rank in ms_ranks]
        assert len(set(shards[0] + shards[1])) == 12  # 13 rows, drop_last: 12 distinct rows, 6 a rank
    every = ms_ranks[0]["losses"] + ms_ranks[1]["losses"]
    assert ms_ranks[0]["total"] == pytest.approx(sum(every), rel=1e-5)
    assert (ms_ranks[0]["top"], ms_ranks[0]["low"]) == pytest.approx((max(every), min(every)), rel=1e-6)
    for name, value in ms_ranks[0]["params"].items():
        np.testing.assert_array_equal(value, ms_ranks[1]["params"][name])


def without_gradient_averaging_the_ranks_drift_apart(converted, ms_dir):
    """Sabotage: the converted step without its grad_reducer line."""
    sabotaged_dir = ms_dir / "sabotaged"
    sabotaged_dir.mkdir()
    text = converted.read_text()
    assert "grads = grad_reducer(grads)\n" in text
    sabotaged = sabotaged_dir / "ddp_train.py"
    sabotaged.write_text(text.replace("grads = grad_reducer(grads)\n", "pass\n"))
    for name in ("data.npz", "init.pt.ckpt"):
        shutil.copy(ms_dir / name, sabotaged_dir / name)
    run_msrun(sabotaged, sabotaged_dir)
    ranks = read_results(sabotaged_dir)
    assert any(not np.array_equal(value, ranks[1]["params"][name]) for name, value in ranks[0]["params"].items())
