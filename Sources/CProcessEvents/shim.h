// The kernel's process events connector (fork and exit of every process), as bytes: the
// netlink messages to send and to read are laid out here, where their C structs are at home.
// On purpose this header includes only the kernel's own uapi headers, no libc one: a module
// that includes sys/socket.h takes over its declarations from the Glibc module in some build
// orders (see CProcessControl). Swift makes the socket and passes the bytes.
#ifndef LOCATIONKEEPALIVE_CPROCESSEVENTS_SHIM_H
#define LOCATIONKEEPALIVE_CPROCESSEVENTS_SHIM_H

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/// Linux's AF_NETLINK and NETLINK_CONNECTOR, for `socket`.
#define CPE_AF_NETLINK 16
#define CPE_NETLINK_CONNECTOR NETLINK_CONNECTOR

/// The address to bind to (`struct sockaddr_nl` in the process events group): its length.
static inline int cpe_address(unsigned char *out, int capacity) {
    struct sockaddr_nl address = {0};
    if (capacity < (int)sizeof(address)) return -1;
    address.nl_family = CPE_AF_NETLINK;
    address.nl_groups = CN_IDX_PROC;
    __builtin_memcpy(out, &address, sizeof(address));
    return (int)sizeof(address);
}

/// The message that starts the events (PROC_CN_MCAST_LISTEN): its length.
static inline int cpe_listen_request(unsigned char *out, int capacity) {
    struct __attribute__((packed)) {
        struct nlmsghdr header;
        struct cn_msg message;
        enum proc_cn_mcast_op op;
    } request = {0};
    if (capacity < (int)sizeof(request)) return -1;
    request.header.nlmsg_len = sizeof(request);
    request.header.nlmsg_type = NLMSG_DONE;
    request.message.id.idx = CN_IDX_PROC;
    request.message.id.val = CN_VAL_PROC;
    request.message.len = sizeof(enum proc_cn_mcast_op);
    request.op = PROC_CN_MCAST_LISTEN;
    __builtin_memcpy(out, &request, sizeof(request));
    return (int)sizeof(request);
}

/// Reads the events of one datagram into `events`, three numbers each: 1, child, parent for
/// a new process (not a thread); 2, pid, 0 for a process that ended. The count of numbers.
static inline long cpe_parse(const unsigned char *buffer, long length, int *events, long capacity) {
    long written = 0;
    long offset = 0;
    while (length - offset >= (long)sizeof(struct nlmsghdr)) {
        struct nlmsghdr header;
        __builtin_memcpy(&header, buffer + offset, sizeof(header));
        if (header.nlmsg_len < sizeof(header) || (long)header.nlmsg_len > length - offset) break;
        long body = offset + NLMSG_HDRLEN;
        if ((long)header.nlmsg_len >= NLMSG_HDRLEN + (long)sizeof(struct cn_msg) + (long)sizeof(struct proc_event)) {
            struct cn_msg message;
            struct proc_event event;
            __builtin_memcpy(&message, buffer + body, sizeof(message));
            __builtin_memcpy(&event, buffer + body + sizeof(message), sizeof(event));
            if (message.id.idx == CN_IDX_PROC && written + 3 <= capacity) {
                if (event.what == PROC_EVENT_FORK && event.event_data.fork.child_pid == event.event_data.fork.child_tgid) {
                    events[written++] = 1;
                    events[written++] = event.event_data.fork.child_tgid;
                    events[written++] = event.event_data.fork.parent_tgid;
                } else if (event.what == PROC_EVENT_EXIT
                           && event.event_data.exit.process_pid == event.event_data.exit.process_tgid) {
                    events[written++] = 2;
                    events[written++] = event.event_data.exit.process_tgid;
                    events[written++] = 0;
                }
            }
        }
        offset += NLMSG_ALIGN(header.nlmsg_len);
    }
    return written;
}

#endif
