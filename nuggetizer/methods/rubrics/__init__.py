"""Rubric scoring (ResearchRubrics): the method (method), its records (records) and sheets for
manual grading (sheets)."""

from nuggetizer.methods.rubrics.method import RubricsConfig, RubricsMethod

__all__ = ["RubricsConfig", "RubricsMethod"]
