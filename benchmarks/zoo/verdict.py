"""Whether a converted model's output matches torch's.

It matches when every element is within atol 1e-4, rtol 1e-3 of torch's
float32 output. Some models, built with random weights and no trained
statistics, let activations grow to 1e2..1e12; then float32 rounding alone
moves the outputs by more than that tolerance, and torch's own float32 output
misses its float64 output by as much as ours does. For those the torch side
also saves the float64 output, and the converted model matches when it is
float32 rounding by the rule ``verify --grad`` applies to gradients
(transpiler/proof/verify_float64.py): torch's own float32 output is within 1%
(root mean square) of its float64 output, and the converted one is no further
from it than NOISE_FACTOR times torch's own float32 error, both in its largest
and in its root-mean-square error.
"""

from __future__ import annotations

import numpy as np

from transpiler.proof.verify_float64 import SAME_ORDER, float32_rounding_only

ATOL, RTOL = 1e-4, 1e-3
# Another float32 implementation rounds differently but about as much (ours
# measured 1.07x and 1.08x of torch's on visformer_tiny and inception_v3);
# conversion errors measured on those models (one BatchNorm eps x10, GELU with
# tanh, avg_pool2d not counting its padding) gave 30x to 20,000x.
NOISE_FACTOR = SAME_ORDER


def output_verdict(output: np.ndarray, expected: np.ndarray, expected_float64: np.ndarray | None = None) -> dict:
    """``{"verdict": "match" | "mismatch", "max_error": ..., "error" or "note": ...}``;
    ``max_error`` is always against torch's float32 output."""
    if output.shape != expected.shape:
        return {"verdict": "mismatch", "error": f"output shape {output.shape} != torch {expected.shape}"}
    error = float(np.max(np.abs(output - expected)))
    if np.allclose(output, expected, atol=ATOL, rtol=RTOL):
        return {"verdict": "match", "max_error": error, "error": ""}
    result = {"verdict": "mismatch", "max_error": error, "error": f"max abs error {error:.3g} (atol {ATOL}, rtol {RTOL})"}
    if expected_float64 is None or expected_float64.shape != expected.shape:
        return result
    rounding, figures = float32_rounding_only(expected, output, expected_float64, RTOL, ATOL, what="output")
    versus = f"from torch's float64 output: torch float32 {figures}"
    if rounding:
        return {"verdict": "match", "max_error": error, "error": "", "note": f"float32-limited; {versus}"}
    return {**result, "error": f"{result['error']}; {versus}"}
