"""Layer 4: the matrix run: cases, the one call pipeline and classifier, sessions, results."""
