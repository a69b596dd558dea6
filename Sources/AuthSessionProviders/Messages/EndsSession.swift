/// An error that says whether the session it happened to is over: the app should show sign-in.
///
/// Every typed error of the package conforms, so `endsSession` reads the same on the error a
/// typed-throws call throws (`catch let error as RemoteAuthError`, a `throws(ManagedSessionError)`
/// function's error) and on `any Error` (through the extension on `Error`).
///
/// It describes errors of token calls, refreshes and events. A failed sign-in leaves the session
/// there was (if any) as it was, whatever this says.
public protocol SessionEndingError: Error {

    /// Whether the session is over: the app should show sign-in.
    var endsSession: Bool { get }
}

extension Error {

    /// Whether the session is over: the app should show sign-in. `true` only for an error of
    /// this package that says so (``SessionEndingError``); any other error ends no session.
    public var endsSession: Bool {
        (self as? any SessionEndingError)?.endsSession ?? false
    }
}

extension ManagedSessionError: SessionEndingError {}

extension RemoteAuthError: SessionEndingError {

    /// Whether the session is over: the server refused the grant for good (``Kind/terminal``:
    /// `invalid_grant`, another user's ID token).
    public var endsSession: Bool { kind == .terminal }
}

extension IDTokenValidationError: SessionEndingError {

    /// Whether the session is over: only when the ID token names another user than the
    /// session's (``subjectMismatch(expected:actual:)``); every other fault is the
    /// configuration's or passes.
    public var endsSession: Bool { RemoteAuthError(.invalidIDToken(self)).endsSession }
}

extension SessionStoreError: SessionEndingError {

    /// `false`: a store that cannot be read or written ends no session (the session stands in
    /// memory, and its write is retried).
    public var endsSession: Bool { false }
}

extension JSONWebKeySetError: SessionEndingError {

    /// `false`: a key set that cannot be read ends no session.
    public var endsSession: Bool { false }
}
