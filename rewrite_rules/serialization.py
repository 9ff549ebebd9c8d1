"""torch.save / torch.load of model weights -> MindSpore checkpoints."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import ApiRule, Drop, Example, Unconvertible


def _save(call, ctx):
    obj = call.get("obj")
    if (
        isinstance(obj, cst.Call)
        and isinstance(obj.func, cst.Attribute)
        and obj.func.attr.value == "parameters_dict"
        and not obj.args
    ):
        call.set("obj", obj.func.value)  # save_checkpoint takes the Cell itself
        return
    raise Unconvertible("only model.state_dict() can be saved as a MindSpore checkpoint here")


def _load(call, ctx):
    ctx.warn(call.source, "torch.load", "assumes the file holds a model state dict (a MindSpore checkpoint)")


RULES = [
    ApiRule(
        "torch.save",
        "mindspore.save_checkpoint",
        signature="obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True",
        args={"obj": "save_obj", "f": "ckpt_file_name", "pickle_module": Drop(), "pickle_protocol": Drop(),
              "_use_new_zipfile_serialization": Drop()},
        positional=2,
        hook=_save,
        examples=(Example('torch.save(model.state_dict(), "m.pth")', 'mindspore.save_checkpoint(model, "m.pth")'),),
    ),
    ApiRule(
        "torch.load",
        "mindspore.load_checkpoint",
        signature="f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args",
        args={"f": "ckpt_file_name", "map_location": Drop("device placement"), "pickle_module": Drop(),
              "weights_only": Drop(), "mmap": Drop()},
        positional=1,
        hook=_load,
        examples=(Example('sd = torch.load("m.pth")', 'sd = mindspore.load_checkpoint("m.pth")'),),
    ),
]
