"""toolhost: a language server that hosts the tool runtime of coding agents."""

__version__ = "0.1.0"
