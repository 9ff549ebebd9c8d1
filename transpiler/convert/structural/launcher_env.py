"""The launcher's environment, read under the names msrun sets.

torchrun tells each process who it is through ``RANK``, ``WORLD_SIZE`` and
``LOCAL_RANK``; msrun sets ``RANK_ID``, ``RANK_SIZE`` and ``DEVICE_ID`` (the
process's index on its node), and none of torch's names (measured: the
environment of a worker of ``msrun --worker_num=2 --local_worker_num=2`` on
CPU; the rendezvous address is ``MS_SCHED_HOST``/``MS_SCHED_PORT``). In a
file that uses torch.distributed, reads of these variables are renamed::

    int(os.environ["LOCAL_RANK"])          int(os.environ["DEVICE_ID"])   (after init: below)
    os.environ.get("RANK", -1)       ->    os.environ.get("RANK_ID", -1)
    "WORLD_SIZE" in os.environ             "RANK_SIZE" in os.environ
    os.getenv("WORLD_SIZE")                os.getenv("RANK_SIZE")
    os.environ["MASTER_ADDR"]              os.environ["MS_SCHED_HOST"]   (and MASTER_PORT: MS_SCHED_PORT,
                                                                          the address msrun's workers meet at)

Writes (``os.environ["MASTER_ADDR"] = ...`` before ``mp.spawn``) stay as
written: msrun does not read them, and nothing is lost by setting them.

msrun also starts a scheduler process that runs the script up to
``mindspore.communication.init()`` (which serves the cluster and ends the
process there). Its environment has ``MS_ROLE=MS_SCHED``, ``RANK_ID=0``,
``RANK_SIZE`` and the ``MS_SCHED_*`` address, but no ``DEVICE_ID`` (measured,
MindSpore 2.10 on CPU; msrun's process_entity sets DEVICE_ID per worker only).
So a read of the local rank that may run before init is written so that the
scheduler takes a worker's path to init, as rank 0 of its node::

    int(os.environ["LOCAL_RANK"])            int(os.environ.get("DEVICE_ID", "0"))
    int(os.getenv("LOCAL_RANK", -1))   ->    int(os.getenv("DEVICE_ID", "0" if "RANK_SIZE" in os.environ else -1))
    "LOCAL_RANK" in os.environ               "RANK_SIZE" in os.environ   (set in every process msrun starts)

(without the default the scheduler stops on a KeyError, and msrun's workers
wait for it; with torch's "not launched" default it skips init, and they wait
too). A read known to run after init (a later statement of the block that
calls ``init_process_group``, or inside one) is only renamed: the scheduler
never gets there.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.names import chain_parts
from transpiler.convert.walk import StatementVisitor, walk

MSRUN_NAMES = {"RANK": "RANK_ID", "WORLD_SIZE": "RANK_SIZE", "LOCAL_RANK": "DEVICE_ID",
               "MASTER_ADDR": "MS_SCHED_HOST", "MASTER_PORT": "MS_SCHED_PORT"}
_LOCAL = "LOCAL_RANK"  # the one whose msrun name (DEVICE_ID) the scheduler process lacks
_LAUNCHED = "RANK_SIZE"  # set in every process msrun starts, the scheduler's too
_INIT = ("torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group")
_SCHEDULER = "msrun's scheduler process runs the script up to init() without DEVICE_ID: it reads 0"
_DISTRIBUTED = ("torch.distributed", "torch.nn.parallel.DistributedDataParallel",
                "torch.nn.parallel.distributed.DistributedDataParallel", "torch.multiprocessing.spawn",
                "torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler")
_READERS = ("os.environ.get", "os.getenv", "os.environ.__getitem__", "os.environ.setdefault")


class LauncherEnvironment:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.renamed: dict[int, str] = {}  # id(string node) -> the msrun variable
        # ids of the reads of LOCAL_RANK (os.environ[...], os.environ.get / os.getenv calls) that
        # may run before init: msrun's scheduler process reaches them too
        self.before_init: set[int] = set()

    def plan(self, module: cst.Module) -> None:
        references = self.ctx.analysis.references.values()
        if not any(name.startswith(_DISTRIBUTED) for name in references):
            return
        finder = _Reads(self.ctx.analysis)
        walk(module, finder)
        if finder.key_names:  # os.environ[key] for key in ("RANK", "WORLD_SIZE")
            walk(module, _KeyLoops(finder))
        self.renamed = finder.renamed
        self.before_init = finder.before_init
        self.ctx.analysis.interesting.update(finder.renamed_in)

    def leave(self, original, result):
        name = self.renamed.get(id(original))
        if name is None:
            return result
        quote = original.prefix + original.quote
        why = "the variable msrun sets"
        if original.evaluated_value == _LOCAL and name == _LAUNCHED:
            why = ("set in every process msrun starts, where DEVICE_ID is not: its scheduler process runs the "
                   "script up to init()")
        self.ctx.converted(original, "os.environ", f"{original.evaluated_value} -> {name}: {why}")
        self.rewriter.changed()
        return original.with_changes(value=f"{quote}{name}{original.quote}")

    def leave_read(self, original, updated):
        """A read of LOCAL_RANK that may run before init (``os.environ[...]``, or an
        ``os.environ.get`` / ``os.getenv`` call), written for every process msrun
        starts: the scheduler, which has no DEVICE_ID, reads "0"."""
        if id(original) not in self.before_init:
            return updated
        quote = _quote(original)
        zero = cst.SimpleString(f"{quote}0{quote}")
        if isinstance(updated, cst.Subscript):  # os.environ["DEVICE_ID"] -> os.environ.get("DEVICE_ID", "0")
            key = updated.slice[0].slice.value
            result = cst.Call(cst.Attribute(updated.value, cst.Name("get")), [cst.Arg(key), cst.Arg(zero)],
                              lpar=updated.lpar, rpar=updated.rpar)
        else:
            default = _default(updated)
            if default is not None and _is_zero(default.value):
                return updated  # the scheduler reads 0 already
            environ = _environ_of(updated.func)
            if environ is None:
                return updated
            absent = default.value if default is not None else cst.Name("None")
            launched = cst.Comparison(cst.SimpleString(f"{quote}{_LAUNCHED}{quote}"),
                                      [cst.ComparisonTarget(cst.In(), environ)])
            value = cst.IfExp(launched, zero, absent)
            args = [updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            args.append(default.with_changes(value=value) if default is not None else cst.Arg(value))
            result = updated.with_changes(args=args)
        self.ctx.explanations.append((result, _SCHEDULER))
        self.ctx.converted(original, "os.environ", f"{_LOCAL} read before init() -> DEVICE_ID, \"0\" in msrun's "
                           "scheduler process (it runs the script up to init() without DEVICE_ID)")
        self.rewriter.changed()
        return result


def _quote(read) -> str:
    key = read.slice[0].slice.value if isinstance(read, cst.Subscript) else read.args[0].value
    return key.quote if isinstance(key, cst.SimpleString) and len(key.quote) == 1 else '"'


def _default(call: cst.Call) -> cst.Arg | None:
    for position, arg in enumerate(call.args):
        if (arg.keyword is None and position == 1) or (arg.keyword is not None and arg.keyword.value == "default"):
            return arg
    return None


def _is_zero(expr) -> bool:
    return (isinstance(expr, cst.Integer) and expr.evaluated_value == 0) or (
        isinstance(expr, cst.SimpleString) and expr.evaluated_value == "0")


def _environ_of(func) -> cst.BaseExpression | None:
    """``os.environ`` as the read spells it: the receiver of ``os.environ.get``, or
    ``os.environ`` beside ``os.getenv``."""
    if not isinstance(func, cst.Attribute):
        return None  # from os import getenv
    if func.attr.value == "getenv":
        return cst.Attribute(func.value, cst.Name("environ"))
    return func.value


class _Reads(StatementVisitor):
    def __init__(self, analysis):
        super().__init__()
        self.analysis = analysis
        self.renamed: dict[int, str] = {}
        self.renamed_in: set[int] = set()  # ids of the statements holding a renamed key
        self.targets: set[int] = set()
        self.stores: set[int] = set()  # del / augmented-assignment targets: no reads to give a default
        self.key_names: set[str] = set()  # names read as os.environ[name]
        self.before_init: set[int] = set()  # ids of LOCAL_RANK reads that may run before init
        self.place: dict[int, tuple[int, int]] = {}  # id(statement) -> (id(its block), its index there)
        self.inits: set[tuple[int, int]] = set()  # places of the statements that call init_process_group

    def _block(self, block) -> None:
        for index, statement in enumerate(block.body):
            self.place[id(statement)] = (id(block), index)

    def visit_Module(self, node: cst.Module) -> None:
        self._block(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block(node)

    def _after_init(self) -> bool:
        """The node being visited runs after init: a statement enclosing it follows,
        in its block, a statement that calls init_process_group."""
        for statement in self.statements:
            block, index = self.place.get(id(statement), (None, -1))
            if any(block == b and i < index for b, i in self.inits):
                return True
        return False

    def _local_read(self, read, key) -> None:
        if isinstance(key, cst.SimpleString) and key.evaluated_value == _LOCAL and not self._after_init():
            self.before_init.add(id(read))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets.add(id(node.target))

    def _environ(self, expr) -> str | None:
        parts = chain_parts(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if not parts:
            return None
        binding = self.analysis.imports.get(parts[0])
        return ".".join([binding.qualified, *parts[1:]]) if binding is not None else None

    def _rename(self, string) -> None:
        if isinstance(string, cst.SimpleString) and string.evaluated_value in MSRUN_NAMES:
            self.renamed[id(string)] = MSRUN_NAMES[string.evaluated_value]
            self.renamed_in.update(id(s) for s in self.statements)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) in self.targets or self._environ(node.value) != "os.environ" or len(node.slice) != 1:
            return
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            self._rename(index.value)
            if id(node) not in self.stores:
                self._local_read(node, index.value)
            if isinstance(index.value, cst.Name):
                self.key_names.add(index.value.value)

    def visit_Del(self, node: cst.Del) -> None:
        self.stores.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified(node.func) in _INIT and self.statements:
            self.inits.add(self.place.get(id(self.statements[-1]), (None, -1)))
        if self._environ(node.func) in ("os.environ.get", "os.getenv") and node.args:
            self._rename(node.args[0].value)
            self._local_read(node, node.args[0].value)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)) and self._environ(target.comparator) == "os.environ":
                self._rename(left)
                if id(left) in self.renamed and left.evaluated_value == _LOCAL and not self._after_init():
                    self.renamed[id(left)] = _LAUNCHED  # the scheduler has no DEVICE_ID, but was launched
            left = target.comparator


class _KeyLoops(StatementVisitor):
    """The string literals a loop or comprehension over a literal tuple or list
    binds to a name that is read as ``os.environ[name]``."""

    def __init__(self, reads: _Reads):
        super().__init__()
        self.reads = reads

    def _loop(self, target, iterable) -> None:
        if not (isinstance(target, cst.Name) and target.value in self.reads.key_names
                and isinstance(iterable, (cst.Tuple, cst.List))):
            return
        self.reads.statements = self.statements
        for element in iterable.elements:
            self.reads._rename(element.value)

    def visit_For(self, node: cst.For) -> None:
        self._loop(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._loop(node.target, node.iter)
