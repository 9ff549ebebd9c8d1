"""torch.fft -> the mindspore.ops functions of the same names and parameters
(spectral layers of research models: FNO, FNet, GFNet). They run on CPU and
give torch's values (float32 in, complex64 out; measured by the cases below,
each function called repeatedly on the same tensors).

``hfft`` and ``ihfft`` are marked: MindSpore 2.10's give torch's values on the
first call and wrong ones on every second call with the same input tensor
(hfft of one spectrum alternates between exact and 8.6 off; measured).
"""

from __future__ import annotations

from rewrite_rules.api import ApiRule, Example
from rewrite_rules.cases import P
from rewrite_rules.helpers import FACTORY_ARGS
from rewrite_rules.torch_functions.builders import IN, case, fn, ms

_X = {"x": "randn(3, 8)"}
_X3 = {"x": "randn(2, 4, 6)"}
_ONE = "input, n=None, dim=-1, norm=None, *, out=None"
_TWO = "input, s=None, dim=(-2, -1), norm=None, *, out=None"
_N = "input, s=None, dim=None, norm=None, *, out=None"
_SPECTRUM = "torch.fft.rfft(x)"  # a one-sided spectrum, for the inverse real transform
_FFT = dict(rtol=1e-4, atol=1e-4)


def _one(name: str, x: str = "x", n: str = "8"):
    return fn(f"torch.fft.{name}", ms(name), _ONE,
              params=[P("input", x), P("n", n, default=True), P("dim", "-1", default=True),
                      P("norm", "'ortho'", default=True)], inputs=_X, **_FFT)


def _two(name: str, x: str = "x", s: str = "(4, 6)", signature: str = _TWO, dim: str = "(-2, -1)", extra=()):
    return fn(f"torch.fft.{name}", ms(name), signature,
              params=[P("input", x), P("s", s, default=True), P("dim", dim, default=True),
                      P("norm", "'forward'", default=True)], inputs=_X3, extra=extra, **_FFT)


# GFNet's global filter layer: a learned complex filter applied in the frequency domain
_GLOBAL_FILTER = """\
B, H, W, C = x.shape
weight = torch.view_as_complex(w)
y = torch.fft.rfft2(x, dim=(1, 2), norm='ortho')
y = y * weight
result = torch.fft.irfft2(y, s=(H, W), dim=(1, 2), norm='ortho')
"""


RULES = [
    _one("fft"),
    _one("ifft"),
    _one("rfft"),
    _one("irfft", x=_SPECTRUM, n="8"),
    *(ApiRule(f"torch.fft.{name}", None, _ONE,
              notes="MindSpore 2.10's gives wrong values on every second call with the same input (measured)",
              examples=(Example(f"y = torch.fft.{name}(x)", marked="every second call"),)) for name in ("hfft", "ihfft")),
    _two("fft2"),
    _two("ifft2"),
    _two("rfft2"),
    _two("irfft2", x="torch.fft.rfft2(x)", s="(4, 6)",
         extra=(Example(_GLOBAL_FILTER, inputs={"x": "randn(2, 4, 6, 3)", "w": "randn(4, 4, 3, 2)"}, notes="global filter",
                        **_FFT),)),
    _two("fftn", signature=_N, dim="(1, 2)"),
    _two("ifftn", signature=_N, dim="(1, 2)"),
    _two("rfftn", signature=_N, dim="(1, 2)"),
    _two("irfftn", x="torch.fft.rfftn(x, dim=(1, 2))", signature=_N, dim="(1, 2)"),
    fn("torch.fft.fftshift", ms("fftshift"), "input, dim=None", params=[IN, P("dim", "1", default=True)], inputs=_X),
    fn("torch.fft.ifftshift", ms("ifftshift"), "input, dim=None", params=[IN, P("dim", "1", default=True)], inputs=_X),
    *(fn(f"torch.fft.{name}", ms(name),
         "n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False", args=FACTORY_ARGS,
         params=[P("n", "8"), P("d", "0.5", default=True)], inputs={},
         extra=(case(f"result = torch.fft.{name}(5, dtype=torch.float64)"),)) for name in ("fftfreq", "rfftfreq")),
]
