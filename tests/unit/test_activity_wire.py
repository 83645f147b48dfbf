"""The activity wire is one declaration (courseschool.common.activity): what the resource
API encodes is what the authorization server decodes, field for field, and an answer of
another shape is refused rather than half read."""

from __future__ import annotations

import msgspec
import pytest

from courseschool.common.activity import ActivityAnswer, ChangedItem, GrantActivity, decode_answer


def _answer() -> ActivityAnswer:
    changed = [
        ChangedItem(area="students", item_id="s-1", name="Ada", action="update", at="2026-11-28T10:00:00+00:00"),
        ChangedItem(area="school", item_id=None, name=None, action="update", at="2026-11-27T09:00:00+00:00"),
    ]
    grant = GrantActivity(
        grant_id="6f1c3e0e-0000-4000-8000-000000000001",
        client_id="cli",
        user_id="u-1",
        school_id="6f1c3e0e-0000-4000-8000-000000000002",
        reads={"courses": 120, "students": 4},
        changes={"students": 1, "school": 1},
        changed=changed,
        last_acted="2026-11-28T10:00:00+00:00",
    )
    return ActivityAnswer(since="2026-10-30T00:00:00+00:00", days=30, grants=[grant])


def test_what_one_side_encodes_the_other_decodes_whole() -> None:
    answer = _answer()
    assert decode_answer(msgspec.json.encode(answer)) == answer


def test_the_encoded_names_are_the_documented_ones() -> None:
    body = msgspec.json.decode(msgspec.json.encode(_answer()))
    assert set(body) == {"since", "days", "grants"}
    assert set(body["grants"][0]) == {
        "grant_id", "client_id", "user_id", "school_id", "reads", "changes", "changed", "last_acted",
    }  # fmt: skip
    assert set(body["grants"][0]["changed"][0]) == {"area", "item_id", "name", "action", "at"}


@pytest.mark.parametrize(
    "body",
    [
        b'{"since": "x", "days": "30", "grants": []}',  # a number as a string
        b'{"days": 30, "grants": []}',  # no period
        b'{"since": "x", "days": 30, "grants": [{"grant_id": "g"}]}',  # a grant without its counts
        b"not json",
    ],
)
def test_an_answer_of_another_shape_is_refused(body: bytes) -> None:
    with pytest.raises((msgspec.ValidationError, msgspec.DecodeError)):
        decode_answer(body)
