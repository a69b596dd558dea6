"""Rotates the OIDC signing key of a state directory.

Run by `scripts/oauth-test-server rotate-key` with the virtualenv's python and
AUTH_TEST_SERVER_CONFIG set, before it restarts the server (which reads the
keys only when it starts). Generates a new 2048-bit RSA key the way `start`
does (setup_server.generate_key) and makes it oidc-key.pem. With --keep-old
the replaced key goes first into oidc-keys-inactive.pem (DOT's
OIDC_RSA_PRIVATE_KEYS_INACTIVE, published in the JWKS, newest first); with
--drop-old that file is removed. Prints {"activeKid": ..., "inactiveKeys": N}
on stdout; the kid is DOT's: the key's RFC 7638 SHA-256 thumbprint. (The
inactive keys' kids are not computed here: parsing an RSA key costs ~45 ms;
the script reads them from the restarted server's JWKS.)

usage: rotate_key.py --keep-old | --drop-old
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from authtestserver.keys import read_pem_file, read_pems  # noqa: E402
from setup_server import generate_key  # noqa: E402


def kid(pem):
    from jwcrypto import jwk

    # As DOT's JWKS view and ID token header: jwk_from_pem(pem).thumbprint().
    return jwk.JWK.from_pem(pem.encode("ascii")).thumbprint()


def write_private(path, text):
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    keep = parser.add_mutually_exclusive_group(required=True)
    keep.add_argument("--keep-old", dest="keep_old", action="store_true")
    keep.add_argument("--drop-old", dest="keep_old", action="store_false")
    args = parser.parse_args()

    with open(os.environ["AUTH_TEST_SERVER_CONFIG"], encoding="utf-8") as f:
        cfg = json.load(f)
    key_path, inactive_path = cfg["oidcKeyFile"], cfg["oidcInactiveKeysFile"]

    new_tmp = f"{key_path}.{os.getpid()}.new"
    try:
        generate_key(new_tmp)
        with open(new_tmp, encoding="ascii") as f:
            new_pem = f.read()
        inactive = []
        if args.keep_old:
            with open(key_path, encoding="ascii") as f:
                inactive = read_pems(f.read()) + read_pem_file(inactive_path)
            inactive = [p for i, p in enumerate(inactive) if p not in inactive[:i] and p != new_pem]
        # Inactive keys first, then the active one: a crash in between leaves
        # the old key published twice, never unpublished.
        if inactive:
            write_private(inactive_path, "".join(p if p.endswith("\n") else p + "\n" for p in inactive))
        elif os.path.exists(inactive_path):
            os.remove(inactive_path)
        os.replace(new_tmp, key_path)
    finally:
        if os.path.exists(new_tmp):
            os.remove(new_tmp)

    json.dump({"activeKid": kid(new_pem), "inactiveKeys": len(inactive)}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
