"""TorchScript, torch.compile and torch.fx: compilation and tracing markers
that change how torch runs a model, never what it computes.

``torch.compile`` becomes ``mindspore.jit``, MindSpore's compiler of a function
or a Cell's ``construct`` into a static graph: ``@torch.compile`` ->
``@mindspore.jit``, ``torch.compile(fn)`` -> ``mindspore.jit(fn)``. On a Cell,
``mindspore.jit(net)`` returns the compiled ``construct`` as a bound method (no
``trainable_params()``, no ``set_train()``: measured on 2.10), so a model stays
the Cell it was with its ``construct`` compiled (``net.construct =
mindspore.jit(net.construct)``, same outputs measured on CPU), through
``jit_compile`` written above the file when the argument is not known to be a
function. torch.compile's options:

- ``mode`` ("default", "reduce-overhead": CUDA graphs, "max-autotune": kernel
  search) tunes TorchInductor: dropped, MindSpore compiles at its ``jit_level``.
- ``fullgraph=True`` makes a graph break an error; MindSpore's ast capture
  compiles the whole function and runs what it cannot compile as Python (JIT
  Fallback), and its own ``fullgraph=True`` would reject that code: dropped.
- ``dynamic=True`` (shapes that vary between calls, compiled once) ->
  ``dynamic=1``; ``False`` and torch's default ``None`` (recompile for a new
  shape) are MindSpore's default ``dynamic=0``.
- ``backend`` ("inductor", "eager", "aot_eager", "cudagraphs") and ``options``
  (TorchInductor settings) name torch's compilers: dropped, MindSpore compiles
  with its own backend. ``disable=True`` compiles nothing: the argument stays
  as it is.

The rest (TorchScript, fx, ``torch.compiler.disable``) has no effect when MindSpore
runs the code: a decorator is removed, ``torch.jit.script(fn)`` is ``fn``, and
the "are we being compiled?" checks answer False. Their typing helpers are
Python's own."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, AttributeRule, Example, Unconvertible


_JIT_COMPILE = """
def {name}(obj, **options):
    \"\"\"torch.compile(obj): a Cell stays the Cell, its construct compiled by mindspore.jit; a function is compiled.\"\"\"
    if isinstance(obj, mindspore.nn.Cell):
        obj.construct = mindspore.jit(obj.construct, **options)
        return obj
    return mindspore.jit(obj, **options)
"""


def _compile(call, ctx) -> None:
    """torch.compile(model, *, fullgraph, dynamic, backend, mode, options, disable) -> mindspore.jit."""
    import libcst as cst

    from rewrite_rules.api import define, keyword_arg

    target = call.get("model")
    try:
        disabled = call.literal("disable")
    except ValueError:
        raise Unconvertible("torch.compile(disable=...) not written as a literal: whether to compile is "
                            "decided at run time; write mindspore.jit or leave it out by hand") from None
    if disabled:
        if target is None:  # @torch.compile(disable=True): a decorator that changes nothing
            call.result = cst.Lambda(cst.Parameters([cst.Param(cst.Name("fn"))]), cst.Name("fn"))
            return
        call.result = target
        return
    options = []
    if call.has("dynamic"):
        try:
            dynamic = call.literal("dynamic")
        except ValueError:
            dynamic = None
            options.append(keyword_arg("dynamic", cst.parse_expression(f"1 if {_code(call.get('dynamic'))} else 0")))
        if dynamic is True:
            options.append(keyword_arg("dynamic", cst.Integer("1")))
    jit = ctx.ref("mindspore.jit")
    if target is None:  # @torch.compile(mode=...) on a function or construct
        call.result = cst.Call(jit, options) if options else jit
    elif isinstance(target, cst.Lambda):
        # measured: mindspore.jit finds a lambda's source by its line and fails on one written
        # inside the call ("Parse Lambda Function Fail ... defined on a separate line")
        raise Unconvertible("mindspore.jit compiles a lambda only when it is assigned on its own line: "
                            "name it (f = lambda ...) and compile f with mindspore.jit(f)")
    else:  # a Cell (or a function the file does not show): the helper keeps a Cell a Cell
        ctx.ref("mindspore.nn")
        helper = define(ctx, "jit_compile", _JIT_COMPILE)
        call.result = cst.Call(helper, [cst.Arg(target), *options])


def _code(node) -> str:
    from rewrite_rules.api import code_of

    return code_of(node)


def _false(call, ctx) -> None:
    import libcst as cst

    call.result = cst.Name("False")


def _isinstance(call, ctx) -> None:
    """torch.jit.isinstance(obj, T) -> isinstance(obj, T) (monai's BasicUNet); a typing generic
    (List[int], Dict[str, Tensor]) checks the elements in TorchScript, which Python's isinstance refuses."""
    import libcst as cst

    target = call.get("target_type")
    if isinstance(target, cst.Subscript):
        raise Unconvertible(f"{_code(target)}: Python's isinstance cannot check a typing generic's elements")
    call.result = cst.Call(cst.Name("isinstance"), [cst.Arg(call.get("obj")), cst.Arg(target)])


def _annotate(call, ctx) -> None:
    """torch.jit.annotate(T, value) is value: the type is for the TorchScript compiler (timm's crossvit)."""
    call.result = call.get("the_value")


_X = {"x": "randn(3, 4)"}

_NO_OPS = (
    "torch.jit.ignore", "torch.jit.unused", "torch.jit.export", "torch.jit.script", "torch.jit.script_method",
    "torch.jit.script_if_tracing", "torch.jit.interface", "torch.jit.trace", "torch.jit.trace_module",
    "torch.jit.optimize_for_inference", "torch.jit.freeze", "torch.fx.wrap",
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
            Example("def double(x):\n    return x * 2\ntorch.fx.wrap('double')\nresult = double(x)",
                    "def double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("class Twice(nn.Module):\n    @torch.jit.unused\n    def extra(self, x):\n        return x\n\n"
                    "    def forward(self, x):\n        return x * 2\nresult = Twice()(x)",
                    "class Twice(nn.Cell):\n    def extra(self, x):\n        return x\n\n"
                    "    def construct(self, x):\n        return x * 2\nresult = Twice()(x)", inputs=_X),
        ),
    ),
    ApiRule(
        "torch.compile",
        "mindspore.jit",
        signature="model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None, options=None, "
        "disable=False",
        hook=_compile,
        notes="mindspore.jit: a function is compiled, a Cell keeps being a Cell with its construct compiled; "
        "mode, fullgraph, backend and options tune torch's compilers and are dropped, dynamic=True is dynamic=1 "
        "(see rewrite_rules/runtime/torchscript.py)",
        proven_by=("tests/rules/test_compile_jit.py::test_compiled_model_is_a_cell_with_torch_outputs",
                   "tests/rules/test_compile_jit.py::test_decorated_construct_and_function"),
        examples=(
            Example("@torch.compile\ndef double(x):\n    return x * 2\nresult = double(x)",
                    "@mindspore.jit\ndef double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("@torch.compile(mode='max-autotune', fullgraph=True)\ndef double(x):\n    return x * 2\n"
                    "result = double(x)",
                    "@mindspore.jit\ndef double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("@torch.compile(dynamic=True)\ndef double(x):\n    return x * 2\nresult = double(x)",
                    "@mindspore.jit(dynamic=1)\ndef double(x):\n    return x * 2\nresult = double(x)", inputs=_X),
            Example("layer = torch.compile(nn.ReLU(), mode='max-autotune')\nresult = layer(x)",
                    _JIT_COMPILE.format(name="jit_compile").replace('\\"', '"') + "\n\nlayer = jit_compile(nn.ReLU())\nresult = layer(x)",
                    inputs=_X),
            Example("layer = torch.compile(nn.ReLU(), disable=True)\nresult = layer(x)",
                    "layer = nn.ReLU()\nresult = layer(x)", inputs=_X),
            Example("double = torch.compile(lambda t: t * 2, backend='eager')\nresult = double(x)",
                    marked="assigned on its own line"),
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
        "torch.jit.isinstance",
        None,
        signature="obj, target_type",
        hook=_isinstance,
        notes="Python's isinstance (a typing generic such as List[int] is marked)",
        examples=(
            Example("result = x * 2 if torch.jit.isinstance(x, torch.Tensor) else x",
                    "result = x * 2 if isinstance(x, mindspore.Tensor) else x", inputs=_X),
            Example("y = None\nresult = x + 1 if y is not None and torch.jit.isinstance(y, torch.Tensor) else x",
                    inputs=_X),
            Example("ok = torch.jit.isinstance(x, List[int])", marked="typing generic"),
        ),
    ),
    ApiRule(
        "torch.jit.annotate",
        None,
        signature="the_type, the_value",
        hook=_annotate,
        notes="the value: the type is for the TorchScript compiler",
        examples=(
            Example("from typing import List\nparts = torch.jit.annotate(List[torch.Tensor], [])\nparts.append(x * 2)\n"
                    "result = parts[0]",
                    "parts = []\nparts.append(x * 2)\nresult = parts[0]", inputs=_X),
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
    # @torch.compile written bare: the decorator is mindspore.jit (calls go through the ApiRule above)
    AttributeRule("torch.compile", "mindspore.jit"),
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
