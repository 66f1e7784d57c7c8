"""Package data: see the repository README."""
