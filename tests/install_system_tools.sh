#!/bin/sh
# The programs the test suite needs besides its Python packages, installed
# when missing (the README's test command runs this first):
#   - headless Chromium: tests/analyze/test_analyze_html.py renders the HTML report in a
#     real browser (scripts run); no PyPI package provides a browser without
#     downloading one at run time, so Debian's package is used;
#   - GNU patch: tests/cli/test_diff_output.py applies `convert --diff` with it;
#   - Neovim: tests/lsp/test_neovim.py drives `ms-migrate lsp` from a real editor
#     (headless nvim, Debian's package).
# They are installed with apt-get (Debian, Ubuntu) as root, or through sudo
# when sudo needs no password. Otherwise this says what is missing and how to
# install it, and exits 0: the rest of the suite runs, and the tests that
# need the missing program fail with the same advice.
missing=""
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
        && ! command -v google-chrome >/dev/null 2>&1; then
    missing="$missing chromium"
fi
command -v patch >/dev/null 2>&1 || missing="$missing patch"
command -v nvim >/dev/null 2>&1 || missing="$missing neovim"
[ -z "$missing" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        as_root=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root="sudo -n"
    else
        as_root="none"
    fi
    if [ "$as_root" != "none" ]; then
        echo "installing$missing with apt-get (needed by the tests)" >&2
        # shellcheck disable=SC2086  # $as_root and $missing are word lists
        $as_root apt-get update -q >/dev/null \
            && $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null \
            && exit 0
        echo "warning: apt-get could not install$missing" >&2
    fi
fi
echo "warning: the tests need these programs:$missing; they cannot be installed here (not root, no password-less" \
     "sudo, or no apt-get). Install them (e.g. sudo apt-get install$missing); until then the tests that use them fail." >&2
exit 0
