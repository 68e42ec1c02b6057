#!/bin/sh
# One tool call from the command line: `toolhost call` builds a runtime over --root, runs
# the call through the same dispatch as the servers, prints the result's text and exits.
#
#     PATH=.venv/bin:$PATH sh examples/cli_read_file.sh
cd "$(dirname "$0")" || exit
toolhost call read_file '{"path": "README.md"}' --root workspace
