#!/usr/bin/env python3
"""Availability on Apple platforms, checked on Linux.

Linux ignores Apple availability: a call to an API that is new in iOS 18 compiles here and breaks
every Apple build. This check reads what the package's code references, from the index store the
compiler writes while scripts/apple-typecheck compiles it against the stand-ins (libIndexStore,
which the toolchain ships), and what each referenced declaration requires, from the symbol graphs
of the toolchain's modules (Swift, _Concurrency, Synchronization, Foundation, Dispatch, ...) and of
the stand-in modules: their `@available` attributes, which the Linux toolchain keeps for Apple
platforms. It reports, as Apple's compiler words them:

- a use of a declaration introduced after the deployment target (Package.swift's `platforms`), or
  unavailable on the platform, outside code that is itself annotated or guarded for it
  (`@available(...)`, `if #available(...)`, `guard #available(...)`);
- a use of a declaration deprecated on the platform at or before the version the code runs on;
- with --application-extension, a use of a declaration unavailable in app extensions
  (`@available(iOSApplicationExtension, unavailable)`) outside code marked so itself;
- with --darwin-names, a C declaration (or one of Glibc's Swift overlay) that resolved to Glibc,
  which Foundation re-exports on Linux, whose name that list of Darwin's names does not hold: a
  Linux-only name in code Apple's compiler sees.

Code inside an `#if os(Linux)` branch is skipped: Apple's compiler never sees it.

What it cannot see is stated in the article "Apple platforms in depth".

    availability.py --store DIR --symbols DIR --sources DIR [--sources DIR ...]
                    --platform ios|macos [--application-extension] [--package Package.swift]
                    [--darwin-names FILE]
"""

import argparse
import ctypes
import json
import os
import re
import sys

# MARK: - Deployment targets


def deployment_targets(package_swift):
    """The `platforms` of Package.swift: {'iOS': (14, 0), 'macOS': (10, 15), 'macCatalyst': (14, 0)}."""
    text = open(package_swift).read()
    found = {}
    for platform, version in re.findall(r"\.(iOS|macOS|macCatalyst|tvOS|watchOS|visionOS)\(\.v([0-9_]+)\)", text):
        parts = tuple(int(p) for p in version.split("_"))
        found[platform] = parts + (0,) * (2 - len(parts))
    if "iOS" not in found or "macOS" not in found:
        sys.exit(f"availability: no iOS and macOS deployment targets in {package_swift}")
    found.setdefault("macCatalyst", found["iOS"])
    return found


def version_text(version):
    return ".".join(str(v) for v in version) if len(version) > 1 else f"{version[0]}.0"


# MARK: - Symbol graphs


def parse_version(entry):
    return (entry.get("major", 0), entry.get("minor", 0), entry.get("patch", 0))


class Requirement:
    """What one declaration requires, per availability domain."""

    def __init__(self):
        self.introduced = {}   # domain -> version
        self.deprecated = {}   # domain -> version
        self.unavailable = set()  # domains ('*' for everywhere)
        self.messages = {}     # domain -> message

    def merge(self, other):
        for domain, version in other.introduced.items():
            if version > self.introduced.get(domain, (0, 0, 0)):
                self.introduced[domain] = version
        for domain, version in other.deprecated.items():
            if domain not in self.deprecated or version < self.deprecated[domain]:
                self.deprecated[domain] = version
        self.unavailable |= other.unavailable
        for domain, message in other.messages.items():
            self.messages.setdefault(domain, message)

    def is_empty(self):
        return not (self.introduced or self.deprecated or self.unavailable)

    def to_json(self):
        return {
            "i": {d: list(v) for d, v in self.introduced.items()},
            "d": {d: list(v) for d, v in self.deprecated.items()},
            "u": sorted(self.unavailable),
            "m": self.messages,
        }

    @staticmethod
    def from_json(data):
        requirement = Requirement()
        requirement.introduced = {d: tuple(v) for d, v in data["i"].items()}
        requirement.deprecated = {d: tuple(v) for d, v in data["d"].items()}
        requirement.unavailable = set(data["u"])
        requirement.messages = data["m"]
        return requirement


def read_symbol_graphs(paths):
    """USR -> Requirement, each symbol's own attributes folded with its parents' (a member of a
    type or extension introduced in iOS 16 requires iOS 16 even where it does not repeat it)."""
    own = {}
    parents = {}
    # A protocol requirement added later than its default implementation (`FixedWidthInteger.&*`,
    # a requirement since iOS 18, implemented for every conformer since long before): the compiler
    # checks the witness a call uses, and the default implementation is one.
    defaults = {}
    for path in paths:
        with open(path) as handle:
            graph = json.load(handle)
        for symbol in graph.get("symbols", []):
            usr = symbol["identifier"]["precise"]
            requirement = Requirement()
            for entry in symbol.get("availability") or []:
                domain = entry.get("domain", "*")
                if entry.get("isUnconditionallyUnavailable"):
                    requirement.unavailable.add(domain)
                if "introduced" in entry:
                    requirement.introduced[domain] = parse_version(entry["introduced"])
                if "deprecated" in entry:
                    requirement.deprecated[domain] = parse_version(entry["deprecated"])
                if "obsoleted" in entry:
                    requirement.unavailable.add(domain)
                if entry.get("message"):
                    requirement.messages[domain] = entry["message"]
            if usr in own:
                own[usr].merge(requirement)
            else:
                own[usr] = requirement
        for relation in graph.get("relationships", []):
            if relation.get("kind") in ("memberOf", "optionalRequirementOf", "requirementOf"):
                parents.setdefault(relation["source"], set()).add(relation["target"])
            if relation.get("kind") == "defaultImplementationOf":
                defaults.setdefault(relation["target"], set()).add(relation["source"])
    folded = {}

    def fold(usr, seen):
        if usr in folded:
            return folded[usr]
        requirement = Requirement()
        if usr in own:
            requirement.merge(own[usr])
        for parent in parents.get(usr, ()):
            if parent not in seen and parent in own:
                requirement.merge(fold(parent, seen | {usr}))
        folded[usr] = requirement
        return requirement

    table = {}
    for usr in own:
        requirement = fold(usr, frozenset())
        implementations = [fold(implementation, frozenset()) for implementation in defaults.get(usr, ())]
        if implementations:
            # Whichever is the least demanding: the requirement, or one of its default implementations.
            requirement = min([requirement] + implementations, key=lambda r: sorted(r.introduced.items()))
            if any(i.is_empty() for i in implementations):
                requirement = Requirement()
        if not requirement.is_empty():
            table[usr] = requirement
    return table


# MARK: - The index store


class IndexStore:
    """The part of libIndexStore's C API (indexstore.h) that lists references."""

    ROLE_DEFINITION = 1 << 1
    ROLE_REFERENCE = 1 << 2
    ROLE_IMPLICIT = 1 << 8

    def __init__(self, path):
        library = os.environ.get("INDEXSTORE_LIBRARY") or self.find_library()
        self.lib = ctypes.CDLL(library)

        class StringRef(ctypes.Structure):
            _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

        self.StringRef = StringRef
        vp = ctypes.c_void_p
        for name, result, arguments in [
            ("indexstore_store_create", vp, [ctypes.c_char_p, ctypes.POINTER(vp)]),
            ("indexstore_store_units_apply_f", ctypes.c_bool, [vp, ctypes.c_uint, vp, vp]),
            ("indexstore_unit_reader_create", vp, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
            ("indexstore_unit_reader_dispose", None, [vp]),
            ("indexstore_unit_reader_is_system_unit", ctypes.c_bool, [vp]),
            ("indexstore_unit_reader_dependencies_apply_f", ctypes.c_bool, [vp, vp, vp]),
            ("indexstore_unit_dependency_get_kind", ctypes.c_int, [vp]),
            ("indexstore_unit_dependency_get_name", StringRef, [vp]),
            ("indexstore_unit_dependency_get_filepath", StringRef, [vp]),
            ("indexstore_record_reader_create", vp, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
            ("indexstore_record_reader_dispose", None, [vp]),
            ("indexstore_record_reader_occurrences_apply_f", ctypes.c_bool, [vp, vp, vp]),
            ("indexstore_occurrence_get_symbol", vp, [vp]),
            ("indexstore_occurrence_get_roles", ctypes.c_uint64, [vp]),
            (
                "indexstore_occurrence_get_line_col",
                None,
                [vp, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)],
            ),
            ("indexstore_symbol_get_usr", StringRef, [vp]),
            ("indexstore_symbol_get_name", StringRef, [vp]),
            ("indexstore_symbol_get_kind", ctypes.c_int, [vp]),
        ]:
            function = getattr(self.lib, name)
            function.restype = result
            function.argtypes = arguments
        error = vp()
        self.store = self.lib.indexstore_store_create(path.encode(), ctypes.byref(error))
        if not self.store:
            sys.exit(f"availability: cannot open the index store at {path}")

    @staticmethod
    def find_library():
        swiftc = None
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            candidate = os.path.join(folder, "swiftc")
            if os.path.exists(candidate):
                swiftc = os.path.realpath(candidate)
                break
        if swiftc:
            library = os.path.join(os.path.dirname(os.path.dirname(swiftc)), "lib", "libIndexStore.so")
            if os.path.exists(library):
                return library
        sys.exit("availability: libIndexStore.so not found beside swiftc (set INDEXSTORE_LIBRARY)")

    @staticmethod
    def text(ref):
        return ctypes.string_at(ref.data, ref.length).decode() if ref.length else ""

    def references(self, wanted):
        """(file, line, column, usr, name) of every reference in records of files that `wanted`
        accepts."""
        # Implicit references (`for await` calling `next(isolation:)`) are the compiler's own
        # choice, which on an Apple platform follows availability.
        return [
            occurrence[:5]
            for occurrence in self.occurrences(wanted)
            if occurrence[5] & self.ROLE_REFERENCE and not occurrence[5] & self.ROLE_IMPLICIT
        ]

    def occurrences(self, wanted):
        """(file, line, column, usr, name, roles, kind) of every occurrence in records of files
        that `wanted` accepts (kind: indexstore.h's INDEXSTORE_SYMBOL_KIND_...)."""
        lib = self.lib
        vp = ctypes.c_void_p
        unit_names = []
        unit_callback = ctypes.CFUNCTYPE(ctypes.c_bool, vp, self.StringRef)(
            lambda _, name: unit_names.append(self.text(name)) or True
        )
        lib.indexstore_store_units_apply_f(self.store, 0, None, unit_callback)
        records = {}
        for unit_name in unit_names:
            error = vp()
            unit = lib.indexstore_unit_reader_create(self.store, unit_name.encode(), ctypes.byref(error))
            if not unit:
                continue
            if not lib.indexstore_unit_reader_is_system_unit(unit):

                def dependency(_, item):
                    if lib.indexstore_unit_dependency_get_kind(item) == 2:  # a record
                        path = self.text(lib.indexstore_unit_dependency_get_filepath(item))
                        if wanted(path):
                            records[self.text(lib.indexstore_unit_dependency_get_name(item))] = path
                    return True

                callback = ctypes.CFUNCTYPE(ctypes.c_bool, vp, vp)(dependency)
                lib.indexstore_unit_reader_dependencies_apply_f(unit, None, callback)
            lib.indexstore_unit_reader_dispose(unit)
        found = []
        for record_name, path in sorted(records.items()):
            error = vp()
            record = lib.indexstore_record_reader_create(self.store, record_name.encode(), ctypes.byref(error))
            if not record:
                continue

            def occurrence(_, item):
                roles = lib.indexstore_occurrence_get_roles(item)
                symbol = lib.indexstore_occurrence_get_symbol(item)
                line, column = ctypes.c_uint(), ctypes.c_uint()
                lib.indexstore_occurrence_get_line_col(item, ctypes.byref(line), ctypes.byref(column))
                found.append(
                    (
                        path,
                        line.value,
                        column.value,
                        self.text(lib.indexstore_symbol_get_usr(symbol)),
                        self.text(lib.indexstore_symbol_get_name(symbol)),
                        roles,
                        lib.indexstore_symbol_get_kind(symbol),
                    )
                )
                return True

            callback = ctypes.CFUNCTYPE(ctypes.c_bool, vp, vp)(occurrence)
            lib.indexstore_record_reader_occurrences_apply_f(record, None, callback)
            lib.indexstore_record_reader_dispose(record)
        return found


# MARK: - What the package's own source guards


PLATFORMS = {
    "iOS", "macOS", "macCatalyst", "tvOS", "watchOS", "visionOS", "iOSApplicationExtension",
    "macOSApplicationExtension", "macCatalystApplicationExtension", "tvOSApplicationExtension",
    "watchOSApplicationExtension", "visionOSApplicationExtension", "*", "swift",
}
# The attribute's platform names, as the symbol graph spells them.
DOMAIN = {
    "iOSApplicationExtension": "iOSAppExtension",
    "macOSApplicationExtension": "macOSAppExtension",
    "macCatalystApplicationExtension": "macCatalystAppExtension",
}


def parse_availability_arguments(arguments):
    """The constraints of `@available(...)` or `#available(...)`: a Requirement."""
    requirement = Requirement()
    items = [item.strip() for item in split_top_level(arguments)]
    if not items:
        return requirement
    head = items[0].split()
    if len(head) == 1 and head[0] in PLATFORMS and len(items) > 1 and not re.match(r"^[A-Za-z]+ [0-9]", items[1]):
        # The long form: `@available(iOS, unavailable)`, `@available(macOS, introduced: 11)`.
        domain = DOMAIN.get(head[0], head[0])
        for item in items[1:]:
            if item == "unavailable":
                requirement.unavailable.add(domain)
            match = re.match(r"^(introduced|deprecated|obsoleted)\s*:\s*([0-9.]+)", item)
            if match:
                version = tuple(int(p) for p in match.group(2).split("."))
                version = version + (0,) * (3 - len(version))
                if match.group(1) == "introduced":
                    requirement.introduced[domain] = version
                elif match.group(1) == "deprecated":
                    requirement.deprecated[domain] = version
                else:
                    requirement.unavailable.add(domain)
        return requirement
    for item in items:
        match = re.match(r"^([A-Za-z]+)\s+([0-9.]+)$", item)
        if match:
            version = tuple(int(p) for p in match.group(2).split("."))
            requirement.introduced[DOMAIN.get(match.group(1), match.group(1))] = version + (0,) * (3 - len(version))
    return requirement


def split_top_level(text):
    items, depth, current, quoted = [], 0, "", False
    for character in text:
        if character == '"':
            quoted = not quoted
        if not quoted:
            if character in "([":
                depth += 1
            elif character in ")]":
                depth -= 1
            elif character == "," and depth == 0:
                items.append(current)
                current = ""
                continue
        current += character
    if current.strip():
        items.append(current)
    return items


AVAILABLE_CONDITION = re.compile(r"#(available|unavailable)\b")
WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def code_tokens(source):
    """The source's braces, parentheses and words with their offsets, comments and string
    literals left out."""
    tokens = []
    index, length = 0, len(source)
    while index < length:
        character = source[index]
        if source.startswith("//", index):
            index = source.find("\n", index)
            index = length if index < 0 else index
            continue
        if source.startswith("/*", index):
            depth = 0
            while index < length:
                if source.startswith("/*", index):
                    depth += 1
                    index += 2
                elif source.startswith("*/", index):
                    depth -= 1
                    index += 2
                    if depth == 0:
                        break
                else:
                    index += 1
            continue
        if character == "#" or character == '"':
            # A string literal, raw (#"..."#) or not, single-line or multi-line.
            start = index
            hashes = 0
            while index < length and source[index] == "#":
                hashes += 1
                index += 1
            if index < length and source[index] == '"':
                delimiter = '"""' if source.startswith('"""', index) else '"'
                index += len(delimiter)
                closing = delimiter + "#" * hashes
                while index < length:
                    if hashes == 0 and source[index] == "\\":
                        index += 2
                        continue
                    if source.startswith(closing, index):
                        index += len(closing)
                        break
                    index += 1
                continue
            index = start
            match = AVAILABLE_CONDITION.match(source, index)
            if match:
                tokens.append(("#" + match.group(1), index))
                index += len(match.group(0))
                continue
            index += 1
            continue
        if character in "{}()":
            tokens.append((character, index))
            index += 1
            continue
        if character == "@" and source.startswith("@available", index):
            tokens.append(("@available", index))
            index += len("@available")
            continue
        match = WORD.match(source, index)
        if match:
            word = match.group(0)
            if word in ("if", "guard", "while", "else"):
                tokens.append((word, index))
            index += len(word)
            continue
        index += 1
    return tokens


def guarded_regions(source):
    """[(start offset, end offset, Requirement)]: the spans of code that an `@available`
    attribute, an `if #available` or a `guard #available` covers."""
    tokens = code_tokens(source)
    matching = {}
    stack = []
    for position, (token, offset) in enumerate(tokens):
        if token in "({":
            stack.append(position)
        elif token in ")}" and stack:
            matching[stack.pop()] = position
    enclosing_close = {}
    stack = []
    for position, (token, _) in enumerate(tokens):
        if token == "{":
            stack.append(position)
        elif token == "}" and stack:
            stack.pop()
        enclosing_close[position] = matching.get(stack[-1]) if stack else None

    def arguments_after(position):
        if position + 1 < len(tokens) and tokens[position + 1][0] == "(" and position + 1 in matching:
            close = matching[position + 1]
            return source[tokens[position + 1][1] + 1 : tokens[close][1]], close
        return None, position

    def next_brace(position):
        depth = 0
        for later in range(position + 1, len(tokens)):
            token = tokens[later][0]
            if token == "(":
                depth += 1
            elif token == ")":
                depth -= 1
            elif token == "{" and depth == 0:
                return later
        return None

    regions = []
    for position, (token, offset) in enumerate(tokens):
        if token == "@available":
            arguments, close = arguments_after(position)
            if arguments is None:
                continue
            brace = next_brace(close)
            if brace is None or brace not in matching:
                continue
            regions.append((offset, tokens[matching[brace]][1], parse_availability_arguments(arguments)))
        elif token == "#available":
            arguments, close = arguments_after(position)
            if arguments is None:
                continue
            keyword = None
            for earlier in range(position - 1, -1, -1):
                if tokens[earlier][0] in ("if", "guard", "while"):
                    keyword = tokens[earlier][0]
                    break
                if tokens[earlier][0] in "{}":
                    break
            brace = next_brace(close)
            if brace is None or brace not in matching:
                continue
            requirement = parse_availability_arguments(arguments)
            if keyword == "guard":
                end = enclosing_close.get(position)
                if end is not None:
                    regions.append((tokens[matching[brace]][1], tokens[end][1], requirement))
            else:
                regions.append((tokens[brace][1], tokens[matching[brace]][1], requirement))
    return regions


LINUX_ONLY_CONDITION = re.compile(r"^os\(Linux\)(\s*&&.*)?$")


def linux_only_lines(source):
    """The numbers (from 1) of the lines inside an `#if os(Linux)` or `#elseif os(Linux)` branch
    (a condition whose first conjunct is `os(Linux)`): code that exists on Linux alone, which the
    compile against the stand-ins sees (it runs on Linux) and Apple's compiler never does."""
    lines = set()
    stack = []  # per open #if: whether the current branch is Linux-only
    for number, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        directive = re.match(r"^#(if|elseif|else|endif)\b\s*(.*)$", stripped)
        if directive:
            keyword, condition = directive.group(1), directive.group(2).split("//")[0].strip()
            if keyword == "if":
                stack.append(bool(LINUX_ONLY_CONDITION.match(condition)))
            elif keyword == "elseif" and stack:
                stack[-1] = bool(LINUX_ONLY_CONDITION.match(condition))
            elif keyword == "else" and stack:
                stack[-1] = False
            elif keyword == "endif" and stack:
                stack.pop()
            continue
        if any(stack):
            lines.add(number)
    return lines


class SourceFile:
    def __init__(self, path):
        self.source = open(path, encoding="utf-8").read()
        self.line_starts = [0]
        for index, character in enumerate(self.source):
            if character == "\n":
                self.line_starts.append(index + 1)
        self.regions = guarded_regions(self.source)
        self.linux_only = linux_only_lines(self.source)

    def offset(self, line, column):
        if line - 1 < len(self.line_starts):
            return self.line_starts[line - 1] + max(column - 1, 0)
        return len(self.source)

    def guards(self, line, column):
        offset = self.offset(line, column)
        return [requirement for start, end, requirement in self.regions if start <= offset <= end]


# MARK: - The check


PLATFORM_NAMES = {"iOS": "iOS", "macOS": "macOS", "macCatalyst": "Mac Catalyst"}


def effective(requirement, domain, fallback=None):
    """(introduced, deprecated, unavailable) of `requirement` in `domain`, Mac Catalyst inheriting
    from iOS where it says nothing of its own."""
    introduced = requirement.introduced.get(domain)
    deprecated = requirement.deprecated.get(domain)
    unavailable = domain in requirement.unavailable or "*" in requirement.unavailable
    if fallback and domain not in requirement.introduced and domain not in requirement.unavailable:
        introduced = requirement.introduced.get(fallback)
        deprecated = deprecated or requirement.deprecated.get(fallback)
        unavailable = unavailable or fallback in requirement.unavailable
    return introduced, deprecated, unavailable


def is_glibc_name(usr):
    """Whether `usr` is a C declaration (not a Swift declaration exported to C, `c:@M@`) or a
    declaration of Glibc's Swift overlay (`s:5Glibc`): in the package's compile against the
    stand-ins, every such name comes from Glibc, since no stand-in is a C module."""
    return (usr.startswith("c:") and not usr.startswith("c:@M@")) or usr.startswith("s:5Glibc")


def c_name(usr, name):
    """The name `darwin-names.txt` lists for a reference: a function's base name (`open`), a
    field with its struct (`stat.st_mode`), anything else as it is named (`O_RDONLY`)."""
    field = re.search(r"@(?:S|U|SA|UA)@([^@]+)@FI@([^@]+)$", usr)
    if field:
        return f"{field.group(1)}.{field.group(2)}"
    return name.split("(")[0]


def read_darwin_names(path):
    """NAME HEADER lines, `#` comments: the names, each required to name its Apple header."""
    names = {}
    with open(path) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split("#")[0].split()
            if not fields:
                continue
            if len(fields) != 2:
                sys.exit(f"availability: {path}:{number}: expected 'NAME HEADER', got {line.strip()!r}")
            names[fields[0]] = fields[1]
    return names


def check(references, table, targets, platform, application_extension, darwin_names, files):
    domains = [("iOS", None), ("macCatalyst", "iOS")] if platform == "ios" else [("macOS", None)]
    extension_domains = (
        [("iOSAppExtension", None), ("macCatalystAppExtension", "iOSAppExtension")]
        if platform == "ios"
        else [("macOSAppExtension", None)]
    )
    problems = set()
    checked = 0
    for path, line, column, usr, name in references:
        if path not in files:
            files[path] = SourceFile(path)
        source = files[path]
        if line in source.linux_only:
            # Code under `#if os(Linux)`: Apple's compiler never sees it.
            continue
        guards = source.guards(line, column)
        if is_glibc_name(usr):
            # A C declaration (or the Swift overlay's, `errno`, `open`): on Linux it comes from
            # Glibc, which Foundation re-exports. It must exist in Darwin too.
            if darwin_names is not None:
                base = c_name(usr, name)
                if base and base not in darwin_names and not any(
                    "*" in g.unavailable or "iOS" in g.unavailable or "macOS" in g.unavailable for g in guards
                ):
                    problems.add(
                        f"{path}:{line}:{column}: error: cannot find '{base}' in scope "
                        f"(a Glibc name that scripts/apple-typecheck.d/darwin-names.txt does not list: Linux only?)"
                    )
            continue
        requirement = table.get(usr)
        if requirement is None:
            continue
        checked += 1
        for domain, fallback in domains:
            introduced, deprecated, unavailable = effective(requirement, domain, fallback)
            context = targets[domain]
            context_unavailable = False
            for guard in guards:
                guard_introduced, _, guard_unavailable = effective(guard, domain, fallback)
                if guard_unavailable:
                    context_unavailable = True
                if guard_introduced and guard_introduced > context:
                    context = guard_introduced
            if context_unavailable:
                continue
            platform_name = PLATFORM_NAMES[domain]
            if unavailable:
                problems.add(f"{path}:{line}:{column}: error: '{name}' is unavailable in {platform_name}")
            elif introduced and introduced > context:
                problems.add(
                    f"{path}:{line}:{column}: error: '{name}' is only available in {platform_name} "
                    f"{version_text(introduced[:2] if introduced[2] == 0 else introduced)} or newer"
                )
            elif deprecated and deprecated <= context:
                problems.add(
                    f"{path}:{line}:{column}: error: '{name}' was deprecated in {platform_name} "
                    f"{version_text(deprecated[:2] if deprecated[2] == 0 else deprecated)}"
                )
        if application_extension:
            for domain, fallback in extension_domains:
                _, _, unavailable = effective(requirement, domain, fallback)
                if not unavailable:
                    continue
                if any(effective(guard, domain, fallback)[2] for guard in guards):
                    continue
                platform_name = "iOS" if domain.startswith("iOS") else (
                    "macOS" if domain.startswith("macOS") else "Mac Catalyst"
                )
                problems.add(
                    f"{path}:{line}:{column}: error: '{name}' is unavailable in application extensions for {platform_name}"
                )
    return sorted(problems), checked


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store")
    parser.add_argument("--symbols", action="append", default=[], help="a folder of *.symbols.json")
    parser.add_argument("--table", action="append", default=[], help="a table --make-table wrote")
    parser.add_argument("--make-table", help="write the table of --symbols to this file, and stop")
    parser.add_argument("--sources", action="append", default=[])
    parser.add_argument("--platform", choices=["ios", "macos"])
    parser.add_argument("--application-extension", action="store_true")
    parser.add_argument("--package", default="Package.swift")
    parser.add_argument("--darwin-names", help="a file of the C names Darwin declares: NAME HEADER a line")
    options = parser.parse_args()

    paths = []
    for folder in options.symbols:
        paths += [os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name.endswith(".symbols.json")]
    table = read_symbol_graphs(paths)
    if options.make_table:
        with open(options.make_table, "w") as handle:
            json.dump({usr: requirement.to_json() for usr, requirement in table.items()}, handle)
        print(f"availability: {len(table)} declarations with Apple availability, from {len(paths)} symbol graphs")
        return 0
    if not options.platform or not options.sources:
        parser.error("--platform and --sources are required")
    for path in options.table:
        with open(path) as handle:
            for usr, data in json.load(handle).items():
                table.setdefault(usr, Requirement.from_json(data))
    targets = deployment_targets(options.package)
    targets = {domain: tuple(version) + (0,) * (3 - len(version)) for domain, version in targets.items()}
    darwin_names = read_darwin_names(options.darwin_names) if options.darwin_names else None
    roots = [os.path.realpath(root) + os.sep for root in options.sources]
    store = IndexStore(options.store)
    references = store.references(lambda path: any(os.path.realpath(path).startswith(root) for root in roots))
    problems, checked = check(
        references, table, targets, options.platform, options.application_extension, darwin_names, {}
    )
    for problem in problems:
        print(problem)
    kind = " as an app extension" if options.application_extension else ""
    if options.platform == "ios":
        against = f"iOS {version_text(targets['iOS'][:2])} and Mac Catalyst {version_text(targets['macCatalyst'][:2])}"
    else:
        against = f"macOS {version_text(targets['macOS'][:2])}"
    print(
        f"availability ({options.platform}{kind}): {len(references)} references, {checked} of them to "
        f"declarations with Apple availability, checked against {against}: {len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
