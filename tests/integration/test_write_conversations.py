"""Issue 11, acceptance 4: a few hundred short conversation turns written through `write`
(one batch, seed-001 format, each with its event time and role); a question about one turn,
in other words than the turn's, finds it in the top 5, and `--since/--until` on `search`
and `query` select turns by when they were said."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

START = datetime(2025, 9, 1, 9, 0, tzinfo=UTC)
SESSIONS = 12
TURNS_PER_SESSION = 25  # 300 turns

FILL = {
    "city": ["Lisbon", "Krakow", "Ghent", "Porto", "Bologna", "Tallinn", "Seville", "Bergen"],
    "month": ["March", "May", "June", "September", "October"],
    "dish": ["lasagna", "risotto", "chili", "shakshuka", "curry", "pancakes", "paella", "ramen"],
    "ingredient": ["garlic", "basil", "almonds", "walnuts", "parmesan", "coriander", "peanuts", "lemons"],
    "relative": ["brother", "mother", "cousin", "uncle", "aunt", "father", "grandmother"],
    "name": ["Priya", "Jonas", "Elena", "Kwame", "Sofia", "Tomasz", "Aiko"],
    "client": ["Northwind", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "bill": ["electricity", "internet", "phone", "water", "insurance", "gym"],
    "plant": ["tomatoes", "roses", "basil", "lavender", "strawberries", "the hedge"],
    "band": ["Radiohead", "Khruangbin", "the Beatles", "Bonobo", "Fleetwood Mac"],
    "author": ["Le Guin", "Ishiguro", "Atwood", "Pratchett", "Tokarczuk"],
}
USER = {
    "travel": [
        "I am thinking about a weekend trip to {city} in {month}.",
        "Trains to {city} take about {n} hours from here.",
        "Could you look for a hotel near the old town in {city}?",
        "Last time the flight to {city} was delayed by {n} minutes.",
    ],
    "cooking": [
        "Tonight I want to try a new {dish} recipe.",
        "The {dish} needs {n} minutes in the oven.",
        "We ran out of {ingredient}, put it on the shopping list.",
        "My {relative} loves {dish} with extra {ingredient}.",
    ],
    "work": [
        "The quarterly report for {client} is due on {weekday}.",
        "Set up a call with {name} from {client} next {weekday}.",
        "The {client} contract renewal still needs a legal review.",
        "I spent {n} hours on the {client} migration today.",
    ],
    "health": [
        "I walked {n} thousand steps today.",
        "Remind me to book a dentist appointment for {weekday}.",
        "My {relative} has a cold, so we skip the visit this week.",
        "I only slept {n} hours last night.",
    ],
    "money": [
        "Paid the {bill} bill, it was {n}0 euros this month.",
        "The {bill} contract can be cancelled with {n} weeks notice.",
        "Move {n}00 euros into the savings account on {weekday}.",
    ],
    "garden": [
        "The {plant} in the garden need water every {n} days.",
        "Slugs ate half of the {plant} again.",
        "I should prune {plant} before the frost.",
    ],
    "car": [
        "The car needs new tyres before winter.",
        "Parked the car in the garage on level {n}.",
        "The mechanic says the brakes have {n} thousand kilometres left.",
    ],
    "culture": [
        "{name} recommended a concert by {band} next month.",
        "I am halfway through a novel by {author}.",
        "Add the new {band} album to my playlist.",
    ],
}
ASSISTANT = [
    "Sure, I have noted that.",
    "Got it, I will remember that for {weekday}.",
    "Done, I added a reminder.",
    "Understood, I will keep that in mind when planning.",
    "Thanks!",
    "Noted. Anything else about {topic}?",
]
# The turns the questions are about, said by the user at a fixed place in a fixed session,
# and each question, asked in other words.
NEEDLES = [
    (
        2,
        7,
        "My sister Mara cannot eat cashews, so keep nuts out of the birthday cake.",
        "which family member has a cashew allergy?",
    ),
    (
        4,
        12,
        "The spare key for the garage is hidden under the blue flowerpot by the back door.",
        "where did I leave the extra garage key?",
    ),
    (
        6,
        3,
        "Our landlord Mr. Okafor is raising the rent to 1450 euros starting in January.",
        "how much will the apartment rent be next year?",
    ),
    (
        8,
        18,
        "Booked the vet for Biscuit's rabies vaccination on the 14th at 3 pm.",
        "when is the dog getting its rabies shot?",
    ),
    (
        10,
        9,
        "On long flights I always want an aisle seat because of my bad knee.",
        "what seat should be reserved for me on a long-haul plane trip?",
    ),
]


def _fill(template: str, rng: random.Random, topic: str) -> str:
    values = {key: rng.choice(options) for key, options in FILL.items()}
    return template.format(n=rng.randint(2, 9), topic=topic, **values)


def session_day(session: int) -> datetime:
    return START + timedelta(days=5 * session, hours=session % 4)


def conversation() -> list[dict[str, Any]]:
    """Deterministic turns: alternating user and assistant, two minutes apart."""
    rng = random.Random(11)
    needles = {(s, t): text for s, t, text, _ in NEEDLES}
    turns: list[dict[str, Any]] = []
    for session in range(SESSIONS):
        topic = ""
        for t in range(TURNS_PER_SESSION):
            at = session_day(session) + timedelta(minutes=2 * t)
            role = "user" if t % 2 == 0 or (session, t) in needles else "assistant"
            if (session, t) in needles:
                content = needles[(session, t)]
            elif role == "user":
                topic = rng.choice(list(USER))
                content = _fill(rng.choice(USER[topic]), rng, topic)
            else:
                content = _fill(rng.choice(ASSISTANT), rng, topic or "that")
            turns.append(
                {
                    "type": "conversation",
                    "content": content,
                    "role": role,
                    "confidence": 1.0,
                    "ttl_days": 3650,
                    "source": {
                        "tool": "conversation_logger",
                        "turn_id": f"turn_{session:02d}_{t:02d}",
                        "timestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    },
                    "context": {
                        "session_id": f"session_{session:02d}",
                        "channel": ["web chat", "mobile app"][session % 2],
                    },
                }
            )
    return turns


def _iso(moment: datetime) -> str:
    """A time as notes hold it: Obsidian's Date & time form, UTC by the vault's convention."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def every_path(result: dict[str, Any]) -> set[str]:
    """The results' paths and those collapsed into them (repeated turns such as "Thanks!")."""
    return {p for r in result["results"] for p in (r["summary"]["path"], *r.get("duplicates", []))}


def write_conversation(cli: Cli) -> dict[int, str]:
    """Every turn in one `write -`; the path of each, by its index."""
    turns = conversation()
    data = cli.ok("write", "-", ghost="alice", input=json.dumps(turns))
    assert data["rejected"] == [] and data["duplicates"] == [], data
    assert len(data["written"]) == len(turns) == SESSIONS * TURNS_PER_SESSION
    return {w["index"]: w["path"] for w in data["written"]}


def _needle_index(session: int, t: int) -> int:
    return session * TURNS_PER_SESSION + t


def check_needles(cli: Cli, paths: dict[int, str], mode: str) -> None:
    for session, t, _, question in NEEDLES:
        res = cli.ok("search", question, "--mode", mode, "--limit", "5", ghost="alice")
        top = [r["summary"] for r in res["results"]]
        wanted = paths[_needle_index(session, t)]
        assert wanted in [s["path"] for s in top], (question, [s["title"] for s in top])
        hit = next(s for s in top if s["path"] == wanted)
        assert hit["created"] == _iso(session_day(session) + timedelta(minutes=2 * t))


def test_a_question_about_one_turn_finds_it(bvault: Path, bcli: Cli) -> None:
    paths = write_conversation(bcli)
    check_needles(bcli, paths, "bm25")
    # a turn's metadata (role kept, context searchable) came through
    res = bcli.ok("search", "session_04", "--mode", "bm25", "--limit", "50", ghost="alice")
    session4 = {paths[_needle_index(4, t)] for t in range(TURNS_PER_SESSION)}
    assert every_path(res) == session4


def test_since_and_until_select_turns_by_when_they_were_said(bvault: Path, bcli: Cli) -> None:
    paths = write_conversation(bcli)
    day = session_day(6).date().isoformat()  # the landlord turn's day: all of session 6
    session6 = {paths[_needle_index(6, t)] for t in range(TURNS_PER_SESSION)}

    def search(text: str, *args: str) -> set[str]:
        return every_path(bcli.ok("search", text, "--mode", "bm25", "--limit", "100", *args, ghost="alice"))

    def query(text: str, *args: str) -> set[str]:
        res = bcli.ok("query", text, "--limit", "100", "--min-relevance", "0", *args, ghost="alice")
        return {m["path"] for m in res["matches"]}

    rent = paths[_needle_index(6, 3)]
    at = session_day(6) + timedelta(minutes=6)  # when the landlord turn was said
    for find in (search, query):
        assert rent in find("rent")
        assert find("rent", "--since", day, "--until", day) == {rent}
        assert find("rent", "--until", session_day(5).date().isoformat()) == set()
        assert find("rent", "--since", session_day(7).date().isoformat()) == set()
        assert find("rent", "--since", _iso(at), "--until", _iso(at)) == {rent}
        assert find("rent", "--since", _iso(at + timedelta(seconds=1))) == set()
    # every turn of that day and no other ("web chat" is the context of every even session)
    assert search("web chat", "--since", day, "--until", day) == session6
    everything = bcli.ok("query", ".", "--regex", "--limit", "1000", "--min-relevance", "0", "--since", day,
                         "--until", day, ghost="alice")  # fmt: skip
    assert {m["path"] for m in everything["matches"]} == session6


@pytest.mark.slow
def test_a_question_about_one_turn_finds_it_with_the_real_model(model_vault: Path, model_cli: Cli) -> None:
    paths = write_conversation(model_cli)
    for mode in ("hybrid", "vector"):
        check_needles(model_cli, paths, mode)


def test_a_turn_says_when_and_by_whom_and_its_day_finds_it(bvault: Path, bcli: Cli) -> None:
    """Issue 24, item 4: a conversation memory's result carries who said it (`role`) beside
    when (`created`), in JSON, markdown and the table; the day in words (as questions name
    it: "on Monday 8 September 2025") finds that day's turns."""
    paths = write_conversation(bcli)
    session, t, _, question = NEEDLES[2]  # the landlord's rent, said by the user
    wanted = paths[_needle_index(session, t)]
    at = session_day(session) + timedelta(minutes=2 * t)
    res = bcli.ok("search", question, "--mode", "bm25", "--limit", "5", ghost="alice")
    hit = next(r["summary"] for r in res["results"] if r["summary"]["path"] == wanted)
    assert (hit["role"], hit["created"]) == ("user", _iso(at))
    md = bcli.ok("search", question, "--mode", "bm25", "--limit", "5", "--format", "md", ghost="alice", json_=False)
    assert f"said: {at.strftime('%Y-%m-%d %H:%M')} UTC · user" in md

    # Session 1 was on a Saturday (no turn names a Saturday; some name September)
    day = session_day(1)
    words = f"{day.strftime('%A')} {day.day} {day.strftime('%B %Y')}"
    assert words == "Saturday 6 September 2025"
    res = bcli.ok("search", words, "--mode", "bm25", "--limit", "10", ghost="alice")
    assert len(res["results"]) == 10
    assert {r["summary"]["created"][:10] for r in res["results"]} == {day.date().isoformat()}
    # a note that is not a dated memory has no `role` and says nothing about when it was said
    note = bcli.ok(
        "note", "create", "--title", "Rent notes", "--type", "note", "--scope", "private",
        "--body", "The rent question is settled.", ghost="alice",
    )  # fmt: skip
    res = bcli.ok("search", "rent question settled", "--mode", "bm25", "--limit", "3", ghost="alice")
    first = res["results"][0]["summary"]
    assert first["id"] == note["id"] and "role" not in first
