"""The launcher's environment, read under the names msrun sets.

torchrun tells each process who it is through ``RANK``, ``WORLD_SIZE`` and
``LOCAL_RANK``; msrun sets ``RANK_ID``, ``RANK_SIZE`` and ``DEVICE_ID`` (the
process's index on its node), and none of torch's names (measured: the
environment of a worker of ``msrun --worker_num=2 --local_worker_num=2`` on
CPU; the rendezvous address is ``MS_SCHED_HOST``/``MS_SCHED_PORT``). In a
file that uses torch.distributed, reads of these variables are renamed::

    int(os.environ["LOCAL_RANK"])          int(os.environ["DEVICE_ID"])
    os.environ.get("RANK", -1)       ->    os.environ.get("RANK_ID", -1)
    "WORLD_SIZE" in os.environ             "RANK_SIZE" in os.environ
    os.getenv("WORLD_SIZE")                os.getenv("RANK_SIZE")
    os.environ["MASTER_ADDR"]              os.environ["MS_SCHED_HOST"]   (and MASTER_PORT: MS_SCHED_PORT,
                                                                          the address msrun's workers meet at)

Writes (``os.environ["MASTER_ADDR"] = ...`` before ``mp.spawn``) stay as
written: msrun does not read them, and nothing is lost by setting them.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.names import chain_parts
from transpiler.convert.walk import StatementVisitor, walk

MSRUN_NAMES = {"RANK": "RANK_ID", "WORLD_SIZE": "RANK_SIZE", "LOCAL_RANK": "DEVICE_ID",
               "MASTER_ADDR": "MS_SCHED_HOST", "MASTER_PORT": "MS_SCHED_PORT"}
_DISTRIBUTED = ("torch.distributed", "torch.nn.parallel.DistributedDataParallel",
                "torch.nn.parallel.distributed.DistributedDataParallel", "torch.multiprocessing.spawn",
                "torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler")
_READERS = ("os.environ.get", "os.getenv", "os.environ.__getitem__", "os.environ.setdefault")


class LauncherEnvironment:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.renamed: dict[int, str] = {}  # id(string node) -> the msrun variable

    def plan(self, module: cst.Module) -> None:
        references = self.ctx.analysis.references.values()
        if not any(name.startswith(_DISTRIBUTED) for name in references):
            return
        finder = _Reads(self.ctx.analysis)
        walk(module, finder)
        if finder.key_names:  # os.environ[key] for key in ("RANK", "WORLD_SIZE")
            walk(module, _KeyLoops(finder))
        self.renamed = finder.renamed
        self.ctx.analysis.interesting.update(finder.renamed_in)

    def leave(self, original, result):
        name = self.renamed.get(id(original))
        if name is None:
            return result
        quote = original.prefix + original.quote
        self.ctx.converted(original, "os.environ", f"{original.evaluated_value} -> {name}: the variable msrun sets")
        self.rewriter.changed()
        return original.with_changes(value=f"{quote}{name}{original.quote}")


class _Reads(StatementVisitor):
    def __init__(self, analysis):
        super().__init__()
        self.analysis = analysis
        self.renamed: dict[int, str] = {}
        self.renamed_in: set[int] = set()  # ids of the statements holding a renamed key
        self.targets: set[int] = set()
        self.key_names: set[str] = set()  # names read as os.environ[name]

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
            if isinstance(index.value, cst.Name):
                self.key_names.add(index.value.value)

    def visit_Call(self, node: cst.Call) -> None:
        if self._environ(node.func) in ("os.environ.get", "os.getenv") and node.args:
            self._rename(node.args[0].value)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)) and self._environ(target.comparator) == "os.environ":
                self._rename(left)
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
