"""torch.distributed -> mindspore.communication / mindspore.mint.distributed.

A DDP script runs one process per device in both frameworks; torch starts them
with ``torchrun`` (or ``mp.spawn`` inside the script), MindSpore with ``msrun``::

    msrun --worker_num=2 --local_worker_num=2 --master_port=8118 --join=True train.py

- ``init_process_group(backend, init_method, world_size, rank)`` ->
  ``mindspore.communication.init()``: msrun says how many processes there are
  and which one this is (``RANK_ID``/``RANK_SIZE``), and the backend follows the
  device (mccl on CPU, hccl on Ascend, nccl on GPU);
- ``get_rank`` / ``get_world_size`` -> ``mindspore.communication.get_rank`` /
  ``get_group_size``;
- the collectives (``all_reduce``, ``all_gather``, ``broadcast``, ``barrier``,
  the ``*_object`` forms) -> ``mindspore.mint.distributed``, which has torch's
  signatures and, like torch, updates the tensor in place; measured under
  msrun on CPU (sum, max and min, float and int64, Parameters too). The older
  ``ops.AllReduce`` only sums float tensors on CPU, ``ops.Barrier`` and the
  ``comm_func`` functions have no CPU kernel (measured);
- ``DistributedDataParallel(model)`` -> the model, after rank 0's parameters are
  broadcast to every rank (as torch's constructor does); the gradients are
  averaged over the ranks in the converted training step
  (``nn.DistributedGradReducer``, transpiler/convert/structural/training_loop.py);
  ``model.module`` -> ``model``; ``model.no_sync()`` -> a plain context (the
  reduction of summed gradients equals the sum of reduced ones);
- ``mp.spawn(fn, args, nprocs)`` -> ``fn(rank, *args)`` for the rank msrun
  started: msrun starts the processes.
- ``DistributedSampler`` -> ``mindspore.dataset.dataloader.DistributedSampler``
  (torch's arguments; shuffled, a subclass drawing torch's order:
  rewrite_rules/training/data.py); ``sampler.set_epoch(epoch)`` stays, and
  ``loader.sampler`` is the sampler the converted loader's GeneratorDataset holds.
- the launchers' environment (``LOCAL_RANK``, ``RANK``, ``WORLD_SIZE``) is read
  under the names msrun sets (transpiler/convert/structural/launcher_env.py).

Proven by running: tests/training/test_distributed_msrun.py launches a
converted DDP script with msrun on 2 CPU workers and the original with torchrun.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrite_rules.api import (ApiRule, AttributeRule, Drop, Example, MethodRule, Unconvertible, Unsupported, define,
                               nullcontext, origin_of, receiver_origin)

_PROVEN = ("tests/training/test_distributed_msrun.py::test_converted_ddp_script_matches_torchrun",)
_LAUNCHER = Drop("msrun says how many processes there are and which one this is (RANK_SIZE, RANK_ID)")
_GROUP = Unsupported("process groups other than the default one are not converted")
_ASYNC = Unsupported("async_op=True: the MindSpore call is written synchronous")
_MSRUN = "msrun --worker_num=N --local_worker_num=N --master_port=PORT --join=True script.py"
_DDP_SIGNATURE = ("module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, "
                  "init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False, "
                  "check_reduction=False, gradient_as_bucket_view=False, static_graph=False, "
                  "delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None, "
                  "device_mesh=None, skip_all_reduce_unused_params=False")

_BROADCAST_PARAMETERS = '''
def {name}(cell):
    """Rank 0's parameters on every rank, as torch's DistributedDataParallel(cell) starts."""
    for param in cell.get_parameters():
        %s(param, 0)
    return cell
'''


def _init(call, ctx):
    for name in ("world_size", "rank", "init_method"):
        if call.has(name):
            ctx.warn(call.source, "torch.distributed.init_process_group",
                     f"{name}= dropped: msrun sets the world (RANK_SIZE) and this process's rank (RANK_ID); "
                     f"launch with {_MSRUN}")
            break


def _distributed_data_parallel(call, ctx):
    model = call.get("module")
    if model is None:
        raise Unconvertible("the wrapped model is not given")
    broadcast = cst.Module([]).code_for_node(ctx.ref("mindspore.mint.distributed.broadcast"))
    helper = define(ctx, "broadcast_parameters", _BROADCAST_PARAMETERS % broadcast)
    call.result = cst.Call(helper, [cst.Arg(model)])
    ctx.converted(call.source, call.rule.torch,
                  "DistributedDataParallel(model) -> model with rank 0's parameters; the training step averages "
                  "the gradients over the ranks (nn.DistributedGradReducer)")


def _spawn(call, ctx):
    fn = call.get("fn")
    if fn is None:
        raise Unconvertible("the function to start is not given")
    if call.has("join") and call.literal("join", True) is not True:
        raise Unconvertible("join=False returns a context to wait on; msrun starts and waits for the processes")
    environ = ctx.ref("os.environ")
    rank = cst.Call(cst.Name("int"), [cst.Arg(cst.Subscript(environ, [cst.SubscriptElement(
        cst.Index(cst.SimpleString('"RANK_ID"')))]))])
    args = [cst.Arg(rank)]
    extra = call.get("args")
    if isinstance(extra, cst.Tuple):
        args.extend(cst.Arg(e.value) for e in extra.elements)
    elif extra is not None:
        args.append(cst.Arg(extra, star="*"))
    nprocs = call.get("nprocs")
    count = cst.Module([]).code_for_node(nprocs) if nprocs is not None else "1"
    ctx.warn(call.source, "torch.multiprocessing.spawn",
             f"the processes are started by msrun, not by the script: launch with msrun --worker_num={count} "
             f"--local_worker_num={count} --master_port=PORT --join=True script.py")
    call.result = cst.Call(fn, args)


def _no_sync(call, ctx):
    origin = receiver_origin(call)
    if origin is not None and "DistributedDataParallel" not in origin.qualified:
        return call.call
    return cst.Call(nullcontext(ctx), [])


def _set_epoch(call, ctx):
    """``sampler.set_epoch(epoch)`` stays: the converted DistributedSampler has it and draws torch's
    order of that epoch. ``loader.sampler.set_epoch(epoch)``: the converted loader is a batched
    GeneratorDataset, which keeps its sampler (wrapped: ``IterSampler.sampler``) under the batching
    step, as ``loader.dataset`` reads ``loader.children[0].source``."""
    func = call.source.func if call.source is not None else None
    read = func.value if isinstance(func, cst.Attribute) else None
    if not (isinstance(read, cst.Attribute) and read.attr.value == "sampler") or origin_of(ctx, read) is not None:
        return call.call  # a sampler, or an object of the file's own with set_epoch
    loader = origin_of(ctx, read.value)
    if loader is not None:  # a loader the file shows: its ``.sampler`` read is rewritten where it is read
        return call.call
    if loader is None and (not _uses_distributed_sampler(ctx) or _sets_sampler_attributes(ctx)):
        return call.call  # not surely a loader: self.sampler = DistributedSampler(...) is a sampler
    converted = call.call.func.value
    if not (isinstance(converted, cst.Attribute) and converted.attr.value == "sampler"):
        return call.call
    first = cst.Subscript(cst.Attribute(converted.value, cst.Name("children")),
                          [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    sampler = cst.Attribute(cst.Attribute(first, cst.Name("sampler")), cst.Name("sampler"))
    ctx.converted(call.source, "torch.utils.data.DistributedSampler.set_epoch",
                  "loader.sampler -> loader.children[0].sampler.sampler: the sampler given to the GeneratorDataset "
                  "under the batching step")
    return call.call.with_changes(func=call.call.func.with_changes(value=sampler))


def _uses_distributed_sampler(ctx) -> bool:
    return any(name.endswith("DistributedSampler") for name in ctx.analysis.references.values())


class _SamplerAttributes(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.found = False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.found = self.found or (isinstance(node.target, cst.Attribute) and node.target.attr.value == "sampler")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.found = self.found or (isinstance(node.target, cst.Attribute) and node.target.attr.value == "sampler")


def _sets_sampler_attributes(ctx) -> bool:
    """The file assigns some ``x.sampler = ...`` (then an ``x.sampler`` of unknown origin may be a sampler)."""
    found = ctx.facts.get("sets .sampler")
    if found is None:
        module, visitor = ctx.facts.get("module"), _SamplerAttributes()
        if module is not None:
            module.visit(visitor)
        found = ctx.facts["sets .sampler"] = visitor.found or module is None
    return found


def _dist(name: str, target: str, signature: str, *, args=None, notes: str = "", examples=(), **more) -> ApiRule:
    mapping = {"group": _GROUP, "async_op": _ASYNC}
    mapping.update(args or {})
    return ApiRule(f"torch.distributed.{name}", target, signature=signature, args=mapping, notes=notes,
                   examples=examples, proven_by=_PROVEN, **more)


@dataclass(frozen=True)
class _ReduceOp(AttributeRule):
    """A reduction named as the collectives take it, proven by the msrun test (no Example can run a collective)."""

    proven_by: tuple[str, ...] = ()


_MINT = "mindspore.mint.distributed."
_IN_PLACE = "in place, as torch's (measured under msrun on CPU)"

RULES = [
    _dist("init_process_group", "mindspore.communication.init",
          "backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None, group_name='', "
          "pg_options=None, device_id=None",
          args={name: _LAUNCHER for name in ("backend", "init_method", "timeout", "world_size", "rank", "store",
                                             "group_name", "pg_options", "device_id")},
          hook=_init, notes="the backend follows the device; msrun sets the world size and rank",
          examples=(Example('torch.distributed.init_process_group(backend="nccl")', "mindspore.communication.init()"),
                    Example('torch.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:23456", '
                            'rank=rank, world_size=world)', "mindspore.communication.init()"))),
    _dist("get_rank", "mindspore.communication.get_rank", "group=None",
          examples=(Example("rank = torch.distributed.get_rank()", "rank = mindspore.communication.get_rank()"),)),
    _dist("get_world_size", "mindspore.communication.get_group_size", "group=None",
          examples=(Example("n = torch.distributed.get_world_size()", "n = mindspore.communication.get_group_size()"),)),
    _dist("is_initialized", _MINT + "is_initialized", "",
          examples=(Example("ok = torch.distributed.is_initialized()", "ok = mindspore.mint.distributed.is_initialized()"),
                    Example("result = torch.distributed.is_initialized()", inputs={}))),
    _dist("get_backend", _MINT + "get_backend", "group=None",
          notes="the name of MindSpore's backend (on CPU 2.10 answers 'hccl' though it runs mccl, measured)",
          examples=(Example("name = torch.distributed.get_backend()",
                            "name = mindspore.mint.distributed.get_backend()"),)),
    _dist("is_available", _MINT + "is_available", "",
          examples=(Example("result = torch.distributed.is_available()", inputs={}),)),
    _dist("barrier", _MINT + "barrier", "group=None, async_op=False, device_ids=None",
          args={"device_ids": Drop("the device is the process's own")},
          examples=(Example("torch.distributed.barrier(device_ids=[rank])", "mindspore.mint.distributed.barrier()"),)),
    _dist("all_reduce", _MINT + "all_reduce", "tensor, op=ReduceOp.SUM, group=None, async_op=False",
          notes=_IN_PLACE,
          examples=(Example("torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)",
                            "mindspore.mint.distributed.all_reduce(t, op=ops.ReduceOp.MAX)"),
                    Example("torch.distributed.all_reduce(t)", "mindspore.mint.distributed.all_reduce(t)"))),
    _dist("all_gather", _MINT + "all_gather", "tensor_list, tensor, group=None, async_op=False", notes=_IN_PLACE,
          examples=(Example("torch.distributed.all_gather(parts, t)", "mindspore.mint.distributed.all_gather(parts, t)"),)),
    _dist("broadcast", _MINT + "broadcast", "tensor, src=None, group=None, async_op=False, group_src=None",
          args={"group_src": _GROUP}, notes=_IN_PLACE,
          examples=(Example("torch.distributed.broadcast(t, src=0)", "mindspore.mint.distributed.broadcast(t, src=0)"),)),
    _dist("all_gather_object", _MINT + "all_gather_object", "object_list, obj, group=None",
          examples=(Example("torch.distributed.all_gather_object(out, obj)",
                            "mindspore.mint.distributed.all_gather_object(out, obj)"),)),
    _dist("broadcast_object_list", _MINT + "broadcast_object_list",
          "object_list, src=None, group=None, device=None, group_src=None",
          args={"device": Drop("the device is the process's own"), "group_src": _GROUP},
          examples=(Example("torch.distributed.broadcast_object_list(objs, src=0)",
                            "mindspore.mint.distributed.broadcast_object_list(objs, src=0)"),)),
    _dist("destroy_process_group", _MINT + "destroy_process_group", "group=None",
          examples=(Example("torch.distributed.destroy_process_group()",
                            "mindspore.mint.distributed.destroy_process_group()"),)),
    *(_ReduceOp(f"torch.distributed.ReduceOp.{op}", f"mindspore.ops.ReduceOp.{op}",
                aliases=(f"torch.distributed.distributed_c10d.ReduceOp.{op}",), proven_by=_PROVEN)
      for op in ("SUM", "MAX", "MIN")),
    ApiRule("torch.nn.parallel.DistributedDataParallel", None, signature=_DDP_SIGNATURE,
            hook=_distributed_data_parallel, aliases=("torch.nn.parallel.distributed.DistributedDataParallel",),
            notes="the model, with rank 0's parameters broadcast to every rank; the training step averages the "
                  "gradients over the ranks (nn.DistributedGradReducer)",
            proven_by=_PROVEN,
            examples=(Example("net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])",
                              'def broadcast_parameters(cell):\n'
                              '    """Rank 0\'s parameters on every rank, as torch\'s DistributedDataParallel(cell) '
                              'starts."""\n'
                              "    for param in cell.get_parameters():\n"
                              "        mindspore.mint.distributed.broadcast(param, 0)\n"
                              "    return cell\n\n\n"
                              "net = broadcast_parameters(model)"),)),
    ApiRule("torch.multiprocessing.spawn", None,
            signature="fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'",
            args={"daemon": Drop("msrun starts the processes"), "start_method": Drop("msrun starts the processes")},
            hook=_spawn, aliases=("torch.multiprocessing.spawn.spawn",),
            notes="msrun starts the processes: the function runs once in each, for its rank (RANK_ID)",
            proven_by=_PROVEN,
            examples=(Example("torch.multiprocessing.spawn(train, args=(world,), nprocs=world, join=True)",
                              'train(int(os.environ["RANK_ID"]), world)'),)),
    ApiRule("torch.cuda.set_device", None, signature="device", no_op=True,
            aliases=("torch.accelerator.set_device_index", "torch.accelerator.set_device_idx"),
            notes="msrun gives each process its device (DEVICE_ID); MindSpore selects it when the process starts",
            examples=(Example("torch.cuda.set_device(local_rank)\nx = 1", "x = 1"),)),
    MethodRule("no_sync", hook=_no_sync, arity=(0, 0), receiver="cell", proven_by=_PROVEN,
               notes="gradients are averaged over the ranks at every step: reducing each micro-step's gradients "
                     "and summing them equals reducing their sum (the proof runs the context; accumulation "
                     "under it is not compared)"),
    MethodRule("set_epoch", hook=_set_epoch, arity=(1, 1), receiver="any",
               owner="torch.utils.data.distributed.DistributedSampler",
               proven_by=_PROVEN + ("tests/training/test_distributed_sampler_order.py::"
                                    "test_loader_reads_torchs_batches_each_epoch",),
               notes="DistributedSampler.set_epoch: kept (the converted sampler draws torch's order of the epoch); "
                     "loader.sampler is the sampler of the GeneratorDataset under the batching step",
               examples=(Example("sampler.set_epoch(epoch)", "sampler.set_epoch(epoch)"),
                         Example("from torch.utils.data.distributed import DistributedSampler\n"
                                 "loader = torch.utils.data.DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False))\n"
                                 "loader.sampler.set_epoch(epoch)",
                                 "loader = mindspore.dataset.GeneratorDataset(\n"
                                 '    ds,\n'
                                 '    column_names=["data", "label"],\n'
                                 "    sampler=mindspore.dataset.dataloader.DistributedSampler(ds, shuffle=False),\n"
                                 ").batch(1, drop_remainder=False)\n"
                                 "loader.children[0].sampler.sampler.set_epoch(epoch)"))),
]
