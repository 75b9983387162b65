// sd-bus (libsystemd), the D-Bus library under the host's GeoClue2 service, loaded with dlopen
// when the service starts: a keepalive process that serves no bus never maps it. The vtables
// GeoClue2's objects are served with are here, because they are built with sd-bus's C macros;
// every entry goes through one trampoline per kind to the handlers Swift passes as userdata.
#ifndef LOCATIONKEEPALIVE_CSDBUS_SHIM_H
#define LOCATIONKEEPALIVE_CSDBUS_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#define CSDBUS_FUNCTIONS(X) \
    X(sd_bus_open_system) X(sd_bus_flush_close_unref) X(sd_bus_request_name) \
    X(sd_bus_add_object_vtable) X(sd_bus_add_fallback_vtable) X(sd_bus_slot_unref) \
    X(sd_bus_process) X(sd_bus_get_fd) X(sd_bus_get_events) X(sd_bus_get_timeout) X(sd_bus_flush) \
    X(sd_bus_get_current_message) X(sd_bus_send) X(sd_bus_call_async) \
    X(sd_bus_message_new_signal) X(sd_bus_message_set_destination) X(sd_bus_message_new_method_call) X(sd_bus_message_new_method_return) \
    X(sd_bus_message_ref) X(sd_bus_message_unref) X(sd_bus_message_get_cookie) X(sd_bus_message_get_reply_cookie) \
    X(sd_bus_message_get_sender) X(sd_bus_message_get_path) X(sd_bus_message_get_member) \
    X(sd_bus_message_get_error) X(sd_bus_message_is_method_error) \
    X(sd_bus_message_read_basic) X(sd_bus_message_append_basic) \
    X(sd_bus_message_open_container) X(sd_bus_message_close_container) \
    X(sd_bus_reply_method_error) X(sd_bus_emit_properties_changed_strv) \
    X(sd_bus_query_sender_creds) X(sd_bus_creds_get_pid) X(sd_bus_creds_get_euid) X(sd_bus_creds_unref) \
    X(sd_bus_track_new) X(sd_bus_track_add_name) X(sd_bus_track_unref) \
    X(sd_bus_error_set) X(sd_bus_error_free) X(sd_pid_get_session) X(sd_session_is_active) \
    X(sd_bus_call) X(sd_bus_match_signal) X(sd_bus_get_property) \
    X(sd_bus_message_enter_container) X(sd_bus_message_exit_container) X(sd_bus_message_skip)

typedef struct {
#define CSDBUS_FIELD(name) __typeof__(&name) name;
    CSDBUS_FUNCTIONS(CSDBUS_FIELD)
#undef CSDBUS_FIELD
    const char *error;
} csdbus_table;

/// Fills `api` (storage the caller keeps for the process, zeroed) and returns NULL, or why
/// libsystemd could not be loaded. Call once.
static inline const char *csdbus_load(csdbus_table *api) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        api->error = dlerror();
        return api->error;
    }
#define CSDBUS_LOAD(name) \
    api->name = (__typeof__(&name))dlsym(library, #name); \
    if (api->name == NULL) { api->error = "libsystemd.so.0 lacks " #name; return api->error; }
    CSDBUS_FUNCTIONS(CSDBUS_LOAD)
#undef CSDBUS_LOAD
    return NULL;
}

/// What Swift handles, with its context: methods, property reads and writes, which paths
/// exist under a fallback, replies to the service's own calls, and peers leaving the bus.
typedef struct {
    void *context;
    int (*method)(void *context, sd_bus_message *call, sd_bus_error *error);
    int (*get)(void *context, const char *path, const char *interface, const char *property, sd_bus_message *reply, sd_bus_error *error);
    int (*set)(void *context, const char *path, const char *interface, const char *property, sd_bus_message *value, sd_bus_error *error);
    int (*exists)(void *context, const char *path, const char *interface);
    int (*reply)(void *context, sd_bus_message *reply);
    int (*gone)(void *context, sd_bus_track *track);
} csdbus_handlers;

static int csdbus_method(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    const csdbus_handlers *h = userdata;
    return h->method(h->context, call, error);
}
static int csdbus_get(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    const csdbus_handlers *h = userdata;
    return h->get(h->context, path, interface, property, reply, error);
}
static int csdbus_set(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)bus;
    const csdbus_handlers *h = userdata;
    return h->set(h->context, path, interface, property, value, error);
}
static int csdbus_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found, sd_bus_error *error) {
    (void)bus; (void)error;
    const csdbus_handlers *h = userdata;
    if (!h->exists(h->context, path, interface)) return 0;
    *found = userdata;
    return 1;
}
static int csdbus_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)error;
    const csdbus_handlers *h = userdata;
    return h->reply(h->context, reply);
}
static int csdbus_gone(sd_bus_track *track, void *userdata) {
    const csdbus_handlers *h = userdata;
    return h->gone(h->context, track);
}

static int csdbus_signal(sd_bus_message *signal, void *userdata, sd_bus_error *error) {
    (void)error;
    const csdbus_handlers *h = userdata;
    h->reply(h->context, signal);
    return 0;
}

/// The handler for `sd_bus_match_signal`, with the handlers as its userdata: a signal reaches
/// their `reply`.
static inline sd_bus_message_handler_t csdbus_signal_handler(void) { return csdbus_signal; }
/// The reply handler for `sd_bus_call_async`, with the handlers as its userdata.
static inline sd_bus_message_handler_t csdbus_reply_handler(void) { return csdbus_reply; }
/// The handler for `sd_bus_track_new`, with the handlers as its userdata.
static inline sd_bus_track_handler_t csdbus_track_handler(void) { return csdbus_gone; }
/// The find callback for `sd_bus_add_fallback_vtable`, with the handlers as its userdata.
static inline sd_bus_object_find_t csdbus_find_handler(void) { return csdbus_find; }

// SD_BUS_VTABLE_START names libsystemd's sd_bus_object_vtable_format, which a library loaded
// with dlopen cannot be linked against: the vtables start without it, and csdbus_prepare_vtables fills it in
// from the loaded library (sd-bus reads it to know the table's format).
#define CSDBUS_VTABLE_START \
    { .type = _SD_BUS_VTABLE_START, .flags = 0, \
      .x = { .start = { .element_size = sizeof(sd_bus_vtable), .features = _SD_BUS_VTABLE_PARAM_NAMES, .vtable_format_reference = 0 } } }

#define CSDBUS_METHOD(name, in, out) SD_BUS_METHOD(name, in, out, csdbus_method, SD_BUS_VTABLE_UNPRIVILEGED)
#define CSDBUS_READ(name, type, flags) SD_BUS_PROPERTY(name, type, csdbus_get, 0, flags)
#define CSDBUS_WRITE(name, type) SD_BUS_WRITABLE_PROPERTY(name, type, csdbus_get, csdbus_set, 0, SD_BUS_VTABLE_UNPRIVILEGED | SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

/// `org.freedesktop.GeoClue2.Manager`.
static inline sd_bus_vtable *csdbus_geoclue_manager(void) {
    static sd_bus_vtable vtable[] = {
        CSDBUS_VTABLE_START,
        CSDBUS_READ("InUse", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        CSDBUS_READ("AvailableAccuracyLevel", "u", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_METHOD("GetClient", "", "o"),
        CSDBUS_METHOD("CreateClient", "", "o"),
        CSDBUS_METHOD("DeleteClient", "o", ""),
        CSDBUS_METHOD("AddAgent", "s", ""),
        SD_BUS_VTABLE_END,
    };
    return vtable;
}

/// `org.freedesktop.GeoClue2.Client`, served under `/org/freedesktop/GeoClue2/Client`.
static inline sd_bus_vtable *csdbus_geoclue_client(void) {
    static sd_bus_vtable vtable[] = {
        CSDBUS_VTABLE_START,
        CSDBUS_READ("Location", "o", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        CSDBUS_WRITE("DistanceThreshold", "u"),
        CSDBUS_WRITE("TimeThreshold", "u"),
        CSDBUS_WRITE("DesktopId", "s"),
        CSDBUS_WRITE("RequestedAccuracyLevel", "u"),
        CSDBUS_READ("Active", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        CSDBUS_METHOD("Start", "", ""),
        CSDBUS_METHOD("Stop", "", ""),
        SD_BUS_SIGNAL("LocationUpdated", "oo", 0),
        SD_BUS_VTABLE_END,
    };
    return vtable;
}

/// `org.freedesktop.GeoClue2.Location`: each object is one location, never changed.
static inline sd_bus_vtable *csdbus_geoclue_location(void) {
    static sd_bus_vtable vtable[] = {
        CSDBUS_VTABLE_START,
        CSDBUS_READ("Latitude", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Longitude", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Accuracy", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Altitude", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Speed", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Heading", "d", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Description", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        CSDBUS_READ("Timestamp", "(tt)", SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
    };
    return vtable;
}

/// Gives each vtable the loaded library's format reference; call once, after csdbus_load.
static inline const char *csdbus_prepare_vtables(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    const unsigned *format = library ? dlsym(library, "sd_bus_object_vtable_format") : NULL;
    if (format == NULL) return "libsystemd.so.0 lacks sd_bus_object_vtable_format";
    csdbus_geoclue_manager()[0].x.start.vtable_format_reference = format;
    csdbus_geoclue_client()[0].x.start.vtable_format_reference = format;
    csdbus_geoclue_location()[0].x.start.vtable_format_reference = format;
    return NULL;
}

#endif
