// The JOSE types (`JSONWebSignature`, `JSONWebKey`, `JSONWebKeySet`, `IDTokenValidationError`, ...)
// live in `AuthSessionJOSE`; they stay where users have imported them.
@_exported import AuthSessionJOSE
