"""Discovery over a snapshot for many profiles: the offline half of the matrix."""

from __future__ import annotations

from collections.abc import Iterable

from matrix.model import ClientView
from matrix.profiles.model import Profile
from matrix.simulate.discovery import client_views, initial_state
from matrix.simulate.session import session_views
from matrix.snapshot import Snapshot


def discover_all(
    snapshot: Snapshot, profiles: Iterable[Profile], server: str | None = None
) -> list[ClientView]:
    """One ClientView per profile; the initial state is built once and shared (it is frozen).

    A client that never gets a session with this server (its handshake against the eras the
    snapshot recorded) sees every tool ``session-broken``."""
    profiles = list(profiles)
    state = initial_state(snapshot.tools, server or snapshot.server_name)
    return session_views(client_views(profiles, state), profiles, snapshot)
