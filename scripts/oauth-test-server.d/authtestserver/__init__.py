"""Django project of the loopback OAuth 2.0 / OpenID Connect test server."""
