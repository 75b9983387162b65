package import CSDBus
import Glibc

/// A message being read or written on the bus thread: basic values in and out, the sender,
/// path and member, replies and errors. Valid only during the call that handed it out
/// (or while ``retain()``ed).
package struct BusMessage {
    package let api: UnsafePointer<csdbus_table>
    package let pointer: OpaquePointer

    package init(_ api: UnsafePointer<csdbus_table>, _ pointer: OpaquePointer) {
        self.api = api
        self.pointer = pointer
    }

    package var sender: String? { api.pointee.sd_bus_message_get_sender!(pointer).map { String(cString: $0) } }
    package var path: String? { api.pointee.sd_bus_message_get_path!(pointer).map { String(cString: $0) } }
    package var member: String? { api.pointee.sd_bus_message_get_member!(pointer).map { String(cString: $0) } }

    /// The cookie of the call this message answers.
    package var replyCookie: UInt64? {
        var cookie: UInt64 = 0
        return api.pointee.sd_bus_message_get_reply_cookie!(pointer, &cookie) >= 0 ? cookie : nil
    }

    /// The error this reply carries: its name and message.
    package var error: (name: String, message: String)? {
        guard let error = api.pointee.sd_bus_message_get_error!(pointer), let name = error.pointee.name else { return nil }
        return (String(cString: name), error.pointee.message.map { String(cString: $0) } ?? "")
    }

    // MARK: Reading

    package func readString(_ type: Character = "s") -> String? {
        var value: UnsafePointer<CChar>?
        guard api.pointee.sd_bus_message_read_basic!(pointer, CChar(type.asciiValue!), &value) > 0, let value else { return nil }
        return String(cString: value)
    }

    package func readUInt32() -> UInt32? {
        var value: UInt32 = 0
        return api.pointee.sd_bus_message_read_basic!(pointer, CChar(UInt8(ascii: "u")), &value) > 0 ? value : nil
    }

    package func readUInt64() -> UInt64? {
        var value: UInt64 = 0
        return api.pointee.sd_bus_message_read_basic!(pointer, CChar(UInt8(ascii: "t")), &value) > 0 ? value : nil
    }

    package func readBool() -> Bool? {
        var value: Int32 = 0
        return api.pointee.sd_bus_message_read_basic!(pointer, CChar(UInt8(ascii: "b")), &value) > 0 ? value != 0 : nil
    }

    /// A Unix file descriptor the message carries, duplicated (close-on-exec): the caller's own.
    package func readFileDescriptor() -> Int32? {
        var value: Int32 = -1
        guard api.pointee.sd_bus_message_read_basic!(pointer, CChar(UInt8(ascii: "h")), &value) > 0, value >= 0 else { return nil }
        let copy = fcntl(value, F_DUPFD_CLOEXEC, 3)
        return copy >= 0 ? copy : nil
    }

    /// Enters a container (`r` a structure, `v` a variant, `a` an array) of `contents`.
    package func enter(_ kind: Character, _ contents: String) -> Bool {
        api.pointee.sd_bus_message_enter_container!(pointer, CChar(kind.asciiValue!), contents) > 0
    }

    /// Leaves the container entered last.
    package func exit() { _ = api.pointee.sd_bus_message_exit_container!(pointer) }

    /// Passes over the next values of `types` (a signature, such as `a{sv}`).
    package func skip(_ types: String) { _ = api.pointee.sd_bus_message_skip!(pointer, types) }

    // MARK: Writing

    @discardableResult
    package func append(_ value: String, type: Character = "s") -> Int32 {
        value.withCString { api.pointee.sd_bus_message_append_basic!(pointer, CChar(type.asciiValue!), $0) }
    }

    @discardableResult
    package func append(_ value: UInt32) -> Int32 {
        withUnsafePointer(to: value) { api.pointee.sd_bus_message_append_basic!(pointer, CChar(UInt8(ascii: "u")), $0) }
    }

    @discardableResult
    package func append(_ value: UInt64) -> Int32 {
        withUnsafePointer(to: value) { api.pointee.sd_bus_message_append_basic!(pointer, CChar(UInt8(ascii: "t")), $0) }
    }

    @discardableResult
    package func append(_ value: Double) -> Int32 {
        withUnsafePointer(to: value) { api.pointee.sd_bus_message_append_basic!(pointer, CChar(UInt8(ascii: "d")), $0) }
    }

    @discardableResult
    package func append(_ value: Bool) -> Int32 {
        withUnsafePointer(to: Int32(value ? 1 : 0)) { api.pointee.sd_bus_message_append_basic!(pointer, CChar(UInt8(ascii: "b")), $0) }
    }

    /// A `(tt)` structure: GeoClue's timestamp, seconds and microseconds.
    @discardableResult
    package func appendPair(_ first: UInt64, _ second: UInt64) -> Int32 {
        var result = api.pointee.sd_bus_message_open_container!(pointer, CChar(UInt8(ascii: "r")), "tt")
        guard result >= 0 else { return result }
        for value in [first, second] {
            result = withUnsafePointer(to: value) { api.pointee.sd_bus_message_append_basic!(pointer, CChar(UInt8(ascii: "t")), $0) }
            guard result >= 0 else { return result }
        }
        return api.pointee.sd_bus_message_close_container!(pointer)
    }

    // MARK: Answering

    /// Keeps the call for an answer after its handler returned.
    package func retain() -> BusMessage { BusMessage(api, api.pointee.sd_bus_message_ref!(pointer)!) }

    package func release() { _ = api.pointee.sd_bus_message_unref!(pointer) }

    /// Answers the call with `append` writing the return values.
    package func reply(_ append: (BusMessage) -> Void = { _ in }) {
        var reply: OpaquePointer?
        guard api.pointee.sd_bus_message_new_method_return!(pointer, &reply) >= 0, let reply else { return }
        append(BusMessage(api, reply))
        _ = api.pointee.sd_bus_send!(nil, reply, nil)
        _ = api.pointee.sd_bus_message_unref!(reply)
    }

    /// Answers the call with an error.
    package func reply(_ error: BusError) {
        var value = sd_bus_error(name: nil, message: nil, _need_free: 0)
        _ = api.pointee.sd_bus_error_set!(&value, error.name, error.message)
        _ = api.pointee.sd_bus_reply_method_error!(pointer, &value)
        api.pointee.sd_bus_error_free!(&value)
    }

    /// The credentials the bus has for the sender: its effective user and process.
    package func senderCredentials() -> (uid: UInt32, pid: Int32)? {
        var creds: OpaquePointer?
        let mask = UInt64(SD_BUS_CREDS_EUID) | UInt64(SD_BUS_CREDS_PID)
        guard api.pointee.sd_bus_query_sender_creds!(pointer, mask, &creds) >= 0, let creds else { return nil }
        defer { _ = api.pointee.sd_bus_creds_unref!(creds) }
        var uid: uid_t = 0
        var pid: pid_t = 0
        guard api.pointee.sd_bus_creds_get_euid!(creds, &uid) >= 0, api.pointee.sd_bus_creds_get_pid!(creds, &pid) >= 0 else { return nil }
        return (uid, pid)
    }
}

/// Sets `error` (a handler's out-parameter) from a ``BusError`` and returns sd-bus's code.
package func fail(_ error: UnsafeMutablePointer<sd_bus_error>?, _ value: BusError, api: UnsafePointer<csdbus_table>) -> Int32 {
    api.pointee.sd_bus_error_set!(error, value.name, value.message)
}
