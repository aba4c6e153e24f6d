"""The bench and evaluation tools: packages run with `python -m` from the repository root
(`make bench`, `make eval`, `make demo` do), never installed with vaultmem.

    tools.bench      performance figures beside peers (docs/BENCHMARKS.md)
    tools.evalkit    search quality beside peers; the fusion fit (fusion_tune)
    tools.genvault   generated vaults for the bench
    tools.demo       `make demo`
"""
