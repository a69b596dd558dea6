"""Prepares a fresh state directory for the OAuth test server.

Run by scripts/oauth-test-server with the virtualenv's python and
AUTH_TEST_SERVER_CONFIG set. Generates the OIDC signing key, creates the
SQLite database (copy of a cached, freshly migrated template, or migrate),
the test user and one application per grant. Prints the clients as JSON on
stdout; everything else goes to stderr.

usage: setup_server.py --template PATH --template-stamp HEX
"""
import argparse
import json
import os
import secrets
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

USER = {
    "username": "testuser",
    "password": "test-password-1",
    "email": "test.user@example.com",
    "givenName": "Test",
    "familyName": "User",
}

REDIRECT_URI = "http://127.0.0.1/callback"


def generate_key(path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)


def template_valid(template, stamp):
    try:
        with open(template + ".stamp", encoding="ascii") as f:
            return f.read().strip() == stamp and os.path.isfile(template)
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--template", required=True)
    parser.add_argument("--template-stamp", required=True)
    args = parser.parse_args()

    with open(os.environ["AUTH_TEST_SERVER_CONFIG"], encoding="utf-8") as f:
        cfg = json.load(f)
    generate_key(cfg["oidcKeyFile"])

    database = cfg["database"]
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.remove(database + suffix)
    from_template = template_valid(args.template, args.template_stamp)
    if from_template:
        shutil.copyfile(args.template, database)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "authtestserver.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if not from_template:
        print("oauth-test-server: migrating a new database (cached for later starts)", file=sys.stderr)
        call_command("migrate", interactive=False, verbosity=0)
        connection.close()
        tmp = f"{args.template}.{os.getpid()}.tmp"
        shutil.copyfile(database, tmp)
        os.replace(tmp, args.template)
        with open(args.template + ".stamp", "w", encoding="ascii") as f:
            f.write(args.template_stamp + "\n")

    from django.contrib.auth import get_user_model
    from oauth2_provider.models import get_application_model

    User = get_user_model()
    Application = get_application_model()

    user = User.objects.create_user(
        username=USER["username"],
        password=USER["password"],
        email=USER["email"],
        first_name=USER["givenName"],
        last_name=USER["familyName"],
    )
    # Staff, so that the admin login form (/admin/login/) accepts the user.
    user.is_staff = True
    user.save(update_fields=["is_staff"])

    device = "urn:ietf:params:oauth:grant-type:device_code"
    roles = [
        # role, client_id, type, DOT grant, redirect, algorithm, skip_authorization
        ("authorizationCode", "test-authorization-code", "public", "authorization-code", REDIRECT_URI, "RS256", True),
        # The consent page is shown and must be approved: browser sign-in tests drive it.
        ("authorizationCodeConsent", "test-authorization-code-consent", "public", "authorization-code", REDIRECT_URI,
         "RS256", False),
        ("password", "test-password", "confidential", "password", None, "RS256", False),
        ("passwordPublic", "test-password-public", "public", "password", None, "RS256", False),
        ("clientCredentials", "test-client-credentials", "confidential", "client-credentials", None, "", False),
        ("device", "test-device", "public", device, None, "RS256", False),
        ("introspector", "test-introspector", "confidential", "client-credentials", None, "", False),
    ]
    # The grant_type value a client sends to the token endpoint.
    wire_grant = {
        "authorization-code": "authorization_code",
        "password": "password",
        "client-credentials": "client_credentials",
        device: device,
    }
    clients = {}
    for role, client_id, client_type, grant, redirect, algorithm, skip in roles:
        secret = secrets.token_urlsafe(32)
        Application.objects.create(
            name=role,
            client_id=client_id,
            # Public clients get a random secret that is never published, as
            # DOT does by default: they authenticate with client_id alone.
            client_secret=secret,
            hash_client_secret=False,  # plain compare: ~20 ms refreshes, not ~360 ms
            client_type=client_type,
            authorization_grant_type=grant,
            redirect_uris=redirect or "",
            algorithm=algorithm,
            skip_authorization=skip,
            user=None,
        )
        clients[role] = {
            "clientId": client_id,
            "clientSecret": secret if client_type == "confidential" else None,
            "clientType": client_type,
            "grantType": wire_grant[grant],
            "redirectURI": redirect,
            "algorithm": algorithm or None,
        }
    connection.close()
    json.dump({"user": USER, "clients": clients, "migrated": not from_template}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
