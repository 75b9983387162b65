extension Error {
    /// The error in words, for an event or a reply (each error's description says what to do).
    package var message: String { "\(self)" }
}
