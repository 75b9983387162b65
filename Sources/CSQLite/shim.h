// SQLite's C API (libsqlite3), the store under the fix journal, loaded with dlopen when a
// journal is first opened: a keepalive process that keeps no journal (watch, host, run without
// --journal) never maps it.
#ifndef LOCATIONKEEPALIVE_CSQLITE_SHIM_H
#define LOCATIONKEEPALIVE_CSQLITE_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <sqlite3.h>

#define CSQLITE_FUNCTIONS(X) \
    X(sqlite3_open_v2) X(sqlite3_close_v2) X(sqlite3_extended_result_codes) X(sqlite3_busy_timeout) \
    X(sqlite3_errmsg) X(sqlite3_errstr) X(sqlite3_extended_errcode) \
    X(sqlite3_prepare_v2) X(sqlite3_step) X(sqlite3_reset) X(sqlite3_clear_bindings) X(sqlite3_finalize) \
    X(sqlite3_bind_parameter_count) X(sqlite3_bind_null) X(sqlite3_bind_int64) X(sqlite3_bind_double) X(sqlite3_bind_text) \
    X(sqlite3_column_count) X(sqlite3_column_type) X(sqlite3_column_int64) X(sqlite3_column_double) \
    X(sqlite3_column_text) X(sqlite3_column_bytes) \
    X(sqlite3_changes) X(sqlite3_last_insert_rowid) X(sqlite3_get_autocommit) X(sqlite3_libversion)

typedef struct {
#define CSQLITE_FIELD(name) __typeof__(&name) name;
    CSQLITE_FUNCTIONS(CSQLITE_FIELD)
#undef CSQLITE_FIELD
    const char *error;
} csqlite_table;

/// Fills `api` (storage the caller keeps for the process, zeroed) and returns NULL, or why
/// libsqlite3 could not be loaded. Call once.
static inline const char *csqlite_load(csqlite_table *api) {
    void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        api->error = dlerror();
        return api->error;
    }
#define CSQLITE_LOAD(name) \
    api->name = (__typeof__(&name))dlsym(library, #name); \
    if (api->name == NULL) { api->error = "libsqlite3.so.0 lacks " #name; return api->error; }
    CSQLITE_FUNCTIONS(CSQLITE_LOAD)
#undef CSQLITE_LOAD
    return NULL;
}

/// SQLITE_TRANSIENT: SQLite copies the bound text before the call returns (a macro Swift cannot import).
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
