"""Layer 5: the release gate: a policy's checklist over a run, and the release items of a live target."""
