"""The worker process: imports torch and MindSpore once and runs many cases.

A case arrives as a ``Job`` (the torch snippet and the converted snippet, each
split into top-level statements). The two snippets run in lockstep, statement
by statement; after a statement binds a torch ``nn.Module`` to a name, that
module's weights are copied into the MindSpore Cell bound to the same name
(``transpiler.proof.weights.convert_state_dict``) before the next statement runs.
So a snippet only has to construct its layers in their own statements,
``layer = nn.Linear(3, 4)`` then ``result = layer(x)``, in any order relative
to the use of inputs.

Random ops are replayed (``transpiler.proof.replay``): the draws each torch
statement makes are fed, in order, to the MindSpore random ops of the
converted statements, so ``torch.randn``, ``Tensor.normal_``, ``nn.init.*``,
dropout in training mode and the like compare by value. A statement that
builds a layer is the exception: its draws (initial weights) are dropped, the
weights are copied. A MindSpore draw that does not fit torch's, or a torch
draw MindSpore never asks for, fails the case.

Every result is forced to host memory (``asnumpy``) and the device is
synchronised before the reply, so MindSpore's asynchronous errors surface in
the case that caused them. After any exception the worker asks to be replaced,
because a failed kernel can leave the process in a bad state.
"""

from __future__ import annotations

import copy
import itertools
import linecache
import os
import sys
import traceback
import types
from dataclasses import dataclass, field

from transpiler.proof.harness.inputs import build_all
from transpiler.proof.harness.values import Value, python_value, tensor_value
from transpiler.proof.replay import ReplayMismatch, Tape


@dataclass(frozen=True)
class Job:
    case_id: str
    torch_imports: str
    torch_statements: tuple[str, ...]
    ms_imports: str
    ms_statements: tuple[str, ...]
    inputs: dict[str, str]
    results: tuple[str, ...]
    seed: int
    # False for draws MindSpore makes outside its random ops (a dataset's shuffle, a
    # sampler): torch's are not replayed, and the case compares structurally
    check_draws: bool = True
    # the project rule files the snippet was converted with: their weight mappings apply too
    rule_files: tuple[str, ...] = ()


@dataclass
class Outcome:
    ok: bool
    torch: dict[str, Value] = field(default_factory=dict)
    mindspore: dict[str, Value] = field(default_factory=dict)
    side: str = ""  # where it failed: "inputs", "torch", "mindspore", "weights"
    error: str = ""
    restart: bool = False


class CaseError(Exception):
    def __init__(self, side: str, error: str):
        super().__init__(error)
        self.side = side
        self.error = error


class Frameworks:
    """torch and MindSpore, imported once per worker."""

    def __init__(self):
        os.environ.setdefault("GLOG_v", "3")
        import mindspore
        import numpy
        import torch

        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        mindspore.set_device("CPU")
        # one thread on each side: with its default 25 CPU-kernel threads MindSpore's
        # tensor_scatter_elements(..., "add") once lost one of two updates at a repeated index
        mindspore.device_context.cpu.op_tuning.threads_num(1)
        torch.set_num_threads(1)
        from transpiler.proof import replay

        replay.install()
        self.torch = torch
        self.ms = mindspore
        self.np = numpy

    # -- inputs -----------------------------------------------------------
    def torch_input(self, value):
        if isinstance(value, self.np.ndarray):
            return self.torch.from_numpy(value.copy())
        return copy.deepcopy(value)

    def ms_input(self, value):
        if isinstance(value, self.np.ndarray):
            return self.ms.Tensor(value.copy())
        return copy.deepcopy(value)

    # -- results ----------------------------------------------------------
    def torch_value(self, value) -> Value:
        torch = self.torch
        if isinstance(value, torch.Tensor):
            # conj()/mH/adjoint() give lazily conjugated views, which numpy() refuses
            tensor = value.detach().cpu().resolve_conj()
            dtype = str(tensor.dtype).replace("torch.", "")
            if tensor.dtype == torch.bfloat16:
                tensor = tensor.float()
            return tensor_value(dtype, tensor.numpy())
        if isinstance(value, torch.dtype):
            return Value("dtype", str(value).replace("torch.", ""))
        if isinstance(value, (tuple, list)):
            return Value("sequence", data=[self.torch_value(v) for v in value])
        return python_value(value) or Value("other", data=type(value).__name__)

    def ms_value(self, value) -> Value:
        ms = self.ms
        if isinstance(value, ms.Tensor):
            dtype = str(value.dtype).lower()
            if value.dtype == ms.bfloat16:
                value = value.astype(ms.float32)
            return tensor_value(dtype, value.asnumpy())
        if isinstance(value, ms.dtype.Type):
            return Value("dtype", str(value).lower())
        if isinstance(value, (tuple, list)):
            return Value("sequence", data=[self.ms_value(v) for v in value])
        return python_value(value) or Value("other", data=type(value).__name__)

    # -- weights ----------------------------------------------------------
    def copy_weights(self, name: str, module, cell, rule_files: tuple[str, ...] = ()) -> None:
        if not isinstance(cell, self.ms.nn.Cell):
            raise CaseError("weights", f"torch binds {name} to a {type(module).__name__}, MindSpore to {type(cell).__name__}")
        if not any(True for _ in module.state_dict()) and not any(True for _ in module.buffers()):
            return
        try:
            from transpiler.proof.weights import convert_state_dict  # written in parallel (issue 5): imported lazily
        except ImportError as error:
            raise CaseError("weights", f"cannot copy weights of {name}: {error}") from None
        try:
            params = convert_state_dict(module, cell, rules=_rules(rule_files))
            not_loaded, unused = self.ms.load_param_into_net(cell, params, strict_load=True)
        except Exception:
            raise CaseError("weights", f"copying the weights of {name}:\n{traceback.format_exc(limit=-3)}") from None
        if not_loaded or unused:
            raise CaseError("weights", f"weights of {name} do not fit: not loaded {not_loaded}, unused {unused}")


def _rules(files: tuple[str, ...]):
    """The rule set with the project's rule files, or None for ms-migrate's own."""
    if not files:
        return None
    from rewrite_rules.registry import load_rules

    return load_rules(files)


def _reset_global_state(fw: Frameworks) -> None:
    """Cases run one after another in this process: a case that switched on
    ``torch.use_deterministic_algorithms(True)`` must not make the next one's
    non-deterministic torch ops refuse to run. (MindSpore's set_deterministic
    can be set only once per process; deterministic kernels change no result.)"""
    if fw.torch.are_deterministic_algorithms_enabled():
        fw.torch.use_deterministic_algorithms(False)


def run_job(fw: Frameworks, job: Job) -> Outcome:
    torch, ms = fw.torch, fw.ms
    try:
        try:
            arrays = build_all(job.inputs, job.seed)
        except Exception as error:  # a bad spec is the case's fault, not the worker's
            raise CaseError("inputs", f"{type(error).__name__}: {error}") from None
        _reset_global_state(fw)
        torch.manual_seed(job.seed)
        ms.set_seed(job.seed)
        torch_ns = _namespace(fw, "torch", job.torch_imports, {k: fw.torch_input(v) for k, v in arrays.items()})
        ms_ns = _namespace(fw, "mindspore", job.ms_imports, {k: fw.ms_input(v) for k, v in arrays.items()})
        tape = Tape(job.seed)
        aligned = len(job.torch_statements) == len(job.ms_statements)
        if aligned:
            for t_stmt, m_stmt in zip(job.torch_statements, job.ms_statements):
                bound_before = {k: id(v) for k, v in torch_ns.items()}
                recorded = len(tape.draws)
                with tape.recording():
                    _exec("torch", t_stmt, torch_ns)
                built = [name for name, value in torch_ns.items()
                         if isinstance(value, torch.nn.Module) and bound_before.get(name) != id(value)]
                if built:  # a layer's initial weights are replaced by torch's: its draws do not matter
                    tape.discard_from(recorded)
                    _exec("mindspore", m_stmt, ms_ns)
                else:  # MindSpore may draw later than torch (a lazy initializer): checked at the end
                    with tape.replaying_mindspore(start=None, check=False):
                        _exec("mindspore", m_stmt, ms_ns)
                for name in built:
                    fw.copy_weights(name, torch_ns[name], ms_ns.get(name), job.rule_files)
        else:
            with tape.recording():
                _exec("torch", "".join(job.torch_statements), torch_ns)
            modules = [k for k, v in torch_ns.items() if isinstance(v, torch.nn.Module) and v.state_dict()]
            if modules:
                raise CaseError(
                    "weights",
                    f"the converted snippet has {len(job.ms_statements)} statements, the torch snippet "
                    f"{len(job.torch_statements)}: cannot copy the weights of {', '.join(modules)} statement by statement",
                )
            with tape.replaying_mindspore(check=False):
                _exec("mindspore", "".join(job.ms_statements), ms_ns)
        outcome = Outcome(True)
        for name in job.results:
            outcome.torch[name] = _result("torch", name, torch_ns, fw.torch_value)
        with tape.replaying_mindspore(start=None, check=False):
            for name in job.results:
                outcome.mindspore[name] = _result("mindspore", name, ms_ns, fw.ms_value)
            _force_all(fw, ms_ns)
        try:
            if job.check_draws:
                tape.check_consumed()
        except ReplayMismatch as error:
            raise CaseError("mindspore", f"random draws do not correspond: {error}") from None
        return outcome
    except CaseError as error:
        return Outcome(False, side=error.side, error=error.error, restart=error.side in ("mindspore", "weights"))


def _force_all(fw, namespace) -> None:
    """Bring every MindSpore tensor the snippet bound to host memory, so an
    asynchronous kernel error surfaces in this case and not a later one."""
    for name, value in namespace.items():
        if isinstance(value, fw.ms.Tensor):
            try:
                value.asnumpy()
            except Exception:
                raise CaseError("mindspore", f"forcing {name!r}:\n{traceback.format_exc(limit=-3)}") from None


def _namespace(fw, side, imports, inputs):
    # the namespace is a registered module's: mindspore.jit imports a function's __module__
    # to read its globals, so a jitted snippet function needs its module importable
    module = types.ModuleType(f"__{side}_case__")
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    _exec(side, imports, namespace)
    namespace.update(inputs)
    return namespace


def _exec(side: str, code: str, namespace: dict) -> None:
    try:
        # dont_inherit: this module's `from __future__ import annotations` would leave the snippets'
        # annotations unevaluated text, so a wrongly converted annotation would pass
        exec(compile(code, _source_name(side, code), "exec", dont_inherit=True), namespace)
    except Exception:
        raise CaseError(side, traceback.format_exc(limit=-4)) from None


_SNIPPETS = itertools.count()


def _source_name(side: str, code: str) -> str:
    """A file name for one snippet whose text linecache holds: mindspore.jit reads a
    function's source with inspect, which finds it there."""
    name = f"<{side} snippet {next(_SNIPPETS)}>"
    linecache.cache[name] = (len(code), None, code.splitlines(keepends=True), name)
    return name


def _result(side, name, namespace, to_value):
    if name not in namespace:
        raise CaseError(side, f"the snippet did not bind result name {name!r}")
    try:
        return to_value(namespace[name])
    except Exception:
        raise CaseError(side, f"forcing result {name!r}:\n{traceback.format_exc(limit=-3)}") from None


def serve(conn) -> None:
    """Worker main loop: reply 'ready', then one Outcome per Job until None."""
    fw = Frameworks()
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        outcome = run_job(fw, job)
        conn.send(outcome)
        if outcome.restart:
            return


def main(argv: list[str]) -> None:
    """``python -m transpiler.proof.harness.worker READ_FD WRITE_FD``. Anything the
    snippets or the frameworks print goes to stderr, keeping the pipes clean."""
    from multiprocessing.connection import Connection

    read_fd, write_fd = int(argv[0]), int(argv[1])
    os.dup2(2, 1)
    reader, writer = Connection(read_fd, writable=False), Connection(write_fd, readable=False)

    class _Conn:
        send = writer.send
        recv = reader.recv

    serve(_Conn)

