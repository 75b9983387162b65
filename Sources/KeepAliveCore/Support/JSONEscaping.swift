extension String {
    /// The text as it goes between the quotes of a JSON string: `"` and `\` escaped, control
    /// characters as `\u00XX`.
    package var jsonEscaped: String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
