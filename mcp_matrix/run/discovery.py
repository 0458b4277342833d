"""Discovery over a snapshot for many profiles: the offline half of the matrix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from mcp_matrix.core.event_values import ListedProfile
from mcp_matrix.core.events import DiscoveryCell, Event, RunFinished, RunStarted
from mcp_matrix.core.model import ClientView
from mcp_matrix.profiles.model import Profile
from mcp_matrix.simulate.discovery import client_views, initial_state
from mcp_matrix.simulate.session import session_views
from mcp_matrix.targets.server_key import server_key
from mcp_matrix.targets.snapshot import Snapshot


def discover_all(
    snapshot: Snapshot, profiles: Iterable[Profile], server: str | None = None
) -> list[ClientView]:
    """One ClientView per profile; the initial state is built once and shared (it is frozen).

    A client that never gets a session with this server (its handshake against the eras the
    snapshot recorded) sees every tool ``session-broken``."""
    profiles = list(profiles)
    state = initial_state(snapshot.tools, server or snapshot.server_name)
    return session_views(client_views(profiles, state), profiles, snapshot)


def discovery_events(
    snap: Snapshot, views: Sequence[ClientView], profiles: Iterable[Profile], name: str = ""
) -> list[Event]:
    """The views as the typed result events every writer reads (no calls: discovery only)."""
    started, finished = discovery_run(snap, profiles, name)
    return [started, *discovery_cells(views), finished]


def discovery_cells(views: Iterable[ClientView]) -> list[DiscoveryCell]:
    """Every cell of the views, typed (a profile's tools in the snapshot's order)."""
    return [DiscoveryCell.of(v.profile, t) for v in views for t in v.tools]


def listed_profile(p: Profile, calls: bool = True) -> ListedProfile:
    """A profile as a run-started event lists it: with ``calls`` (``run``) every key; without
    (``discover``) not the models nor the weakest evidence, so its stream keeps the keys it had."""
    listed = ListedProfile(
        name=p.name,
        client=p.client,
        versions=p.versions,
        models=p.models,
        weakest_evidence=p.weakest_evidence,
        required_by_default=p.required_by_default,
    )
    return listed if calls else replace(listed, models=None, weakest_evidence=None)


def discovery_run(
    snap: Snapshot, profiles: Iterable[Profile], name: str = ""
) -> tuple[RunStarted, RunFinished]:
    """The start and the end of a discovery run: the server, its key and the profiles; whether
    the snapshot measured anything. ``discover``'s terminal reads its cells from the views."""
    key = server_key(
        {**(snap.doc.get("target") or {}), **({"name": name} if name else {})},
        snap.doc.get("serverInfo"),
    )
    started = RunStarted(
        server=snap.server_info,
        server_key=key.to_json(),
        profiles=tuple(listed_profile(p, calls=False) for p in profiles if not p.abstract),
    )
    error = None
    if snap.error:
        error = {
            **snap.error,
            "message": snap.error.get("message", ""),
            "stderr_tail": list(snap.error.get("stderr_tail") or []),
        }
    return started, RunFinished(measured=not snap.error, error=error)
