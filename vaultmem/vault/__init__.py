"""The only package that reads or writes markdown files of a vault."""
