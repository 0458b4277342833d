"""Client behaviours: pure functions in a registry, one module per phase."""
