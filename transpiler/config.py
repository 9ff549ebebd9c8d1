"""Project configuration: ``[tool.ms-migrate]`` in pyproject.toml.

As ruff does, the file is found by walking up from the input to the closest
pyproject.toml that has a ``[tool.ms-migrate]`` table; paths in it are
relative to the directory of that file. Command-line flags override it key by
key. An unknown key or a wrong type is a usage error naming the file and the
key, not something silently ignored.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "ms-migrate"


class ConfigError(Exception):
    """A configuration file that cannot be used: exit code 2."""


@dataclass(frozen=True)
class Config:
    path: str | None = None  # the pyproject.toml read (None: no configuration found)
    exclude: tuple[str, ...] | None = None  # gitignore-style, relative to the file's directory
    default_excludes: bool | None = None
    jobs: int | None = None
    report: tuple[str, ...] | None = None  # absolute paths
    rules: tuple[str, ...] | None = None  # absolute paths of rule modules
    cache_dir: str | None = None
    keep_outputs: bool | None = None  # notebooks

    @property
    def directory(self) -> str | None:
        return os.path.dirname(self.path) if self.path else None


def _strings(value, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return tuple(value)


def _jobs(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"'{key}' must be a whole number of at least 1")
    return value


def _bool(value, key: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false")
    return value


def _string(value, key: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value


# key in the file -> (field, reader, whether the value holds paths to resolve)
KEYS = {
    "exclude": ("exclude", _strings, False),
    "default-excludes": ("default_excludes", _bool, False),
    "jobs": ("jobs", _jobs, False),
    "report": ("report", _strings, True),
    "rules": ("rules", _strings, True),
    "cache-dir": ("cache_dir", _string, True),
    "keep-outputs": ("keep_outputs", _bool, False),
}


def find_config(start: str) -> str | None:
    """The closest pyproject.toml with a ``[tool.ms-migrate]`` table, from
    ``start`` (a file or directory) up to the file system's root."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate) and SECTION in _read(candidate).get("tool", {}):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load_config(path: str) -> Config:
    table = _read(path).get("tool", {}).get(SECTION, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    directory = os.path.dirname(os.path.abspath(path))
    values = {}
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: [tool.{SECTION}] unknown key '{key}' (known keys: {known})")
        name, reader, holds_paths = KEYS[key]
        try:
            value = reader(value, key)
        except ValueError as exc:
            raise ConfigError(f"{path}: [tool.{SECTION}] {exc}") from None
        if holds_paths:
            value = _resolve(value, directory)
        values[name] = value
    return Config(path=os.path.abspath(path), **values)


def _resolve(value, directory: str):
    if isinstance(value, tuple):
        return tuple(os.path.join(directory, os.path.expanduser(item)) for item in value)
    return os.path.join(directory, os.path.expanduser(value))


def config_for(source: str, explicit: str | None = None, isolated: bool = False) -> Config:
    """The configuration that applies to converting ``source``: the file
    named with --config, else the closest one found above the input, else
    none (``isolated``: none at all)."""
    if isolated:
        return Config()
    if explicit is not None:
        if not os.path.isfile(explicit):
            raise ConfigError(f"{explicit}: no such configuration file")
        return load_config(explicit)
    found = find_config(source)
    return load_config(found) if found else Config()
