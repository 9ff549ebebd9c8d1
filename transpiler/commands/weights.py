"""``ms-migrate weights model.pth model.ckpt --model converted_module:ClassName``"""

from __future__ import annotations

import json
import os
import sys

from transpiler.commands._tree_options import add_rule_arguments, project_rules
from transpiler.config import ConfigError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "weights",
        help="convert a torch state_dict file into a MindSpore checkpoint for the converted model",
        description="Load a torch state_dict (torch.save file), build the converted Cell, map every weight "
        "onto it (names, layouts, shapes checked) and save a MindSpore checkpoint. Every torch key that "
        "finds no place and every Cell parameter left unfilled is listed; then nothing is written "
        "(exit 1) unless --allow-partial is given.",
    )
    parser.add_argument("source", help="torch file: a state_dict, a {'state_dict': ...} dict, or a pickled Module")
    parser.add_argument("target", help="the MindSpore checkpoint to write (.ckpt)")
    parser.add_argument("--model", required=True, metavar="MODULE:CLASS",
                        help="the converted Cell: an importable module or a .py path, then ':' and the class")
    parser.add_argument("--args", help="constructor positional arguments as a JSON list")
    parser.add_argument("--kwargs", help="constructor keyword arguments as a JSON object")
    parser.add_argument("--map", metavar="JSON", help="also write the name map {torch key: MindSpore name}")
    parser.add_argument("--allow-partial", action="store_true",
                        help="write the checkpoint even if some weights do not fit (still listed, exit 1)")
    add_rule_arguments(parser)  # a rule of the project's own may move its layer's weights
    parser.set_defaults(run=run_weights)


def run_weights(args) -> int:
    from transpiler.commands._user_errors import UserError, defined_name, existing_file, writable_target

    try:
        rules = project_rules(args, _model_file(args.model))  # a broken rule file is named first
        existing_file(args.source, "a torch weights file")
        writable_target(args.target)
        module, _, name = args.model.rpartition(":")
        path = _module_path(module)
        if path is not None and name:
            existing_file(path, "a Python file")
            defined_name(path, name, "class")
    except (UserError, ConfigError) as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return 2
    try:
        from transpiler.proof.weight_files import build_cell, load_torch_state

        state = load_torch_state(args.source)
        cell = build_cell(args.model, args.args, args.kwargs)
    except Exception as exc:  # report, do not trace back, for user errors
        print(f"ms-migrate: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    import mindspore

    from transpiler.proof.weights import map_weights

    params, report = map_weights(state, cell, rules=rules)
    print(f"ms-migrate: weights: {report.summary()}", file=sys.stderr)
    for problem in report.problems():
        print(f"ms-migrate: {problem}", file=sys.stderr)
    if args.map:
        with open(args.map, "w", encoding="utf-8") as handle:
            json.dump({"placed": report.placed, "moved": report.moved, "dropped": report.dropped,
                       "unplaced": report.unplaced, "unfilled": report.unfilled}, handle, indent=2)
    if report.ok or args.allow_partial:
        mindspore.save_checkpoint([{"name": n, "data": p} for n, p in params.items()], args.target)
        print(f"ms-migrate: checkpoint written to {args.target}", file=sys.stderr)
    return 0 if report.ok else 1


def _module_path(module: str) -> str | None:
    """The file of ``--model``'s module: a .py path as given, a dotted module from the current directory."""
    if not module:
        return None
    if module.endswith(".py") or os.sep in module:
        return module
    candidate = os.path.join(*module.split(".")) + ".py"
    return candidate if os.path.isfile(candidate) else None


def _model_file(spec: str) -> str:
    """Where to look for the configuration: the model's file, else the current directory."""
    module = spec.rpartition(":")[0]
    return module if module.endswith(".py") or os.sep in module else os.getcwd()
