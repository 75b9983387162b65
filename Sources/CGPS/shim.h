// The thin C layer under LocationKeepAlive's gpsd client.
// Only what Swift cannot call directly lives here.
#ifndef LOCATIONKEEPALIVE_CGPS_SHIM_H
#define LOCATIONKEEPALIVE_CGPS_SHIM_H

#include <gps.h>
#include <errno.h>

/// `gps_send` is variadic, which Swift cannot call: send one preformatted command.
static inline int cgps_send_command(struct gps_data_t *data, const char *command) {
    return gps_send(data, "%s", command);
}

/// The libgps error code `gps_open` leaves in `errno`.
static inline int cgps_errno(void) {
    return errno;
}

static inline void cgps_clear_errno(void) {
    errno = 0;
}

/// A fix's time in seconds since 1970, or 0 when it has none. In C, because which clang module
/// owns `struct timespec` (Glibc's or the Swift overlay's shims) depends on the build's import
/// order, and a release build can then refuse its members in Swift.
static inline double cgps_fix_seconds(const struct gps_fix_t *fix) {
    return fix->time.tv_sec == 0 ? 0 : (double)fix->time.tv_sec + (double)fix->time.tv_nsec / 1e9;
}

#endif
