"""`nuggetizer serve`: the toolkit over HTTP (FastAPI on uvicorn, the `[serve]` extra).

One engine under every route (engine.py): the assessor the CLI's options build, shared by every
request and job through `Assessor.sharing` (one cache, one concurrency limit, one retry policy,
the reasoning adaptations; an identical call in flight is sent once), each request counting its
own usage. Work is what the CLI runs: plans (plan/), the live executor (run/execute.py), the
score engine (scoring/). Routes are grouped one module per group (castorini.py, methods.py,
jobs.py); app.py mounts them behind the guard (guard.py: bearer token, size limits) and the
JSON error handlers (errors.py).
"""
