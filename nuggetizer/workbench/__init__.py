"""The assessors' workbench: people post-edit nuggets, assign them, and judge citations,
battles and rubrics in a browser; every judgment saved as made, exported to the files
`score`, `report` and `agreement` read."""
