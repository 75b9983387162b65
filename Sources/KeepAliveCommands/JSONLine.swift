package import FoundationEssentials

/// One NDJSON object, built field by field and written with its keys sorted.
///
/// Written by hand because FoundationEssentials has no `JSONSerialization`, and because a fix
/// line should cost one buffer, not a dictionary of existentials.
package struct JSONLine {
    private var fields: [(key: String, value: Value)] = []

    package enum Value {
        case string(String)
        case number(Double)
        case integer(Int)
        case bool(Bool)
        case time(Date)
        case null
    }

    package init(_ fields: KeyValuePairs<String, Value> = [:]) {
        self.fields.reserveCapacity(16)
        self.fields.append(contentsOf: fields.map { ($0.key, $0.value) })
    }

    /// Sets a field; `nil` writes JSON `null`.
    package subscript(key: String) -> Value? {
        get { fields.first { $0.key == key }?.value }
        set {
            let value = newValue ?? .null
            if let index = fields.firstIndex(where: { $0.key == key }) {
                fields[index].value = value
            } else {
                fields.append((key, value))
            }
        }
    }

    /// The object and a newline, as UTF-8.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + fields.count * 24)
        out.append(UInt8(ascii: "{"))
        let inOrder = zip(fields, fields.dropFirst()).allSatisfy { $0.key < $1.key }
        for (index, field) in (inOrder ? fields : fields.sorted { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: field.key.utf8)
            out.append(contentsOf: #"":"#.utf8)
            switch field.value {
            case .string(let text): Self.appendQuoted(text, to: &out)
            case .number(let number):
                if number.isFinite {
                    out.append(contentsOf: number.description.utf8)
                } else {
                    out.append(contentsOf: "null".utf8)
                }
            case .integer(let number): out.append(contentsOf: String(number).utf8)
            case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
            case .time(let date):
                out.append(UInt8(ascii: "\""))
                ISO8601Text.append(date, to: &out)
                out.append(UInt8(ascii: "\""))
            case .null: out.append(contentsOf: "null".utf8)
            }
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONLine.Value: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    package init(stringLiteral value: String) { self = .string(value) }
}

extension JSONLine.Value: ExpressibleByBooleanLiteral {
    package init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension Optional where Wrapped == Double {
    /// A number, or `null` when unknown.
    var json: JSONLine.Value { map(JSONLine.Value.number) ?? .null }
}

extension Optional where Wrapped == Date {
    /// A time, or `null` when unknown.
    var json: JSONLine.Value { map(JSONLine.Value.time) ?? .null }
}

extension Optional where Wrapped == String {
    /// A string, or `null` when unknown.
    var json: JSONLine.Value { map(JSONLine.Value.string) ?? .null }
}
