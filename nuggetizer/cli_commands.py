"""Imports every module that adds commands to the `nuggetizer` group (one line each)."""
