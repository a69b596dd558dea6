#!/usr/bin/env python3
"""Django entry point of the OAuth test server (see ../oauth-test-server.md).

Run by scripts/oauth-test-server with the virtualenv's python and
AUTH_TEST_SERVER_CONFIG pointing at <state-dir>/server-config.json.
"""
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "authtestserver.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
