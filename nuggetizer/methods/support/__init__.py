"""Support (attribution) of answer sentences by the passages they cite: the method (method),
its records (records) and sheets for manual assessment (sheets)."""

from nuggetizer.methods.support.method import SupportConfig, SupportMethod

__all__ = ["SupportConfig", "SupportMethod"]
