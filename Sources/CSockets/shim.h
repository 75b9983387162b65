// The few BSD socket calls a one-request-at-a-time HTTP endpoint needs (`keepalive run
// --metrics`), in C, where a sockaddr is at home: Swift passes strings and byte arrays.
#ifndef LOCATIONKEEPALIVE_CSOCKETS_SHIM_H
#define LOCATIONKEEPALIVE_CSOCKETS_SHIM_H

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/// A listening TCP socket on `host` (a name or an address literal) and `port` (0: the kernel
/// picks one), or minus an errno (getaddrinfo failures give -EADDRNOTAVAIL).
static inline int csock_listen(const char *host, int port) {
    struct addrinfo hints, *found = NULL;
    char service[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &found) != 0 || found == NULL) return -EADDRNOTAVAIL;
    int failure = EADDRNOTAVAIL;
    for (struct addrinfo *candidate = found; candidate != NULL; candidate = candidate->ai_next) {
        int descriptor = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol);
        if (descriptor < 0) { failure = errno; continue; }
        int one = 1;
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(descriptor, candidate->ai_addr, candidate->ai_addrlen) == 0 && listen(descriptor, 16) == 0) {
            freeaddrinfo(found);
            return descriptor;
        }
        failure = errno;
        close(descriptor);
    }
    freeaddrinfo(found);
    return -failure;
}

/// The port a listening socket is bound to, or -1.
static inline int csock_local_port(int descriptor) {
    struct sockaddr_storage address;
    socklen_t length = sizeof(address);
    if (getsockname(descriptor, (struct sockaddr *)&address, &length) != 0) return -1;
    if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
    if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    return -1;
}

/// The next connection, or -1 once the listener is shut down.
static inline int csock_accept(int descriptor) {
    for (;;) {
        int client = accept4(descriptor, NULL, NULL, SOCK_CLOEXEC);
        if (client >= 0 || errno != EINTR) return client;
    }
}

/// Reads what arrived, up to `capacity` bytes: the count, 0 at the end, -1 on an error.
static inline long csock_read(int descriptor, unsigned char *buffer, unsigned long capacity) {
    for (;;) {
        long count = (long)recv(descriptor, buffer, capacity, 0);
        if (count >= 0 || errno != EINTR) return count;
    }
}

/// Sends all of `data`: 0, or -1 when the peer went away.
static inline int csock_write_all(int descriptor, const unsigned char *data, unsigned long length) {
    unsigned long offset = 0;
    while (offset < length) {
        long sent = (long)send(descriptor, data + offset, length - offset, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        offset += (unsigned long)sent;
    }
    return 0;
}

/// Wakes an `accept` blocked on the socket (then close it).
static inline void csock_shutdown(int descriptor) { shutdown(descriptor, SHUT_RDWR); }

static inline void csock_close(int descriptor) { close(descriptor); }

#endif
