import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("KeychainCalls: what goes into each Keychain call's dictionaries")
struct KeychainCallsTests {

    let address = KeychainItemAddress(service: "com.example.app", account: "session", accessGroup: nil)
    let grouped = KeychainItemAddress(service: "com.example.app", account: "session", accessGroup: "ABCDE12345.shared")
    let contents = KeychainItemContents(data: Data("bytes".utf8), stamp: Data([1, 2]))
    let plain = KeychainItemProtection(accessibility: .afterFirstUnlockThisDeviceOnly, accessControl: nil)
    let controlled = KeychainItemProtection(accessibility: .whenUnlockedThisDeviceOnly, accessControl: .userPresence)
    let dataProtection = KeychainCalls(usesDataProtectionKeychain: true, carriesAuthenticationContext: false)

    @Test("every call names the item and the keychain; the access group only when given")
    func naming() {
        #expect(
            dataProtection.query(for: address) == [
                .itemClass: .genericPassword,
                .service: .string("com.example.app"),
                .account: .string("session"),
                .useDataProtectionKeychain: .bool(true),
            ]
        )
        #expect(dataProtection.query(for: grouped)[.accessGroup] == .string("ABCDE12345.shared"))
        let fileBased = KeychainCalls(usesDataProtectionKeychain: false, carriesAuthenticationContext: false)
        #expect(fileBased.query(for: address)[.useDataProtectionKeychain] == .bool(false))
    }

    @Test("a store with an access control carries its context, which may not prompt, on every call")
    func context() throws {
        let calls = KeychainCalls(usesDataProtectionKeychain: true, carriesAuthenticationContext: true)
        #expect(calls.query(for: address)[.useAuthenticationContext] == .authenticationContext)
        #expect(calls.read(address)[.useAuthenticationContext] == .authenticationContext)
        #expect(
            try calls.add(address, contents, protection: controlled).get()[.useAuthenticationContext]
                == .authenticationContext
        )
        #expect(
            calls.move(address, stamp: Data([1]), toAccount: "aside").query[.useAuthenticationContext]
                == .authenticationContext
        )
        #expect(dataProtection.query(for: address)[.useAuthenticationContext] == nil)
    }

    @Test("a read asks for one item's data and attributes")
    func read() {
        let read = dataProtection.read(address)
        #expect(read[.returnData] == .bool(true) && read[.returnAttributes] == .bool(true))
        #expect(read[.matchLimit] == .matchLimitOne)
        #expect(read[.valueData] == nil && read[.generic] == nil)
    }

    @Test("an add writes the data, the stamp and the accessibility; a probe without a stamp writes none")
    func add() throws {
        let add = try dataProtection.add(address, contents, protection: plain).get()
        #expect(add[.valueData] == .data(Data("bytes".utf8)))
        #expect(add[.generic] == .data(Data([1, 2])))
        #expect(add[.accessible] == .accessibility(.afterFirstUnlockThisDeviceOnly))
        #expect(add[.accessControl] == nil)
        #expect(add[.service] == .string("com.example.app"), "an add names the item too")
        let probe = try dataProtection.add(
            address,
            KeychainItemContents(data: Data([0]), stamp: nil),
            protection: plain
        ).get()
        #expect(probe[.generic] == nil)
    }

    @Test("an access control replaces the accessibility, with it as its protection")
    func accessControl() throws {
        let add = try dataProtection.add(address, contents, protection: controlled).get()
        #expect(add[.accessControl] == .accessControl(.userPresence, .whenUnlockedThisDeviceOnly))
        #expect(add[.accessible] == nil, "kSecAttrAccessible and kSecAttrAccessControl never together")
    }

    @Test("an update writes the data, the stamp and the protection, never the item's name")
    func update() throws {
        let update = try dataProtection.update(to: contents, protection: plain).get()
        #expect(Set(update.keys) == [.valueData, .generic, .accessible])
    }

    @Test("a move matches the stamp that was read and writes only the new account")
    func move() {
        let move = dataProtection.move(address, stamp: Data([9]), toAccount: "session.corrupt-1-a")
        #expect(move.query[.generic] == .data(Data([9])))
        #expect(move.query[.account] == .string("session"))
        #expect(move.changes == [.account: .string("session.corrupt-1-a")])
    }

    @Test("only macOS has a keychain other than the data-protection one: elsewhere the flag is ignored")
    func effectiveKeychain() {
        #expect(KeychainCalls.usesDataProtectionKeychain(requested: true, isMacOS: true))
        #expect(!KeychainCalls.usesDataProtectionKeychain(requested: false, isMacOS: true))
        #expect(KeychainCalls.usesDataProtectionKeychain(requested: false, isMacOS: false), "iOS, Mac Catalyst")
        #expect(KeychainCalls.usesDataProtectionKeychain(requested: true, isMacOS: false))
    }

    @Test("the file-based macOS keychain: no accessibility (it does not apply there), and an access control is refused")
    func fileBased() throws {
        let fileBased = KeychainCalls(usesDataProtectionKeychain: false, carriesAuthenticationContext: false)
        let add = try fileBased.add(address, contents, protection: plain).get()
        #expect(add[.accessible] == nil && add[.accessControl] == nil)
        #expect(throws: KeychainStatus(-50)) { try fileBased.add(address, contents, protection: controlled).get() }
        #expect(throws: KeychainStatus(-50)) { try fileBased.update(to: contents, protection: controlled).get() }
        #expect(KeychainStatus(-50).name == "errSecParam")
    }
}
