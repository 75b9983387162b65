// libmosquitto, the MQTT client under LocationKeepAlive's OwnTracks delivery, loaded with
// dlopen on first use: linked, it and the OpenSSL it pulls in cost every keepalive process
// about 2 MB of RSS, even `watch`, which never delivers.
#ifndef LOCATIONKEEPALIVE_CMOSQUITTO_SHIM_H
#define LOCATIONKEEPALIVE_CMOSQUITTO_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <mosquitto.h>

#define CMOSQ_FUNCTIONS(X) \
    X(lib_init) X(new) X(destroy) X(user_data_set) X(int_option) X(reconnect_delay_set) \
    X(username_pw_set) X(tls_set) X(connect_callback_set) X(disconnect_callback_set) \
    X(publish_callback_set) X(connect_async) X(loop_start) X(loop_stop) X(publish) \
    X(disconnect) X(strerror) X(connack_string) X(max_inflight_messages_set) \
    X(will_set) X(subscribe) X(message_callback_set) X(socket)

typedef struct {
#define CMOSQ_FIELD(name) __typeof__(&mosquitto_##name) name;
    CMOSQ_FUNCTIONS(CMOSQ_FIELD)
#undef CMOSQ_FIELD
    const char *error;
} cmosq_table;

/// Fills `api` (storage the caller keeps for the process, zeroed) and returns NULL, or why
/// the library could not be loaded. Call once.
static inline const char *cmosq_load(cmosq_table *api) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        api->error = dlerror();
        return api->error;
    }
#define CMOSQ_LOAD(name) \
    api->name = (__typeof__(&mosquitto_##name))dlsym(library, "mosquitto_" #name); \
    if (api->name == NULL) { api->error = "libmosquitto.so.1 lacks mosquitto_" #name; return api->error; }
    CMOSQ_FUNCTIONS(CMOSQ_LOAD)
#undef CMOSQ_LOAD
    api->lib_init();
    return NULL;
}

// The calls LocationKeepAlive makes, through the loaded table (each takes the table `cmosq_load` filled).
static inline struct mosquitto *cmosq_new(const cmosq_table *api, const char *id, bool clean, void *obj) {
    return api->new(id, clean, obj);
}
static inline void cmosq_destroy(const cmosq_table *api, struct mosquitto *m) { api->destroy(m); }
static inline void cmosq_user_data_set(const cmosq_table *api, struct mosquitto *m, void *obj) { api->user_data_set(m, obj); }
static inline int cmosq_int_option(const cmosq_table *api, struct mosquitto *m, enum mosq_opt_t option, int value) { return api->int_option(m, option, value); }
static inline int cmosq_reconnect_delay_set(const cmosq_table *api, struct mosquitto *m, unsigned int delay, unsigned int maximum, bool exponential) {
    return api->reconnect_delay_set(m, delay, maximum, exponential);
}
static inline int cmosq_username_pw_set(const cmosq_table *api, struct mosquitto *m, const char *user, const char *password) {
    return api->username_pw_set(m, user, password);
}
static inline int cmosq_tls_set(const cmosq_table *api, struct mosquitto *m, const char *cafile, const char *capath) {
    return api->tls_set(m, cafile, capath, NULL, NULL, NULL);
}
static inline void cmosq_connect_callback_set(const cmosq_table *api, struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)) {
    api->connect_callback_set(m, callback);
}
static inline void cmosq_disconnect_callback_set(const cmosq_table *api, struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)) {
    api->disconnect_callback_set(m, callback);
}
static inline void cmosq_publish_callback_set(const cmosq_table *api, struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)) {
    api->publish_callback_set(m, callback);
}
static inline int cmosq_connect_async(const cmosq_table *api, struct mosquitto *m, const char *host, int port, int keepalive) {
    return api->connect_async(m, host, port, keepalive);
}
static inline int cmosq_loop_start(const cmosq_table *api, struct mosquitto *m) { return api->loop_start(m); }
static inline int cmosq_loop_stop(const cmosq_table *api, struct mosquitto *m, bool force) { return api->loop_stop(m, force); }
static inline int cmosq_publish(const cmosq_table *api, struct mosquitto *m, int *mid, const char *topic, int length, const void *payload, int qos, bool retain) {
    return api->publish(m, mid, topic, length, payload, qos, retain);
}
static inline int cmosq_disconnect(const cmosq_table *api, struct mosquitto *m) { return api->disconnect(m); }
static inline const char *cmosq_strerror(const cmosq_table *api, int code) { return api->strerror(code); }
static inline const char *cmosq_connack_string(const cmosq_table *api, int code) { return api->connack_string(code); }
static inline int cmosq_will_set(const cmosq_table *api, struct mosquitto *m, const char *topic, int length, const void *payload, int qos, bool retain) {
    return api->will_set(m, topic, length, payload, qos, retain);
}
static inline int cmosq_socket(const cmosq_table *api, struct mosquitto *m) { return api->socket(m); }
static inline int cmosq_subscribe(const cmosq_table *api, struct mosquitto *m, const char *topic, int qos) {
    return api->subscribe(m, NULL, topic, qos);
}
static inline void cmosq_message_callback_set(const cmosq_table *api, struct mosquitto *m, void (*callback)(struct mosquitto *, void *, const struct mosquitto_message *)) {
    api->message_callback_set(m, callback);
}
static inline int cmosq_max_inflight_messages_set(const cmosq_table *api, struct mosquitto *m, unsigned int count) {
    return api->max_inflight_messages_set(m, count);
}

#endif
