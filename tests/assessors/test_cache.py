"""The SQLite call cache and the cache key the Assessor builds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nuggetizer.assessors import Assessor, OpenAIBackend, Request
from nuggetizer.cache import Cache, cache_key, canonical_json, default_cache_path


def test_round_trip_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    value = {"text": "[\"support\"]", "model": "m", "nested": {"ü": [1, 2.5, None]}}
    with Cache(path) as cache:
        assert cache.get("k1") is None
        cache.put("k1", value)
        assert cache.get("k1") == value
        assert "k1" in cache and len(cache) == 1
    reopened = Cache(path)
    try:
        assert reopened.get("k1") == value
        reopened.put("k1", {"text": "new"})
        assert reopened.get("k1") == {"text": "new"}
        assert len(reopened) == 1
    finally:
        reopened.close()


def test_put_is_committed_at_once(tmp_path: Path) -> None:
    """A second connection sees each put without any close: a killed run loses nothing."""
    path = tmp_path / "cache.sqlite"
    cache = Cache(path)
    cache.put("k", {"v": 1})
    other = sqlite3.connect(str(path))
    try:
        assert other.execute("SELECT value FROM calls WHERE key='k'").fetchone() == ('{"v": 1}',)
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()
        cache.close()


def test_closed_cache_raises(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        cache.get("k")


def test_default_cache_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NUGGETIZER_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("NUGGETIZER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "nuggetizer" / "llm-cache.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "nuggetizer" / "llm-cache.sqlite"


def test_canonical_key() -> None:
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert cache_key({"b": 1, "a": 2}) == cache_key({"a": 2, "b": 1})
    assert len(cache_key({})) == 64


def _assessor(base_url: str, api_key: str = "k", structured: str = "json_object") -> Assessor:
    backend = OpenAIBackend("m", base_url=base_url, api_key=api_key, structured=structured)
    return Assessor(backend, None)


REQUEST = Request(messages=(("user", "hi"),), schema={"type": "array"}, temperature=0.0)


def test_key_excludes_base_url_and_api_key() -> None:
    a = _assessor("http://host-a:8000/v1", "key-a")
    b = _assessor("http://host-b:9000/v1", "key-b")
    assert a.cache_key(REQUEST) == b.cache_key(REQUEST)


@pytest.mark.parametrize(
    "changed",
    [
        Request(messages=(("user", "hi"),), schema={"type": "array"}, temperature=0.7),
        Request(messages=(("user", "hi"),), schema={"type": "object"}),
        Request(messages=(("user", "hi"),), schema=None),
        Request(messages=(("user", "hi!"),), schema={"type": "array"}),
        Request(messages=(("system", "hi"),), schema={"type": "array"}),
        Request(messages=(("user", "hi"),), schema={"type": "array"}, max_tokens=8),
        Request(messages=(("user", "hi"),), schema={"type": "array"}, seed=1),
        Request(messages=(("user", "hi"),), schema={"type": "array"}, top_logprobs=5),
    ],
)
def test_key_includes_what_changes_the_output(changed: Request) -> None:
    assessor = _assessor("http://host:8000/v1")
    assert assessor.cache_key(changed) != assessor.cache_key(REQUEST)


def test_key_includes_model_and_structured_mode() -> None:
    base = _assessor("http://h/v1", structured="json_object").cache_key(REQUEST)
    assert _assessor("http://h/v1", structured="json_schema").cache_key(REQUEST) != base
    other = Assessor(OpenAIBackend("m2", base_url="http://h/v1", structured="json_object"), None)
    assert other.cache_key(REQUEST) != base
