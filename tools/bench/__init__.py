"""`make bench` (`python -m tools.bench`): the figures of SPEC §7 beside peers measured in
the same run. One module per section of rows: cold CLI processes (cold.py), the watcher and
the always-warm CLI (warm.py), the MCP server (mcp.py), scale (scale.py); a run (runner.py)
is the chain of them over the vaults of vaults.py, on the plumbing of base.py."""
