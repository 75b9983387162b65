// The process-control calls the host needs that glibc declares only for GNU code (accept4,
// posix_spawn's closefrom, setfsuid): the Glibc module leaves them out, so they are wrapped here.
#ifndef LOCATIONKEEPALIVE_CPROCESSCONTROL_SHIM_H
#define LOCATIONKEEPALIVE_CPROCESSCONTROL_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <unistd.h>

/// The next connection on a listening socket, close-on-exec from its first instant (no child
/// spawned meanwhile by another thread inherits it), or -1 with errno.
static inline int cprocess_accept(int descriptor) {
    for (;;) {
        int client = accept4(descriptor, NULL, NULL, SOCK_CLOEXEC);
        if (client >= 0 || errno != EINTR) return client;
    }
}

/// A spawn action that closes every descriptor from `from` up: the child inherits only what
/// the earlier actions set up.
static inline int cprocess_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// Opens `path` with the file-system permissions of `uid` and `gid` (Linux's per-thread fsuid,
/// restored before returning), so that a file named by a user is opened as that user would:
/// the descriptor, or -1 with errno.
static inline int cprocess_open_as(const char *path, int flags, mode_t mode, uid_t uid, gid_t gid) {
    gid_t previousGroup = (gid_t)setfsgid(gid);  // the group first, while the caller's capabilities hold
    uid_t previousUser = (uid_t)setfsuid(uid);
    int descriptor = open(path, flags | O_CLOEXEC, mode);
    int saved = errno;
    setfsuid(previousUser);
    setfsgid(previousGroup);
    errno = saved;
    return descriptor;
}

#endif
