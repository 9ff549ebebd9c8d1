"""``ms-migrate rules [--markdown | --unproven | --check] [-o FILE]``: how many torch APIs
convert and how many of them are proven by execution, the APIs that are not
proven exactly, the supported-API table generated from the rule data, or the
check of a project's own rules by running their examples."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "rules", help="count the supported torch APIs and their proof, print the supported-API table, "
        "or check your own rules by running their examples"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--markdown", action="store_true", help="print the supported-API table (Markdown)")
    shown.add_argument(
        "--unproven", action="store_true",
        help="list the converting APIs not proven by an exact execution case of their rule, and why",
    )
    shown.add_argument(
        "--check", action="store_true",
        help="run the examples of your own rules (--rules, [tool.ms-migrate] rules, installed rule packages) "
             "under torch and MindSpore and compare, as ms-migrate's own rules are proven",
    )
    parser.add_argument("--rules", action="append", metavar="FILE",
                        help="a Python file of your own rules (repeatable; replaces [tool.ms-migrate] rules)")
    parser.add_argument("--config", metavar="PYPROJECT",
                        help="read [tool.ms-migrate] from this file (default: the closest pyproject.toml above "
                             "the current directory)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("-o", "--output", help="write the output to this file instead of stdout")
    parser.set_defaults(run=run_rules)


def run_rules(args) -> int:
    from rewrite_rules.registry import load_rules
    from rewrite_rules.user_rules import RuleLoadError
    from transpiler.config import ConfigError, config_for
    from transpiler.rule_catalog import catalog, markdown, proof_summary, unproven_listing

    try:
        config = config_for(os.getcwd(), args.config, args.isolated)
        files = tuple(os.path.abspath(f) for f in (args.rules if args.rules is not None else config.rules or ()))
        rules = load_rules(files)
    except (ConfigError, RuleLoadError) as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        return _check(rules, files, config)
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


def _check(rules, files: tuple[str, ...], config) -> int:
    from transpiler.proof.harness import WorkerPool
    from transpiler.proof.rule_check import check_rules, project_rules

    ours = project_rules(rules)
    if not ours:
        print("ms-migrate: error: no rules of your own to check: name a rule file with --rules FILE or in "
              "[tool.ms-migrate] rules = [...] in pyproject.toml", file=sys.stderr)
        return 2
    # the examples import the project's own packages: from where its rule files and configuration are
    paths = dict.fromkeys([*(os.path.dirname(f) for f in files), *([config.directory] if config.directory else []),
                           os.getcwd()])
    pool = WorkerPool(paths=tuple(paths), cwd=os.getcwd())

    def show(check) -> None:
        if check.ok:
            print(f"ok    {check.name}")
        else:
            print(f"FAIL  {check.name}  [{_shown(check.origin)}]")
            print("      " + check.problem.replace("\n", "\n      "))
        sys.stdout.flush()

    try:
        checks = check_rules(rules, pool, show)
    finally:
        pool.close()
    failed = sum(1 for c in checks if not c.ok)
    origins = {origin for _, origin in ours}
    print(f"ms-migrate: {_count(len(checks), 'check')} of {_count(len(ours), 'rule')} from "
          f"{_count(len(origins), 'source')}: {len(checks) - failed} passed, {failed} failed",
          file=sys.stderr)
    return 1 if failed else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _shown(origin: str) -> str:
    relative = os.path.relpath(origin) if os.path.isabs(origin) else origin
    return origin if relative.startswith("..") else relative
