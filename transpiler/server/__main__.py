"""``python -m transpiler.server``: run the server in this process (the
client starts it this way, detached)."""

import argparse
import sys

from transpiler.server.client import default_idle_timeout
from transpiler.server.daemon import serve

parser = argparse.ArgumentParser(prog="python -m transpiler.server")
parser.add_argument("--idle-timeout", type=float, default=default_idle_timeout(), metavar="SECONDS")
sys.exit(serve(parser.parse_args().idle_timeout))
