"""The workbench's safety on a real server: one assessor cannot read or write another's items,
a post without its CSRF token is refused, a blind battle's API names no run, and a server
killed with SIGKILL mid-session loses no saved judgment."""

from __future__ import annotations

from pathlib import Path

from workbench_server import Server, login, populate, serving

RUN_IDS = ("sample-good", "sample-middling", "sample-hostile")


def _items(url: str, name: str) -> tuple[object, str, list[dict]]:
    client, csrf = login(url, name)
    return client, csrf, client.get("/api/items").json()


def test_assessors_reach_only_their_items_and_csrf_is_required(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    with serving(database, tmp_path / "server.log") as server:
        alice, alice_csrf, theirs = _items(server.url, "alice")
        bob, bob_csrf, bobs = _items(server.url, "bob")
        only_bob = {i["ref"] for i in bobs} - {i["ref"] for i in theirs}
        assert only_bob
        ref = sorted(only_bob)[0]
        item = next(i for i in bobs if i["ref"] == ref)
        key = "o" if item["task"] == "battle" else None
        assert alice.get(f"/item/{ref}").status_code == 404
        assert alice.get(f"/api/item/{ref}").status_code == 404
        shown = bob.get(f"/api/item/{ref}").json()["shown"]
        key = key or (shown["questions"][0]["key"] if shown["questions"] else "nuggets")
        label = shown["questions"][0]["labels"][0] if shown["questions"] else []
        body = {"key": key, "value": label}
        refused = alice.post(f"/api/item/{ref}", json=body,
                             headers={"X-CSRF-Token": alice_csrf})
        assert refused.status_code == 404
        assert bob.get(f"/api/item/{ref}").json()["value"] == {}
        # no CSRF token, or another session's: refused
        assert bob.post(f"/api/item/{ref}", json=body).status_code == 403
        assert bob.post(f"/api/item/{ref}", json=body,
                        headers={"X-CSRF-Token": alice_csrf}).status_code == 403
        assert bob.post(f"/item/{ref}", data={key: str(label)}).status_code == 403
        assert bob.get(f"/api/item/{ref}").json()["value"] == {}
        assert bob.post(f"/api/item/{ref}", json=body,
                        headers={"X-CSRF-Token": bob_csrf}).status_code == 200
        # an assessor is not the organizer; nobody logged out reads anything
        assert alice.get("/project/1").status_code == 404
        assert alice.get("/project/1/export.zip").status_code == 404
        import httpx2
        assert httpx2.get(f"{server.url}/api/items").status_code == 401
        # a blind battle names no run in its page or API
        battle = next(i for i in theirs if i["task"] == "battle")
        for path in (f"/item/{battle['ref']}", f"/api/item/{battle['ref']}", "/api/items", "/"):
            text = alice.get(path).text
            assert not any(r in text for r in RUN_IDS), path
        # the login form wants its token too
        anonymous = httpx2.Client(base_url=server.url)
        assert anonymous.post("/login", data={"name": "alice", "password": "x"}
                              ).status_code == 403


def test_a_killed_server_loses_no_saved_judgment(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    server = Server(database, tmp_path / "server.log").start()
    saved: dict[str, dict] = {}
    try:
        client, csrf, items = _items(server.url, "alice")
        for item in items:
            if item["task"] in ("assign", "support", "rubric"):
                shown = client.get(f"/api/item/{item['ref']}").json()["shown"]
                for q in shown["questions"]:
                    r = client.post(f"/api/item/{item['ref']}", headers={"X-CSRF-Token": csrf},
                                    json={"key": q["key"], "value": q["labels"][-1]})
                    assert r.status_code == 200
                    saved.setdefault(item["ref"], {})[q["key"]] = q["labels"][-1]
        assert len(saved) > 5
        server.kill()  # SIGKILL, mid-session
        server.start()
        client, _, _ = _items(server.url, "alice")
        for ref, value in saved.items():
            assert client.get(f"/api/item/{ref}").json()["value"] == value
    finally:
        server.stop()
