"""vaultmem: long-term memory for AI agents, kept as a vault of plain markdown files."""

__version__ = "0.1.0"
