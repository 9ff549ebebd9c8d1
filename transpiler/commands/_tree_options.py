"""The options ``convert`` and ``analyze`` share: which files of a tree to take,
how many workers, and where the configuration comes from. Command line over
``[tool.ms-migrate]`` over defaults, the same for both commands, so that they
never disagree about which files make up the project."""

from __future__ import annotations

import argparse
import dataclasses
import os

from transpiler.batch.runner import available_cores
from transpiler.config import Config, ConfigError, config_for
from transpiler.batch.discovery import Exclusions


def add_tree_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-j", "--jobs", type=int, help="worker processes (default: the machine's cores)")
    parser.add_argument("--exclude", action="append", metavar="PATTERN",
                        help="skip files and directories matching a gitignore-style pattern relative to the input "
                             "directory, e.g. 'third_party/*' or '**/gen_*.py' (repeatable)")
    parser.add_argument("--default-excludes", action=argparse.BooleanOptionalAction, default=None,
                        help="skip hidden directories, virtualenvs, site-packages and build directories "
                             "(default: yes; --no-default-excludes takes them too)")
    add_rule_arguments(parser)


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the configuration and the project's own rules come from (every
    command that applies rules: convert, analyze, verify, weights)."""
    parser.add_argument("--config", metavar="PYPROJECT",
                        help="read [tool.ms-migrate] from this file "
                             "(default: the closest pyproject.toml above the input)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--rules", action="append", metavar="FILE",
                        help="a Python file of your own rules (RULES = [ApiRule(...), ...]), applied with "
                             "ms-migrate's; repeatable; replaces [tool.ms-migrate] rules")


@dataclasses.dataclass(frozen=True)
class TreeOptions:
    config: Config
    jobs: int
    exclusions: Exclusions
    rules: tuple[str, ...] = ()  # the project's rule files (absolute paths)


def tree_options(args) -> TreeOptions:
    """Raises ConfigError for a configuration that cannot be used."""
    config = config_for(args.source, args.config, args.isolated)
    if args.exclude is not None:
        exclusions = Exclusions(tuple(args.exclude))  # relative to the input directory
    else:
        exclusions = Exclusions(config.exclude or (), base=config.directory)
    defaults = first(args.default_excludes, config.default_excludes, True)
    rules = _rule_files(args, config)
    _load_rules(rules)
    return TreeOptions(config, first(args.jobs, config.jobs, available_cores()),
                       dataclasses.replace(exclusions, defaults=defaults), rules)


def project_rules(args, source: str):
    """The RuleSet for ``source``: ms-migrate's rules with the project's own
    (``--rules``, else ``[tool.ms-migrate] rules``). Raises ConfigError."""
    return _load_rules(_rule_files(args, config_for(source, args.config, args.isolated)))


def _rule_files(args, config: Config) -> tuple[str, ...]:
    return tuple(os.path.abspath(path) for path in first(args.rules, config.rules, ()))


def _load_rules(files: tuple[str, ...]):
    """Load the rules once here, so that a broken rule file is one usage error
    naming it before any file is converted."""
    from rewrite_rules.registry import load_rules
    from rewrite_rules.user_rules import RuleLoadError

    try:
        return load_rules(files)
    except RuleLoadError as exc:
        raise ConfigError(str(exc)) from None


def first(*values):
    """The first value that is set."""
    return next(value for value in values if value is not None)
