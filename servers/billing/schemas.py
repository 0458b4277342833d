"""Tool definitions of the billing server per version, as plain JSON data.

Written by hand so each version puts an exact ``inputSchema`` on the wire. The
migration this server embodies ("Renaming a tool parameter"):

* version ``1``: ``update_account`` takes ``customer_id`` (required) and ``fields``;
* version ``2`` (additive): ``account_id`` and the deprecated alias ``customer_id``,
  both optional in a *flat* schema (root ``type: object``, no root
  ``anyOf``/``oneOf``/``allOf``, so no client drops the tool), ``fields`` required;
  at least one id is enforced at runtime and taught by the descriptions;
* version ``3``: ``account_id`` only; ``additionalProperties: false`` so ``customer_id``
  is an unknown parameter;
* ``v2tool``: version 1's ``update_account`` unchanged plus a parallel
  ``update_account_v2`` taking ``changes: [{field, value}]`` instead of ``fields``.

``get_account`` and ``billing_metrics`` are the same, read-only, in every version.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

Version = Literal["1", "2", "3", "v2tool"]
VERSIONS: tuple[Version, ...] = ("1", "2", "3", "v2tool")

UPDATE_ACCOUNT = "update_account"
UPDATE_ACCOUNT_V2 = "update_account_v2"
GET_ACCOUNT = "get_account"
BILLING_METRICS = "billing_metrics"

ACCOUNT_ID = "account_id"
CUSTOMER_ID = "customer_id"

ACCOUNT_ID_DESCRIPTION = (
    "The account to update, e.g. acct_8Q2R. A customer may hold several accounts; "
    "this is the specific one, not the customer."
)
DEPRECATED_CUSTOMER_ID_DESCRIPTION = (
    "Deprecated alias for account_id, accepted only for compatibility with earlier calls. "
    "Do not use; pass account_id instead."
)
# Version 1's wording: the name says customer, the value is an account (the bug's origin).
V1_CUSTOMER_ID_DESCRIPTION = "The billing account to update, e.g. acct_8Q2R."

# The account fields a call may set, and the values each accepts.
FIELD_VALUES: dict[str, dict[str, Any]] = {
    "plan": {
        "type": "string",
        "enum": ["starter", "growth", "enterprise"],
        "description": "Subscription plan.",
    },
    "billing_email": {
        "type": "string",
        "pattern": r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        "description": "Where invoices are sent, e.g. ap@example.com.",
    },
    "currency": {
        "type": "string",
        "enum": ["USD", "EUR", "GBP"],
        "description": "Invoice currency.",
    },
    "payment_terms": {
        "type": "string",
        "enum": ["net15", "net30", "net60"],
        "description": "Days until an invoice is due.",
    },
    "po_number": {
        "type": "string",
        "minLength": 1,
        "maxLength": 32,
        "description": "Purchase order number printed on invoices.",
    },
    "status": {
        "type": "string",
        "enum": ["active", "paused"],
        "description": "Whether the account is invoiced.",
    },
}
FIELD_NAMES: list[str] = list(FIELD_VALUES)


def fields_schema() -> dict[str, Any]:
    """The ``fields`` object of ``update_account`` (also the shape of an account's fields)."""
    return {
        "type": "object",
        "description": (
            "The fields to set, with their new values; fields not named keep their current "
            'value. At least one, e.g. {"billing_email": "ap@example.com"}.'
        ),
        "properties": copy.deepcopy(FIELD_VALUES),
        "minProperties": 1,
        "additionalProperties": False,
    }


def _account_fields_output() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in FIELD_NAMES},
        "additionalProperties": False,
    }


def _update_output() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "account_id": {"type": "string"},
            "fields": _account_fields_output(),
        },
        "required": ["account_id", "fields"],
    }


def _write_annotations(title: str) -> dict[str, Any]:
    # Setting fields overwrites the previous values (destructive), but setting the same
    # fields twice leaves the same state (idempotent).
    return {
        "title": title,
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def _update_account(version: Version) -> dict[str, Any]:
    if version in ("1", "v2tool"):
        description = (
            "Update fields on a single billing account. Identify the account by customer_id."
        )
        properties: dict[str, Any] = {
            "customer_id": {"type": "string", "description": V1_CUSTOMER_ID_DESCRIPTION},
            "fields": fields_schema(),
        }
        required = ["customer_id", "fields"]
    elif version == "2":
        description = (
            "Update fields on a single billing account. Identify the account by account_id. "
            "Every call needs account_id (customer_id is a deprecated alias; do not use it); "
            "a call with neither is rejected and changes nothing. If both are given, "
            "account_id wins. A customer id (cust_...) is rejected: pass the specific "
            "account (acct_...)."
        )
        properties = {
            "account_id": {"type": "string", "description": ACCOUNT_ID_DESCRIPTION},
            "customer_id": {
                "type": "string",
                "description": DEPRECATED_CUSTOMER_ID_DESCRIPTION,
            },
            "fields": fields_schema(),
        }
        required = ["fields"]
    elif version == "3":
        description = (
            "Update fields on a single billing account. Identify the account by account_id."
        )
        properties = {
            "account_id": {"type": "string", "description": ACCOUNT_ID_DESCRIPTION},
            "fields": fields_schema(),
        }
        required = ["account_id", "fields"]
    else:
        raise ValueError(f"unknown version {version!r}; expected one of {VERSIONS}")
    return {
        "name": UPDATE_ACCOUNT,
        "title": "Update a billing account",
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        "outputSchema": _update_output(),
        "annotations": _write_annotations("Update a billing account"),
    }


def _update_account_v2() -> dict[str, Any]:
    return {
        "name": UPDATE_ACCOUNT_V2,
        "title": "Update a billing account (v2)",
        "description": (
            "Update fields on a single billing account, given as a list of changes. Identify "
            "the account by account_id. This is the newer interface of update_account: use it "
            "for new calls; update_account remains only for earlier callers."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "account_id": {"type": "string", "description": ACCOUNT_ID_DESCRIPTION},
                "changes": {
                    "type": "array",
                    "description": (
                        'The changes to apply, e.g. [{"field": "plan", "value": "growth"}]. '
                        "Each field at most once; fields not named keep their current value."
                    ),
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {
                                "type": "string",
                                "enum": list(FIELD_NAMES),
                                "description": "The field to set.",
                            },
                            "value": {
                                "type": "string",
                                "description": "Its new value.",
                            },
                        },
                        "required": ["field", "value"],
                        "additionalProperties": False,
                    },
                    "minItems": 1,
                },
            },
            "required": ["account_id", "changes"],
            "additionalProperties": False,
        },
        "outputSchema": _update_output(),
        "annotations": _write_annotations("Update a billing account (v2)"),
    }


def _get_account() -> dict[str, Any]:
    return {
        "name": GET_ACCOUNT,
        "title": "Read a billing account",
        "description": (
            "Read one billing account's current fields and the customer who holds it. "
            "Identify the account by account_id (acct_...), not the customer."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "account_id": {
                    "type": "string",
                    "description": (
                        "The account to read, e.g. acct_8Q2R. A customer may hold several "
                        "accounts; this is the specific one, not the customer."
                    ),
                }
            },
            "required": ["account_id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "account_id": {"type": "string"},
                "customer_id": {"type": "string"},
                "fields": _account_fields_output(),
            },
            "required": ["account_id", "customer_id", "fields"],
        },
        "annotations": {
            "title": "Read a billing account",
            "readOnlyHint": True,
            "openWorldHint": False,
        },
    }


def _counter_map() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}


def _billing_metrics() -> dict[str, Any]:
    return {
        "name": BILLING_METRICS,
        "title": "Billing server metrics",
        "description": (
            "Report the migration counters since the database was created: calls and errors "
            "per tool, calls that used customer_id, hybrid calls whose account_id and "
            "customer_id differed, ids rejected for carrying a cust_ prefix, and customer ids "
            "silently resolved to a primary account. Takes no arguments."
        ),
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {
            "type": "object",
            "properties": {
                "version": {"type": "string", "enum": list(VERSIONS)},
                "calls": _counter_map(),
                "errors": _counter_map(),
                "alias_uses": {"type": "integer", "minimum": 0},
                "alias_conflicts": {"type": "integer", "minimum": 0},
                "cust_prefix_rejections": {"type": "integer", "minimum": 0},
                "customer_fallbacks": {"type": "integer", "minimum": 0},
            },
            "required": [
                "version",
                "calls",
                "errors",
                "alias_uses",
                "alias_conflicts",
                "cust_prefix_rejections",
                "customer_fallbacks",
            ],
        },
        "annotations": {
            "title": "Billing server metrics",
            "readOnlyHint": True,
            "openWorldHint": False,
        },
    }


def tool_definitions(version: Version = "2") -> list[dict[str, Any]]:
    """The version's tools as wire JSON (camelCase keys), in tools/list order.

    Returns fresh copies, so callers may mutate the result.
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown version {version!r}; expected one of {VERSIONS}")
    tools = [_update_account(version)]
    if version == "v2tool":
        tools.append(_update_account_v2())
    tools += [_get_account(), _billing_metrics()]
    return copy.deepcopy(tools)


def tool_names(version: Version) -> list[str]:
    return [t["name"] for t in tool_definitions(version)]
