"""Reference MCP billing server: renaming a tool parameter (``customer_id`` -> ``account_id``).

Four versions of the same service, selected with ``--version``:

* ``1``: ``update_account(customer_id, fields)``, the old name (its value is an account id;
  a customer id is silently resolved to the customer's primary account, the bug);
* ``2``: the additive migration: ``account_id`` plus the deprecated alias ``customer_id``,
  both optional in a flat schema, enforced at runtime by :func:`.adapter.normalise_arguments`;
* ``3``: the alias retired: ``account_id`` only, ``customer_id`` fails loudly;
* ``v2tool``: version 1 unchanged plus a parallel ``update_account_v2`` whose fields
  change shape (``changes: [{field, value}]``).

Every version also has the read-only tools ``get_account`` and ``billing_metrics``.
Recorded calls made against version 1 (and a small hybrid set against version 2) ship in
``corpora/`` with their expected outcomes per version; see :mod:`.recorded`.
"""
