"""Where ms-migrate keeps its caches (and its server's socket): the user cache
directory (``~/.cache/ms-migrate`` on Linux, from platformdirs), or
``$MS_MIGRATE_CACHE_DIR``. Kept apart from the cache itself so the server's
client can find it without importing the converter."""

from __future__ import annotations

import os

import platformdirs

ENVIRONMENT_VARIABLE = "MS_MIGRATE_CACHE_DIR"


def default_cache_root() -> str:
    return os.environ.get(ENVIRONMENT_VARIABLE) or platformdirs.user_cache_dir("ms-migrate", appauthor=False)
