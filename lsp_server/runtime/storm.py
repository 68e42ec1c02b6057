"""The storm breaker (safety.md §2): notice a model repeating the same failing call.

Per session, when the same failure signature ends three consecutive batches (a batch is
the calls sharing a `batch` id, or a single call without one), the failing result gets one
sentence telling the model to stop and re-read or report. It is said once per streak; a
success resets it. Nothing is ever locked: the call itself runs (or fails) as usual.
"""

from __future__ import annotations

import attrs

STREAK_LENGTH = 3


def convergence_sentence(signature: str) -> str:
    return (
        f"Convergence: this is the {STREAK_LENGTH}rd batch in a row that ended with the same "
        f"failure ({signature}); stop repeating the identical call: re-read the tool's schema "
        "or the file, change the arguments, or report the problem to the user."
    )


@attrs.define
class StormBreaker:
    """One per session (a session extension)."""

    current_batch: str | None = None
    current_outcome: str | None = None
    """Signature of the latest call of the current batch (None: it succeeded)."""
    streak_signature: str | None = None
    streak_batches: int = 0
    """Earlier, finished batches in a row that ended with `streak_signature`."""
    warned: bool = False

    def record(self, batch: str, signature: str | None) -> str | None:
        """Record one call's outcome; return the convergence sentence when it is due."""
        if batch != self.current_batch:
            self._finish_batch()
            self.current_batch = batch
        self.current_outcome = signature
        if signature is None:
            self._reset()
            return None
        same = signature == self.streak_signature
        batches = self.streak_batches + 1 if same else 1
        # Reaching STREAK_LENGTH implies `same`, so `warned` belongs to this signature.
        if batches >= STREAK_LENGTH and not self.warned:
            self.warned = True
            return convergence_sentence(signature)
        return None

    def _finish_batch(self) -> None:
        outcome = self.current_outcome
        if self.current_batch is None or outcome is None:
            return
        if outcome == self.streak_signature:
            self.streak_batches += 1
        else:
            self.streak_signature, self.streak_batches, self.warned = outcome, 1, False

    def _reset(self) -> None:
        self.streak_signature, self.streak_batches, self.warned = None, 0, False

    def status(self) -> dict[str, object]:
        return {
            "failureStreak": {
                "signature": self.streak_signature,
                "batches": self.streak_batches,
            }
        }
