"""Token-request log: one JSON line per POST /o/token/.

Tests read <state-dir>/token-requests.log to prove that a client never
presents the same refresh token twice. Each line is written with a single
os.write() on an O_APPEND descriptor, so lines from concurrent requests never
interleave and are visible to readers as soon as the response is sent.
"""
import base64
import binascii
import hashlib
import json
import os
import time
from urllib.parse import parse_qs, unquote_plus

from django.conf import settings

TOKEN_PATH = "/o/token/"


def _client_id(form, request):
    values = form.get("client_id")
    if values:
        return values[0]
    auth = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, encoded = auth.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, _ = decoded.partition(":")
    return unquote_plus(user) if sep else None


class TokenRequestLogMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.path = settings.TOKEN_REQUEST_LOG

    def __call__(self, request):
        if request.method != "POST" or request.path != TOKEN_PATH:
            return self.get_response(request)
        # Read (and cache) the raw body before any view parses it.
        try:
            raw = request.body.decode("utf-8", errors="replace")
        except Exception:  # body unreadable: still log the request
            raw = ""
        form = parse_qs(raw, keep_blank_values=True)
        refresh = form.get("refresh_token", [None])[0]
        response = self.get_response(request)
        entry = {
            "grant_type": form.get("grant_type", [None])[0],
            "client_id": _client_id(form, request),
            "refresh_token_sha256": (
                hashlib.sha256(refresh.encode("utf-8")).hexdigest() if refresh is not None else None
            ),
            "status": response.status_code,
            "time": round(time.time(), 6),
        }
        line = (json.dumps(entry, separators=(", ", ": ")) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        return response
