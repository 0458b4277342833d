"""SQLite storage for the billing server: customers, their accounts, and counters.

The tool handlers receive a :class:`Backend` rather than opening the database, so a
test can pass a spy and prove that a rejected call never reached storage.
:class:`BillingBackend` is the real implementation (stdlib ``sqlite3``); a new
database is seeded with :data:`SEED_CUSTOMERS`, an existing one is left as it is.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Protocol

# customer -> accounts, primary (oldest) account first, with their initial fields.
SEED_CUSTOMERS: dict[str, dict[str, dict[str, str]]] = {
    "cust_A1": {
        "acct_8Q2R": {
            "plan": "growth",
            "billing_email": "ap@northwind.example",
            "currency": "USD",
            "payment_terms": "net30",
            "status": "active",
        },
        "acct_3K9P": {
            "plan": "starter",
            "billing_email": "emea-ap@northwind.example",
            "currency": "EUR",
            "payment_terms": "net30",
            "status": "active",
        },
    },
    "cust_B7": {
        "acct_5T1M": {
            "plan": "enterprise",
            "billing_email": "invoices@bluefin.example",
            "currency": "USD",
            "payment_terms": "net60",
            "status": "active",
        },
    },
    "cust_C3": {
        "acct_9X4D": {
            "plan": "growth",
            "billing_email": "billing@cobalt.example",
            "currency": "GBP",
            "payment_terms": "net30",
            "status": "active",
        },
        "acct_2H6W": {
            "plan": "starter",
            "billing_email": "billing@cobalt.example",
            "currency": "GBP",
            "payment_terms": "net15",
            "status": "paused",
        },
        "acct_7N3V": {
            "plan": "growth",
            "billing_email": "us-billing@cobalt.example",
            "currency": "USD",
            "payment_terms": "net30",
            "status": "active",
        },
    },
    "cust_D9": {
        "acct_4F8J": {
            "plan": "enterprise",
            "billing_email": "payables@dunmore.example",
            "currency": "EUR",
            "payment_terms": "net60",
            "status": "active",
        },
        "acct_6L2C": {
            "plan": "starter",
            "billing_email": "payables@dunmore.example",
            "currency": "EUR",
            "payment_terms": "net30",
            "status": "active",
        },
    },
    "cust_E2": {
        "acct_1Z7B": {
            "plan": "starter",
            "billing_email": "owner@elmtree.example",
            "currency": "USD",
            "payment_terms": "net15",
            "status": "active",
        },
    },
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    customer_id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS accounts (
    account_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id),
    opened INTEGER NOT NULL,
    fields TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""


class Backend(Protocol):
    """What the tool handlers need from storage."""

    def get_account(self, account_id: str) -> dict[str, Any] | None: ...

    def update_account(self, account_id: str, fields: dict[str, str]) -> dict[str, Any] | None: ...

    def customer_accounts(self, customer_id: str) -> list[str]: ...

    def increment(self, name: str, by: int = 1) -> None: ...

    def counters(self) -> dict[str, int]: ...


class BillingBackend:
    """Customers, accounts and counters in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        # One connection, used from the event loop thread; statements never await.
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        # a reference server's store survives its process, not a power cut: no fsync per commit
        # (it cost a forked server about 2 ms of CPU and 60 ms of wall at its start)
        self._db.execute("PRAGMA synchronous=OFF")
        with self._db:
            self._db.executescript(_SCHEMA)
        if self._db.execute("SELECT COUNT(*) FROM customers").fetchone()[0] == 0:
            self._seed()

    def _seed(self) -> None:
        opened = 0
        with self._db:
            for customer_id, accounts in SEED_CUSTOMERS.items():
                self._db.execute("INSERT INTO customers (customer_id) VALUES (?)", (customer_id,))
                for account_id, fields in accounts.items():
                    opened += 1
                    self._db.execute(
                        "INSERT INTO accounts (account_id, customer_id, opened, fields)"
                        " VALUES (?, ?, ?, ?)",
                        (account_id, customer_id, opened, json.dumps(fields, sort_keys=True)),
                    )

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _account(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "account_id": row["account_id"],
            "customer_id": row["customer_id"],
            "fields": json.loads(row["fields"]),
        }

    def get_account(self, account_id: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT * FROM accounts WHERE account_id = ?", (account_id,)
        ).fetchone()
        return None if row is None else self._account(row)

    def update_account(self, account_id: str, fields: dict[str, str]) -> dict[str, Any] | None:
        """Set ``fields`` on the account; returns the account afterwards, None if unknown."""
        with self._db:
            row = self._db.execute(
                "SELECT * FROM accounts WHERE account_id = ?", (account_id,)
            ).fetchone()
            if row is None:
                return None
            merged = {**json.loads(row["fields"]), **fields}
            self._db.execute(
                "UPDATE accounts SET fields = ? WHERE account_id = ?",
                (json.dumps(merged, sort_keys=True), account_id),
            )
        return self.get_account(account_id)

    def customer_accounts(self, customer_id: str) -> list[str]:
        """The customer's account ids, primary (oldest) first; [] for an unknown customer."""
        rows = self._db.execute(
            "SELECT account_id FROM accounts WHERE customer_id = ? ORDER BY opened",
            (customer_id,),
        ).fetchall()
        return [row["account_id"] for row in rows]

    def increment(self, name: str, by: int = 1) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?)"
                " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                (name, by),
            )

    def counters(self) -> dict[str, int]:
        rows = self._db.execute("SELECT name, value FROM counters ORDER BY name").fetchall()
        return {row["name"]: int(row["value"]) for row in rows}
