import AuthSession
import AuthSessionInterface
import Foundation

extension AuthSessionHandle where AuthSessionProvider == ManagedSessionProvider {

    /// Waits until the launch has settled for the manager and for this handle: what a
    /// command-line tool calls before it reads the session.
    ///
    /// ```swift
    /// let provider = ManagedSessionProvider(store: FileSessionStore(directory: folder), remote: service)
    /// let handle = AuthSessionHandle(sessionProvider: provider)
    /// await handle.waitUntilLaunchSettled()
    /// if let session = provider.session { ... }   // what the launch settled on, refreshed if it was due
    /// ```
    ///
    /// It waits for ``ManagedSessionProvider/waitUntilLaunchSettled()`` (the store read, a stored
    /// session that was due refreshed, the manager idle, its observations delivered), then for
    /// ``AuthSessionHandle/waitUntilIdle()``: the handle applied every event the launch published,
    /// so ``AuthSessionHandle/sessionStatus`` is the launch's outcome (``AuthSessionStatus/signedIn``,
    /// ``AuthSessionStatus/signedOut``, ...), not ``AuthSessionStatus/syncing``. It does not wait
    /// for delegates to run their callbacks, nor for a biometric prompt to be answered.
    ///
    /// A store that cannot be read (``SessionStoreError/unavailable(reason:)``) leaves the launch
    /// waiting for it: the wait returns with no session and the status still
    /// ``AuthSessionStatus/syncing`` (see ``ManagedSessionProvider/waitUntilLaunchSettled()``).
    public func waitUntilLaunchSettled() async {
        await sessionProvider.waitUntilLaunchSettled()
        await waitUntilIdle()
    }
}
