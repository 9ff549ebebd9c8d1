"""A warm ms-migrate process for editors and pre-commit hooks, as mypy's
``dmypy`` and ``blackd`` are: starting Python and importing libcst, black and
the rules costs far more than converting one file, so a server that has
already converted once answers in a fraction of the time.

``client`` (standard library only: it runs before anything heavy is imported)
sends the command line, working directory, environment and umask over a Unix
socket in the user cache directory, authenticated by a key only the user can
read, and prints what the server wrote, exiting with its code. ``daemon``
runs the command as ``ms-migrate`` would, capturing its output; it refuses
(and exits) when the code or rules on disk are not those it imported, and
declines what it does not serve (trees, ``--check``). Whenever the server
cannot answer, the client converts in-process: the server only saves time.
"""
