"""How a plan runs: the executors (live, dry, batch) and the stage types they run, the LLM
steps' bodies over files with their journals, provenance, progress, usage and votes, and the
factories of assessors and executors that the CLI and the Python API share."""
