"""The boundary adapter of the additive migration: legacy names in, one shape out.

:func:`normalise_arguments` is a pure function (no I/O, no counters): the server calls
it after schema validation and before the handler, so exactly one code path exists
downstream and every handler sees ``account_id`` only. What it does, per the chapter
"Renaming a tool parameter":

* a legacy name (``customer_id`` on ``update_account``) is mapped onto the new one
  (``account_id``);
* on a hybrid call carrying both names with different values the new name wins, the
  legacy value is discarded, and the result says ``conflict=True`` so the server can
  count it (a rising conflict rate means the deprecated description is not steering);
* an id with a ``cust_`` prefix in *any* id field, the discarded one included, is
  rejected with an error explaining the difference between a customer and an account:
  the adapter can map the field forward but not the value, since it cannot know which
  of the customer's accounts was meant;
* a call with no id under either name, or an empty one, is rejected legibly.

With ``aliases={}`` the same function is the value check of versions that have no
alias (version 3, ``update_account_v2``, ``get_account``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

LEGACY_ALIASES: dict[str, dict[str, str]] = {"update_account": {"customer_id": "account_id"}}

# The canonical id argument of each tool that acts on one account.
ID_FIELDS: dict[str, str] = {
    "update_account": "account_id",
    "update_account_v2": "account_id",
    "get_account": "account_id",
}

CUSTOMER_PREFIX = "cust_"
EXAMPLE_ACCOUNT = "acct_8Q2R"

RejectionReason = Literal["missing_id", "malformed_id", "customer_id_value"]


@dataclass(frozen=True)
class Normalised:
    """The arguments the handler sees: canonical names only."""

    arguments: dict[str, Any]
    alias_used: bool = False
    conflict: bool = False


@dataclass(frozen=True)
class Rejected:
    """No handler call; ``message`` tells the model what to pass instead.

    ``value`` is the offending id for ``customer_id_value`` (the server may append the
    customer's accounts to the message). ``alias_used`` and ``conflict`` describe the
    raw call, so a rejected hybrid call is still counted as a conflict.
    """

    message: str
    reason: RejectionReason
    argument: str | None = None
    value: Any = None
    alias_used: bool = False
    conflict: bool = False


NormaliseResult = Normalised | Rejected


def is_customer_id(value: Any) -> bool:
    """True for a string that names a customer (``cust_...``) rather than an account."""
    return isinstance(value, str) and value.strip().lower().startswith(CUSTOMER_PREFIX)


def customer_vs_account(tool_name: str, argument: str, value: str) -> str:
    """The explanation returned when a customer id arrives where an account id belongs."""
    return (
        f"{tool_name} rejected {argument} {json.dumps(value)}: that is a customer id, not an "
        "account id. A customer (cust_...) may hold several billing accounts (acct_...), and "
        f"{tool_name} acts on exactly one account, so it needs that account's own id, e.g. "
        f'"account_id": "{EXAMPLE_ACCOUNT}". The customer id cannot be mapped to an account '
        "because the server cannot know which of the customer's accounts was meant. "
        "Nothing was changed."
    )


def _label(argument: str, canonical: str) -> str:
    if argument == canonical:
        return argument
    return f"{argument} (deprecated alias for {canonical})"


def normalise_arguments(
    tool_name: str,
    args: Mapping[str, Any],
    *,
    aliases: Mapping[str, Mapping[str, str]] = LEGACY_ALIASES,
) -> NormaliseResult:
    """Map legacy argument names onto the new ones and check the id values.

    Never mutates ``args``. Tools without an id argument pass through unchanged.
    """
    arguments = dict(args)
    canonical = ID_FIELDS.get(tool_name)
    if canonical is None:
        return Normalised(arguments)
    tool_aliases = dict(aliases.get(tool_name, {}))

    # What the raw call looks like, before anything is mapped or rejected.
    legacy_present = [old for old in tool_aliases if old in arguments]
    alias_used = bool(legacy_present)
    conflict = any(
        tool_aliases[old] in arguments and arguments[tool_aliases[old]] != arguments[old]
        for old in legacy_present
    )

    # Value checks on every id field present, the one that would be discarded included.
    for argument in [canonical, *legacy_present]:
        if argument not in arguments:
            continue
        value = arguments[argument]
        if not isinstance(value, str) or value.strip() == "":
            return Rejected(
                f"{tool_name} rejected {_label(argument, canonical)}: it must be a non-empty "
                f"account id string such as {json.dumps(EXAMPLE_ACCOUNT)}, but got "
                f"{json.dumps(value)}. Pass account_id. Nothing was changed.",
                reason="malformed_id",
                argument=argument,
                value=value,
                alias_used=alias_used,
                conflict=conflict,
            )
        if is_customer_id(value):
            return Rejected(
                customer_vs_account(tool_name, _label(argument, canonical), value),
                reason="customer_id_value",
                argument=argument,
                value=value,
                alias_used=alias_used,
                conflict=conflict,
            )

    for old, new in tool_aliases.items():
        if old not in arguments:
            continue
        legacy_value = arguments.pop(old)
        if new in arguments and arguments[new] != legacy_value:
            continue  # hybrid call: the new field wins; the legacy value is discarded
        arguments.setdefault(new, legacy_value)

    if canonical not in arguments:
        return Rejected(
            f"{tool_name} needs the account to act on: pass account_id, e.g. "
            f'"account_id": "{EXAMPLE_ACCOUNT}" (the specific account, not the customer). '
            "Nothing was changed.",
            reason="missing_id",
            alias_used=alias_used,
            conflict=conflict,
        )
    return Normalised(arguments, alias_used=alias_used, conflict=conflict)
