"""The ACP face (`toolhost acp -- <agent...>`): a proxy between an ACP editor and an ACP
agent that serves the agent's files, terminals and permission requests through the
runtime (docs/ACP.md)."""
