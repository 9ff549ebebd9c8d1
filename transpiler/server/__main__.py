"""``python -m transpiler.server``: run the server in this process (the
client starts it this way, detached)."""

import argparse
import sys

from transpiler.server.client import default_idle_timeout
from transpiler.server.daemon import serve

parser = argparse.ArgumentParser(prog="python -m transpiler.server")
parser.add_argument("--idle-timeout", type=float, default=default_idle_timeout(), metavar="SECONDS")
parser.add_argument("--code", metavar="DIR", help="exit unless this is the ms-migrate code imported here")
args = parser.parse_args()
sys.exit(serve(args.idle_timeout, expected_code=args.code))
