"""The tool runtime: contract, validation, dispatch, workspace, observations, output.

It knows no tool and no language; tools import it, never the other way round.
"""
