"""Imports every module that adds commands to the `nuggetizer` group (one line each)."""
from nuggetizer import cli_organizer  # noqa: F401
