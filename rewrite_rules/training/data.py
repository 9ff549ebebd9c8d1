"""torch.utils.data -> mindspore.dataset.

DataLoader(dataset, batch_size, shuffle, num_workers, drop_last) becomes
``GeneratorDataset(source, column_names=..., shuffle=...).batch(...)``; the
column names come from what the Dataset's ``__getitem__`` returns (recorded
by transpiler/convert/structural/datasets.py). Iterating the result yields lists of
MindSpore tensors, so ``for x, y in loader``, ``enumerate(loader)`` and
``len(loader)`` keep working.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.torch_functions.creation import randperm_of
from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import (ApiRule, Drop, Example, Unconvertible, Unsupported, code_of, dataset_columns, default_columns,
                               define, is_mindspore_dataset, keyword_arg, split_seed_is_set)

_PERFORMANCE = Drop("loader performance option with no MindSpore counterpart; no effect on the data")

_LOADER_SIGNATURE = (
    "dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, "
    "pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None, "
    "generator=None, *, prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True"
)


_SEEDED_ORDER = (
    "after mindspore.set_seed (torch.manual_seed) MindSpore draws the same order every time a pipeline is "
    "iterated anew (each epoch of `for batch in loader`), where torch reshuffles each epoch; iterate one "
    "loader.create_tuple_iterator(num_epochs=...) across the epochs to reshuffle"
)


def _loader(call, ctx):
    dataset = call.get("dataset")
    source = call.source.args[0].value if call.source.args and call.source.args[0].keyword is None else dataset
    if call.has("pin_memory"):
        ctx.warn(call.source, "torch.utils.data.DataLoader", "pin_memory dropped: MindSpore has no pinned host memory")
    shuffle = call.get("shuffle")
    shuffle = shuffle if shuffle is not None and code_of(shuffle) != "None" else cst.Name("False")
    sampler = call.get("sampler")
    if (code_of(shuffle) != "False" or sampler is not None) and "torch.manual_seed" in ctx.analysis.references.values():
        ctx.warn(call.source, "torch.utils.data.DataLoader", _SEEDED_ORDER)
    if is_mindspore_dataset(ctx, source):
        pipeline = dataset
        if _loaders_over(ctx, source) > 1:
            # a mindspore.dataset node feeds one pipeline ("The data pipeline is not a tree"): each loader
            # over the same dataset (glow's loader made anew each pass) starts from its own copy
            pipeline = cst.Call(ctx.ref("copy.deepcopy"), [cst.Arg(dataset)])
        if sampler is not None:
            # the sampler draws the rows of the pipeline's source (MnistDataset, ImageFolderDataset ...)
            dataset = pipeline = cst.Call(define(ctx, "sampled_by", _sampled_by(code_of(ctx.ref("mindspore")))),
                                          [cst.Arg(pipeline), cst.Arg(sampler)])
        if code_of(shuffle) != "False":
            size = cst.Call(cst.Attribute(dataset, cst.Name("get_dataset_size")), [])
            shuffled = cst.Call(cst.Attribute(pipeline, cst.Name("shuffle")), [cst.Arg(size)])
            pipeline = shuffled if code_of(shuffle) == "True" else cst.IfExp(shuffle, shuffled, pipeline)
    else:
        columns = dataset_columns(ctx, source)
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


_SAMPLED_BY = '''
def {name}(pipeline, sampler):
    """The pipeline whose source reads the rows ``sampler`` draws, drawn anew each epoch, as
    torch's DataLoader(dataset, sampler=sampler) reads them (``sampler``: any iterable of
    row numbers with a length, such as a converted DistributedSampler)."""

    class Drawn(%(ms)s.dataset.Sampler):
        def __init__(self):
            super().__init__(num_samples=len(sampler))

        def __iter__(self):
            return iter(sampler)

        def __len__(self):
            return len(sampler)

    source = pipeline
    while source.children:
        if len(source.children) > 1:
            raise ValueError("sampler= over a pipeline of several sources (zip, concat): give each source its sampler")
        source = source.children[0]
    if not hasattr(source, "use_sampler"):
        raise ValueError(f"sampler= over {{type(source).__name__}}, which reads its rows in its own order")
    source.use_sampler(Drawn())
    return pipeline
'''


def _sampled_by(ms: str) -> str:
    return _SAMPLED_BY % {"ms": ms}


_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")


class _LoaderSources(cst.CSTVisitor):
    def __init__(self, ctx):
        super().__init__()
        self.ctx, self.sources = ctx, []

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.analysis.qualified(node.func) in _LOADERS and node.args and node.args[0].keyword is None:
            self.sources.append(code_of(node.args[0].value))


def _loaders_over(ctx, source: cst.BaseExpression) -> int:
    """How many DataLoader calls of the file take ``source`` (as written) as their dataset."""
    found = ctx.facts.get("loader sources")
    if found is None:
        module = ctx.facts.get("module")
        visitor = _LoaderSources(ctx)
        if module is not None:
            module.visit(visitor)
        found = ctx.facts["loader sources"] = visitor.sources
    return found.count(code_of(source))


def _tensor_dataset(call, ctx):
    """Rows of the tensors as NumPy arrays: a random-access source."""
    arrays = [cst.Arg(cst.Call(ctx.ref("numpy.asarray"), [cst.Arg(a.value)])) for a in call.varargs]
    call.result = cst.Call(cst.Name("list"), [cst.Arg(cst.Call(cst.Name("zip"), arrays))])


def _random_split(call, ctx):
    if call.has("generator"):
        if not split_seed_is_set(call):
            raise Unconvertible("the generator is not torch.Generator().manual_seed(seed): seed the split with "
                                "mindspore.dataset.config.set_seed(seed) by hand")
        call.remove("generator")  # its seed is set before the statement (transpiler/convert/structural/surroundings.py)
    dataset = call.get("dataset")
    source = call.source.args[0].value
    columns = dataset_columns(ctx, source) or default_columns(2)
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


def _capped_num_samples(call, ctx) -> None:
    """MindSpore's samplers draw at most as many rows as the dataset has (measured:
    num_samples=8000 over 10 rows gives 10 rows); torch draws num_samples. Convert
    only when num_samples is absent or a len(...) (the dataset's or its weights')."""
    num_samples = call.get("num_samples")
    if num_samples is None or code_of(num_samples) == "None":
        return
    if isinstance(num_samples, cst.Call) and code_of(num_samples.func) == "len":
        return
    raise Unconvertible("num_samples: MindSpore's sampler draws at most len(dataset) rows, torch draws num_samples; "
                        "convert by hand if num_samples may exceed the dataset's size")


_GENERATOR = Unsupported("torch.Generator objects have no MindSpore equivalent; seed with mindspore.dataset.config.set_seed")


# -- samplers ------------------------------------------------------------------
# A torch sampler is an iterable of indices, drawn afresh on every iteration.
# MindSpore's sampler objects cannot be iterated; GeneratorDataset takes any
# iterable with __iter__ and __len__ as sampler= (and iterates it once per
# epoch). So a sampler becomes such an iterable: range() when the order is
# fixed, else a small object whose __iter__ draws with MindSpore's random ops
# each time, making the same draws as torch's sampler (so a replay of torch's
# draws gives the same indices).

def _drawing(name: str, draw: str, length: str) -> cst.BaseExpression:
    """An object whose iteration yields the list ``draw`` (evaluated anew each time)."""
    return cst.parse_expression(
        f'type("{name}", (), {{"__iter__": lambda self: iter({draw}), "__len__": lambda self: {length}}})()'
    )


def _literal_flag(call, name: str, default: bool) -> bool:
    value = call.get(name)
    if value is None:
        return default
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value == "True"
    raise Unconvertible(f"{name} through a variable")


def _sequential_sampler(call, ctx):
    call.result = cst.parse_expression(f"range(len({code_of(call.get('data_source'))}))")


def _random_sampler(call, ctx):
    """torch draws whole permutations, then one more for the remainder (or,
    with replacement, integers 32 at a time, then the remainder)."""
    ops, n = code_of(ctx.ref("mindspore.ops")), f"len({code_of(call.get('data_source'))})"
    count = code_of(call.get("num_samples")) if call.has("num_samples") else None
    k = count or n
    generator = code_of(call.get("generator")) if call.has("generator") else None
    if generator is not None:  # a torch.Generator is a numpy.random.RandomState (torch_functions/creation.py)
        if _literal_flag(call, "replacement", False):
            draw = f"{generator}.randint(0, {n}, ({k},)).tolist()"
        else:
            numpy = code_of(ctx.ref("numpy"))
            draw = f"{numpy}.concatenate([{generator}.permutation({n}) for _ in range({k} // {n} + 1)])[:{k}].tolist()"
        call.result = _drawing("RandomSampler", draw, k)
        return
    if _literal_flag(call, "replacement", False):
        draw = (f"{ops}.cat([{ops}.randint(0, {n}, (32,)) for _ in range({k} // 32)] "
                f"+ [{ops}.randint(0, {n}, ({k} % 32,))]).tolist()")
    else:
        draw = f"{ops}.cat([{code_of(randperm_of(n, ctx))} for _ in range({k} // {n} + 1)])[:{k}].tolist()"
    call.result = _drawing("RandomSampler", draw, k)


def _subset_random_sampler(call, ctx):
    indices = code_of(call.get("indices"))
    permutation = code_of(randperm_of(f"len({indices})", ctx))
    if call.has("generator"):  # a numpy.random.RandomState (torch_functions/creation.py)
        permutation = f"{code_of(call.get('generator'))}.permutation(len({indices}))"
    call.result = _drawing("SubsetRandomSampler", f"[{indices}[i] for i in {permutation}.tolist()]", f"len({indices})")


def _weighted_random_sampler(call, ctx):
    ops, ms = code_of(ctx.ref("mindspore.ops")), code_of(ctx.ref("mindspore"))
    weights, count = code_of(call.get("weights")), code_of(call.get("num_samples"))
    replace = "True" if _literal_flag(call, "replacement", True) else "False"
    probs = f"{ms}.Tensor({weights}, dtype={ms}.float64)"
    call.result = _drawing("WeightedRandomSampler", f"{ops}.multinomial({probs}, {count}, {replace}).tolist()", count)


_TORCH_ORDER_SAMPLER = '''
class {name}(%(base)s):
    """MindSpore's DistributedSampler in torch's order: each rank reads torch's shard every epoch."""

    # MindSpore's sampler pads and shards as torch's does, but shuffles with numpy's default_rng;
    # torch shuffles with torch.randperm seeded with seed + epoch: a Fisher-Yates shuffle over
    # 32-bit Mersenne Twister draws, which numpy's RandomState makes too (below 2**32 / 20 rows).
    def __iter__(self):
        if not self.shuffle:
            return super().__iter__()
        size = len(self.dataset)
        draws = %(numpy)s.random.RandomState((self.seed + self.epoch) %% 2**32).randint(
            0, 2**32, size=max(size - 1, 0), dtype=%(numpy)s.uint64
        )
        steps = %(numpy)s.arange(size, 1, -1, dtype=%(numpy)s.uint64)
        swaps = %(numpy)s.arange(size - 1, dtype=%(numpy)s.uint64) + draws %% steps
        order = list(range(size))
        for i, j in enumerate(swaps.tolist()):
            order[i], order[j] = order[j], order[i]
        del order[self.total_samples :]  # drop_last: the rows that do not fill a round
        while len(order) < self.total_samples:  # else: repeat the first rows
            order += order[: self.total_samples - len(order)]
        return iter(order[self.rank : self.total_samples : self.num_replicas])
'''


def _torch_order_sampler(base: str, numpy: str) -> str:
    """The sampler class's text (a ``define`` template: ``{name}`` is its name), deriving from ``base``."""
    return _TORCH_ORDER_SAMPLER % {"base": base, "numpy": numpy}


def _distributed_sampler(call, ctx):
    """torch's arguments carry over unchanged; a sampler that may shuffle draws torch's order."""
    shuffle = call.get("shuffle")
    if shuffle is not None and code_of(shuffle) == "False":
        return
    base, numpy = code_of(ctx.ref("mindspore.dataset.dataloader.DistributedSampler")), code_of(ctx.ref("numpy"))
    call.func = define(ctx, "TorchOrderDistributedSampler", _torch_order_sampler(base, numpy))
    ctx.converted(call.source, call.rule.torch,
                  "DistributedSampler: MindSpore's sampler shuffles in another order; TorchOrderDistributedSampler "
                  "draws torch's (torch.randperm of seed + epoch), so each rank reads torch's shard every epoch")


_SAMPLED = "data = torch.arange(10).tolist()\n"


def loaded(sampler: str) -> str:
    """A DataLoader drawing with the sampler ``s``; ``seen`` are the indices it read.
    (MindSpore's pipeline draws at other moments than torch's loader, so only a
    sampler without draws runs as a case; tests/rules/test_samplers.py runs the others.)"""
    return ("class Indexed(torch.utils.data.Dataset):\n    def __len__(self):\n        return 8\n\n"
            "    def __getitem__(self, i):\n        return torch.zeros(1), i\n\n\n"
            f"data = Indexed()\ns = {sampler}\nloader = torch.utils.data.DataLoader(data, batch_size=1, sampler=s)\n"
            "seen = [int(y) for _, y in loader]\n")

_DATASET_SOURCE = (
    "class Digits(torch.utils.data.Dataset):\n"
    "    def __len__(self):\n        return 8\n\n"
    "    def __getitem__(self, i):\n        return torch.zeros(3), i % 2\n\n\n"
    "data = Digits()\n"
)

# Execution cases: a map-style dataset of ten (x row, label) pairs; the batches
# each pipeline yields are compared (values, order, count). Random orders are
# compared structurally: the rows (sorted by label, each still paired with its
# x) and the batch sizes; which permutation is drawn is not compared.
_PAIRS = (
    "class Pairs(torch.utils.data.Dataset):\n"
    "    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n"
    "    def __len__(self):\n        return len(self.y)\n\n"
    "    def __getitem__(self, i):\n        return self.x[i], self.y[i]\n\n\n"
    "data = Pairs(x, y)\n"
)
_PAIR_INPUTS = {"x": "randn(10, 2)", "y": "arange(10)"}
_BATCHES = "result = [batch for batch in loader]\n"
_LABELS = "labels = torch.cat([batch[1] for batch in loader])\n"


def _loaded(statements: str, results=("result",), **options) -> Example:
    """A run over the ten pairs: ``statements`` build ``loader`` and the results."""
    return Example(_PAIRS + statements, inputs=_PAIR_INPUTS, results=results, **options)


def _sampled(sampler: str, then: str = _BATCHES, **options) -> Example:
    return _loaded(f"loader = torch.utils.data.DataLoader(data, batch_size=3, sampler={sampler})\n" + then, **options)


_SORTED_LABELS = _LABELS + "result = torch.sort(labels)[0]\n"


def _two_parts(first: str, second: str) -> str:
    """Statements comparing two loaders that split the rows: the size of each part,
    and that together they hold every row once."""
    return (f"labels = torch.cat([b[1] for b in {first}])\nrest = torch.cat([b[1] for b in {second}])\n"
            "result = torch.sort(torch.cat([labels, rest]))[0]\nsizes = (len(labels), len(rest))\n")
_SHUFFLED = (
    "batches = [batch for batch in loader]\n"
    "xs = torch.cat([b[0] for b in batches])\n"
    "ys = torch.cat([b[1] for b in batches])\n"
    "order = torch.argsort(ys)\n"
    "result = (xs[order], ys[order], [len(b[1]) for b in batches])\n"
)
_PERMUTATION = "the permutation drawn is not compared (random in both); compared: the rows it yields, sorted"

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
            *call_cases("loader = torch.utils.data.DataLoader({args})\n" + _BATCHES + "n = len(loader)\n", [
                P("dataset", "data"), P("batch_size", "3", default=True), P("shuffle", "False", default=True),
                P("num_workers", "2", default=True, kind="keyword"), P("pin_memory", "True", default=True, kind="keyword"),
                P("drop_last", "True", default=True, kind="keyword")], _PAIR_INPUTS, results=("result", "n"),
                setup=_PAIRS),
            _loaded("loader = torch.utils.data.DataLoader(data, 4, drop_last=False)\n" + _BATCHES, notes="last_batch_short"),
            _loaded("loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=True)\n" + _SHUFFLED,
                    compare="structural", notes=_PERMUTATION + " by label, each with its x, and the batch sizes"),
        ),
    ),
    ApiRule(
        "torch.utils.data.TensorDataset",
        None,
        signature="*tensors",
        hook=_tensor_dataset,
        aliases=("torch.utils.data.dataset.TensorDataset",),
        notes="rows of the tensors as NumPy arrays: a random-access source for GeneratorDataset",
        examples=(
            Example("ds = torch.utils.data.TensorDataset(x, y)", "ds = list(zip(np.asarray(x), np.asarray(y)))"),
            Example("ds = torch.utils.data.TensorDataset(x, y)\nloader = torch.utils.data.DataLoader(ds, batch_size=4)\n"
                    "result = ([batch for batch in loader], len(ds))", inputs=_PAIR_INPUTS),
            Example("ds = torch.utils.data.TensorDataset(x)\nloader = torch.utils.data.DataLoader(ds, batch_size=4)\n"
                    + _BATCHES, inputs=_PAIR_INPUTS, notes="one_tensor"),
        ),
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
            _loaded("train, val = torch.utils.data.random_split(data, [7, 3])\n"
                    + _two_parts("torch.utils.data.DataLoader(train, batch_size=7)",
                                 "torch.utils.data.DataLoader(val, batch_size=7)"),
                    results=("result", "sizes"), compare="structural",
                    notes="which rows go to which part is random in both; compared: the sizes of the parts "
                          "and that together they hold every row once"),
        ),
    ),
    ApiRule("torch.utils.data.RandomSampler", None,
            signature="data_source, replacement=False, num_samples=None, generator=None",
            hook=_random_sampler, aliases=("torch.utils.data.sampler.RandomSampler",),
            notes="an iterable drawing as torch does (permutations, or ops.randint with replacement) on each iteration; "
                  "with generator=g (a numpy.random.RandomState) it draws from g: deterministic per seed",
            examples=(Example(_SAMPLED + "s = torch.utils.data.RandomSampler(data)\nresult = (list(s), len(s), list(s))",
                              inputs={}),
                      Example(_SAMPLED + "s = torch.utils.data.RandomSampler(data, num_samples=25)\nresult = (list(s), len(s))",
                              inputs={}),
                      Example(_SAMPLED + "s = torch.utils.data.RandomSampler(data, True, 40)\nresult = (list(s), len(s))",
                              inputs={}),
                      Example("s = torch.utils.data.RandomSampler(ds, replacement=flag)", marked="replacement"))),
    ApiRule("torch.utils.data.SequentialSampler", None, signature="data_source", hook=_sequential_sampler,
            aliases=("torch.utils.data.sampler.SequentialSampler",), notes="range(len(data_source))",
            examples=(Example("s = torch.utils.data.SequentialSampler(ds)", "s = range(len(ds))"),
                      Example(_SAMPLED + "s = torch.utils.data.SequentialSampler(data)\nresult = (list(s), len(s))", inputs={}),
                      Example(loaded("torch.utils.data.SequentialSampler(data)") + "result = seen", inputs={}))),
    ApiRule("torch.utils.data.SubsetRandomSampler", None, signature="indices, generator=None",
            hook=_subset_random_sampler,
            aliases=("torch.utils.data.sampler.SubsetRandomSampler",),
            notes="an iterable drawing a permutation of the indices on each iteration, as torch does; with "
                  "generator=g (a numpy.random.RandomState) from g",
            examples=(Example("s = torch.utils.data.SubsetRandomSampler([0, 2, 4, 7])\nresult = (list(s), len(s), list(s))",
                              inputs={}),)),
    ApiRule("torch.utils.data.WeightedRandomSampler", None,
            signature="weights, num_samples, replacement=True, generator=None", args={"generator": _GENERATOR},
            hook=_weighted_random_sampler, aliases=("torch.utils.data.sampler.WeightedRandomSampler",),
            notes="an iterable drawing with ops.multinomial on each iteration, as torch does",
            examples=(Example("s = torch.utils.data.WeightedRandomSampler([0.0, 1.0, 0.5, 3.0], 6)\nresult = (list(s), len(s))",
                              inputs={}),
                      # without replacement: the harness's multinomial replay is off there (reported): the set only
                      Example("s = torch.utils.data.WeightedRandomSampler([0.1, 0.2, 0.3, 0.4], 4, replacement=False)\n"
                              "result = (sorted(s), len(s))", inputs={}))),
    ApiRule("torch.utils.data.distributed.DistributedSampler", "mindspore.dataset.dataloader.DistributedSampler",
            signature="dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False",
            hook=_distributed_sampler, aliases=("torch.utils.data.DistributedSampler",),
            notes="torch's arguments and defaults (the world size and the rank come from the process group); "
                  "shuffled, in torch's order: a subclass drawing torch.randperm's permutation of seed + epoch "
                  "(set_epoch kept)",
            proven_by=("tests/training/test_distributed_sampler_order.py::test_converted_sampler_draws_torchs_shards",
                       "tests/training/test_distributed_msrun.py::test_converted_ddp_script_matches_torchrun"),
            examples=(
                # 10 rows over 3 replicas: both pad to 12 by repeating the first rows
                _sampled("torch.utils.data.distributed.DistributedSampler(data, num_replicas=3, rank=1, shuffle=False)"),
                _sampled("torch.utils.data.DistributedSampler(data, 2, 1, False)", notes="positional"),
                _sampled("torch.utils.data.DistributedSampler(data, 3, 2, False, drop_last=True)", notes="drop_last"),
                Example("s = torch.utils.data.DistributedSampler(ds, shuffle=False)",
                        "s = mindspore.dataset.dataloader.DistributedSampler(ds, shuffle=False)"),
                Example("s = torch.utils.data.DistributedSampler(ds, seed=7)",
                        _torch_order_sampler("mindspore.dataset.dataloader.DistributedSampler", "np")
                        .format(name="TorchOrderDistributedSampler").strip()
                        + "\n\n\ns = TorchOrderDistributedSampler(ds, seed=7)"),
                # the shuffled order: tests/training/test_distributed_sampler_order.py (torch's draws come from
                # its own generator, which the harness replays into MindSpore's random ops; none are made here)
            )),
    ApiRule("torch.utils.data.BatchSampler", None, notes="BatchSampler cannot be converted automatically; use .batch()"),
    ApiRule("torch.utils.data.Subset", None,
            notes="Subset: pass mindspore.dataset.SubsetSampler(indices) as sampler= of the GeneratorDataset"),
]
