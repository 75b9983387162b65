// systemd's service notification protocol (sd_notify(3), "the documented datagram protocol"):
// one datagram of newline-separated KEY=VALUE lines to the AF_UNIX socket named by
// $NOTIFY_SOCKET (a path, or an abstract name written with a leading '@'). Written here
// rather than linking libsystemd: a send of a few bytes, no library to load in every process.
#ifndef LOCATIONKEEPALIVE_CSYSTEMDNOTIFY_SHIM_H
#define LOCATIONKEEPALIVE_CSYSTEMDNOTIFY_SHIM_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/// Sends `state` to `socket_name`. Returns 0, or the errno of the failure (EINVAL for a name
/// too long or empty).
static inline int csd_notify(const char *socket_name, const char *state) {
    struct sockaddr_un address;
    size_t length = strlen(socket_name);
    if (length == 0 || length >= sizeof(address.sun_path)) return EINVAL;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path, socket_name, length);
    if (address.sun_path[0] == '@') address.sun_path[0] = '\0';  // abstract namespace
    int descriptor = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (descriptor < 0) return errno;
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length);
    ssize_t sent = sendto(descriptor, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&address, size);
    int failure = sent < 0 ? errno : 0;
    close(descriptor);
    return failure;
}

#endif
