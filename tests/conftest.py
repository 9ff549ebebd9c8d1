"""Test-session set-up shared by every test file."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory):
    """Conversions cache their results in the user cache directory; tests use
    a directory of their own (child processes inherit it) instead of the
    home directory of whoever runs them."""
    previous = os.environ.get("MS_MIGRATE_CACHE_DIR")
    os.environ["MS_MIGRATE_CACHE_DIR"] = str(tmp_path_factory.mktemp("ms-migrate-cache"))
    yield
    if previous is None:
        os.environ.pop("MS_MIGRATE_CACHE_DIR", None)
    else:
        os.environ["MS_MIGRATE_CACHE_DIR"] = previous
