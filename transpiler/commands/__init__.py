"""One module per ms-migrate command (``add_parser(subparsers)`` + ``run(args)``)."""
