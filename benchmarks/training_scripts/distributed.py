"""The distributed benchmark: real public DDP scripts, launched with torchrun (or
with the ``mp.spawn`` inside them) on 2 CPU processes, then converted and
launched with ``msrun --worker_num=2 --local_worker_num=2`` on 2 CPU workers.

    .venv/bin/python benchmarks/training_scripts.py --distributed              # every script
    .venv/bin/python benchmarks/training_scripts.py --distributed rasbt_torchrun --work /tmp/ddp

Each script is the file of its repository at a pinned commit, byte for byte
(read from the git snapshot ``SOURCES/owner+name/repo`` the ``fetch`` tool
makes), converted alone with ``python -m transpiler convert``.

What runs differs from the scripts' own machines in two ways, both in the
harness, never in the script:

- the torch side plays a machine with 2 GPUs on CPU (these scripts were written
  for GPUs): a ``sitecustomize`` makes ``init_process_group`` use gloo,
  ``torch.cuda.device_count()`` answer 2, ``set_device`` do nothing and device
  moves (``.to(rank)``, ``.cuda()``) stay on the CPU, and DDP gets no
  ``device_ids``;
- the initial weights are torch's on both sides: the torch side saves rank 0's
  parameters when DDP wraps the model (DDP broadcasts them); the converted
  script's own broadcast of rank 0's parameters (``broadcast_parameters``)
  starts from them on the MindSpore side. So a script's per-step losses can be
  compared rank by rank; the MindSpore side runs with torch unimportable.

The table: the torchrun result, the msrun result after conversion, the losses
each rank printed (first -> last), and whether they match per step and rank
(within the precision the script prints).

The data order is torch's: a shuffled ``DistributedSampler`` converts to a
sampler that draws torch's permutation (a Fisher-Yates over the Mersenne
Twister seeded with ``seed + epoch``, drawn with numpy) and shards it as torch
does, so both rasbt scripts match torchrun at every step on both ranks
(measured). The elvin scripts print no loss, so they are compared by running.
A script that imports files of its repository (``files``) is converted with
them as one project; one that reads a dataset gets it written by
benchmarks/training_scripts/data.py (``data``) into its directory on both
sides, and the torch side gets torchvision's Python part as the
single-process benchmark does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from benchmarks.research.fetch import fetch_torchvision_python
from benchmarks.training_scripts import ROOT, work_and_chosen
from benchmarks.training_scripts import data as data_module
WORKERS = 2


@dataclass(frozen=True)
class DDPScript:
    """id: row name; repo/pin/path: the file in its repository; launcher: "torchrun"
    (the script reads torchrun's environment) or "python" (it calls mp.spawn itself);
    loss: a regular expression with a group ``loss`` (and ``rank`` if the line says
    which rank printed it; else the worker's log tells); argv: the script's arguments;
    files: other files of the repository (paths at the same pin) the script imports, put
    beside it and converted with it as one project; data: a function of
    ``benchmarks.training_scripts.data`` that writes the data the script reads into its
    directory (the same files on both sides); printed_by: the rank that prints the losses,
    when only one does and the line does not say (the torch side's output is mixed)."""

    id: str
    repo: str
    pin: str
    path: str
    launcher: str
    loss: str = ""
    argv: tuple[str, ...] = ()
    note: str = ""
    timeout: int = 600
    files: tuple[str, ...] = ()
    data: str = ""
    printed_by: int | None = None


_RASBT = ("rasbt/LLMs-from-scratch", "28c65cdfbc3338e2e040016eea4b7fdf556e4d57")
_ELVIN = ("Elvin-Ma/pytorch_guide", "da12d191ab1dae88e67c2c30246be9f29492f4c5")
_RASBT_LOSS = r"\[GPU(?P<rank>\d+)\] Epoch: .*Train/Val Loss: (?P<loss>[-\d.]+)"

SCRIPTS: list[DDPScript] = [
    DDPScript("rasbt_torchrun", *_RASBT, "appendix-A/01_main-chapter-code/DDP-script-torchrun.py", "torchrun",
              _RASBT_LOSS, note="MLP on 5 points, DistributedSampler (shuffled), 3 epochs; accuracy via model.eval()"),
    DDPScript("rasbt_spawn", *_RASBT, "appendix-A/01_main-chapter-code/DDP-script.py", "python", _RASBT_LOSS,
              note="the same with mp.spawn(main, nprocs=torch.cuda.device_count()) inside the script"),
    # pinned before the commit that put a pdb.set_trace() into it
    DDPScript("elvin_spawn", "Elvin-Ma/pytorch_guide", "768e3b70bbcc5c0f6a2644fbc21708368ec460ed",
              "11-distribute_guide/ddp_demo/spawn_demo.py", "python",
              note="mp.spawn, gloo, nn.Linear .to(rank), one step on random data; prints no loss"),
    DDPScript("elvin_torchrun", *_ELVIN, "11-distribute_guide/ddp_demo/command_demo.py", "torchrun",
              argv=("--local_world_size", "2"),
              note="torchrun, init from RANK/WORLD_SIZE, ToyModel .cuda(device_ids[0]), one step; prints no loss"),
    DDPScript("auro_mnist", "aurotripathy/pytorch-distributed-tut", "4b23fcd14d1a78d6ce922d115de402c13bbab590",
              "mnist-distributed.py", "python", r"(?:Train|Val) Loss: (?P<loss>[-\d.]+)",
              argv=("-g", "2", "--epochs", "2"), files=("model.py",), data="mnist_raw_ddp", printed_by=0,
              note="mp.spawn(train, nprocs=args.gpus), ConvNet (conv, BatchNorm, max-pool) from model.py, "
                   "torchvision MNIST (4000 synthetic digits) through a shuffled DistributedSampler, SGD; rank 0 "
                   "prints every 10th training loss and every 50th test-batch loss (eval mode: running stats)"),
    DDPScript("minimindy_mnist", "Minimindy/DP-DDP", "1d94e9f4d932651065b0e6419b4601e7fc0b6cae", "ddp_train.py",
              "torchrun", r"\[\d+, \d+\] loss: (?P<loss>[-\d.]+)", files=("model.py", "data.py"),
              data="mnist_raw_ddp", printed_by=0,
              note="torchrun, module-level script: LeNet-style Net (conv, max-pool, ReLU; returns a tuple) from "
                   "model.py, torchvision MNIST from data.py (4000 synthetic digits) through a shuffled "
                   "DistributedSampler (no set_epoch), DDP(find_unused_parameters=True), SGD lr 0.1, 5 epochs; "
                   "local rank 0 prints the mean loss of every 5 steps. Converted as one project: the module-level "
                   "LOCAL_RANK read before init() becomes os.environ.get('DEVICE_ID', '0') (msrun's scheduler "
                   "process runs the script up to init() without DEVICE_ID), and the project index tells "
                   "ddp_train.py that data.py's train_dataset is a MnistDataset pipeline, which the loader reads "
                   "through the sampler in torch's order. All 30 prints match within the printed digit, 4 of them "
                   "(from the 22nd on) one unit of the 3rd decimal apart: printed with 6 decimals they agree to 1e-6 "
                   "for 75 steps, then drift apart by up to 5e-4 as the loss falls fastest, less than torch drifts "
                   "from itself with its initial weights scaled by 1 + 1e-6 (2.5e-3)"),
]

TORCH_SHIM = '''
import os
if os.environ.get("DDP_BENCH_TORCH"):
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as _DDP

    if os.environ.get("DDP_BENCH_TORCHVISION"):
        # torchvision's Python part (the registry's build cannot load its compiled ops
        # beside this torch), as benchmarks/training_scripts/launch.py does
        import sys
        import types

        sys.path.insert(0, os.environ["DDP_BENCH_TORCHVISION"])
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")

    _workers = int(os.environ.get("DDP_BENCH_WORKERS", "2"))
    torch.cuda.device_count = lambda: _workers
    torch.cuda.set_device = lambda *args, **kwargs: None
    _init = dist.init_process_group

    def _init_process_group(backend=None, *args, **kwargs):
        return _init("gloo", *args, **kwargs)

    dist.init_process_group = _init_process_group
    dist.distributed_c10d.init_process_group = _init_process_group

    def _is_gpu(device):
        if isinstance(device, int) and not isinstance(device, bool):
            return True
        if isinstance(device, str):
            return device.startswith("cuda")
        return isinstance(device, torch.device) and device.type == "cuda"

    def _cpu(args, kwargs):
        if args and _is_gpu(args[0]):
            args = ("cpu",) + tuple(args[1:])
        if _is_gpu(kwargs.get("device")):
            kwargs = dict(kwargs, device="cpu")
        return args, kwargs

    for _owner in (torch.nn.Module, torch.Tensor):
        _to = _owner.to

        def _moved(self, *args, _to=_to, **kwargs):
            args, kwargs = _cpu(args, kwargs)
            return _to(self, *args, **kwargs)

        _owner.to = _moved
        _owner.cuda = lambda self, *args, **kwargs: self

    _ddp_init = _DDP.__init__

    def _ddp(self, module, *args, **kwargs):
        kwargs.pop("device_ids", None)
        kwargs.pop("output_device", None)
        if args:
            args = ()  # device_ids, output_device given positionally
        path = os.environ.get("DDP_BENCH_INIT")
        if path and dist.get_rank() == 0 and not os.path.exists(path):
            state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
            np.savez(path + ".tmp.npz", **state)
            os.replace(path + ".tmp.npz", path)
        _ddp_init(self, module, **kwargs)

    _DDP.__init__ = _ddp
'''

MINDSPORE_SHIM = '''
import os
if os.environ.get("DDP_BENCH_MINDSPORE"):
    import sys
    sys.path.insert(0, os.environ["DDP_BENCH_ROOT"])
    from transpiler.proof.no_torch import block_torch
    sys.path.pop(0)
    for _name in [n for n in sys.modules if n.split(".")[0] == "transpiler"]:
        del sys.modules[_name]
    block_torch()
    _path = os.environ.get("DDP_BENCH_INIT")
    if _path and os.path.exists(_path):
        import numpy as np
        import mindspore
        import mindspore.mint.distributed

        _values = dict(np.load(_path))
        _count = len(_values)
        _broadcast = mindspore.mint.distributed.broadcast

        def _replayed(tensor, src=None, group=None, async_op=False):
            name = getattr(tensor, "name", None)
            if name in _values and tuple(_values[name].shape) == tuple(tensor.shape):
                if len(_values) == _count:  # the first one (buffers a script never broadcasts stay in _values)
                    print("ddp-bench: initial weights replayed", flush=True)
                tensor.set_data(mindspore.Tensor(_values.pop(name)))
            return _broadcast(tensor, src, group, async_op)

        mindspore.mint.distributed.broadcast = _replayed
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(shim_dir: str, **extra) -> dict:
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=shim_dir,
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), DDP_BENCH_WORKERS=str(WORKERS), **extra)
    env.pop("PYTHONSTARTUP", None)
    return env


# Each line one write: the processes of a run share one pipe, and unbuffered output
# (print's text and its newline written apart) let one rank's line break into another's.
_LINES = "import sys\nsys.stdout.reconfigure(line_buffering=True)\nsys.stderr.reconfigure(line_buffering=True)\n"


def _shim(directory: str, text: str) -> str:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w") as handle:
        handle.write(_LINES + text)
    return directory


def read_script(script: DDPScript, sources: str, path: str = "") -> str:
    """The script (or ``path``, another file of its repository) at the pin."""
    git_dir = os.path.join(sources, script.repo.replace("/", "+"), "repo")
    if os.path.isdir(os.path.join(git_dir, ".git")):  # a snapshot with a work tree
        git_dir = os.path.join(git_dir, ".git")
    if not os.path.isdir(git_dir):
        raise FileNotFoundError(f"no snapshot of {script.repo} in {sources} (fetch github:{script.repo})")
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{script.pin}:{path or script.path}"], check=True,
                          capture_output=True, text=True).stdout


def _run(command: list[str], cwd: str, env: dict, timeout: int) -> tuple[int | str, str, float]:
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        code: int | str = done.returncode
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code, output = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
    return code, output, time.perf_counter() - start


def _losses(script: DDPScript, texts: dict[int, str]) -> dict[int, list[str]]:
    """rank -> the losses it printed, as printed; ``texts``: the output of each worker (-1: mixed)."""
    found: dict[int, list[str]] = {}
    if not script.loss:
        return found
    pattern = re.compile(script.loss)
    for worker, text in texts.items():
        for line in text.splitlines():
            line = re.sub(r"^\[default\d+\]:", "", line)  # torchrun --tee prefixes
            match = pattern.search(line)
            if match is None:
                continue
            if "rank" in pattern.groupindex:
                rank = int(match.group("rank"))
            else:
                rank = worker if script.printed_by is None else script.printed_by
            found.setdefault(rank, []).append(match.group("loss"))
    return found


def _error(output: str) -> str:
    lines = [line for line in output.splitlines() if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b", line)]
    return lines[-1][:160] if lines else ""


def run_torch(script: DDPScript, path: str, run_dir: str, timeout: int, torchvision: str = "") -> dict:
    shim = _shim(os.path.join(run_dir, "shim_torch"), TORCH_SHIM)
    env = _env(shim, DDP_BENCH_TORCH="1", DDP_BENCH_INIT=os.path.join(run_dir, "init.npz"),
               DDP_BENCH_TORCHVISION=torchvision)
    if script.launcher == "torchrun":
        command = [os.path.join(os.path.dirname(sys.executable), "torchrun"), f"--nproc_per_node={WORKERS}",
                   f"--master_port={free_port()}", "--tee", "3", path, *script.argv]
    else:
        command = [sys.executable, path, *script.argv]
    code, output, seconds = _run(command, os.path.dirname(path), env, timeout)
    with open(os.path.join(run_dir, "torch.log"), "w") as handle:
        handle.write(output)
    return {"code": code, "seconds": seconds, "losses": _losses(script, {-1: output}), "error": _error(output)}


def run_mindspore(script: DDPScript, path: str, run_dir: str, timeout: int) -> dict:
    shim = _shim(os.path.join(run_dir, "shim_mindspore"), MINDSPORE_SHIM)
    env = _env(shim, DDP_BENCH_MINDSPORE="1", DDP_BENCH_ROOT=ROOT, DDP_BENCH_INIT=os.path.join(run_dir, "init.npz"))
    logs = os.path.join(run_dir, "msrun_log")
    shutil.rmtree(logs, ignore_errors=True)
    command = [os.path.join(os.path.dirname(sys.executable), "msrun"), f"--worker_num={WORKERS}",
               f"--local_worker_num={WORKERS}", f"--master_port={free_port()}", "--join=True",
               f"--log_dir={logs}", path, *script.argv]
    code, output, seconds = _run(command, os.path.dirname(path), env, timeout)
    texts = {}
    for rank in range(WORKERS):
        log = os.path.join(logs, f"worker_{rank}.log")
        texts[rank] = open(log, errors="replace").read() if os.path.exists(log) else ""
    everything = output + "".join(texts.values())
    return {"code": code, "seconds": seconds, "losses": _losses(script, texts), "error": _error(everything),
            "replayed": "initial weights replayed" in everything}


def convert(path: str, output: str) -> str:
    """Convert a file, or a directory as one project (``output`` mirrors it)."""
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", path, "-o", output, "-q", "--force"],
                          cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode not in (0, 1) or not os.path.exists(output):
        raise RuntimeError(f"convert: exit {done.returncode}: " + (done.stderr.strip().splitlines() or [""])[-1])
    return output


def compare(theirs: dict[int, list[str]], ours: dict[int, list[str]]) -> str:
    """Per rank and step, within the precision the script prints (one unit of its last digit)."""
    if not theirs:
        return "no loss printed"
    if set(theirs) != set(ours) or any(len(theirs[r]) != len(ours[r]) for r in theirs):
        return "steps differ"
    worst = 0
    for rank in theirs:
        for a, b in zip(theirs[rank], ours[rank]):
            decimals = len(a.split(".")[1]) if "." in a else 0
            # in whole units of the last digit: 1.195 - 1.194 is 1.0000000000000009 thousandths in floats
            worst = max(worst, abs(round(float(a) * 10**decimals) - round(float(b) * 10**decimals)))
    steps = sum(len(v) for v in theirs.values())
    return f"yes ({steps} steps)" if worst <= 1 else f"no (off by {worst} units of the last digit)"


def run_script(script: DDPScript, work: str, sources: str, torchvision: str = "") -> dict:
    row = {"id": script.id, "repo": script.repo, "path": script.path, "launcher": script.launcher,
           "note": script.note}
    run_dir = os.path.join(work, script.id)
    shutil.rmtree(run_dir, ignore_errors=True)
    source = os.path.join(run_dir, "source")  # the script and the files it imports, as in its repository
    os.makedirs(source)
    top = os.path.dirname(script.path)
    try:
        for path in (script.path, *script.files):
            target = os.path.join(source, os.path.relpath(path, top) if top else path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as handle:
                handle.write(read_script(script, sources, path))
    except (FileNotFoundError, subprocess.CalledProcessError) as exc:
        return dict(row, error=str(exc))
    name = os.path.basename(script.path)
    shutil.copytree(source, os.path.join(run_dir, "torch"))
    original = os.path.join(run_dir, "torch", name)
    if script.data:
        getattr(data_module, script.data)(os.path.join(run_dir, "torch"))
    imports_torchvision = False  # the script or a file of its repository it imports (files)
    for path in (script.path, *script.files):
        with open(os.path.join(run_dir, "torch", os.path.relpath(path, top) if top else path)) as handle:
            imports_torchvision = imports_torchvision or "torchvision" in handle.read()
    row["torch"] = run_torch(script, original, run_dir, script.timeout, torchvision if imports_torchvision else "")
    try:
        if script.files:
            converted = os.path.join(convert(source, os.path.join(run_dir, "mindspore")), name)
        else:
            converted = convert(original, os.path.join(run_dir, "mindspore", name))
    except RuntimeError as exc:
        row["mindspore"] = {"code": "convert", "error": str(exc), "losses": {}}
        return row
    if script.data:
        getattr(data_module, script.data)(os.path.join(run_dir, "mindspore"))
    with open(converted) as handle:
        row["markers"] = handle.read().count("TODO(ms-migrate)")
    row["mindspore"] = run_mindspore(script, converted, run_dir, script.timeout)
    row["match"] = compare(row["torch"]["losses"], row["mindspore"]["losses"])
    return row


def _verdict(side: dict) -> str:
    code = side.get("code")
    if code == 0:
        return "runs"
    return f"fails ({code}): {side.get('error', '')}"[:70]


def _span(losses: dict) -> str:
    if not losses:
        return "-"
    return "; ".join(f"r{rank} {values[0]}->{values[-1]}" for rank, values in sorted(losses.items()))


def print_table(rows: list[dict]) -> None:
    header = ("script", "launcher", "torchrun (gloo, 2 procs)", "msrun (2 CPU workers)", "losses torch",
              "losses mindspore", "per-step loss match")
    lines = [header]
    for row in rows:
        torch_side, ms = row.get("torch", {}), row.get("mindspore", {})
        replay = "" if not ms or ms.get("replayed") or not torch_side.get("losses") else " (init not replayed)"
        lines.append((row["id"], row["launcher"], _verdict(torch_side) if torch_side else row.get("error", "-"),
                      _verdict(ms) if ms else "-", _span(torch_side.get("losses", {})), _span(ms.get("losses", {})),
                      row.get("match", "-") + replay))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print(" | ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip())
        if index == 0:
            print("-+-".join("-" * width for width in widths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="scripts to run (default: all)")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "ms-migrate-ddp-scripts"),
                        help="where the runs go (outside the repository)")
    parser.add_argument("--sources", default="/work/.mirror",
                        help="where GitHub snapshots are: SOURCES/owner+name/repo is a git directory")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    work, chosen = work_and_chosen(parser, args.work, args.names, SCRIPTS)
    os.makedirs(work, exist_ok=True)
    torchvision = fetch_torchvision_python(work) if any(s.data for s in chosen) else ""
    rows = []
    for script in chosen:
        row = run_script(script, work, args.sources, torchvision)
        rows.append(row)
        print(f"{script.id}: torch {_verdict(row.get('torch', {}))}, mindspore {_verdict(row.get('mindspore', {}))}, "
              f"match {row.get('match', '-')}", file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(rows, handle, indent=1)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
