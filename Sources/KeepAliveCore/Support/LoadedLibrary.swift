/// A C library's table of functions, filled once for the process by its shim's loader
/// (`ccurl_load`, `cmosq_load`, `csdbus_load`: dlopen and dlsym), or why it could not be: the
/// one shape of libcurl, libmosquitto, libsodium and libsystemd, loaded on first use so that a
/// process that never delivers (or serves no bus) never maps them.
// Unchecked: the table is written once, in the initializer (a global `let`, which Swift
// initializes exactly once), and only read afterwards.
package struct LoadedLibrary<Table>: @unchecked Sendable {
    /// The functions; every entry is set when `error` is `nil`.
    package let table: UnsafePointer<Table>
    /// Why the library could not be loaded, or `nil`.
    package let error: String?

    /// Loads with `load`, which fills a zeroed `empty` table and returns NULL, or why not.
    package init(empty: Table, load: (UnsafeMutablePointer<Table>) -> UnsafePointer<CChar>?) {
        let table = UnsafeMutablePointer<Table>.allocate(capacity: 1)
        table.initialize(to: empty)
        error = load(table).map { String(cString: $0) }
        self.table = UnsafePointer(table)
    }
}
