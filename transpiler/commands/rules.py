"""``ms-migrate rules [--markdown] [-o FILE]``: how many torch APIs convert,
or the supported-API table generated from the rule data."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("rules", help="count the supported torch APIs or print the supported-API table")
    parser.add_argument("--markdown", action="store_true", help="print the supported-API table (Markdown)")
    parser.add_argument("-o", "--output", help="write the output to this file instead of stdout")
    parser.set_defaults(run=run_rules)


def run_rules(args) -> int:
    from rewrite_rules.registry import load_rules
    from transpiler.rule_catalog import markdown

    rules = load_rules()
    if args.markdown:
        text = markdown(rules)
    else:
        marked = rules.api_count(include_marked=True) - rules.api_count()
        text = f"{rules.api_count()} torch APIs convert ({marked} more are recognised and marked)\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
