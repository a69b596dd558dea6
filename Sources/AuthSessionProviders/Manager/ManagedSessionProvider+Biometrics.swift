import AuthSession
import AuthSessionInterface
import Foundation

// The biometric setting: stored on a worker of its own when another process holds the store.
extension ManagedSessionProvider {

    /// Stores the biometric setting with the session. Without a session it does nothing; a store
    /// failure keeps the setting as it was and is reported as
    /// `AuthSessionError.userUpdateFailure(error:)`.
    ///
    /// Returns at once, also while a refresh is out (nothing is held across the network). The
    /// setting is written inside the store's exclusive access, on top of the tokens the store holds
    /// (another process may have rotated them); if another thread or process is inside it at that
    /// instant (for microseconds, or a process suspended there), the write waits for it on a
    /// thread of its own, and the session (and ``isBioMetricAuthenticationEnabled``) changes when
    /// it is stored, with a `sessionUpdated` event as always.
    ///
    /// - Parameter isEnabled: Whether to gate the session behind biometrics.
    public func setBioMetricAuthentication(_ isEnabled: Bool) {
        // While a worker (or another thread's attempt) stores a setting, this one follows it: the
        // last one asked for wins, and it applies to the session it was asked for only.
        let isQueued = state.withLock { state -> Bool in
            guard state.isBiometricWorkerRunning || state.isBiometricWriteInProgress else {
                state.isBiometricWriteInProgress = true
                return false
            }
            state.pendingBiometricSetting = (isEnabled, state.machine.generation)
            return true
        }
        if isQueued { return }
        let generation = state.withLock { $0.machine.generation }
        var attempt: [ManagerEffect]?
        var failure: ManagedSessionError?
        do {
            attempt = try store.withExclusiveAccessIfAvailable { () -> [ManagerEffect] in
                writeLock.withLock { _ in storeBiometricSetting(isEnabled) }
            }
        } catch {
            failure = .storage(Self.storeError(error))
        }
        let startsWorker = state.withLock { state -> Bool in
            state.isBiometricWriteInProgress = false
            if attempt == nil, failure == nil, state.pendingBiometricSetting == nil {
                // Not stored (the access was held): the worker stores it.
                state.pendingBiometricSetting = (isEnabled, generation)
            }
            guard state.pendingBiometricSetting != nil, !state.isBiometricWorkerRunning else { return false }
            state.isBiometricWorkerRunning = true
            return true
        }
        if let failure { reportUpdateFailure(failure) }
        if let effects = attempt { perform(effects) }
        drainOutbox()
        if startsWorker {
            startBiometricWorker()
        }
    }

    /// Stores the latest requested biometric setting, waiting for the store's exclusive access, on
    /// a thread of its own; ends when no setting is pending.
    func startBiometricWorker() {
        beginOperation()
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.biometricSetting") { _ in
                while let (isEnabled, generation) = state.withLock({ state -> (Bool, UInt64)? in
                    defer { state.pendingBiometricSetting = nil }
                    if state.pendingBiometricSetting == nil { state.isBiometricWorkerRunning = false }
                    return state.pendingBiometricSetting
                }) {
                    var effects: [ManagerEffect] = []
                    do {
                        effects = try store.withExclusiveAccess { () -> [ManagerEffect] in
                            writeLock.withLock { _ in
                                // Asked for a session that has ended since: not another's to change.
                                guard state.withLock({ $0.machine.generation == generation }) else { return [] }
                                return storeBiometricSetting(isEnabled)
                            }
                        }
                    } catch {
                        reportUpdateFailure(
                            .storage(Self.storeError(error))
                        )
                    }
                    perform(effects)
                    drainOutbox()
                }
            }
            endOperation()
        }
        thread.name = "AuthSessionKit.biometricSetting"
        thread.start()
    }

    /// Writes the setting with the tokens the store holds for this user (adopting another
    /// process's rotation), or with the runtime session's while its own write is pending. Never
    /// over another user's session, and never into a store a process sharing it signed out of:
    /// that is reported, and the next refresh finds the session signed out elsewhere.
    func storeBiometricSetting(_ isEnabled: Bool) -> [ManagerEffect] {
        // `unsavedOver` is set (to the stored refresh token, which may be nil) while a write
        // is pending.
        let snapshot = state.withLock { state -> (current: ManagedSession, unsavedOver: String??)? in
            guard let session = state.machine.session else { return nil }
            return (session, state.machine.isSessionUnsaved ? .some(state.machine.unsavedOver) : .none)
        }
        guard let (current, unsavedOver) = snapshot else { return [] }
        do throws(SessionStoreError) {
            var updated = current
            guard case .session(let stored) = try loadForCompare() else {
                // Bytes that are no session, set aside by the store: this process's session is
                // the one to keep, written back with the setting.
                updated.isBiometricAuthenticationEnabled = isEnabled
                try store.save(updated)
                return state.withLock { $0.machine.biometricSettingStored(updated) }
            }
            if let unsavedOver {
                // The store holds the tokens the pending write replaces, or (a retried write
                // landed) the runtime session's own.
                guard let stored, [unsavedOver, current.refreshToken].contains(stored.refreshToken) else {
                    reportUpdateFailure(.signedOutElsewhere)
                    return []
                }
            } else {
                guard let stored, stored.isSameIdentity(as: current) else {
                    reportUpdateFailure(.signedOutElsewhere)
                    return []
                }
                updated = stored
            }
            guard updated.isBiometricAuthenticationEnabled != isEnabled || updated != current else { return [] }
            updated.isBiometricAuthenticationEnabled = isEnabled
            try store.save(updated)
            return state.withLock { $0.machine.biometricSettingStored(updated) }
        } catch {
            reportUpdateFailure(.storage(error))
            return []
        }
    }

    /// Queues the biometric setting's failure as `AuthSessionError.userUpdateFailure(error:)`.
    func reportUpdateFailure(_ cause: ManagedSessionError) {
        let reported = AuthSessionError.userUpdateFailure(error: cause)
        state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
    }
}
