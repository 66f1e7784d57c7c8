"""What a step will do, decided before any LLM call: its inputs read and checked (inputs,
sources), its stages (steps), the graded plans of UMBRELA (graded), and a track's config and
its plan for `evaluate` (track, evaluate). Executors in nuggetizer/run/ run what is planned here."""
