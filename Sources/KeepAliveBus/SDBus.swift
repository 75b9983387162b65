package import CSDBus
import Glibc
package import KeepAliveCore

/// libsystemd's sd-bus, loaded when a service first opens the bus (and the vtables given its
/// format reference).
package let libsystemd = LoadedLibrary(empty: csdbus_table()) { table in csdbus_load(table) ?? csdbus_prepare_vtables() }

/// A D-Bus error a handler answers with: its name and what the caller should do.
package struct BusError: Error, Sendable {
    package let name: String
    package let message: String

    package static func accessDenied(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message) }
    package static func invalidArguments(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    package static func limitsExceeded(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: message) }
    package static func unknownObject(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: message) }
    package static func failed(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.Failed", message: message) }
}

/// One connection to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket),
/// used only on the thread that runs ``run(wake:stopping:drain:)``: sd-bus is not thread-safe.
///
/// Unsafe pointers stay here and in ``BusMessage``: the service sees paths, names and values.
package final class SDBus {
    package let api: UnsafePointer<csdbus_table>
    package let bus: OpaquePointer
    private var slots: [OpaquePointer] = []

    /// Opens the system bus.
    package init() throws(BusFailure) {
        if let error = libsystemd.error {
            throw .setup("cannot load libsystemd.so.0 (\(error)): install it with `sudo apt-get install libsystemd0`")
        }
        api = libsystemd.table
        var bus: OpaquePointer?
        let result = api.pointee.sd_bus_open_system!(&bus)
        guard result >= 0, let bus else {
            throw .setup("cannot connect to the system bus (\(Self.describe(result))); is dbus running, or DBUS_SYSTEM_BUS_ADDRESS right?")
        }
        self.bus = bus
    }

    deinit {
        for slot in slots { _ = api.pointee.sd_bus_slot_unref!(slot) }
        _ = api.pointee.sd_bus_flush_close_unref!(bus)
    }

    package static func describe(_ result: Int32) -> String { String(cString: strerror(-result)) }

    /// Takes `name`, refusing to queue for it: another owner is an error, not a wait.
    package func requestName(_ name: String) throws(BusFailure) {
        let result = api.pointee.sd_bus_request_name!(bus, name, 0)
        guard result >= 0 else {
            throw .setup(
                result == -EEXIST
                    ? "\(name) is already on the bus (GeoClue's own daemon? stop it: `systemctl mask --now geoclue`)"
                    : "cannot take \(name) on the bus (\(Self.describe(result))): install the policy that lets the host own it (dbus/keepalive-geoclue.conf)"
            )
        }
    }

    /// Serves `vtable` at `path` (or, as a fallback, under it), calling `handlers`.
    package func add(_ vtable: UnsafeMutablePointer<sd_bus_vtable>, interface: String, at path: String, fallback: Bool, handlers: UnsafeMutablePointer<csdbus_handlers>) throws(BusFailure) {
        var slot: OpaquePointer?
        let result = fallback
            ? api.pointee.sd_bus_add_fallback_vtable!(bus, &slot, path, interface, vtable, csdbus_find_handler(), handlers)
            : api.pointee.sd_bus_add_object_vtable!(bus, &slot, path, interface, vtable, handlers)
        guard result >= 0, let slot else { throw .setup("cannot serve \(interface) at \(path): \(Self.describe(result))") }
        slots.append(slot)
    }

    /// Processes the bus and runs `drain` until `stopping` says so; `wake` is a descriptor
    /// that becomes readable when another thread has work for this one.
    package func run(wake: Int32, stopping: () -> Bool, drain: () -> Void) throws(BusFailure) {
        while !stopping() {
            while true {
                let result = api.pointee.sd_bus_process!(bus, nil)
                guard result >= 0 else { throw .lost("the bus connection failed: \(Self.describe(result))") }
                if result == 0 { break }
            }
            drain()
            if stopping() { break }
            var until: UInt64 = 0
            var milliseconds: Int32 = -1
            if api.pointee.sd_bus_get_timeout!(bus, &until) >= 0, until != UInt64.max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
                milliseconds = until <= nowMicroseconds ? 0 : Int32(min((until - nowMicroseconds + 999) / 1_000, 60_000))
            }
            var fds = [
                pollfd(fd: api.pointee.sd_bus_get_fd!(bus), events: Int16(truncatingIfNeeded: api.pointee.sd_bus_get_events!(bus)), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&fds, 2, milliseconds)
            if fds[1].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while read(wake, &bytes, bytes.count) > 0 {}
            }
        }
        _ = api.pointee.sd_bus_flush!(bus)
    }

    /// Sends a signal from `path` to `destination` alone, with `append` writing its arguments.
    package func emit(from path: String, to destination: String, interface: String, member: String, _ append: (BusMessage) -> Void) {
        var message: OpaquePointer?
        guard api.pointee.sd_bus_message_new_signal!(bus, &message, path, interface, member) >= 0, let message else { return }
        _ = api.pointee.sd_bus_message_set_destination!(message, destination)
        append(BusMessage(api, message))
        _ = api.pointee.sd_bus_send!(bus, message, nil)
        _ = api.pointee.sd_bus_message_unref!(message)
    }

    /// Tells subscribers that `names` of `interface` at `path` changed.
    package func propertiesChanged(at path: String, interface: String, _ names: [String]) {
        var strings = names.map { strdup($0) } + [nil]
        defer { for string in strings { free(string) } }
        _ = api.pointee.sd_bus_emit_properties_changed_strv!(bus, path, interface, &strings)
    }

    /// Calls `member` on `destination` without waiting; the reply (or the error, after
    /// `timeout` microseconds) reaches `handlers`' `reply` with the returned cookie.
    package func callAsync(
        _ destination: String, path: String, interface: String, member: String, timeout: UInt64,
        handlers: UnsafeMutablePointer<csdbus_handlers>, _ append: (BusMessage) -> Void
    ) -> UInt64? {
        var message: OpaquePointer?
        guard api.pointee.sd_bus_message_new_method_call!(bus, &message, destination, path, interface, member) >= 0, let message else { return nil }
        defer { _ = api.pointee.sd_bus_message_unref!(message) }
        append(BusMessage(api, message))
        // No slot: a floating one, freed with the reply.
        guard api.pointee.sd_bus_call_async!(bus, nil, message, csdbus_reply_handler(), handlers, timeout) >= 0 else { return nil }
        var cookie: UInt64 = 0
        _ = api.pointee.sd_bus_message_get_cookie!(message, &cookie)
        return cookie
    }

    /// Calls `member` on `destination` and waits for the reply (at most `timeout`
    /// microseconds): the reply, to ``BusMessage/release()`` once read, or the error.
    package func call(
        _ destination: String, path: String, interface: String, member: String, timeout: UInt64 = 5_000_000,
        _ append: (BusMessage) -> Void = { _ in }
    ) throws(BusFailure) -> BusMessage {
        var message: OpaquePointer?
        guard api.pointee.sd_bus_message_new_method_call!(bus, &message, destination, path, interface, member) >= 0, let message else {
            throw .lost("cannot make a call to \(destination)")
        }
        defer { _ = api.pointee.sd_bus_message_unref!(message) }
        append(BusMessage(api, message))
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { api.pointee.sd_bus_error_free!(&error) }
        var reply: OpaquePointer?
        let result = api.pointee.sd_bus_call!(bus, message, timeout, &error, &reply)
        guard result >= 0, let reply else {
            let reason = error.message.map { String(cString: $0) } ?? Self.describe(result)
            throw .lost("\(interface).\(member) failed: \(reason)")
        }
        return BusMessage(api, reply)
    }

    /// Whether `name` has an owner on the bus now: asked before calling a service that the bus
    /// would otherwise start on demand (D-Bus activation) or answer with a timeout.
    package func hasOwner(_ name: String) throws(BusFailure) -> Bool {
        let reply = try call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameHasOwner") {
            $0.append(name)
        }
        defer { reply.release() }
        return reply.readBool() == true
    }

    /// Reads `property` of `interface` at `path` on `destination`: the reply, positioned at the
    /// value's variant of `type` (entered), to ``BusMessage/release()`` once read.
    package func property(_ destination: String, path: String, interface: String, name: String, type: String) throws(BusFailure) -> BusMessage {
        let reply = try call(destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get") { call in
            call.append(interface)
            call.append(name)
        }
        guard reply.enter("v", type) else {
            reply.release()
            throw .lost("\(interface).\(name) is not a \(type)")
        }
        return reply
    }

    /// Calls `handlers`' `reply` with each signal `member` of `interface` that `sender` sends
    /// (from `path`, or from any path if `nil`), for as long as the connection lives.
    package func matchSignal(
        sender: String, path: String?, interface: String, member: String?, handlers: UnsafeMutablePointer<csdbus_handlers>
    ) throws(BusFailure) {
        var slot: OpaquePointer?
        let result = api.pointee.sd_bus_match_signal!(bus, &slot, sender, path, interface, member, csdbus_signal_handler(), handlers)
        guard result >= 0, let slot else { throw .setup("cannot follow \(interface).\(member ?? "*") on the bus: \(Self.describe(result))") }
        slots.append(slot)
    }

    /// A tracker that calls `handlers`' `gone` once `name` has left the bus.
    package func track(_ name: String, handlers: UnsafeMutablePointer<csdbus_handlers>) -> OpaquePointer? {
        var track: OpaquePointer?
        guard api.pointee.sd_bus_track_new!(bus, &track, csdbus_track_handler(), handlers) >= 0, let track else { return nil }
        guard api.pointee.sd_bus_track_add_name!(track, name) >= 0 else {
            _ = api.pointee.sd_bus_track_unref!(track)
            return nil
        }
        return track
    }

    package func untrack(_ track: OpaquePointer) { _ = api.pointee.sd_bus_track_unref!(track) }

    /// The message being handled now (a property read or write's call).
    package var currentMessage: BusMessage? { api.pointee.sd_bus_get_current_message!(bus).map { BusMessage(api, $0) } }
}
