"""torch.utils.data -> mindspore.dataset.

DataLoader(dataset, batch_size, shuffle, num_workers, drop_last) becomes
``GeneratorDataset(source, column_names=..., shuffle=...).batch(...)``; the
column names come from what the Dataset's ``__getitem__`` returns (recorded
by transpiler/structural/datasets.py). Iterating the result yields lists of
MindSpore tensors, so ``for x, y in loader``, ``enumerate(loader)`` and
``len(loader)`` keep working.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import ApiRule, Drop, Example, Unconvertible, Unsupported
from transpiler.engine import code_of, keyword_arg
from transpiler.structural.datasets import columns_of, default_columns, is_mindspore_dataset
from transpiler.structural.surroundings import SPLIT_SEEDS

_PERFORMANCE = Drop("loader performance option with no MindSpore counterpart; no effect on the data")

_LOADER_SIGNATURE = (
    "dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, "
    "pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None, "
    "generator=None, *, prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True"
)


def _loader(call, ctx):
    dataset = call.get("dataset")
    source = call.source.args[0].value if call.source.args and call.source.args[0].keyword is None else dataset
    if call.has("pin_memory"):
        ctx.warn(call.source, "torch.utils.data.DataLoader", "pin_memory dropped: MindSpore has no pinned host memory")
    shuffle = call.get("shuffle")
    shuffle = shuffle if shuffle is not None and code_of(shuffle) != "None" else cst.Name("False")
    sampler = call.get("sampler")
    if is_mindspore_dataset(ctx, source):
        pipeline = dataset
        if sampler is not None:
            raise Unconvertible("sampler= on a dataset that is already a mindspore.dataset pipeline")
        if code_of(shuffle) != "False":
            size = cst.Call(cst.Attribute(dataset, cst.Name("get_dataset_size")), [])
            shuffled = cst.Call(cst.Attribute(dataset, cst.Name("shuffle")), [cst.Arg(size)])
            pipeline = shuffled if code_of(shuffle) == "True" else cst.IfExp(shuffle, shuffled, dataset)
    else:
        columns = columns_of(ctx, source)
        if columns is None:
            columns = default_columns(2)
            ctx.warn(call.source, "torch.utils.data.DataLoader",
                     f"column names assumed {columns}: the dataset's __getitem__ is not in this file")
        names = cst.List([cst.Element(cst.SimpleString(f'"{c}"')) for c in columns])
        args = [cst.Arg(dataset), keyword_arg("column_names", names)]
        if sampler is not None:
            args.append(keyword_arg("sampler", sampler))
        else:
            args.append(keyword_arg("shuffle", shuffle))
        workers = call.get("num_workers")
        if workers is not None and code_of(workers) != "0":
            # threads: sources converted from torch may hold MindSpore tensors,
            # which hang in forked worker processes
            args += [keyword_arg("num_parallel_workers", workers), keyword_arg("python_multiprocessing", cst.Name("False"))]
        pipeline = cst.Call(ctx.ref("mindspore.dataset.GeneratorDataset"), args)
    batch_size = call.get("batch_size")
    if batch_size is not None and code_of(batch_size) == "None":
        call.result = pipeline
        return
    batch_args = [cst.Arg(batch_size if batch_size is not None else cst.Integer("1"))]
    batch_args.append(keyword_arg("drop_remainder", call.get("drop_last") or cst.Name("False")))
    call.result = cst.Call(cst.Attribute(pipeline, cst.Name("batch")), batch_args)


def _tensor_dataset(call, ctx):
    """Rows of the tensors as NumPy arrays: a random-access source."""
    arrays = [cst.Arg(cst.Call(ctx.ref("numpy.asarray"), [cst.Arg(a.value)])) for a in call.varargs]
    call.result = cst.Call(cst.Name("list"), [cst.Arg(cst.Call(cst.Name("zip"), arrays))])


def _random_split(call, ctx):
    if call.has("generator"):
        if id(call.source) not in ctx.facts.get(SPLIT_SEEDS, ()):
            raise Unconvertible("the generator is not torch.Generator().manual_seed(seed): seed the split with "
                                "mindspore.dataset.config.set_seed(seed) by hand")
        call.remove("generator")  # its seed is set before the statement (transpiler/structural/surroundings.py)
    dataset = call.get("dataset")
    source = call.source.args[0].value
    columns = columns_of(ctx, source) or default_columns(2)
    names = cst.List([cst.Element(cst.SimpleString(f'"{c}"')) for c in columns])
    base = dataset
    if not is_mindspore_dataset(ctx, source):
        base = cst.Call(
            ctx.ref("mindspore.dataset.GeneratorDataset"),
            [cst.Arg(dataset), keyword_arg("column_names", names), keyword_arg("shuffle", cst.Name("False"))],
        )
    call.result = cst.Call(
        cst.Attribute(base, cst.Name("split")),
        [cst.Arg(call.get("lengths")), keyword_arg("randomize", cst.Name("True"))],
    )


_GENERATOR = Unsupported("torch.Generator objects have no MindSpore equivalent; seed with mindspore.dataset.config.set_seed")

_DATASET_SOURCE = (
    "class Digits(torch.utils.data.Dataset):\n"
    "    def __len__(self):\n        return 8\n\n"
    "    def __getitem__(self, i):\n        return torch.zeros(3), i % 2\n\n\n"
    "data = Digits()\n"
)

RULES = [
    ApiRule(
        "torch.utils.data.DataLoader",
        "mindspore.dataset.GeneratorDataset",
        signature=_LOADER_SIGNATURE,
        args={
            "pin_memory": Drop("no pinned memory in MindSpore"),
            "prefetch_factor": _PERFORMANCE,
            "persistent_workers": _PERFORMANCE,
            "pin_memory_device": _PERFORMANCE,
            "in_order": _PERFORMANCE,
            "collate_fn": Unsupported("collate_fn: batch with .batch(per_batch_map=...) by hand"),
            "batch_sampler": Unsupported("batch_sampler cannot be converted automatically"),
            "worker_init_fn": Unsupported("worker_init_fn has no MindSpore counterpart"),
            "timeout": Unsupported("timeout has no MindSpore counterpart"),
            "multiprocessing_context": Unsupported("multiprocessing_context has no MindSpore counterpart"),
            "generator": _GENERATOR,
        },
        hook=_loader,
        aliases=("torch.utils.data.dataloader.DataLoader",),
        examples=(
            Example(
                _DATASET_SOURCE + "loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=True, drop_last=True)",
                "class Digits:\n    def __len__(self):\n        return 8\n\n"
                "    def __getitem__(self, i):\n        i = int(i)\n        return np.asarray(ops.zeros(3)), np.asarray(i % 2)\n\n\n"
                "data = Digits()\n"
                'loader = mindspore.dataset.GeneratorDataset(\n    data, column_names=["data", "label"], shuffle=True\n'
                ").batch(4, drop_remainder=True)",
            ),
            Example(
                "loader = torch.utils.data.DataLoader(ds, 8, num_workers=2, pin_memory=True)",
                'loader = mindspore.dataset.GeneratorDataset(\n    ds,\n    column_names=["data", "label"],\n'
                "    shuffle=False,\n    num_parallel_workers=2,\n    python_multiprocessing=False,\n"
                ").batch(8, drop_remainder=False)",
            ),
            Example("loader = torch.utils.data.DataLoader(ds, worker_init_fn=seed_worker)", marked="worker_init_fn"),
        ),
    ),
    ApiRule(
        "torch.utils.data.TensorDataset",
        None,
        signature="*tensors",
        hook=_tensor_dataset,
        aliases=("torch.utils.data.dataset.TensorDataset",),
        notes="rows of the tensors as NumPy arrays: a random-access source for GeneratorDataset",
        examples=(Example("ds = torch.utils.data.TensorDataset(x, y)", "ds = list(zip(np.asarray(x), np.asarray(y)))"),),
    ),
    ApiRule(
        "torch.utils.data.random_split",
        None,
        signature="dataset, lengths, generator=None",
        hook=_random_split,
        aliases=("torch.utils.data.dataset.random_split",),
        notes="GeneratorDataset(...).split(lengths, randomize=True); a torch.Generator().manual_seed(s) becomes "
              "mindspore.dataset.config.set_seed(s) before the statement (the split follows the dataset seed when "
              "the data is read)",
        examples=(
            Example(
                "train, val = torch.utils.data.random_split(ds, [8, 2], generator=torch.Generator().manual_seed(42))",
                "mindspore.dataset.config.set_seed(42)\n"
                'train, val = mindspore.dataset.GeneratorDataset(\n    ds, column_names=["data", "label"], shuffle=False\n'
                ").split([8, 2], randomize=True)",
            ),
            Example("train, val = torch.utils.data.random_split(ds, [8, 2], generator=g)", marked="manual_seed"),
            Example(
                "train, val = torch.utils.data.random_split(ds, [0.8, 0.2])",
                'train, val = mindspore.dataset.GeneratorDataset(\n    ds, column_names=["data", "label"], shuffle=False\n'
                ").split([0.8, 0.2], randomize=True)",
            ),
        ),
    ),
    ApiRule("torch.utils.data.RandomSampler", "mindspore.dataset.RandomSampler",
            signature="data_source, replacement=False, num_samples=None, generator=None",
            args={"data_source": Drop("the sampler is given to the dataset"), "generator": _GENERATOR},
            examples=(Example("s = torch.utils.data.RandomSampler(ds, replacement=True)",
                              "s = mindspore.dataset.RandomSampler(replacement=True)"),)),
    ApiRule("torch.utils.data.SequentialSampler", "mindspore.dataset.SequentialSampler",
            signature="data_source", args={"data_source": Drop("the sampler is given to the dataset")},
            examples=(Example("s = torch.utils.data.SequentialSampler(ds)", "s = mindspore.dataset.SequentialSampler()"),)),
    ApiRule("torch.utils.data.SubsetRandomSampler", "mindspore.dataset.SubsetRandomSampler",
            signature="indices, generator=None", args={"generator": _GENERATOR},
            examples=(Example("s = torch.utils.data.SubsetRandomSampler([0, 2, 4])",
                              "s = mindspore.dataset.SubsetRandomSampler([0, 2, 4])"),)),
    ApiRule("torch.utils.data.WeightedRandomSampler", "mindspore.dataset.WeightedRandomSampler",
            signature="weights, num_samples, replacement=True, generator=None", args={"generator": _GENERATOR}),
    ApiRule("torch.utils.data.distributed.DistributedSampler", "mindspore.dataset.DistributedSampler",
            signature="dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False",
            args={"dataset": Drop("the sampler is given to the dataset"), "num_replicas": "num_shards",
                  "rank": "shard_id", "seed": Unsupported("seed: use mindspore.dataset.config.set_seed"),
                  "drop_last": Unsupported("drop_last has no DistributedSampler counterpart")},
            hook=lambda call, ctx: _require_shards(call),
            aliases=("torch.utils.data.DistributedSampler",)),
    ApiRule("torch.utils.data.BatchSampler", None, notes="BatchSampler cannot be converted automatically; use .batch()"),
    ApiRule("torch.utils.data.Subset", None,
            notes="Subset: pass mindspore.dataset.SubsetSampler(indices) as sampler= of the GeneratorDataset"),
]


def _require_shards(call) -> None:
    if not (call.has("num_replicas") and call.has("rank")):
        raise Unconvertible("num_replicas and rank must be given: MindSpore needs num_shards and shard_id")
