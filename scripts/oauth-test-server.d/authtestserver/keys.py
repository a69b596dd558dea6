"""The OIDC key files of a state directory (stdlib only: settings.py and
rotate_key.py both use it)."""
import re

_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----\n?", re.S)


def read_pems(text):
    """The PEM blocks in text, in order."""
    return [m.group(0) for m in _PEM.finditer(text)]


def read_pem_file(path):
    """The PEM blocks of a file; [] if there is no such file (or no path)."""
    if not path:
        return []
    try:
        with open(path, encoding="ascii") as f:
            return read_pems(f.read())
    except FileNotFoundError:
        return []
