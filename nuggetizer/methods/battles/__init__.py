"""Pairwise battles (TREC RAG 2026): the method (method), its records (records), the
schedule of which runs meet where (schedule), the step that judges each battle once (step),
the Bradley-Terry measures (measures), blind sheets for people (sheets) and its part of the
report (report, figures)."""

from nuggetizer.methods.battles.method import BattlesConfig, BattlesMethod

__all__ = ["BattlesConfig", "BattlesMethod"]
