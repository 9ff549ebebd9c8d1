"""torch.save / torch.load of model and optimizer state -> MindSpore checkpoints.

A dict of several states and plain values (the resumable-training idiom) is
handled by the checkpoint pass (``save_state_dicts`` of the rule API): the
states go into the MindSpore checkpoint, the other values keep their Python
types in a file next to it.
``mindspore.save_checkpoint`` appends ``.ckpt`` to a file name without it, so
a load asks for that name."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import (LOAD_DYNAMIC, LOAD_SUBSCRIPTED, LOAD_VALUES_ONLY, ApiRule, Drop, Example, Unconvertible,
                               checkpoint_load_use, is_state_dict, load_checkpoint_file, load_values, save_state_dicts)


_SUFFIX = ".ckpt"


def _warn_suffix(call, ctx) -> None:
    name = call.get("f")
    if isinstance(name, cst.SimpleString) and str(name.evaluated_value).endswith(_SUFFIX):
        return
    ctx.warn(call.source, "torch.save", 'mindspore.save_checkpoint appends ".ckpt" to a file name without it; '
                                         "torch.load of the file is converted to read that name")


def _save(call, ctx):
    _warn_suffix(call, ctx)
    obj = call.get("obj")
    if (
        isinstance(obj, cst.Call)
        and isinstance(obj.func, cst.Attribute)
        and obj.func.attr.value == "parameters_dict"
        and not obj.args
    ):
        call.set("obj", obj.func.value)  # save_checkpoint takes the Cell (model or optimizer) itself
        return
    if save_state_dicts(call, ctx):
        return
    if is_state_dict(ctx, obj):
        return  # a variable holding parameters_dict(): save_checkpoint takes the dict
    raise Unconvertible("only a state_dict() (of a model or an optimizer) or a dict of them and plain values "
                        "can be saved as a MindSpore checkpoint")


def _load(call, ctx):
    use = checkpoint_load_use(call)
    if use == LOAD_SUBSCRIPTED:
        raise Unconvertible("torch.load(...)[key]: assign the loaded checkpoint to a variable first")
    if use == LOAD_DYNAMIC:
        raise Unconvertible("the loaded dict is read with computed keys and no torch.save in this file shows its keys")
    path = call.get("f")
    if use == LOAD_VALUES_ONLY:
        call.result = load_values(path, ctx)
        return
    if use is None:
        ctx.warn(call.source, "torch.load", "assumes the file holds a state dict (a MindSpore checkpoint)")
    load_checkpoint_file(call, path)


# Execution cases: a network's state saved to a fresh file and loaded into a
# second network (weights copied from torch when it is built); its outputs compared.
NET_AND_PATH = (
    "import os\nimport tempfile\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 2)\n\n"
    "    def forward(self, x):\n        return self.fc(x)\n\n\n"
    "net = Net()\n"
    'path = os.path.join(tempfile.mkdtemp(), "model.pth")\n'
)


def _saved(load: str, save: str = "torch.save(net.state_dict(), path)\n", **options) -> Example:
    return Example(NET_AND_PATH + save + "other = Net()\n" + load + "result = other(x)\n",
                   inputs={"x": "randn(4, 3)"}, **options)


_ROUND_TRIP = _saved("other.load_state_dict(torch.load(path))\n")

RULES = [
    ApiRule(
        "torch.save",
        "mindspore.save_checkpoint",
        signature="obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True",
        args={"obj": "save_obj", "f": "ckpt_file_name", "pickle_module": Drop(), "pickle_protocol": Drop(),
              "_use_new_zipfile_serialization": Drop()},
        positional=2,
        hook=_save,
        notes="an optimizer's checkpoint holds its moments, step count and the weights they belong to; "
              "a dict of states and plain values becomes one checkpoint with the states under their keys as "
              "prefixes, and the other values (with their Python types) in PATH.pkl next to it",
        examples=(
            Example('torch.save(model.state_dict(), "m.pth")', 'mindspore.save_checkpoint(model, "m.pth")'),
            Example('torch.save(optimizer.state_dict(), "o.pth")', 'mindspore.save_checkpoint(optimizer, "o.pth")'),
            Example('torch.save({"model": model.state_dict(), "best": None}, "c.pth")',
                    'mindspore.save_checkpoint(\n    {**{"model." + name: value for name, value in '
                    'model.parameters_dict().items()}},\n    "c.pth",\n)\n'
                    'pathlib.Path("c.pth.pkl").write_bytes(pickle.dumps({"best": None}))'),
            Example('torch.save({**extra, "model": model.state_dict()}, "c.pth")', marked="literal string keys"),
            _ROUND_TRIP,
            _saved("torch.save(obj=net.state_dict(), f=path + '.ckpt')\nother.load_state_dict(torch.load(path + '.ckpt'))\n",
                   save="", notes="ckpt_name"),
        ),
    ),
    ApiRule(
        "torch.load",
        "mindspore.load_checkpoint",
        signature="f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args",
        args={"f": "ckpt_file_name", "map_location": Drop("device placement"), "pickle_module": Drop(),
              "weights_only": Drop(), "mmap": Drop()},
        positional=1,
        hook=_load,
        examples=(
            Example('sd = torch.load("m.pth")', 'sd = mindspore.load_checkpoint("m.pth.ckpt")'),
            Example('sd = torch.load("m.ckpt")', 'sd = mindspore.load_checkpoint("m.ckpt")'),
            Example("sd = torch.load(path)", 'sd = mindspore.load_checkpoint(str(path).removesuffix(".ckpt") + ".ckpt")'),
            # a name ending in a literal: MindSpore's suffix goes into it
            Example("sd = torch.load('{}.pkl'.format(epoch))", 'sd = mindspore.load_checkpoint("{}.pkl.ckpt".format(epoch))'),
            Example('sd = torch.load(f"{run}/model_{step}.pt")', 'sd = mindspore.load_checkpoint(f"{run}/model_{step}.pt.ckpt")'),
            Example('sd = torch.load(os.path.join(out, "best.pth"))',
                    'sd = mindspore.load_checkpoint(os.path.join(out, "best.pth.ckpt"))'),
            Example('sd = torch.load("{}".format(name))',
                    'sd = mindspore.load_checkpoint(str("{}".format(name)).removesuffix(".ckpt") + ".ckpt")'),
            Example('optimizer.load_state_dict(torch.load("o.pth"))',
                    'mindspore.load_param_into_net(optimizer, mindspore.load_checkpoint("o.pth.ckpt"))'),
            _ROUND_TRIP,
            _saved("state = torch.load(path, map_location='cpu', weights_only=True)\nother.load_state_dict(state)\n",
                   notes="keywords"),
            Example('sd = torch.load("c.pth")["model"]', marked="assign the loaded checkpoint to a variable"),
        ),
    ),
]
