"""Results that once differed from torch with no marker, in the shapes that exposed them.

Each case runs the torch snippet and its conversion on the same inputs and compares
values, shapes and dtypes (the harness of tests/rules/test_execution.py). The rules'
own examples prove each API; these keep the reported shapes: a complex tensor made
from Python numbers and the APIs that read it, float16 through sigmoid/sign/sgn,
MultiheadAttention's call forms, log_softmax's implicit dim, SyncBatchNorm on one
device, and GradScaler's scaled values.
"""

from __future__ import annotations

import pytest

from rewrite_rules.api import Example
from transpiler.proof.harness import Case, WorkerPool, report, run_case


@pytest.fixture(scope="module")
def worker_pool():
    pool = WorkerPool()
    yield pool
    pool.close()


def _case(case_id: str, torch: str, inputs: dict | None = None, **options) -> Case:
    return Case(f"silent-{case_id}", case_id, Example(torch, inputs=dict(inputs or {}), **options))


# -- complex tensors from Python numbers: complex64 as in torch ------------------------------

_COMPLEX = "x = torch.tensor([[1 + 2j, 3 - 1j], [-0.5j, 2.0]])\n"
_COMPLEX_READS = {
    "conj": "x.conj()", "conj_fn": "torch.conj(x)", "conj_physical": "x.conj_physical()",
    "conj_physical_fn": "torch.conj_physical(x)", "angle": "x.angle()", "angle_fn": "torch.angle(x)",
    "real": "x.real", "real_fn": "torch.real(x)", "imag": "x.imag", "imag_fn": "torch.imag(x)",
    "H": "x.H", "mH": "x.mH", "mT": "x.mT", "adjoint": "x.adjoint()", "adjoint_fn": "torch.adjoint(x)",
    "resolve_conj": "x.resolve_conj()", "resolve_conj_fn": "torch.resolve_conj(x)",
    "resolve_neg": "x.resolve_neg()", "resolve_neg_fn": "torch.resolve_neg(x)",
    "conj_resolved": "x.conj().resolve_conj()", "sgn": "x.sgn()", "sgn_fn": "torch.sgn(x)",
}
COMPLEX_CASES = [
    _case("complex-tensor", "result = torch.tensor([1 + 2j, 3 - 1j])"),
    _case("complex-mixed", "result = torch.tensor([1 + 2j, 0.5, 3])"),
    _case("complex-scalar", "result = torch.tensor(2 - 1j)"),
    _case("complex-from-parts", "result = torch.complex(a, b)", {"a": "randn(2, 3)", "b": "randn(2, 3)"}),
    _case("complex-from-parts-reads", "c = torch.complex(a, b)\nresult = (c.real, c.imag, c.angle(), c.conj())",
          {"a": "randn(2, 3)", "b": "randn(2, 3)"}),
    *(_case(f"complex-{name}", f"{_COMPLEX}result = {read}") for name, read in _COMPLEX_READS.items()),
]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=[c.case_id for c in COMPLEX_CASES])
def test_complex_from_python_numbers(worker_pool, case):
    _check(worker_pool, case)


def _check(worker_pool, case):
    prepared, problems = run_case(worker_pool, case)
    if problems:
        pytest.fail(report(prepared, problems), pytrace=False)


# -- float16 stays float16 ----------------------------------------------------------------------

_HALF = {"x": "tensor([0.5, -1.2, 0.0, 3.0, -7.5, 11.0, -0.0], dtype='float16')"}
_HALF_CALLS = {
    "sigmoid": "x.sigmoid()", "sigmoid_fn": "torch.sigmoid(x)", "sigmoid_F": "F.sigmoid(x)", "Sigmoid": "nn.Sigmoid()(x)",
"sign": "x.sign()", "sign_fn": "torch.sign(x)", "sgn": "x.sgn()",
    "sgn_fn": "torch.sgn(x)", "sigmoid_half": "x.float().sigmoid().half()", "sign_made_half": "torch.sign(x.float().half())",
    "logsigmoid": "F.logsigmoid(x)", "hardsigmoid": "F.hardsigmoid(x)", "silu": "F.silu(x)", "tanh": "torch.tanh(x)",
}
_HALF_MADE = {
    "tensor": "torch.tensor([0.5, -1.2, 0.0, 3.0], dtype=torch.float16)", "half": "torch.tensor([0.5, -1.2, 0.0, 3.0]).half()",
    "to": "torch.tensor([[0.5, -1.2], [0.0, 3.0]]).to(torch.float16)", "randn": "torch.randn(2, 3, dtype=torch.half)",
    "HalfTensor": "torch.HalfTensor([0.5, -1.2, 0.0])",
}
HALF_CASES = [
    *(_case(f"half-{name}", f"result = {call}", _HALF, rtol=1e-3, atol=1e-3) for name, call in _HALF_CALLS.items()),
    *(_case(f"half-{made}-{op}", f"h = {value}\nresult = ({call})", rtol=1e-3, atol=1e-3)
      for made, value in _HALF_MADE.items()
      for op, call in (("sigmoid", "torch.sigmoid(h)"), ("sign", "h.sign()"), ("sgn", "torch.sgn(h), h.sgn()"))),
]


@pytest.mark.parametrize("case", HALF_CASES, ids=[c.case_id for c in HALF_CASES])
def test_float16_keeps_its_dtype(worker_pool, case):
    _check(worker_pool, case)


# -- log_softmax: float32 precision (MindSpore's kernel computes float64 inputs in float32 too) --

_ROWS = "x = torch.tensor([[0.5, -1.5, 2.0, 0.1], [3.0, 0.25, -0.75, 30.0]])\n"
_LOG_SOFTMAX_CALLS = {
    "dim": "F.log_softmax(x, dim=1)", "implicit2d": "F.log_softmax(x)", "implicit1d": "F.log_softmax(x[0])",
    "implicit3d": "F.log_softmax(x.reshape(2, 2, 2))", "stacklevel": "F.log_softmax(x, 1, 5)",
    "dtype": "F.log_softmax(x, -1, dtype=torch.float64)", "double": "F.log_softmax(x.double(), 0)",
    "fn": "torch.log_softmax(x, 1)", "method": "x.log_softmax(-1)", "method_dtype": "x.log_softmax(1, torch.float64)",
    "layer": "nn.LogSoftmax(dim=1)(x)", "layer_implicit": "nn.LogSoftmax()(x)", "layer_double": "nn.LogSoftmax(1)(x.double())",
}
# float32 rounding: MindSpore's kernel is within 3.4e-6 of torch's float64 at scale 1, 7.8e-6 at scale 10
# (measured); float64 inputs (double, dtype=) agree with torch to float32 precision only (~3e-6 abs)
LOG_SOFTMAX_CASES = [_case(f"log_softmax-{name}", f"{_ROWS}result = {call}", rtol=1e-5, atol=1e-5)
                     for name, call in _LOG_SOFTMAX_CALLS.items()]


@pytest.mark.parametrize("case", LOG_SOFTMAX_CASES, ids=[c.case_id for c in LOG_SOFTMAX_CASES])
def test_log_softmax_is_computed_as_torch_does(worker_pool, case):
    _check(worker_pool, case)


# -- SyncBatchNorm on one process: BatchNorm, starting in training mode like a torch Module -------------

SYNC_BATCH_NORM_CASES = [
    _case("sync_batch_norm-train", "layer = nn.SyncBatchNorm(3)\nresult = (layer(x), layer.running_mean, layer.running_var)",
          {"x": "randn(4, 3, 2, 2)"}, atol=1e-5),
    _case("sync_batch_norm-2d", "bn = nn.SyncBatchNorm(3, eps=1e-3, momentum=0.05)\nresult = (bn(x), bn(x * 2), bn.running_var)",
          {"x": "randn(6, 3)"}, atol=1e-5),
    _case("sync_batch_norm-eval", "bn = nn.SyncBatchNorm(3, affine=False)\ny = bn(x)\nbn.eval()\nresult = bn(x)",
          {"x": "randn(4, 3, 2, 2)"}, atol=1e-5),
]


@pytest.mark.parametrize("case", SYNC_BATCH_NORM_CASES, ids=[c.case_id for c in SYNC_BATCH_NORM_CASES])
def test_sync_batch_norm_on_one_process(worker_pool, case):
    _check(worker_pool, case)


# -- GradScaler: scale(loss) and get_scale() as torch gives them on this machine ---------------------
# (torch 2.13 without CUDA: a "cpu" scaler multiplies by init_scale; a CUDA one disables itself and scales by 1)

_LOSS = "loss = torch.tensor(2.5)\n"
_SCALERS = {
    "cpu": 'torch.amp.GradScaler("cpu")', "cpu_init": 'torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)',
    "cpu_keyword": 'torch.amp.GradScaler(device="cpu", init_scale=1024.0, growth_interval=10)',
    "default": "torch.amp.GradScaler()", "cuda": 'torch.amp.GradScaler("cuda")', "cuda_amp": "torch.cuda.amp.GradScaler()",
    "cuda_amp_init": "torch.cuda.amp.GradScaler(init_scale=256.0)", "cpu_disabled": 'torch.amp.GradScaler("cpu", enabled=False)',
}
GRAD_SCALER_CASES = [
    *(_case(f"grad_scaler-{name}", f"{_LOSS}scaler = {make}\nresult = (scaler.scale(loss), scaler.get_scale(), "
                                   "scaler.is_enabled())") for name, make in _SCALERS.items()),
]


@pytest.mark.parametrize("case", GRAD_SCALER_CASES, ids=[c.case_id for c in GRAD_SCALER_CASES])
def test_grad_scaler_scales_as_torch_does(worker_pool, case):
    _check(worker_pool, case)


# -- MultiheadAttention and the Transformer layers: torch's call forms and masks -------------------

_ATTENTION_INPUTS = {"q": "randn(2, 5, 8)", "k": "randn(2, 4, 8)", "am": "randn(5, 4)",
                     "kpm": "tensor([[False, True, False, False], [False, False, False, True]])",
                     "pad": "tensor([[False, False, False, True, True], [False, False, False, False, True]])"}
_CAUSAL = "causal = nn.Transformer.generate_square_subsequent_mask(5)\n"
ATTENTION_CASES = [
    # the call form of the report: value, attn_mask and key_padding_mask by keyword, [0] read
    _case("mha-keywords", "mha = nn.MultiheadAttention(8, 2, batch_first=True)\n"
          "result = mha(q, k, value=k, attn_mask=am, key_padding_mask=kpm)[0]", _ATTENTION_INPUTS, rtol=1e-4, atol=1e-5),
    _case("mha-need_weights", "mha = nn.MultiheadAttention(8, 2, batch_first=True)\n"
          "out, weights = mha(q, k, k, need_weights=False)\nresult = (out, weights)", _ATTENTION_INPUTS,
          rtol=1e-4, atol=1e-5),
    _case("mha-weights", "mha = nn.MultiheadAttention(8, 2, kdim=8, vdim=8, dropout=0.0)\n"
          "result = mha(q.transpose(0, 1), k.transpose(0, 1), k.transpose(0, 1), key_padding_mask=kpm, "
          "attn_mask=torch.triu(torch.ones(5, 4, dtype=torch.bool), 1), average_attn_weights=False)", _ATTENTION_INPUTS, rtol=1e-4, atol=1e-5),
    _case("encoder-mixed-masks", "layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)\n"
          "encoder = nn.TransformerEncoder(layer, 2)\n" + _CAUSAL +
          "result = encoder(q, mask=causal, src_key_padding_mask=pad)", _ATTENTION_INPUTS, rtol=1e-4, atol=1e-5),
    _case("transformer-mixed-masks", "model = nn.Transformer(8, 2, 1, 1, 16, 0.0, batch_first=True)\n" + _CAUSAL +
          "result = model(q, q, tgt_mask=causal, src_key_padding_mask=pad, memory_key_padding_mask=pad)",
          _ATTENTION_INPUTS, rtol=1e-4, atol=1e-5),
]


@pytest.mark.parametrize("case", ATTENTION_CASES, ids=[c.case_id for c in ATTENTION_CASES])
def test_attention_call_forms_and_masks(worker_pool, case):
    _check(worker_pool, case)
