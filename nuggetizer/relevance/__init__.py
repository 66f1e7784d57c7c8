"""UMBRELA relevance grading: (query or narrative, passage) pairs graded on 0-3 or 0-4 into
qrels (grade), and the two scales with their prompts and labels (scales). Not an answer-key
method: it makes the qrels that keys are built from."""
