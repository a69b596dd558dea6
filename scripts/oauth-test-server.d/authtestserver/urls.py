from django.contrib import admin
from django.urls import include, path
from oauth2_provider.urls import metadata_urlpatterns

urlpatterns = [
    path("admin/", admin.site.urls),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414 section 3.1: for the issuer http://127.0.0.1:PORT/o the metadata
    # lives at /.well-known/oauth-authorization-server/o (DOT also answers at
    # /o/.well-known/oauth-authorization-server through the include above).
    path("", include((metadata_urlpatterns, "oauth2_metadata"))),
]
