"""The watcher: a background process that owns the indexes of one vault and serves the CLI.

    paths    where its socket lives (stdlib only; every file name: vaultmem/paths.py)
    client   the CLI side of the socket: forward a read command, wait for a write's sync (stdlib only)
    events   watchdog events filtered by the vault's ignore rules, debounced into "dirty"
    server   the Unix socket: JSON lines, one request per connection
    bridge   runs a forwarded command line through the Typer app, output captured (the
             CLI hands the watcher its runner, cli/serve.py: the daemon never imports the CLI)
    status   .vaultmem/watcher.json
    runner   the watcher itself: lock, catch-up, event loop, requests, clean stop
    memory   hands freed heap back to the OS after embedding
    control  `watch --detach` and `watch --stop`

This file imports nothing: the CLI's fast path imports `client` before anything heavy.
"""
