"""Layer 2: what to connect to (target kinds, bundled servers), which eras it answers, snapshots."""
