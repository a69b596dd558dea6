"""Reads the per-run configuration written by scripts/oauth-test-server."""
import json
import os


def load():
    path = os.environ.get("AUTH_TEST_SERVER_CONFIG")
    if not path:
        raise RuntimeError(
            "AUTH_TEST_SERVER_CONFIG is not set: run the server through scripts/oauth-test-server"
        )
    with open(path, encoding="utf-8") as f:
        return json.load(f)
