// Imports only the contract module: `SecretRedactor` and `SecretRegistration` must come through
// its re-export (no `import AuthSessionRedaction` here).
import AuthSessionInterface
import Testing

@Suite("Adversary28b: import AuthSessionInterface alone gives SecretRedactor and SecretRegistration")
struct Adversary28bReexportInterfaceTests {

    @Test("Adversary28b: SecretRedactor.register returns a SecretRegistration, and redact uses it")
    func redactorIsVisible() {
        let secret = "quokkamarmaladeinterface"
        let registration: SecretRegistration = SecretRedactor.register(secret)
        defer { registration.cancel() }
        #expect(SecretRedactor.redact("say \(secret) now") == "say \(SecretRedactor.placeholder) now")
        #expect(SecretRedactor.minimumSecretLength >= 1)
    }
}
