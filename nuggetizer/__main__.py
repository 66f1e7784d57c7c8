"""`python -m nuggetizer`: the same as the `nuggetizer` command."""

from nuggetizer.cli import main

main()
