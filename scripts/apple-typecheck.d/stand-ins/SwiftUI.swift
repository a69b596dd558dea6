// A stand-in for the part of SwiftUI that the documentation's snippets and Examples/SwiftUIApp
// use, so that their `#if canImport(SwiftUI)` code is type-checked on Linux (.ci/check-snippets,
// scripts/apple-typecheck --snippets). Declarations follow Apple's documentation
// (https://developer.apple.com/documentation/swiftui): `View`, `App` and `Scene` are main-actor
// protocols. Bodies never run: only the types matter.

@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View {
    public var body: Never { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/swiftui/viewbuilder
@resultBuilder
public enum ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<C0: View, C1: View>(_ c0: C0, _ c1: C1) -> TupleView<(C0, C1)> { TupleView((c0, c1)) }
    public static func buildBlock<C0: View, C1: View, C2: View>(_ c0: C0, _ c1: C1, _ c2: C2) -> TupleView<(C0, C1, C2)> {
        TupleView((c0, c1, c2))
    }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<First: View, Second: View>(first: First) -> Either<First, Second> { .first(first) }
    public static func buildEither<First: View, Second: View>(second: Second) -> Either<First, Second> { .second(second) }
}

extension Optional: View where Wrapped: View {
    public var body: Never { fatalError("stand-in") }
}

// SwiftUI's `_ConditionalContent`, under a name of the stand-in's own.
public enum Either<First: View, Second: View>: View {
    case first(First)
    case second(Second)
    public var body: Never { fatalError("stand-in") }
}

public struct TupleView<T>: View {
    public init(_ value: T) {}
    public var body: Never { fatalError("stand-in") }
}

public struct EmptyView: View {
    public init() {}
    public var body: Never { fatalError("stand-in") }
}

public struct Text: View {
    public init(_ content: String) {}
    public var body: Never { fatalError("stand-in") }
}

public struct ProgressView: View {
    public init() {}
    public var body: Never { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/swiftui/vstack
public struct VStack<Content: View>: View {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/swiftui/button: the action is a main-actor closure.
public struct Button<Label: View>: View {
    public var body: Never { fatalError("stand-in") }
}

extension Button where Label == Text {
    public init(_ title: String, action: @escaping @MainActor () -> Void) {}
}

// https://developer.apple.com/documentation/swiftui/app
@MainActor @preconcurrency
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
    @MainActor init()
}

extension App {
    @MainActor public static func main() {}
}

@MainActor @preconcurrency
public protocol Scene {}

@resultBuilder
public enum SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

public struct WindowGroup<Content: View>: Scene {
    public init(@ViewBuilder content: () -> Content) {}
}

// https://developer.apple.com/documentation/swiftui/state
@propertyWrapper
public struct State<Value> {
    public init(wrappedValue value: Value) { storage = value }
    private var storage: Value
    public var wrappedValue: Value {
        get { storage }
        nonmutating set {}
    }
}
