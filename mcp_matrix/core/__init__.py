"""Layer 0: values every other layer shares (errors, findings, events, verdicts, input files)."""
