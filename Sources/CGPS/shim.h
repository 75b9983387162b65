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

#endif
