"""The warm start (`toolhost mcp --warm`, `toolhost serve --warm`): a process kept per user
and code version that has imported the runtime once, and forks a ready one for each start.

A start pays ~0.3 s of imports before its first call can run (the runtime, the policy, the
SDK); an agent that sends a call at once waits for them. With `--warm` the started command
is a front that imports nothing but the standard library (handover.py): it hands its
arguments, environment, working folder, umask, limits and its stdin, stdout and stderr to
the warm process (zygote.py) over a 0600 socket in the user's private runtime folder, which
forks a child that becomes the command as if it had been started there, and the front
relays the child's exit status and the signals it gets. No warm process yet, one that
refuses, or anything odd: the front runs the command itself, as without `--warm`.

What keeps it honest: the socket is named by the code's stamp (place.py: the interpreter,
its path and every file of this package), so a changed checkout never runs old code; a
front confined differently from the warm process (namespaces, no_new_privs, seccomp,
capabilities, LSM label: confined_alike.py) is refused, so a sandboxed command can never
borrow an unconfined runtime; the warm process exits after idle minutes.
"""
