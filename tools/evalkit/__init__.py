"""`make eval` (`python -m tools.evalkit`): search quality on the evaluation sets beside the
peers: tasks.py (the sets), peers.py (bm25s, exact MiniLM), vaults.py (vaultmem's side),
metrics.py and report.py. Also fusion_tune.py (the fit search/fusion_fit.json holds),
make_sets.py (the sets in data/), linkcheck.py and multilingual.py."""
