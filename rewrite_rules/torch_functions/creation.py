"""Tensor creation: torch.tensor/zeros/ones/full/empty (and _like), arange,
linspace, logspace, eye, and the random factories (compared by value: the
harness replays torch's random draws to MindSpore's, ``transpiler.proof.replay``)."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.helpers import DEVICE, FACTORY_ARGS, GENERATOR
from rewrite_rules.api import (ApiRule, Arg, Example, MethodRule, Unconvertible, Unsupported, assigned_value, code_of,
                               holds_numpy, literal_value, render, define)
from rewrite_rules.tensor.inplace import bernoulli_of
from rewrite_rules.torch_functions.builders import IN, X, arg_text, case, compose, fn, ms
from rewrite_rules.torch_functions.integer_inputs import holds_python_complex, source_argument, writes_python_complex
from rewrite_rules.torch_functions.numpy_scalars import python_numbers

# torch also takes the size by keyword (torch.empty(size=(2, 3))): the keyword-only ``size`` below
_FACTORY = "*size, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False"
_LIKE = "input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None"
_RANDOM = "*size, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False"
_LIKE_ARGS = {**FACTORY_ARGS, "memory_format": FACTORY_ARGS["layout"]}
_RANDOM_ARGS = {**FACTORY_ARGS, "generator": GENERATOR}
_SEEDED_ARGS = dict(FACTORY_ARGS)  # generator= is drawn from by the hook (_seeded_draw)

SIZE = P("size", "2, 3", kind="positional")
DTYPE = P("dtype", "torch.float64", default=True, kind="keyword")
INT_DTYPE = P("dtype", "torch.int32", default=True, kind="keyword")


def _with_size_keyword(hook=None):
    """torch.zeros(size=(2, 3)): a size given by keyword is the one size argument (MindSpore's
    factories take it positionally: ops.ones names it shape, ops.randn takes *size)."""

    def with_size(call, ctx):
        if call.has("size"):
            if call.varargs:
                raise Unconvertible("size given both positionally and by keyword")
            call.varargs.append(cst.Arg(call.get("size")))
            call.remove("size")
        if hook is not None:
            hook(call, ctx)

    return with_size


def _sized(name, target=None, *, examples=(), **options):
    """zeros/ones/empty/rand/randn: torch *size (or one tuple) -> one shape tuple."""
    compare = options.get("compare", "values")
    return fn(f"torch.{name}", target, _FACTORY, args=FACTORY_ARGS, params=[SIZE, DTYPE], inputs={},
              pack_varargs=True, hook=_with_size_keyword(options.pop("hook", None)), **options,
              extra=(*examples, case(f"result = torch.{name}((4,))", compare=compare),
                     case(f"result = torch.{name}([2, 2])", compare=compare),
                     case(f"result = torch.{name}(size=(2, 3))", compare=compare),
                     case(f"result = torch.{name}(size=[3], dtype=torch.float64)", compare=compare)))


def _like(name, target=None, extra_params=(), inputs=X, **options):
    return fn(f"torch.{name}", target, _LIKE.replace("input,", "input, " + "".join(f"{p.name}, " for p in extra_params), 1)
              if extra_params else _LIKE, args=_LIKE_ARGS, params=[IN, *extra_params, DTYPE], inputs=inputs, **options)


def _randint(call, ctx):
    """torch.randint(high, size) has an implicit low=0."""
    if not call.has("size"):  # bound as (low, high): torch reads two positional arguments as (high, size)
        call.set("size", call.get("high"))
        call.set("high", call.get("low"))
        call.set("low", "0")
        call.why = "torch's randint(high, size): low=0 written (MindSpore's randint has no default low)"
    elif not call.has("high"):  # randint(high, size=...): its one positional argument is high
        call.set("high", call.get("low"))
        call.set("low", "0")
        call.why = "torch's randint(high, size=...): low=0 written (MindSpore's randint has no default low)"
    elif not call.has("low"):
        call.set("low", "0")
        call.why = "low=0 written (MindSpore's randint has no default low)"
    else:
        call.why = ""
    if _seeded_draw(call, ctx, "randint({low}, {high}, {size})", "int64"):
        call.why = "the generator's draw (numpy.random.RandomState, see torch.Generator)"


# MindSpore samples float32 and casts, so a float64 draw keeps float32 precision:
# compared at rtol 1e-7 (float32's half-ulp is 6e-8; measured max rel 5.9e-8)
_F32_DRAWS = 1e-7


def _random(name, target=None, *, examples=(), **options):
    return fn(f"torch.{name}", target, _RANDOM, args=_SEEDED_ARGS, params=[SIZE, DTYPE], inputs={},
              rtol=_F32_DRAWS, atol=0.0,
              notes="random values: compared by value (torch's draws replayed); a float64 draw has float32 "
                    "precision in MindSpore.",
              extra=(*examples, case(f"result = torch.{name}((4,))", rtol=0.0, atol=0.0),
                     case(f"result = torch.{name}(size=(2, 3))")),
              **{**options, "hook": _with_size_keyword(options.get("hook"))})


def _randint_like(call):
    if not call.has("high"):
        call.set("high", call.get("low"))
        call.set("low", "0")


_FLOAT_CONSTANTS = frozenset({"math.inf", "math.nan", "math.pi", "math.e", "math.tau",
                              "numpy.inf", "numpy.nan", "numpy.pi", "numpy.e"})
_BUILTIN_CASTS = {"float": "float32", "int": "int64", "bool": "bool_"}


def _fill_dtype(expr, ctx) -> str | None:
    """The dtype torch infers from a fill value the source shows: bool, int64, float32 or complex64."""
    if holds_python_complex(expr):
        return "complex64"
    try:
        value = literal_value(expr)
    except (ValueError, SyntaxError, TypeError):
        pass
    else:
        return "bool_" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float32"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _fill_dtype(expr.expression, ctx)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _BUILTIN_CASTS \
            and expr.func.value not in ctx.analysis.bound_names:
        return _BUILTIN_CASTS[expr.func.value]
    if isinstance(expr, cst.Attribute) and ctx.analysis.qualified(expr) in _FLOAT_CONSTANTS:
        return "float32"
    return None


def _is_none(node) -> bool:
    """``dtype=None`` written out: torch infers the dtype as if it were omitted."""
    return isinstance(node, cst.Name) and node.value == "None"


def _full_dtype(call, ctx):
    """torch infers bool/int64/float32 from the fill value; MindSpore's ops.full makes int64
    whatever the value (measured: ops.full((2,), 0.5) is [0, 0], float("-inf") the int64 minimum).
    A fill value the source does not show takes the dtype MindSpore infers for it as a Tensor
    (float32 for a Python float, int64 for an int, bool for a bool)."""
    if call.has("dtype") and not _is_none(call.get("dtype")):
        return
    source = source_argument(call, "fill_value", 1)
    name = _fill_dtype(source, ctx) if source is not None else None
    if name is not None:
        call.set("dtype", code_of(ctx.ref(f"mindspore.{name}")))
    else:
        call.set("dtype", f"{code_of(ctx.ref('mindspore.Tensor'))}({code_of(call.get('fill_value'))}).dtype")


def _rand_like(call, ctx):
    """ops.rand of the input's shape and dtype (ops.rand_like is deprecated in MindSpore 2.10)."""
    x = arg_text(call, "input")
    dtype = arg_text(call, "dtype") if call.has("dtype") else f"{x}.dtype"
    call.result = cst.parse_expression(f"{code_of(ctx.ref('mindspore.ops.rand'))}({x}.shape, dtype={dtype})")


def _input_dtype(call, ctx):
    """The result takes the input's dtype unless dtype= says otherwise."""
    if not call.has("dtype"):
        call.set("dtype", f"{arg_text(call, 'input')}.dtype")


# torch's legacy constructors: torch.Tensor(2, 3) is an uninitialised 2x3
# tensor, torch.Tensor([1, 2]) data cast to the class's dtype (float32 for
# torch.Tensor, where mindspore.Tensor([1, 2]) would be int64).
_LEGACY = {"Tensor": "float32", "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
           "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
           "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool_"}


def _legacy(dtype: str):
    def hook(call, ctx):
        values = [a.value for a in call.varargs]
        if any(a.star for a in call.varargs):
            raise Unconvertible("sizes or data unpacked with *: cannot tell which")
        ms_dtype = code_of(ctx.ref(f"mindspore.{dtype}"))
        shown = _shown_kind(call, ctx) if len(values) == 1 else None
        tensor = code_of(ctx.ref("mindspore.Tensor"))
        sizes_given = len(values) > 1 or (values and isinstance(values[0], cst.Integer)) or shown == "size"
        if not values or sizes_given \
                or not (shown or isinstance(values[0], (cst.List, cst.Tuple, cst.ListComp))):
            zeros = code_of(ctx.ref("mindspore.ops.zeros"))  # only when written: an unused import otherwise
        if not values:
            call.result = cst.parse_expression(f"{zeros}(0, dtype={ms_dtype})")
        elif sizes_given:
            sizes = ", ".join(code_of(v) for v in values)
            call.result = cst.parse_expression(f"{zeros}(({sizes},), dtype={ms_dtype})")
        elif isinstance(values[0], (cst.List, cst.Tuple, cst.ListComp)):
            call.result = cst.parse_expression(f"{tensor}({code_of(values[0])}, dtype={ms_dtype})")
        elif shown:  # a list, a numpy array or a range: data, as the file shows
            data = f"list({code_of(values[0])})" if shown == "range" else code_of(values[0])
            call.result = cst.parse_expression(f"{tensor}({data}, dtype={ms_dtype})")
        else:  # one value: a size or data, known when it runs
            v = code_of(values[0])
            call.result = cst.parse_expression(
                f"({zeros}({v}, dtype={ms_dtype}) if isinstance({v}, int) else {tensor}({v}, dtype={ms_dtype}))")

    return hook


def _shown_kind(call, ctx) -> str | None:
    """What the source shows the constructor's one value is. Data: "range" (MindSpore's
    Tensor refuses one), "list" (a list or tuple, ``batch = []``, also as a function of the
    file returns it) or "numpy" (a numpy/scipy object); "size": an integer literal; None
    when it shows neither."""
    source = call.source.args[0].value if call.source is not None and len(call.source.args) == 1 else None
    shown = assigned_value(ctx, source) if isinstance(source, cst.Name) else source
    if isinstance(shown, cst.Call) and isinstance(shown.func, cst.Name) and shown.func.value == "range":
        return "range"
    if isinstance(shown, (cst.List, cst.Tuple, cst.ListComp)):
        return "list"
    if isinstance(shown, cst.Integer):
        return "size"
    return "numpy" if holds_numpy(ctx, source) else None


def _bernoulli(call, ctx):
    call.result = bernoulli_of(call.get("input"), call.get("p") or call.get("input"), ctx)


_RANDPERM_NOTE = ("the order of n uniform draws: MindSpore's ops.randperm(n) has a fixed seed=0 and returns the same "
                  "permutation on every call (measured)")


def randperm_of(n: str, ctx, dtype: str | None = None) -> cst.BaseExpression:
    """A random permutation of range(n), new on every call."""
    ops = code_of(ctx.ref("mindspore.ops"))
    return cst.parse_expression(f"{ops}.argsort({ops}.rand({n})).astype({dtype or code_of(ctx.ref('mindspore.int64'))})")


def _randperm(call, ctx):
    if _seeded_draw(call, ctx, "permutation({n})", "int64"):
        return
    call.result = randperm_of(arg_text(call, "n"), ctx, arg_text(call, "dtype") if call.has("dtype") else None)


# A torch.Generator is a seeded source of draws that the rest of the program
# does not disturb. MindSpore 2.10 has mindspore.Generator, but the ops that
# take generator= (mint.rand/randn/randint/randperm/multinomial/bernoulli/normal)
# have no CPU kernel (measured: "kernel RandpermExt unregistered", "Create
# kernelmod for op InplaceUniform failed"), and ops.* take a seed, not a
# generator. So the generator becomes NumPy's numpy.random.RandomState (NumPy is
# MindSpore's own dependency): seeded the same way (manual_seed -> seed), its
# draws deterministic per seed, independent of mindspore.set_seed, on every
# device. The values differ from torch's (another generator); the rule's cases
# prove determinism, shape, dtype and range.
_GENERATOR_NOTE = ("a torch.Generator becomes numpy.random.RandomState (MindSpore's generator-taking ops have no CPU "
                   "kernels in 2.10): draws with generator= are deterministic per seed, with torch's shape, dtype and "
                   "range, but not torch's values")
_GENERATOR_DRAWS = ("rand", "randn", "randint", "randperm")
# run both frameworks: the converted draws are seeded, advance, and have torch's shapes, dtypes and ranges
_GENERATOR_PROOF = tuple(f"tests/rules/test_generators.py::{test}" for test in (
    "test_the_generator_and_its_draws_are_converted", "test_same_seed_same_sequence_and_draws_advance",
    "test_shapes_dtypes_and_ranges_are_torchs"))


def _size_of(call) -> str:
    """torch's *size (2, 3) or one size (2, 3) / [2, 3] / n, as one NumPy size."""
    if call.has("size"):
        return code_of(call.get("size"))
    values = [code_of(a.value) for a in call.varargs]
    return values[0] if len(values) == 1 else f"({', '.join(values)})"


def _seeded_draw(call, ctx, draw: str, dtype: str) -> bool:
    """With generator=g: ``mindspore.Tensor(g.<draw>, dtype)``; False without one."""
    if not call.has("generator"):
        return False
    # an argument left out (randint(high=n, ...): low) is torch's default
    fields = {name: code_of(call.get(name)) if call.has(name) else arg_text(call, name)
              for name in ("n", "low", "high") if "{" + name + "}" in draw}
    text = draw.format(size=_size_of(call) if "{size}" in draw else "", **fields)
    dtype_text = arg_text(call, "dtype") if call.has("dtype") else code_of(ctx.ref(f"mindspore.{dtype}"))
    call.result = cst.parse_expression(
        f"{code_of(ctx.ref('mindspore.Tensor'))}({arg_text(call, 'generator')}.{text}, {dtype_text})")
    return True


_COMPLEX_RANDN = '''
def {name}(*size, dtype):
    """torch.randn with a complex dtype (written by ms-migrate)."""
    # real and imaginary parts each N(0, 1/2), as torch draws them
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    real = MS.float64 if dtype == MS.complex128 else MS.float32
    parts = OPS.randn(*size, 2, dtype=real) * 0.5 ** 0.5
    return OPS.Complex()(parts[..., 0], parts[..., 1])
'''


def _complex_draw(hook):
    """randn with a complex dtype (torch.cfloat ...): MindSpore's randn refuses one; the function
    written above the code draws both parts and makes the complex tensor."""

    def with_complex(call, ctx):
        dtype = call.get("dtype")
        if dtype is not None and not call.has("generator") and code_of(dtype).endswith(("complex64", "complex128")):
            source = _COMPLEX_RANDN.replace("OPS", code_of(ctx.ref("mindspore.ops")))
            function = define(ctx, "complex_randn", source.replace("MS", code_of(ctx.ref("mindspore"))))
            call.result = cst.Call(function, [*call.varargs, cst.Arg(dtype, keyword=cst.Name("dtype"))])
            return
        hook(call, ctx)

    return with_complex


def _random_draw(draw: str):
    def hook(call, ctx):
        _seeded_draw(call, ctx, draw, "float32")

    return hook


def _generator(call, ctx):
    call.result = cst.Call(ctx.ref("numpy.random.RandomState"), [])


def _manual_seed(call, ctx):
    """g.manual_seed(s) -> g.seed(s); torch.Generator().manual_seed(s) (the generator
    as a value) -> numpy.random.RandomState(s)."""
    if len(call.args) != 1 or call.args[0].keyword not in (None, "seed") or call.args[0].star:
        raise Unconvertible("manual_seed takes one seed")
    seed = call.args[0].value
    receiver = call.receiver
    if isinstance(receiver, cst.Call) and not receiver.args \
            and code_of(receiver.func) == code_of(ctx.ref("numpy.random.RandomState")):
        return receiver.with_changes(args=[cst.Arg(seed)])
    return cst.Call(cst.Attribute(receiver, cst.Name("seed")), [cst.Arg(seed)])


def _complex64(call, ctx):
    """Python complex numbers make complex64 in torch (its default dtype's complex), complex128 in MindSpore."""
    if (call.has("dtype") and not _is_none(call.get("dtype"))) or not call.has("data"):
        return
    data = source_argument(call, "data")
    if isinstance(data, cst.Name):  # values = [1 + 2j, 3]; torch.tensor(values)
        shown = assigned_value(ctx, data)
        if shown is None and writes_python_complex(ctx):
            raise Unconvertible(f"{call.rule.torch} makes complex64 of Python complex numbers, MindSpore complex128, "
                                f"and this file writes complex numbers without showing what {data.value} holds: "
                                f"add dtype=mindspore.complex64 if it holds Python complex numbers")
        data = shown
    if data is not None and holds_python_complex(data):
        call.set("dtype", code_of(ctx.ref("mindspore.complex64")))


def _cast_result(call, ctx):
    """dtype= the function has not: the result cast (``.astype(dtype)``)."""
    dtype = call.get("dtype")
    if dtype is None or _is_none(dtype):
        call.remove("dtype")
        return
    call.remove("dtype")
    call.result = cst.Call(cst.Attribute(render(call, ctx.ref(call.target)), cst.Name("astype")), [cst.Arg(dtype)])


def _eye_dtype(call, ctx):
    """torch's default dtype is float32; MindSpore's eye needs one."""
    if not call.has("dtype"):
        call.set("dtype", code_of(ctx.ref("mindspore.float32")))


RULES = [
    _sized(
        "zeros",
        examples=(
            Example("z = torch.zeros(2, 3)", "z = ops.zeros((2, 3))"),
            Example("z = torch.zeros((2, 3), dtype=torch.long)", "z = ops.zeros((2, 3), dtype=mindspore.int64)"),
        ),
    ),
    _sized("ones", examples=(Example("o = torch.ones(4)", "o = ops.ones(4)"),)),
    _sized("empty", ms("zeros"), compare="shape",
           notes="created as zeros: MindSpore has no uninitialised tensors on CPU (values compared by shape only)."),
    _like("zeros_like"),
    _like("ones_like"),
    _like("empty_like", ms("zeros_like"), compare="shape", notes="created as zeros_like."),
    _like("full_like", extra_params=(P("fill_value", "2.5"),)),
    fn("torch.full", signature="size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
       args=FACTORY_ARGS, params=[P("size", "(2, 3)"), P("fill_value", "1.5"), DTYPE], inputs={}, hook=_full_dtype,
       notes="dtype is always written: MindSpore's ops.full makes int64 whatever the fill value (0.5 -> 0); "
             "torch's bool/int64/float32 where the source shows the value, else the fill value's own as a Tensor.",
       extra=(case("result = torch.full((2, 2), 7)"), case("result = torch.full((2,), True)"),
              # LLaMA's causal mask
              case("n = 3\nresult = torch.triu(torch.full((1, 1, n, n), float('-inf')), diagonal=1)"),
              case("import math\nresult = torch.full((2,), -math.inf)"),
              case("v = 0.5\nresult = torch.full((2, 3), v)"), case("v = -2\nresult = torch.full((2,), v)"),
              case("v = False\nresult = torch.full((2,), fill_value=v)"),
              # Python complex numbers: complex64 as in torch (MindSpore's Tensor(1 + 1j) is complex128)
              case("result = torch.full((2,), 1 - 2j)"), case("result = torch.full((2, 1), -1j)"),
              # dtype=None written out: inferred as when omitted (ops.full(..., dtype=None) is int64: 0.5 -> 0)
              case("result = torch.full((2,), 0.5, dtype=None)"), case("result = torch.full((2,), -1j, dtype=None)"),
              Example("m = torch.full((n, n), float('-inf'))", "m = ops.full((n, n), float(\"-inf\"), dtype=mindspore.float32)"),
              Example("m = torch.full(shape, v)", "m = ops.full(shape, v, dtype=mindspore.Tensor(v).dtype)"))),
    _random("rand", hook=_random_draw("random_sample({size})"),
            examples=(Example("r = torch.rand(2, 3)", "r = ops.rand(2, 3)"),
                      Example("r = torch.rand(2, 3, generator=g)",
                              "r = mindspore.Tensor(g.random_sample((2, 3)), mindspore.float32)"))),
    # a complex dtype: its draws cannot be replayed (tests/rules/test_research_gaps.py compares their statistics)
    _random("randn", hook=_complex_draw(_random_draw("standard_normal({size})")),
            examples=(Example("r = torch.randn(2, 3)", "r = ops.randn(2, 3)"),
                      Example("r = torch.randn((4,), generator=g, dtype=torch.float64)",
                              "r = mindspore.Tensor(g.standard_normal((4,)), mindspore.float64)"))),
    fn("torch.rand_like", "mindspore.ops.rand", signature=_LIKE + ", generator=None",
       args={**_LIKE_ARGS, "generator": GENERATOR}, params=[IN, DTYPE], inputs=X, rtol=_F32_DRAWS, atol=0.0,
       hook=_rand_like, notes="ops.rand(input.shape, dtype=input.dtype): ops.rand_like is deprecated in MindSpore 2.10.",
       extra=(Example("r = torch.rand_like(x)", "r = ops.rand(x.shape, dtype=x.dtype)"),
              case("result = torch.rand_like(x)", {"x": "randn(3, 4, dtype='float64')"}, rtol=_F32_DRAWS, atol=0.0))),
    fn("torch.randn_like", signature=_LIKE + ", generator=None", args={**_LIKE_ARGS, "generator": GENERATOR},
       params=[IN, DTYPE], inputs=X, rtol=_F32_DRAWS, atol=0.0, hook=_input_dtype,
       notes="dtype=input.dtype is written: MindSpore's randn_like gives float32 for float64 input.",
       extra=(case("result = torch.randn_like(x)", {"x": "randn(3, 4, dtype='float64')"}, rtol=_F32_DRAWS, atol=0.0),
              case("result = torch.randn_like(x)", {"x": "randn(3, 4, dtype='float16')"}, rtol=1e-3, atol=1e-3))),
    fn("torch.randint",
       signature="low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None, "
       "requires_grad=False", args=_SEEDED_ARGS, hook=_randint, positional=3,
       params=[P("low", "2"), P("high", "9"), P("size", "(3, 4)"), INT_DTYPE], inputs={},
       notes="MindSpore's randint has no default low: torch's randint(high, size) form gets low=0. ops.randint warns that it is deprecated "
             "in 2.10, but its replacement mint.randint has no CPU kernel (measured: 'Create kernelmod for op "
             "InplaceRandom failed'), so it stays. With generator=g: g.randint(low, high, size) "
             "(numpy.random.RandomState, see torch.Generator).",
       extra=(case("result = torch.randint(5, (3,))"), case("result = torch.randint(-3, 1000, (200,))"),
              case("result = torch.randint(high=5, size=(3,))"), case("result = torch.randint(5, size=(3,))"),
              Example("ix = torch.randint(n - k, size=(b,))", "ix = ops.randint(0, high=n - k, size=(b,))"))),
    fn("torch.randperm", "mindspore.ops.argsort", signature="n, *, generator=None, out=None, dtype=None, layout=None, "
       "device=None, requires_grad=False, pin_memory=False", args=_SEEDED_ARGS, params=[P("n", "6"), INT_DTYPE], inputs={},
       hook=_randperm, notes=_RANDPERM_NOTE,
       extra=(case("result = torch.randperm(50)"),
              # a fresh permutation on every call (MindSpore's ops.randperm repeats one)
              case("result = torch.randperm(8) - torch.randperm(8)"),
              Example("ix = torch.randperm(n, generator=self.rng)",
                      "ix = mindspore.Tensor(self.rng.permutation(n), mindspore.int64)"))),
    ApiRule("torch.Generator", "numpy.random.RandomState", signature="device='cpu'", hook=_generator,
            args={"device": DEVICE}, notes=_GENERATOR_NOTE,
            proven_by=_GENERATOR_PROOF,
            examples=(Example("g = torch.Generator()", "g = np.random.RandomState()"),
                      Example("g = torch.Generator(device='cpu')", "g = np.random.RandomState()"),
                      Example("g = torch.Generator().manual_seed(42)", "g = np.random.RandomState(42)"))),
    MethodRule("manual_seed", hook=_manual_seed, arity=(1, 1), receiver="any", owner="torch.Generator",
               notes=_GENERATOR_NOTE,
               proven_by=_GENERATOR_PROOF,
               examples=(Example("rng.manual_seed(1337)", "rng.seed(1337)"),)),
    fn("torch.multinomial", signature="input, num_samples, replacement=False, *, generator=None, out=None",
       args={"replacement": Arg(explicit=True), "generator": Unsupported(
           "torch.Generator draws convert for rand, randn, randint and randperm (numpy.random.RandomState); "
           "for multinomial draw with the generator's choice(n, k, replace, p) by hand")},
       params=[IN, P("num_samples", "2"), P("replacement", "True", default=True)],
       inputs={"x": "uniform(0.1, 1.0, (3, 4))"},
       extra=(case("result = torch.multinomial(x, 3)", {"x": "uniform(0.1, 1.0, (5, 6))"}),
              case("result = torch.multinomial(x, 8, True)", {"x": "uniform(0.0, 1.0, (6,))"})),
       hook=compose("{ops}.multinomial({input}, {num_samples}, {replacement}).astype({ms}.int64)"),
       notes="replacement is always written (MindSpore defaults to True, torch to False); "
       "indices cast to int64 (MindSpore returns int32)."),
    fn("torch.arange", signature="start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, "
       "requires_grad=False", args=FACTORY_ARGS, params=[P("start", "1"), P("end", "9"), P("step", "2", default=True), DTYPE],
       inputs={}, positional=3, hook=python_numbers("start", "end", "step"),
       notes="a numpy scalar argument the source shows (np.int64(n), np.prod(x.shape)) is written as a Python "
       "number: MindSpore's arange refuses numpy ints and float32.",
       extra=(Example("a = torch.arange(10)", "a = ops.arange(10)"), case("result = torch.arange(5)"),
              case("result = torch.arange(0, 1, 0.25)"), case("result = torch.arange(0.5, 3)"),
              Example("import numpy as np\na = torch.arange(np.int64(5))", "a = ops.arange(int(np.int64(5)))"),
              case("import numpy as np\nresult = torch.arange(np.prod(x.shape), dtype=torch.float32)", {"x": "randn(2, 3)"}),
              case("import numpy as np\nresult = torch.arange(1, np.int32(7), np.int64(2))"),
              case("import numpy as np\nresult = torch.arange(0, np.float32(1.5), 0.5)"))),
    fn("torch.linspace", signature="start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
       args=FACTORY_ARGS, hook=_cast_result,
       params=[P("start", "-1.0"), P("end", "2.0"), P("steps", "7")], inputs={},
       notes="dtype=: the result cast (MindSpore's linspace has no dtype=; it computes in float32).",
       extra=(case("x = torch.zeros(2, dtype=torch.float64)\nresult = torch.linspace(0, 1, 5, dtype=x.dtype)", rtol=1e-6),
              case("result = torch.linspace(-1.0, 2.0, steps=4, dtype=torch.float16)", rtol=1e-3),
              case("result = torch.linspace(0, 10, 5, dtype=torch.int64)"))),
    fn("torch.logspace", signature="start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, "
       "requires_grad=False", args=FACTORY_ARGS, params=[P("start", "-1.0"), P("end", "2.0"), P("steps", "4"),
       P("base", "2.0", default=True)], inputs={}, rtol=1e-5,
       hook=compose("{base} ** {ops}.linspace({start}, {end}, {steps})"),
       notes="as base ** linspace(...): MindSpore's logspace takes only an int base."),
    fn("torch.eye", signature="n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
       args=FACTORY_ARGS, hook=_eye_dtype, params=[P("n", "3"), P("m", "4", default=True), DTYPE], inputs={}),
    fn("torch.tensor", "mindspore.Tensor", "data, dtype=None, device=None, requires_grad=False, pin_memory=False",
       args={**FACTORY_ARGS, "data": "input_data"}, positional=1, params=[P("data", "[[1.0, 2.0], [3.0, 4.0]]"), DTYPE], inputs={},
       hook=_complex64, notes="Python complex numbers: dtype=mindspore.complex64, torch's default complex dtype",
       extra=(Example("t = torch.tensor([1.0, 2.0])", "t = mindspore.Tensor([1.0, 2.0])"),
              case("result = torch.tensor([1, 2, 3])"), case("result = torch.tensor(2.5)"),
              case("result = torch.tensor([True, False])"), case("result = torch.tensor(x.tolist())", X),
              case("result = torch.tensor([1 + 2j, -0.5j])"), case("result = torch.tensor([[1 + 2j, 0.5], [3, -1j]])"),
              case("result = torch.tensor(complex(1, -2))"), case("result = torch.tensor([k * 1j for k in range(3)])"),
              case("values = [1 + 2j, 3 - 1j]\nresult = torch.tensor(values)"),
              case("result = torch.tensor([1 + 2j, 3], dtype=None)"),
              case("result = torch.tensor([1 + 2j, 3j], dtype=torch.complex128)"),
              # data the file does not show, in a file that writes complex numbers
              Example("def make(v):\n    return torch.tensor(v)\nz = make([1j, 2])", marked="complex64"))),
    fn("torch.as_tensor", "mindspore.Tensor", "data, dtype=None, device=None", args={**FACTORY_ARGS, "data": "input_data"},
       positional=1, hook=_complex64,
       params=[P("data", "[[1.0, 2.0], [3.0, 4.0]]"), DTYPE], inputs={},
       extra=(case("result = torch.as_tensor([2j, 1.5])"),)),
    fn("torch.complex", signature="real, imag, *, out=None", hook=compose("{ops}.Complex()({real}, {imag})"),
       params=[P("real", "x"), P("imag", "y")], inputs={"x": "randn(2, 3)", "y": "randn(2, 3)"},
       notes="the Complex primitive (mindspore.ops has no complex function)",
       extra=(case("result = torch.complex(x.double(), y.double())", {"x": "randn(2, 3)", "y": "randn(2, 3)"}),)),
    fn("torch.from_numpy", "mindspore.Tensor", "ndarray", params=[P("ndarray", "x.numpy()", kind="positional")], inputs=X),
    *(ApiRule(f"torch.{name}", "mindspore.Tensor", signature="*args, device=None", args={"device": DEVICE},
              hook=_legacy(dtype), notes=f"sizes -> ops.zeros, data -> mindspore.Tensor, both as {dtype}",
              # torch.cuda.FloatTensor & co: the same tensor on the GPU; device placement is global in MindSpore
              aliases=(f"torch.cuda.{name}",) if name != "Tensor" else (),
              examples=(case(f"result = torch.{name}([[1, 2], [3, 4]])"), case(f"result = torch.{name}(2, 3).shape"),
                        case(f"result = torch.{name}((1, 0, 1))"), case(f"result = torch.{name}().shape"),
                        case(f"n = 3\nresult = torch.{name}(n).shape"), case(f"v = [1, 0]\nresult = torch.{name}(v)"),
                        case(f"result = torch.{name}(x.tolist())", {"x": "randint(0, 2, (2, 3))"}),
                        case(f"result = torch.{name}([3, 1], device='cpu')")))
      for name, dtype in _LEGACY.items()),
    fn("torch.bernoulli", "mindspore.ops.rand", "input, p=None, *, generator=None, out=None",
       args={"generator": GENERATOR}, hook=_bernoulli, params=[IN], inputs={"x": "tensor([[0.0, 1.0], [1.0, 0.0]])"},
       notes="BernoulliExt has no CPU kernel: (ops.rand(input.shape, dtype=input.dtype) < p), p the input itself "
             "unless given",
       # torch's draws are replayed: every one of the 200000 samples is compared, not their mean
       extra=(case("result = torch.bernoulli(x)", {"x": "full((400, 500), 0.3)"}),
              case("result = torch.bernoulli(x, 0.0)", {"x": "rand(3, 4)"}))),
]
