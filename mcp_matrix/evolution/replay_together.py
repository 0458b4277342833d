"""Offline, one file's segments (one a profile) fed each call in turn: the call judged once for
each group of profiles that cannot tell it apart, counted in every profile's tally."""

from __future__ import annotations

from collections import Counter

from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.replay_effects import ReplayEffect
from mcp_matrix.evolution.replay_segment import Kind, ReplaySegment

# judges, each segment's group, kept outcomes, kinds, kinds' numbers split (``groups``)
Groups = tuple[list[ReplaySegment], list[int], list[bool], list[Kind], dict[int, bool | None]]


class SegmentsTogether:
    """Offline, one file's segments (one a profile) fed each call in turn: judged once for each
    group of profiles of one kind for the call's tool (``ReplaySegment._kind``: they look the
    outcome up under the same key, so they get the same one), and counted in every profile's
    tally, in profile order (the events of a call come out in profile order, as they did).
    A group that does not show the tool gets one outcome for every call of it, kept (unless
    an alias is probed: whether a call uses it depends on its arguments)."""

    def __init__(self, segments: list[ReplaySegment]) -> None:
        self.segments = segments
        self._groups: dict[str, Groups] = {}
        self._kept: dict[tuple[str, int], ReplayEffect] = {}  # (tool, group) -> its one outcome
        self._keeps = bool(segments) and segments[0].config.alias is None
        # counted in bulk: nothing of a call but its example differs between two tallies
        # (no event, no alias, no recorded result compared, no transcript, no live retry)
        self._bulk = (
            bool(segments)
            and self._keeps
            and segments[0].config.emit is None
            and segments[0].tally.population in ("retry", "live")
        )
        self._pending: list[dict[tuple, int]] = [{} for _ in segments]
        self._seen: dict[tuple[int, tuple], int] = {}  # (the tool's groups, keys) -> calls
        self._of: dict[tuple[int, tuple], list[int]] = {}  # and those groups (kept: id alive)
        self._full: set[tuple[int, tuple]] = set()  # of those, what no profile wants examples of

    def groups(self, tool: str) -> Groups:
        """One segment judging for each group of ``tool``, each segment's group, whether a
        group's outcome is the same for every call (kept once judged), each group's kind, and
        the kinds' numbers that several groups share (apart only by what they hold: a call's
        ``alone`` for ``ReplaySegment._judge``, each None until asked)."""
        known = self._groups.get(tool)
        if known is None:
            first: dict[tuple, int] = {}
            judges: list[ReplaySegment] = []
            kinds: list[Kind] = []
            of = []
            for segment in self.segments:
                kind = segment._kind(tool)
                group = first.setdefault(kind, len(judges))
                if group == len(judges):
                    judges.append(segment)
                    kinds.append(kind)
                of.append(group)
            # a group that does not show the tool: the same outcome whatever the arguments
            keeps = [self._keeps and kind[2] for kind in kinds]
            bases = Counter(kind[0] for kind in kinds if not kind[2])
            split: dict[int, bool | None] = {base: None for base, n in bases.items() if n > 1}
            known = self._groups[tool] = (judges, of, keeps, kinds, split)
        return known

    def play(self, call: RecordedCall) -> None:
        tool = call.tool
        judges, of, keeps, kinds, split = self.groups(tool)
        effects = []
        written: dict[tuple, ReplayEffect] = {}  # the call's outcome as written (``_judge``)
        alone = dict(split) if split else None  # whether a kind's behaviours leave it so
        for group, segment in enumerate(judges):
            if keeps[group]:
                effect = self._kept.get((tool, group))
                if effect is None:
                    effect = self._kept[tool, group] = segment._judge(call, kinds[group])
            else:
                effect = segment._judge(call, kinds[group], written, alone)
            effects.append(effect)
        if not self._bulk:
            for segment, group in zip(self.segments, of):
                segment._count(call, effects[group], segment.tally)
            return
        keys = tuple([e.counts for e in effects])
        seen = (id(of), keys)  # the tool's groups and what each counts: one counter for both
        n = self._seen.get(seen)
        if n is None:
            self._of[seen] = of
            n = 0
        self._seen[seen] = n + 1
        if seen in self._full:
            return  # no profile wants an example of what it counts here
        kept = False
        for segment, group in zip(self.segments, of):
            key = keys[group]
            tally = segment.tally
            if key[0] != "delivered" and tally.wants_example(key[0]):
                tally.example(key[0], effects[group].example(call))
                kept = True
        if not kept:  # a tally's examples only fill: none will want one of these again
            self._full.add(seen)

    def flush(self) -> None:
        """The calls counted in bulk added to each tally (``ReplaySegment._count``'s counters).

        Counted per call as (the tool's groups, each group's key), then per profile here: a
        profile meets its keys in the order of the calls, as when it was counted call by call."""
        for seen, n in self._seen.items():
            keys = seen[1]
            for group, pending in zip(self._of[seen], self._pending):
                key = keys[group]
                pending[key] = pending.get(key, 0) + n
        self._seen.clear()
        self._of.clear()
        for segment, pending in zip(self.segments, self._pending):
            tally = segment.tally
            for (category, verdict, sometimes, retry), n in pending.items():
                tally.calls += n
                for behaviours in sometimes:
                    tally.sometimes[behaviours] += n
                tally.categories[category] += n
                tally.verdicts[verdict] += n
                if retry is not None:
                    tally.retry[retry] += n
            pending.clear()


__all__ = ["SegmentsTogether"]
