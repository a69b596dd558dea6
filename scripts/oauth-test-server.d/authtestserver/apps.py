from django.apps import AppConfig


class AuthTestServerConfig(AppConfig):
    name = "authtestserver"
    verbose_name = "AuthSessionKit OAuth test server"

    def ready(self):
        # Django's development server answers a request on a reused keep-alive
        # connection ~40 ms late (Nagle + delayed ACK) unless TCP_NODELAY is set
        # on accepted sockets. StreamRequestHandler.setup() honours this flag.
        from django.core.servers.basehttp import WSGIRequestHandler

        WSGIRequestHandler.disable_nagle_algorithm = True
