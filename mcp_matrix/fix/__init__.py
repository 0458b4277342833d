"""``mcp-matrix fix``: the smallest schema change per root cause, proved in every client.

``kinds`` proposes candidate edits for one finding, ``patch`` turns an edit into RFC 6902
operations with their reason, ``measure`` runs discovery and the offline call matrix over a tool
list, ``search`` keeps an edit only when the re-run shows it removes the loss in the required
clients and makes no cell anywhere worse, and ``render`` writes the outcome (terminal, md, json).
"""
