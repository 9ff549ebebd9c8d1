"""``ms-migrate verify ORIGINAL.py CONVERTED.py --model NAME --input SPEC ...``"""

from __future__ import annotations

import argparse
import sys

from transpiler.commands._tree_options import add_rule_arguments, project_rules

_INPUT_HELP = """\
one model input (repeat for several, in forward()'s order): SHAPE[:DTYPE[:LOW-HIGH]].
  4,3,32,32          float32, standard normal
  4,3:float64:-1-1   float64, uniform in [-1, 1)
  2,16:int64:0-100   integer ids, uniform in [0, 100) (HIGH excluded)
  8:int64            integers in [0, 10)
  8:bool             random booleans
  scalar:float32     a 0-d tensor
  2,2,8+2,2,8        one argument that is a tuple of tensors (e.g. an LSTM's (h0, c0))
Both frameworks get the same seeded values."""


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="run the torch model and its conversion on the same weights and inputs and compare",
        description="Build the torch model from ORIGINAL and the Cell from CONVERTED, convert the torch\n"
        "weights into the Cell, put both in eval mode (--train: training mode), feed both the same\n"
        "seeded inputs and compare every output: shape, dtype and values. On a mismatch, names the\n"
        "first sub-Cell that differs. torch's random draws (randn, dropout, sampling, ...) are\n"
        "replayed to MindSpore, so stochastic models compare exactly; a value that still changes\n"
        "between two torch runs cannot be compared and fails unless --allow-not-compared. A dtype\n"
        "that differs fails unless a rule for an API the original uses declares it.\n"
        "Exit status: 0 match, 1 mismatch (or weights that do not fit, or values not compared), 2 error.",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument("original", help="the PyTorch source file")
    parser.add_argument("converted", help="the converted MindSpore file")
    parser.add_argument("--model", required=True,
                        help="the model class, or a function that returns the model (a factory such as timm's\n"
                        "resnet18), called with --args/--kwargs; the same name in both files. A file inside a\n"
                        "package (a folder with __init__.py) is imported as a module of its package")
    parser.add_argument("--args", help="constructor positional arguments as a JSON list")
    parser.add_argument("--kwargs", help="constructor keyword arguments as a JSON object")
    parser.add_argument("--input", action="append", default=[], metavar="SPEC", help=_INPUT_HELP)
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    parser.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    parser.add_argument("--grad", action="store_true",
                        help="also compare the gradients of a seeded scalar reduction of the outputs\n"
                        "(sum of each float output times a fixed random tensor) w.r.t. every parameter;\n"
                        "one that differs is checked against torch's float64 gradient: within tolerance of it, or\n"
                        "within four times torch's own float32 error (largest and root mean square, where torch's float32\n"
                        "is within 1%% of float64), is float32 rounding and passes with a note")
    parser.add_argument("--train", action="store_true",
                        help="run both models in training mode (dropout active, batch statistics)")
    parser.add_argument("--allow-not-compared", action="store_true",
                        help="exit 0 even if some value could not be compared (it changes between two torch\n"
                        "runs with the same replayed draws: randomness the replay cannot cover); such\n"
                        "values are still listed as NOT COMPARED")
    parser.add_argument("--export", action="store_true",
                        help="also export the converted Cell as MindIR (mindspore.export) and check that the loaded\n"
                        "graph (nn.GraphCell(mindspore.load(...))) gives the Cell's PyNative outputs")
    parser.add_argument("--seed", type=int, default=0, help="seed for inputs and initialisation (default 0)")
    add_rule_arguments(parser)  # the rules that converted the model: their weight moves and declared dtypes
    parser.set_defaults(run=run_verify)


def run_verify(args) -> int:
    from transpiler.commands._user_errors import UserError, defined_name, existing_file
    from transpiler.config import ConfigError
    from transpiler.proof.verify import ERROR, VerifyRequest, parse_json_arg, verify
    from transpiler.proof.verify_inputs import InputSpecError, parse_input

    try:
        rules = project_rules(args, args.original)  # a broken rule file is named first
        for path in (args.original, args.converted):
            existing_file(path, "a Python file")
            defined_name(path, args.model)
        if not args.input:
            raise UserError(f"{args.original}: no --input: give one SPEC per argument of {args.model}'s forward "
                            "(e.g. --input 1,3,32,32; see ms-migrate verify --help)")
        specs = [parse_input(text) for text in args.input]
        request = VerifyRequest(
            original=args.original,
            converted=args.converted,
            model=args.model,
            inputs=specs,
            args=parse_json_arg(args.args, list, "--args"),
            kwargs=parse_json_arg(args.kwargs, dict, "--kwargs"),
            rtol=args.rtol,
            atol=args.atol,
            grad=args.grad,
            seed=args.seed,
            train=args.train,
            allow_not_compared=args.allow_not_compared,
            export=args.export,
            rules=rules,
        )
    except (UserError, InputSpecError, ValueError, ConfigError) as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return ERROR
    result = verify(request)
    for line in result.lines():
        print(line)
    return result.status
