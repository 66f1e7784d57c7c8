"""Comparing evaluations and judges: agreement of two or more evaluations (agreement, many),
of judges on the same items (judges), of qrels (qrels), paired significance tests
(significance) and the AutoJudge meta-evaluation (meta_evaluate)."""
