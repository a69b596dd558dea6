// `SecretRedactor` and `SecretRegistration` live in the module below every other, so that the JOSE
// module's errors redact the same registered secrets; they stay where users import them.
@_exported import AuthSessionRedaction
