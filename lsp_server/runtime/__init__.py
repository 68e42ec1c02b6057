"""The tool runtime: every call, from any face, and the rooms it is made of.

Here, above the rooms, the orchestration of one call:
- dispatch.py: THE choke point (`Runtime.call`): validate, confine, approve, run, publish,
  bound, report;
- approval_step.py: what the approver is asked and the refusal the model reads; a writer's
  plan published under a checkpoint. preview.py: a call taken up to that step only;
- validation.py (arguments against the canonical schema), context.py (the `ctx` a tool gets),
  file_service.py (reads and writes with observations enforced), reverts.py (toolhost/revert),
  storm.py (repeated failing calls), progress.py, lifecycle.py.

The rooms, each importing only the ones below it and the ground floor (lsp_server/core,
lsp_server/fs; tests/project/test_layers.py checks it):
- sessions/: what a session holds: observations, stored results, agent state, kept CLI
  sessions and their bounds and names;
- results/: bounded text and the record of a call;
- approvals/: verdicts, the approver seam and the stale-version refusal;
- buffers/: the editor's unsaved text (documents, buffer edits).

It knows no tool and no language; tools import it, never the other way round.
"""
