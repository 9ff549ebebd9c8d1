"""The gradient checks of the zoo benchmark (``zoo.py --grad``): one
architecture per timm model file, checked as a user checks a converted file:
``ms-migrate verify timm/models/FILE.py CONVERTED/timm/models/FILE.py --model
FACTORY --kwargs ... --input ... --grad`` builds the torch model and the Cell
through the file's own factory function (``resnet10t(**kwargs)``), converts
the weights, and compares the outputs and the gradient of every parameter in
eval mode. Each check runs in a child process (verify_timm.py) whose output
is kept in the work directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 600
RTOL, ATOL = 1e-3, 1e-4  # as the forward comparison

# (timm model file, factory function, constructor keyword arguments, input).
# Small inputs keep each check well under a minute on 2 cores; kwargs that
# resize a model to its input are its own constructor arguments. Zero-initialised
# residual branches (zero_init_last, layer scale 0) are turned off where the
# defaults would give their parameters a gradient of zero, which proves nothing.
GRAD_CHECKS: tuple[tuple[str, str, dict, str], ...] = (
    ("resnet", "resnet10t", {"zero_init_last": False}, "2,3,64,64"),
    ("byobnet", "gernet_s", {"zero_init_last": False}, "2,3,64,64"),
    ("mobilevit", "mobilevit_xxs", {"zero_init_last": False}, "2,3,128,128"),
    ("densenet", "densenet121", {}, "2,3,64,64"),
    ("efficientnet", "efficientnet_b0", {}, "2,3,64,64"),
    ("mobilenetv3", "mobilenetv3_small_050", {}, "2,3,64,64"),
    ("regnet", "regnetx_002", {"zero_init_last": False}, "2,3,64,64"),
    ("convnext", "convnext_atto", {}, "2,3,64,64"),
    ("vision_transformer", "vit_tiny_patch16_224", {"img_size": 64}, "2,3,64,64"),
    ("deit", "deit_tiny_distilled_patch16_224", {"img_size": 64}, "2,3,64,64"),
    ("swin_transformer", "swin_tiny_patch4_window7_224", {"img_size": 128, "window_size": 4}, "2,3,128,128"),
    ("mlp_mixer", "mixer_s32_224", {"img_size": 64, "num_classes": 0}, "2,3,64,64"),
    ("ghostnet", "ghostnet_050", {}, "2,3,64,64"),
    ("dla", "dla46_c", {}, "2,3,64,64"),
    ("dpn", "dpn48b", {}, "2,3,64,64"),
    ("inception_v3", "inception_v3", {}, "2,3,96,96"),
    ("vgg", "vgg11", {"mlp_ratio": 0.125, "num_classes": 10}, "2,3,64,64"),
    ("hrnet", "hrnet_w18_small", {}, "2,3,64,64"),
    ("levit", "levit_128s", {"img_size": 64}, "2,3,64,64"),
    ("metaformer", "poolformer_s12", {}, "2,3,64,64"),
    ("pvt_v2", "pvt_v2_b0", {}, "2,3,64,64"),
    ("edgenext", "edgenext_xx_small", {}, "2,3,64,64"),
    ("cspnet", "cspresnet50", {"zero_init_last": False}, "2,3,64,64"),
    ("rexnet", "rexnet_100", {}, "2,3,64,64"),
    ("selecsls", "selecsls42b", {}, "2,3,64,64"),
    ("cait", "cait_xxs24_224", {"img_size": 64}, "2,3,64,64"),
    ("convit", "convit_tiny", {"img_size": 64}, "2,3,64,64"),
    ("crossvit", "crossvit_tiny_240", {}, "2,3,240,240"),
    ("xcit", "xcit_nano_12_p16_224", {"img_size": 64}, "2,3,64,64"),
    ("visformer", "visformer_tiny", {}, "2,3,224,224"),
    ("efficientformer", "efficientformer_l1", {}, "2,3,224,224"),
    ("fastvit", "fastvit_t8", {}, "2,3,64,64"),
    ("repvit", "repvit_m1", {}, "2,3,64,64"),
    ("vovnet", "ese_vovnet19b_slim", {}, "2,3,64,64"),
    ("nfnet", "nf_resnet26", {}, "2,3,64,64"),
    ("inception_next", "inception_next_tiny", {}, "2,3,64,64"),
    ("hgnet", "hgnetv2_b0", {}, "2,3,64,64"),
    ("starnet", "starnet_s1", {}, "2,3,64,64"),
    ("tiny_vit", "tiny_vit_5m_224", {}, "2,3,64,64"),
    ("efficientvit_mit", "efficientvit_b0", {}, "2,3,64,64"),
    ("gcvit", "gcvit_xxtiny", {}, "2,3,224,224"),
    ("mambaout", "mambaout_femto", {}, "2,3,64,64"),
)


def verify_arguments(check: tuple[str, str, dict, str], timm_dir: str, converted: str) -> list[str]:
    """The ``ms-migrate verify`` arguments of one check."""
    file, factory, kwargs, spec = check
    relative = os.path.join("timm", "models", f"{file}.py")
    return [os.path.join(timm_dir, relative), os.path.join(converted, relative), "--model", factory,
            "--kwargs", json.dumps(kwargs), "--input", spec, "--grad", "--rtol", str(RTOL), "--atol", str(ATOL)]


def run_check(check, timm_dir: str, torchvision_dir: str, converted: str, logs: str) -> dict:
    file, factory, _, _ = check
    arguments = verify_arguments(check, timm_dir, converted)
    row = {"file": file, "model": factory, "command": "ms-migrate verify " + " ".join(map(_quoted, arguments))}
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, "verify_timm.py"), torchvision_dir, *arguments],
                              capture_output=True, text=True, timeout=TIMEOUT)
        output = done.stdout + done.stderr
        row.update(summarise(done.stdout.splitlines(), done.returncode, done.stderr))
    except subprocess.TimeoutExpired:
        output = ""
        row.update({"verdict": "timeout", "error": f"timed out after {TIMEOUT} s"})
    with open(os.path.join(logs, f"{factory}.txt"), "w") as handle:
        handle.write(row["command"] + "\n\n" + output)
    return {**row, "seconds": round(time.perf_counter() - start, 1)}


def summarise(lines: list[str], status: int, stderr: str = "") -> dict:
    """verdict, the largest gradient and output differences, the number of
    gradients compared (and how many are zero in torch) and the first error
    line, read from verify's report."""
    verdict = lines[-1] if lines else f"ERROR (exit {status}): " + " ".join(stderr.strip().splitlines()[-1:])
    grads = [_cells(line) for line in lines if line.startswith("grad ")]
    outputs = [_cells(line) for line in lines if line.startswith("out")]
    row = {"verdict": verdict.split(";")[0].split(":")[0] if lines else "ERROR",
           "grads": len(grads), "max_grad_error": _largest(grads), "max_output_error": _largest(outputs)}
    zero = next((line for line in lines if "gradient of zero in torch" in line), "")
    row["zero_grads"] = int(zero.split()[0]) if zero else 0
    rounding = next((line for line in lines if line.endswith("float32 rounding") and line[0].isdigit()), "")
    row["float32_rounding"] = int(rounding.split()[0]) if rounding else 0
    row["error"] = "" if status == 0 else _first_error(lines) or verdict
    return row


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def _largest(rows: list[list[str]]) -> float | None:
    values = [float(cells[3]) for cells in rows if len(cells) > 3 and _number(cells[3])]
    return max(values) if values else None


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first_error(lines: list[str]) -> str:
    for line in lines:
        if line.startswith("error:"):
            return line
    for line in lines:
        if "MISMATCH" in line or "NOT COMPARED" in line:
            cells = _cells(line)
            return f"{cells[0]}: {cells[-1]}"
    for line in lines:
        if line.startswith(("first diverging Cell", "random draws do not correspond", "  ")):
            return line.strip()
    return ""


def _quoted(text: str) -> str:
    return f"'{text}'" if any(c in text for c in " {}\"") else text


def print_table(rows: list[dict]) -> None:
    width = max(len(r["model"]) for r in rows)
    print(f"\n{'file':18}  {'model':{width}}  {'verdict':8}  {'grads':>5}  {'zero':>4}  {'f64':>4}  {'max grad err':>12}  "
          f"{'max out err':>11}  {'s':>4}  first error")
    for r in rows:
        grad = "" if r.get("max_grad_error") is None else f"{r['max_grad_error']:.2e}"
        out = "" if r.get("max_output_error") is None else f"{r['max_output_error']:.2e}"
        print(f"{r['file']:18}  {r['model']:{width}}  {r['verdict']:8}  {r.get('grads', 0):>5}  "
              f"{r.get('zero_grads', 0):>4}  {r.get('float32_rounding', 0):>4}  {grad:>12}  {out:>11}  {r['seconds']:>4.0f}  {r.get('error', '')[:200]}")
    matched = sum(r["verdict"] == "MATCH" for r in rows)
    print(f"\n{matched} of {len(rows)} model files: outputs and every parameter gradient match torch "
          f"(rtol {RTOL}, atol {ATOL}); logs: one file per model in the work directory's grad-logs")
