"""The command line: thin commands that parse flags, call one service and render."""
