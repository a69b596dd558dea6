"""Django settings of the loopback OAuth 2.0 / OpenID Connect test server.

Everything that changes per run (port, paths, grace period, signing key) comes
from the JSON file named by AUTH_TEST_SERVER_CONFIG, written by
scripts/oauth-test-server. Test-only: never deploy these settings.
"""
import os

from authtestserver import config as _config
from authtestserver import keys as _keys

_CFG = _config.load()

HOST = _CFG["host"]  # always 127.0.0.1
PORT = int(_CFG["port"])
BASE_URL = f"http://{HOST}:{PORT}"

SECRET_KEY = _CFG["djangoSecretKey"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "oauth2_provider",
    "authtestserver.apps.AuthTestServerConfig",
]

MIDDLEWARE = [
    # Outermost, so it records the final status of every POST /o/token/.
    "authtestserver.middleware.TokenRequestLogMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "authtestserver.urls"
WSGI_APPLICATION = None  # runserver builds the default WSGI handler

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": _CFG["database"],
        "OPTIONS": {
            # BEGIN IMMEDIATE: concurrent refreshes queue on the write lock
            # instead of failing with "database is locked" (HTTP 500).
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }
}

# Fast hasher for the test user (and anything else hashed at runtime).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"  # served by `runserver --insecure`
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Unauthenticated visits to the device pages (and /o/authorize/) are sent to
# the admin login form, which accepts staff users (the test user is staff).
LOGIN_URL = "/admin/login/"

TOKEN_REQUEST_LOG = _CFG["tokenRequestLog"]

with open(_CFG["oidcKeyFile"], encoding="ascii") as _f:
    _OIDC_KEY = _f.read()

ISSUER = f"{BASE_URL}/o"

OAUTH2_PROVIDER = {
    "ACCESS_TOKEN_EXPIRE_SECONDS": 60,
    "ID_TOKEN_EXPIRE_SECONDS": 600,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": int(_CFG["refreshGracePeriodSeconds"]),
    "PKCE_REQUIRED": True,
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _OIDC_KEY,
    # Keys retired by `oauth-test-server rotate-key` (oidc-keys-inactive.pem, newest
    # first): published in the JWKS after the active key, never used to sign.
    "OIDC_RSA_PRIVATE_KEYS_INACTIVE": _keys.read_pem_file(_CFG.get("oidcInactiveKeysFile")),
    "OIDC_ISS_ENDPOINT": ISSUER,
    # RFC 9207: the authorization response carries `iss`, and the metadata advertises it, so the
    # client's required-`iss` path (the mix-up defence) runs against a real server.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "OAUTH_DEVICE_VERIFICATION_URI": f"{BASE_URL}/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"{BASE_URL}/o/device/?user_code={{user_code}}",
    "DEVICE_FLOW_INTERVAL": int(_CFG["deviceIntervalSeconds"]),
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Profile",
        "email": "Email address",
        "read": "Read",
        "write": "Write",
        "introspection": "Introspect tokens",
    },
    # Requests without `scope` get only `read` (DOT's default would be all
    # scopes, including openid and introspection).
    "DEFAULT_SCOPES": ["read"],
    "OAUTH2_VALIDATOR_CLASS": "authtestserver.validators.TestServerValidator",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        # With DEBUG False Django would send 500 tracebacks only to mail_admins.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "oauth2_provider": {"handlers": ["console"], "level": "WARNING", "propagate": False},
    },
}
