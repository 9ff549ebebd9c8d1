"""Runtime benchmark: how fast converted models run, against torch and against
hand-written MindSpore code of the same architecture.

For each model, one training step (forward, cross-entropy loss, backward, SGD with
momentum) and one inference step (eval mode, forward only) are timed in:

- torch: timm's model, eager;
- converted: the same timm model converted by ms-migrate (the zoo benchmark's
  converted package in ~/.cache/ms-migrate-zoo), in PyNative, the training step as
  the converter writes it (value_and_grad + mindspore.experimental.optim.SGD);
- converted jit: the same, compiled as the converter writes it: ``convert --jit``'s
  ``grad_fn = mindspore.jit(mindspore.value_and_grad(...))`` for training and
  ``torch.compile``'s ``construct = mindspore.jit(construct)`` for inference;
- mindcv / mindcv jit: MindCV 0.3.0's hand-written model of the same architecture
  (``pip install --no-deps mindcv==0.3.0 tqdm pyyaml``; not a project dependency),
  run the same two ways with the same optimizer and loss.

Each (model, variant) runs in its own process with the same thread settings; the
time is the median of --steps steps after --warmup steps (the first of which
compiles), each step synchronised by reading its result. The machine is shared:
compare the ratios of one run, not figures across runs.

    .venv/bin/python benchmarks/runtime.py                     # resnet18, mobilenetv3, convit_tiny
    .venv/bin/python benchmarks/runtime.py resnet18 --batch 4
    .venv/bin/python benchmarks/runtime.py --kernel-threads 2 --json runtime.json
    .venv/bin/python benchmarks/runtime.py --dispatch      # per-op dispatch cost vs one kernel (what dominates)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(os.path.expanduser("~"), ".cache", "ms-migrate-zoo")

# timm name (converted and torch), MindCV name: the same architecture
MODELS = {
    "resnet18": ("resnet18", "resnet18"),
    "mobilenetv3": ("mobilenetv3_small_100", "mobilenet_v3_small_100"),
    "convit_tiny": ("convit_tiny", "convit_tiny"),
    "vit_b_32": ("vit_base_patch32_224", "vit_b_32_224"),
}
DEFAULT_MODELS = ("resnet18", "mobilenetv3", "convit_tiny")
VARIANTS = ("torch", "converted", "converted jit", "mindcv", "mindcv jit")
CLASSES = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help=f"of {', '.join(MODELS)} (default: {', '.join(DEFAULT_MODELS)})")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=224, help="image side (default 224)")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2; the first compiles)")
    parser.add_argument("--threads", type=int, default=1,
                        help="OMP_NUM_THREADS and torch's threads (default 1)")
    parser.add_argument("--kernel-threads", type=int, default=1,
                        help="MindSpore's CPU kernel threads, mindspore.device_context.cpu.op_tuning.threads_num "
                             "(MindSpore's default is 25; 0 keeps it; default here 1)")
    parser.add_argument("--dispatch-threads", type=int, default=0,
                        help="mindspore.runtime.dispatch_threads_num (0 keeps MindSpore's default, 5)")
    parser.add_argument("--blocking", action="store_true",
                        help="mindspore.runtime.launch_blocking(): run each op synchronously (no hand-off to the "
                             "runtime's threads; the fastest setting on a loaded 2-core machine, see README)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    parser.add_argument("--work", default=WORK, help="the zoo benchmark's work directory (converted timm)")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--dispatch", action="store_true",
                        help="instead: time one small op (dispatch) and one convolution (kernel) in both frameworks")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    if args.dispatch:
        return _dispatch_table(args)
    names = args.models or list(DEFAULT_MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown models: {', '.join(unknown)}")
    converted = os.path.join(args.work, "converted")
    if not os.path.isdir(os.path.join(converted, "timm")):
        print(f"no converted timm in {converted}: run benchmarks/zoo.py first", file=sys.stderr)
        return 2
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    rows = []
    for name in names:
        for variant in variants:
            rows.append({"model": name, "variant": variant, **_run_child(args, name, variant)})
            print(_row_line(rows[-1]), file=sys.stderr, flush=True)
    print(_table(rows, args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"settings": _settings(args), "rows": rows}, handle, indent=1)
    return 0


def _settings(args) -> dict:
    return {"batch": args.batch, "size": args.size, "steps": args.steps, "threads": args.threads,
            "blocking": args.blocking,
            "kernel_threads": args.kernel_threads, "dispatch_threads": args.dispatch_threads}


def _environment(args) -> dict:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    env["GLOG_v"] = "3"  # MindSpore's warnings off the timed output
    return env


def _run_child(args, name: str, variant: str) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", f"{name}:{variant}", "--batch", str(args.batch),
               "--size", str(args.size), "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--threads", str(args.threads), "--kernel-threads", str(args.kernel_threads),
               "--dispatch-threads", str(args.dispatch_threads), "--work", args.work,
               *(["--blocking"] if args.blocking else [])]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600, env=_environment(args))
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": tail[:200]}


# -- the child: one model, one variant ---------------------------------------------------------------------

def _child(args) -> int:
    name, variant = args.child.split(":", 1)
    timm_name, mindcv_name = MODELS[name]
    try:
        if variant == "torch":
            result = _torch(args, timm_name)
        else:
            result = _mindspore(args, variant, timm_name, mindcv_name)
    except Exception as exc:  # noqa: BLE001 - a failure is a row of the table
        result = {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:200]}
    print(json.dumps(result))
    return 0


def _timed(step, args) -> dict:
    first = None
    for i in range(args.warmup):
        start = time.perf_counter()
        step()
        if i == 0:
            first = time.perf_counter() - start
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return {"ms": 1000 * statistics.median(times), "first_s": first}


def _phase(step, args) -> dict:
    """The step timed, or the error it raised (the other phase still runs)."""
    try:
        return _timed(step, args)
    except Exception as exc:  # noqa: BLE001 - a failure is a cell of the table
        return {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:160]}


def _data(args):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batch, 3, args.size, args.size)).astype(np.float32)
    y = rng.integers(0, CLASSES, args.batch)
    return x, y


def _torch(args, timm_name: str) -> dict:
    sys.path.insert(0, os.path.join(ROOT, "benchmarks", "zoo"))
    from torch_side import import_torchvision_python_part

    import_torchvision_python_part(os.path.join(args.work, "torchvision-0.29.1"))
    sys.path.insert(0, os.path.join(args.work, "timm-1.0.31"))
    import timm
    import torch

    torch.set_num_threads(args.threads)
    x, y = _data(args)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    model = timm.create_model(timm_name, pretrained=False, num_classes=CLASSES)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()

    def train():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    def infer():
        with torch.no_grad():
            return model(x).numpy()

    model.train()
    train_time = _phase(train, args)
    model.eval()
    return {"train": train_time, "infer": _phase(infer, args)}


def _mindspore(args, variant: str, timm_name: str, mindcv_name: str) -> dict:
    import mindspore

    if args.kernel_threads:
        mindspore.device_context.cpu.op_tuning.threads_num(args.kernel_threads)
    if args.dispatch_threads:
        mindspore.runtime.dispatch_threads_num(args.dispatch_threads)
    if args.blocking:
        mindspore.runtime.launch_blocking()
    from mindspore.experimental import optim

    jit = variant.endswith("jit")
    if variant.startswith("converted"):
        sys.path.insert(0, ROOT)
        from transpiler.proof.no_torch import block_torch

        block_torch()
        sys.path.insert(0, os.path.join(args.work, "converted"))
        import timm

        model = timm.create_model(timm_name, pretrained=False, num_classes=CLASSES)
    else:
        import mindcv

        model = mindcv.create_model(mindcv_name, pretrained=False, num_classes=CLASSES)
    x, y = _data(args)
    x, y = mindspore.Tensor(x), mindspore.Tensor(y.astype("int32"))
    optimizer = optim.SGD(model.trainable_params(), lr=0.01, momentum=0.9)
    criterion = mindspore.nn.CrossEntropyLoss()

    def forward_fn(inputs, labels):
        return criterion(model(inputs), labels)

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    if jit:
        grad_fn = mindspore.jit(grad_fn)

    def train():
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss.asnumpy()

    model.set_train(True)
    train_time = _phase(train, args)
    model.set_train(False)
    if jit:
        model.construct = mindspore.jit(model.construct)
    infer_time = _phase(lambda: model(x).asnumpy(), args)
    return {"train": train_time, "infer": infer_time}


# -- the table -----------------------------------------------------------------------------------------------

def _row_line(row: dict) -> str:
    if "error" in row:
        return f"{row['model']:12s} {row['variant']:14s} error: {row['error']}"
    return f"{row['model']:12s} {row['variant']:14s} train {_ms(row['train'])} infer {_ms(row['infer'])}"


def _ms(phase: dict) -> str:
    if "error" in phase:
        return f"error: {phase['error']}"
    return f"{phase['ms']:9.1f} ms (first step {phase['first_s']:.1f} s)"


def _table(rows: list[dict], args) -> str:
    by_key = {(r["model"], r["variant"]): r for r in rows}
    lines = [f"batch {args.batch}, {args.size}x{args.size}, OMP_NUM_THREADS={args.threads}, MindSpore kernel threads "
             f"{args.kernel_threads or 'default (25)'}, dispatch threads {args.dispatch_threads or 'default (5)'}"
             f"{', launch_blocking' if args.blocking else ''}; "
             f"median of {args.steps} steps after {args.warmup}",
             "",
             "| model | variant | train ms | x torch | x MindCV | infer ms | x torch | x MindCV | first train step s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['model']} | {row['variant']} | error: {row['error']} | | | | | | |")
            continue
        torch_row = by_key.get((row["model"], "torch"))
        same_mode = "mindcv jit" if row["variant"].endswith("jit") else "mindcv"
        mindcv_row = by_key.get((row["model"], same_mode))
        cells = []
        for phase in ("train", "infer"):
            if "error" in row[phase]:
                cells += [f"error: {row[phase]['error'][:80]}", "", ""]
                continue
            ms = row[phase]["ms"]
            cells += [f"{ms:,.1f}", _ratio(ms, torch_row, phase),
                      _ratio(ms, mindcv_row, phase) if row["variant"] != "torch" else ""]
        first = row["train"].get("first_s")
        lines.append(f"| {row['model']} | {row['variant']} | {' | '.join(cells)} | "
                     f"{'' if first is None else f'{first:.1f}'} |")
    lines.append("")
    lines.append("x MindCV: against MindCV run the same way (PyNative against PyNative, jit against jit).")
    return "\n".join(lines)


def _ratio(ms: float, other: dict | None, phase: str) -> str:
    if other is None or "error" in other or "error" in other[phase]:
        return ""
    return f"{ms / other[phase]['ms']:.2f}"


# -- what dominates: dispatch against kernels ---------------------------------------------------------------

_DISPATCH = r'''
import json, statistics, sys, time
import numpy as np
framework, kernel_threads, dispatch_threads, blocking = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
def median(f, n=7):
    f(); times = []
    for _ in range(n):
        start = time.perf_counter(); f(); times.append(time.perf_counter() - start)
    return statistics.median(times)
if framework == "torch":
    import torch
    torch.set_num_threads(1)
    a, x = torch.ones(16, 16), torch.randn(8, 64, 16, 16)
    conv = torch.nn.Conv2d(64, 64, 3, padding=1)
    def chain():
        b = a
        for _ in range(100):
            b = b * 1.0001 + 0.0
        return b.numpy()
    def convolve():
        with torch.no_grad():
            return conv(x).numpy()
else:
    import mindspore
    if kernel_threads:
        mindspore.device_context.cpu.op_tuning.threads_num(kernel_threads)
    if dispatch_threads:
        mindspore.runtime.dispatch_threads_num(dispatch_threads)
    if blocking:
        mindspore.runtime.launch_blocking()
    a = mindspore.Tensor(np.ones((16, 16), np.float32))
    x = mindspore.Tensor(np.random.randn(8, 64, 16, 16).astype(np.float32))
    conv = mindspore.nn.Conv2d(64, 64, 3, pad_mode="pad", padding=1)
    def chain():
        b = a
        for _ in range(100):
            b = b * 1.0001 + 0.0
        return b.asnumpy()
    def convolve():
        return conv(x).asnumpy()
print(json.dumps({"op_us": median(chain) / 200 * 1e6, "conv_ms": median(convolve) * 1e3}))
'''

_DISPATCH_SETTINGS = (
    ("torch (1 thread)", "torch", 0, 0, "0"),
    ("MindSpore defaults (25 kernel threads, 5 dispatch)", "mindspore", 0, 0, "0"),
    ("kernel threads 1", "mindspore", 1, 0, "0"),
    ("kernel threads 2", "mindspore", 2, 0, "0"),
    ("kernel threads 1, dispatch threads 1", "mindspore", 1, 1, "0"),
    ("kernel threads 1, launch_blocking", "mindspore", 1, 0, "1"),
)


def _dispatch_table(args) -> int:
    rounds = max(1, args.steps // 2)
    results: dict[str, list[dict]] = {label: [] for label, *_ in _DISPATCH_SETTINGS}
    for _ in range(rounds):  # interleaved: a neighbour's load falls on every setting alike
        for label, framework, kernel, dispatch, blocking in _DISPATCH_SETTINGS:
            done = subprocess.run([sys.executable, "-c", _DISPATCH, framework, str(kernel), str(dispatch), blocking],
                                  capture_output=True, text=True, timeout=600, env=_environment(args))
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            if lines:
                results[label].append(json.loads(lines[-1]))
    print(f"median of {rounds} interleaved rounds, OMP_NUM_THREADS={args.threads}")
    print("| setting | one small op (us) | conv 8x64x16x16 3x3 (ms) |")
    print("|---|---:|---:|")
    for label, values in results.items():
        if values:
            op = statistics.median(v["op_us"] for v in values)
            conv = statistics.median(v["conv_ms"] for v in values)
            print(f"| {label} | {op:,.1f} | {conv:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
