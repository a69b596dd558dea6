from oauth2_provider.oauth2_validators import OAuth2Validator


class TestServerValidator(OAuth2Validator):
    """DOT's validator plus the standard profile/email claims of the user.

    Which of them end up in an ID token or the userinfo response is decided by
    DOT from the granted scopes (profile -> name/given_name/family_name/
    preferred_username, email -> email/email_verified).
    """

    # Request-agnostic form (only `self`): DOT also lists these names in the
    # discovery document's claims_supported.
    def get_additional_claims(self):
        return {
            "name": lambda r: r.user.get_full_name(),
            "given_name": lambda r: r.user.first_name,
            "family_name": lambda r: r.user.last_name,
            "preferred_username": lambda r: r.user.get_username(),
            "email": lambda r: r.user.email,
            "email_verified": lambda r: True,
        }
