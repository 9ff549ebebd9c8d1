"""Constructs of torch's own source that crashed or hung the converter, in
miniature: the slow whole-tree run (tests/robustness/test_robustness_torch_tree.py) found
them; these keep the default suite from letting them back. Each converts with
no error line, and its output compiles."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from transpiler.convert.pipeline import convert_source

CASES = {
    # an autograd Function whose backward takes *grad_outputs (torch.distributed.nn):
    # bprop's signature cannot follow it, so it is marked, not rebuilt
    "backward with *grad_outputs": """
        import torch

        class Gather(torch.autograd.Function):
            @staticmethod
            def forward(ctx, dst, *tensors):
                ctx.dst = dst
                return torch.stack(tensors)

            @staticmethod
            def backward(ctx, *grad_outputs):
                return (None,) + grad_outputs
        """,
    # an autograd Function made inside a method, its forward taking `self` (torch.masked):
    # ctx becomes self in the Cell, so it is marked
    "Function whose forward takes self": """
        import torch

        class Masked:
            def get_data(self):
                class GetData(torch.autograd.Function):
                    @staticmethod
                    def forward(ctx, self):
                        return self._data

                    @staticmethod
                    def backward(ctx, grad_output):
                        return grad_output

                return GetData.apply(self)
        """,
    # a string the rule writes, inside an f-string that uses the same quote (before 3.12)
    "converted call inside an f-string": """
        import torch

        print(f"running on {torch.accelerator.current_accelerator()}")
        """,
    # a hook reading an argument passed as a variable (torch.testing, torch.overrides)
    "hook argument given as a variable": """
        import torch

        def strict(flag):
            torch.use_deterministic_algorithms(True, warn_only=flag)

        deterministic = torch.use_deterministic_algorithms
        """,
    # autocast-or-nullcontext whose autocast is marked on the way (torch.utils.checkpoint)
    "autocast with **kwargs in a conditional": """
        import contextlib
        import torch

        def run(ctx, kwargs):
            autocast = torch.amp.autocast(
                device_type=ctx.device_type, **kwargs
            ) if torch.amp.is_autocast_available(ctx.device_type) else contextlib.nullcontext()
            with autocast:
                return ctx.run()
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_converts_without_an_error_line(name):
    result = convert_source(textwrap.dedent(CASES[name]), f"{name}.py")
    errors = [d.one_line() for d in result.diagnostics if d.severity.value == "error"]
    assert errors == []
    compile(result.output, f"{name}.py", "exec")


def _recursive_functions(count: int) -> str:
    """Functions passing a value around a ring of calls, each rebinding it
    (``expr = f(expr)``, as torch.fx's symbolic shapes do): where ``expr.module``
    came from is a question with exponentially many paths."""
    parts = ["import torch\n\n"]
    for i in range(count):
        first, second = (i + 1) % count, (i + 2) % count
        parts.append(f"def f{i}(expr):\n    expr = f{first}(expr)\n    expr = f{second}(expr.module)\n"
                     f"    return expr\n\n")
    parts.append("x = f0(torch.nn.Linear(2, 2))\n")
    return "".join(parts)


def test_values_passed_around_recursive_functions_resolve_in_bounded_work():
    # A hang guard, not a speed target: this took 20 s at 6 functions and doubled
    # with each one more before resolution had a budget; 16 take about a second.
    code = (
        "import sys\n"
        "from transpiler.convert.pipeline import convert_source\n"
        "result = convert_source(sys.stdin.read(), 'ring.py')\n"
        "compile(result.output, 'ring.py', 'exec')\n"
        "print(result.status, sum(d.severity.value == 'error' for d in result.diagnostics))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=_recursive_functions(16), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["converted", "0"]


def test_a_requoted_f_string_keeps_the_marked_reference_beside_it():
    # the string the rule writes changes quote; torch.frobnicate in the same
    # f-string is still found as left in place, so its import comes with it
    code = 'import torch\nv = f"{torch.frobnicate} on {torch.accelerator.current_accelerator()}"\n'
    out = convert_source(code).output
    assert "import torch\n" in out
    assert "f\"{torch.frobnicate} on {torch_device(mindspore.get_context('device_target'))}\"" in out
    compile(out, "requoted.py", "exec")


TWICE = {
    # x.type(name) becomes x.to(dtype=name): a positional x.to(name) could be a device move
    "a cast to a dtype named by a variable": """
        import torch

        def cast(self, name):
            values = torch.Tensor._values(self).type(name)
            return values
        """,
    # the imports placed under a marker in an except ImportError block are no torch fallback
    "an optional import beside a marked fallback": """
        def register():
            import einops
            try:
                from einops._torch_specific import _ops  # noqa: F401
            except ImportError:
                allow_in_graph(einops.rearrange)
        """,
    # x.stride() becomes tuple(x.stride()); the second run finds it inside tuple(...) already
    "strides as a tuple": """
        import torch

        def same_layout(a, b):
            return a.stride() == b.stride() and list(a.stride()) == [1]
        """,
    # a marked statement inside a class guarded by try/except ImportError: its torch import,
    # placed under its marker by the first run, is found again under the same marker
    "a marked statement in a guarded class": """
        import torch
        from torch._ops import HigherOrderOperator

        class OutDtype(HigherOrderOperator):
            def __call__(self, op, *args):
                if not isinstance(op, torch._ops.OpOverload):
                    raise ValueError("an OpOverload")
                return op
        """,
    # the code's own import right above the marked one does not hide the marker
    "a marked statement below a local import": """
        from torch.utils._ordered_set import OrderedSet

        def keep(self, source):
            from .source import is_from_source

            self.inner = OrderedSet(g for g in self.inner if not is_from_source(g, source))
        """,
    # named_parameters() becomes filter(lambda item: item[1].requires_grad, parameters_and_names()):
    # still a loop over Parameters, whose requires_grad is theirs
    "requires_grad in a loop over named parameters": """
        import torch

        def add(mod, bucket):
            for name, param in mod.named_parameters():
                if param.requires_grad:
                    bucket.append(name)
            for name, param in list(mod.named_parameters()):
                if param.requires_grad:
                    bucket.append(name)
            return dict(mod.named_parameters(recurse=False))
        """,
    # to_empty(device=...) loses its device; the second run finds no device to drop
    "a module materialised with to_empty": """
        import torch

        def materialise(module, device):
            module.to_empty(device=device, recurse=False)
            module.reset_parameters()
        """,
    # a number formatted in a marked statement goes through int() on the first run too
    "a formatted number in a marked statement": """
        import torch.distributed.rpc as rpc

        def start(self):
            rpc.init_rpc(name=f"worker{self.rank:d}", rank=self.rank)
        """,
    # a marked statement inside a marked statement: the import placed above the outer one
    # is in force for the inner one
    "nested marked statements": """
        import torch.export.exported_program as ep

        def serialize(spec):
            if spec.kind == ep.InputKind.USER_INPUT:
                if isinstance(spec.arg, ep.ConstantArgument):
                    return spec.arg.value
            return None
        """,
    # arguments unpacked into torch.topk go through the adapter class the first run wrote;
    # its functions are no tensor methods
    "a call through a written adapter": """
        import torch

        def top(*args, **kwargs):
            return torch.topk(*args, **kwargs)
        """,
    # a marked statement with a converted part is formatted on the first run, as any changed one
    "a marked statement with a converted part": """
        import torch
        from torch.testing._internal.opinfo.core import S, SampleInput

        def sample(make_arg, gather_variable, device):
            yield SampleInput(
                make_arg((S, S)),
                0,
                gather_variable((S, S), 1, S, True, device=device).to(torch.int32))
        """,
}


@pytest.mark.parametrize("name", sorted(TWICE))
def test_converting_the_output_again_changes_nothing(name):
    once = convert_source(textwrap.dedent(TWICE[name]), f"{name}.py").output
    assert convert_source(once, f"{name}.py").output == once
