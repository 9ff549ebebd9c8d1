"""``ms-migrate rules [--markdown | --unproven] [-o FILE]``: how many torch APIs
convert and how many of them are proven by execution, the APIs that are not
proven exactly, or the supported-API table generated from the rule data."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "rules", help="count the supported torch APIs and their proof, or print the supported-API table"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--markdown", action="store_true", help="print the supported-API table (Markdown)")
    shown.add_argument(
        "--unproven", action="store_true",
        help="list the converting APIs not proven by an exact execution case of their rule, and why",
    )
    parser.add_argument("-o", "--output", help="write the output to this file instead of stdout")
    parser.set_defaults(run=run_rules)


def run_rules(args) -> int:
    from rewrite_rules.registry import load_rules
    from transpiler.rule_catalog import catalog, markdown, proof_summary, unproven_listing

    rules = load_rules()
    if args.markdown:
        text = markdown(rules)
    elif args.unproven:
        text = unproven_listing(catalog(rules))
    else:
        marked = rules.api_count(include_marked=True) - rules.api_count()
        text = (
            f"{rules.api_count()} torch APIs convert ({marked} more are recognised and marked)\n"
            + proof_summary(catalog(rules))
            + "\n(ms-migrate rules --unproven lists the APIs not proven exactly)\n"
        )
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
