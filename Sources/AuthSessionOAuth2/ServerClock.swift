import Foundation

/// How far the server's clock is from this device's, measured from one answer's `Date` header.
///
/// The header says when the server made the answer, to the second (RFC 9110 §6.6.1: an
/// IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`). The answer was made somewhere between the
/// request's sending and its answer's arrival on this device, so the offset is the header's time
/// (plus half a second, for the truncated fraction) less the middle of that round trip, and its
/// uncertainty half the round trip plus half a second. An offset within its uncertainty is no
/// measurable difference; one beyond ``OAuth2Service/maximumServerClockOffset`` is not believed.
enum ServerClock {

    /// The server's clock less this device's, in seconds, or `nil` when the answer shows no
    /// measurable, believable difference (no header, one that is not an IMF-fixdate, a difference
    /// within the round trip's uncertainty, or beyond `limit`).
    ///
    /// - Parameters:
    ///   - dateHeader: The answer's `Date` header.
    ///   - sentAt: When the request was handed to the transport, on this device's clock.
    ///   - receivedAt: When the answer came back, on this device's clock.
    ///   - limit: The largest offset believed.
    static func offset(dateHeader: String?, sentAt: Date, receivedAt: Date, limit: TimeInterval) -> TimeInterval? {
        guard let dateHeader, let serverTime = secondsSince1970(httpDate: dateHeader) else { return nil }
        let roundTrip = receivedAt.timeIntervalSince(sentAt)
        guard roundTrip >= 0, roundTrip.isFinite else { return nil }
        let middle = sentAt.timeIntervalSince1970 + roundTrip / 2
        let offset = serverTime + 0.5 - middle
        let uncertainty = roundTrip / 2 + 0.5
        guard abs(offset) > uncertainty, abs(offset) <= limit else { return nil }
        return offset
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Seconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the one form a
    /// server sends; `nil` for anything else (the obsolete forms included), or an impossible date.
    static func secondsSince1970(httpDate text: String) -> TimeInterval? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29 else { return nil }
        func ascii(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard weekdays.contains(ascii(0..<3)), ascii(3..<5) == ", ", bytes[7] == UInt8(ascii: " "),
            bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: ":"),
            bytes[22] == UInt8(ascii: ":"), ascii(25..<29) == " GMT",
            let day = number(5..<7), let monthIndex = months.firstIndex(of: ascii(8..<11)),
            let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
            let second = number(23..<25),
            hour < 24, minute < 60, second < 61, day >= 1, day <= daysInMonth(monthIndex + 1, year: year)
        else { return nil }
        let days = daysSince1970(year: year, month: monthIndex + 1, day: day)
        return TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59))
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (Howard
    /// Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
