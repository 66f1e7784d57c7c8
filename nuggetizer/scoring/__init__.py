"""Scoring: the one score engine over declared measures (engine), scoring judgment files into
the tables asked for (files), the score tables written and read back (tables), and ir_measures
interoperability (irm)."""
