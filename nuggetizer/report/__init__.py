"""`nuggetizer report`: the static HTML page of one evaluation (page), its figures (figures,
drawn partly in a child process: figure_worker), HTML parts (html) and what the inputs record
about how they were made (sources)."""
