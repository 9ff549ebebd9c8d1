"""safetensors' torch API -> the same files through MindSpore and safetensors' NumPy API.

safetensors comes with MindSpore (one of its requirements), and a file is the same
whichever framework writes it: a converted program reads the files its torch original
wrote, and torch reads the converted program's.

- ``load_file(path)`` -> ``mindspore.load_checkpoint(path, format="safetensors")``: a dict
  of Parameters under the file's names.
- ``save_file(tensors, path, metadata)`` -> ``safetensors.numpy.save_file`` of the tensors
  as NumPy arrays. ``mindspore.save_checkpoint(..., format="safetensors")`` saves a Cell or
  a ``parameters_dict()`` but fails on a dict of plain tensors (MindSpore 2.10:
  UnboundLocalError, measured), and drops the metadata.
- ``safe_open(path, framework="pt")`` -> ``safe_open(path, framework="np")``: its
  ``get_tensor`` gives NumPy arrays (a warning says so where the call is).
"""

from __future__ import annotations

from rewrite_rules.api import ApiRule, Drop, Example, code_of, parse_expr
from rewrite_rules.training.serialization import NET_AND_PATH

# a state saved to a fresh file and read back into a second network; its outputs compared
_NET = NET_AND_PATH.replace('"model.pth"', '"model.safetensors"')


def _round_trip(save: str, load: str, **options) -> Example:
    return Example("from safetensors.torch import load_file, save_file\n" + _NET + save + "other = Net()\n" + load
                   + "result = other(x)\n", inputs={"x": "randn(4, 3)"}, **options)


def _load_file(call, ctx):
    call.set("format", parse_expr('"safetensors"'))


def _save_file(call, ctx):
    ctx.imports_needed.add(("safetensors.numpy", "safetensors.numpy"))
    tensors = code_of(call.get("tensors"))
    rest = ", ".join(code_of(call.get(name)) for name in ("filename",) if call.has(name))
    metadata = f", metadata={code_of(call.get('metadata'))}" if call.has("metadata") else ""
    call.result = parse_expr(
        f"safetensors.numpy.save_file({{name: value.asnumpy() for name, value in {tensors}.items()}}, {rest}{metadata})")


def _safe_open(call, ctx):
    ctx.imports_needed.add(("safetensors", "safetensors"))
    ctx.warn(call.source, "safetensors.safe_open", "opened with framework='np': get_tensor gives NumPy arrays "
                                                   "(mindspore.Tensor(array) where a tensor is needed)")
    keywords = f", device={code_of(call.get('device'))}" if call.has("device") else ""
    call.result = parse_expr(f'safetensors.safe_open({code_of(call.get("filename"))}, framework="np"{keywords})')


RULES = [
    ApiRule(
        "safetensors.torch.load_file",
        "mindspore.load_checkpoint",
        signature="filename, device='cpu'",
        args={"filename": "ckpt_file_name", "device": Drop("device placement")},
        positional=1,
        hook=_load_file,
        notes="the file's names as they are: a file torch wrote holds torch's parameter names "
              "(`ms-migrate weights` converts such a file for a converted model)",
        examples=(
            Example('from safetensors.torch import load_file\nsd = load_file("model.safetensors")',
                    'sd = mindspore.load_checkpoint("model.safetensors", format="safetensors")'),
            _round_trip("save_file(net.state_dict(), path)\n", "other.load_state_dict(load_file(path, device='cpu'))\n"),
        ),
    ),
    ApiRule(
        "safetensors.torch.save_file",
        "safetensors.numpy.save_file",
        signature="tensors, filename, metadata=None",
        positional=3,
        hook=_save_file,
        notes="the tensors as NumPy arrays, the metadata kept: the same file torch writes",
        examples=(
            Example('from safetensors.torch import save_file\nsave_file(weights, "lora.safetensors", {"rank": "4"})',
                    'safetensors.numpy.save_file(\n    {name: value.asnumpy() for name, value in weights.items()},\n'
                    '    "lora.safetensors",\n    metadata={"rank": "4"},\n)'),
            _round_trip("save_file({'fc.weight': net.fc.weight, 'fc.bias': net.fc.bias}, path)\n",
                        "other.load_state_dict(load_file(path))\n", notes="a dict of tensors"),
        ),
    ),
    ApiRule(
        "safetensors.torch.safe_open",
        "safetensors.safe_open",
        signature="filename, framework='pt', device='cpu'",
        positional=3,
        hook=_safe_open,
        notes="framework='np': get_tensor gives NumPy arrays",
        examples=(
            Example('from safetensors.torch import safe_open\nf = safe_open(path, framework="pt", device="cpu")',
                    'f = safetensors.safe_open(path, framework="np", device="cpu")'),
            Example("import os\nimport tempfile\nfrom safetensors.torch import safe_open, save_file\n"
                    'path = os.path.join(tempfile.mkdtemp(), "w.safetensors")\nsave_file({"w": x}, path)\n'
                    'with safe_open(path, framework="pt") as f:\n    result = torch.as_tensor(f.get_tensor("w"))\n',
                    inputs={"x": "randn(2, 3)"}, notes="read back"),
        ),
    ),
]
