"""TorchScript, torch.compile and torch.fx: compilation and tracing markers
that change how torch runs a model, never what it computes. MindSpore runs the
converted code as Python (PyNative), so each has no effect: a decorator is
removed, ``torch.jit.script(fn)`` is ``fn``, and the "are we being compiled?"
checks answer False. Their typing helpers are Python's own."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, AttributeRule, Example


def _false(call, ctx) -> None:
    import libcst as cst

    call.result = cst.Name("False")


_X = {"x": "randn(3, 4)"}

_NO_OPS = (
    "torch.jit.ignore", "torch.jit.unused", "torch.jit.export", "torch.jit.script", "torch.jit.script_method",
    "torch.jit.script_if_tracing", "torch.jit.interface", "torch.jit.trace", "torch.jit.trace_module",
    "torch.jit.optimize_for_inference", "torch.jit.freeze", "torch.fx.wrap", "torch.compile",
    "torch.compiler.disable", "torch._dynamo.disable", "torch.compiler.allow_in_graph",
)
_CHECKS = ("torch.jit.is_scripting", "torch.jit.is_tracing", "torch.compiler.is_compiling",
           "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling", "torch.fx._symbolic_trace.is_fx_tracing")

RULES = [
    *(ApiRule(name, None, no_op=True, notes="no effect when MindSpore runs the code as Python") for name in _NO_OPS[1:]),
    ApiRule(
        _NO_OPS[0],
        None,
        no_op=True,
        notes="no effect when MindSpore runs the code as Python",
        examples=(
            Example("@torch.jit.ignore\ndef double(x):\n    return x * 2\nresult = double(x)",
                    "def double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("@torch.jit.unused\n@torch.jit.ignore(drop=True)\ndef double(x):\n    return x * 2\nresult = double(x)",
                    "def double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            # torch.jit.script needs the source file, which a snippet has not: trace runs the same path
            Example("# keep me\n@torch.jit.export\ndef double(x):\n    return x * 2\nresult = torch.jit.trace(double, x)(x)",
                    "# keep me\ndef double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("layer = torch.compile(nn.ReLU(), mode='max-autotune')\nresult = layer(x)",
                    "layer = nn.ReLU()\nresult = layer(x)", inputs=_X),
            Example("def double(x):\n    return x * 2\ntorch.fx.wrap('double')\nresult = double(x)",
                    "def double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("class Twice(nn.Module):\n    @torch.jit.unused\n    def extra(self, x):\n        return x\n\n"
                    "    def forward(self, x):\n        return x * 2\nresult = Twice()(x)",
                    "class Twice(nn.Cell):\n    def extra(self, x):\n        return x\n\n"
                    "    def construct(self, x):\n        return x * 2\nresult = Twice()(x)", inputs=_X),
        ),
    ),
    *(ApiRule(name, None, signature="", hook=_false, notes="False: the converted code runs as Python",
              examples=(Example(f"result = x * 2 if {name}() else x + 1", inputs=_X),))
      for name in _CHECKS[1:]),
    ApiRule(
        _CHECKS[0],
        None,
        signature="",
        hook=_false,
        notes="False: the converted code runs as Python",
        examples=(
            Example("result = x if torch.jit.is_scripting() else x * 2", "result = x if False else x * 2", inputs=_X),
            Example("if not torch.jit.is_tracing():\n    result = x + 1", "if not False:\n    result = x + 1", inputs=_X),
        ),
    ),
    ApiRule(
        "torch._assert",
        None,
        signature="condition, message",
        aliases=("torch._assert_async",),
        notes="as a statement it is Python's assert (transpiler/convert/structural/asserts.py); "
        "inside an expression it has no MindSpore form",
        examples=(
            Example("torch._assert(x.shape[0] == 3, 'three rows')\nresult = x * 2",
                    'assert x.shape[0] == 3, "three rows"\nresult = x * 2', inputs={"x": "randn(3, 2)"}),
            Example("ok = torch._assert(True, 'fine')", marked="torch._assert"),
        ),
    ),
    AttributeRule(
        "torch.jit.Final",
        "typing.Final",
        examples=(Example("class Attention(nn.Module):\n    fused: torch.jit.Final[bool]\n",
                          "class Attention(nn.Cell):\n    fused: typing.Final[bool]\n"),
                  # (snippets run with annotations kept as text: the object is read outside one)
                  Example("result = str(torch.jit.Final[float]) == 'typing.Final[float]'", inputs={})),
    ),
    # (torch.jit.annotations has no Callable: measured AttributeError on torch 2.13)
    *(AttributeRule(f"torch.jit.annotations.{name}", f"typing.{name}", examples=(
        Example(f"result = str(torch.jit.annotations.{name}{subscript}) == 'typing.{name}{subscript}'", inputs={}),))
      for name, subscript in (("List", "[int]"), ("Tuple", "[int, int]"), ("Dict", "[str, int]"),
                              ("Optional", "[int]"), ("Any", ""), ("Union", "[int, str]"))),
]
