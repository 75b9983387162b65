// The process-control calls the host needs that glibc declares only for GNU code (accept4,
// pipe2, posix_spawn's closefrom, setfsuid): the Glibc module leaves them out, so they are declared
// and wrapped here. On purpose this header includes no system header: a module that includes
// one (sys/socket.h, spawn.h) can take over its declarations from the Glibc module in some
// build orders, and then code that imports only Glibc no longer sees SHUT_RDWR or stat.
#ifndef LOCATIONKEEPALIVE_CPROCESSCONTROL_SHIM_H
#define LOCATIONKEEPALIVE_CPROCESSCONTROL_SHIM_H

struct sockaddr;
int accept4(int descriptor, struct sockaddr *address, unsigned int *length, int flags);
int posix_spawn_file_actions_addclosefrom_np(void *actions, int from);
int setfsuid(unsigned int uid);
int setfsgid(unsigned int gid);
int open(const char *path, int flags, ...);
int *__errno_location(void);
int close(int descriptor);
long syscall(long number, ...);
int prctl(int option, ...);
int pipe2(int ends[2], int flags);

/// Linux's O_CLOEXEC and SOCK_CLOEXEC (the same bit on x86-64, ARM and the others Debian builds).
#define CPROCESS_CLOEXEC 02000000
#define CPROCESS_EINTR 4
/// Linux's pidfd_open system call number: 434 on every architecture since 5.3.
#define CPROCESS_SYS_PIDFD_OPEN 434
/// Linux's pidfd_getfd system call number: 438 on every architecture since 5.6.
#define CPROCESS_SYS_PIDFD_GETFD 438

/// A pipe whose two ends are close-on-exec from their first instant (no child spawned
/// meanwhile by another thread inherits one, which would keep the pipe open), with `flags`
/// besides (O_NONBLOCK); 0, or -1 with errno.
static inline int cprocess_pipe(int ends[2], int flags) {
    return pipe2(ends, flags | CPROCESS_CLOEXEC);
}

/// The next connection on a listening socket, close-on-exec from its first instant (no child
/// spawned meanwhile by another thread inherits it), or -1 with errno.
static inline int cprocess_accept(int descriptor) {
    for (;;) {
        int client = accept4(descriptor, 0, 0, CPROCESS_CLOEXEC);
        if (client >= 0 || *__errno_location() != CPROCESS_EINTR) return client;
    }
}

/// A spawn action (on a `posix_spawn_file_actions_t`) that closes every descriptor from `from`
/// up: the child inherits only what the earlier actions set up.
static inline int cprocess_spawn_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// Opens `path` with the file-system permissions of `uid` and `gid` (Linux's per-thread fsuid,
/// restored before returning), so that a file named by a user is opened as that user would:
/// the descriptor, or -1 with errno.
static inline int cprocess_open_as(const char *path, int flags, unsigned int mode, unsigned int uid, unsigned int gid) {
    unsigned int previousGroup = (unsigned int)setfsgid(gid);  // the group first, while the caller's capabilities hold
    unsigned int previousUser = (unsigned int)setfsuid(uid);
    int descriptor = open(path, flags | CPROCESS_CLOEXEC, mode);
    int saved = *__errno_location();
    setfsuid(previousUser);
    setfsgid(previousGroup);
    *__errno_location() = saved;
    return descriptor;
}

/// A descriptor that becomes readable when process `pid` ends (Linux 5.3's pidfd_open; glibc
/// wraps it only from 2.36), close-on-exec, or -1 with errno.
static inline int cprocess_pidfd_open(int pid) {
    return (int)syscall(CPROCESS_SYS_PIDFD_OPEN, pid, 0);
}

/// A copy of process `pid`'s descriptor `target`, close-on-exec (Linux 5.6's pidfd_getfd: the
/// caller must be allowed to ptrace it, as root is), or -1 with errno.
static inline int cprocess_take_descriptor(int pid, int target) {
    int process = cprocess_pidfd_open(pid);
    if (process < 0) return -1;
    int copy = (int)syscall(CPROCESS_SYS_PIDFD_GETFD, process, target, 0);
    int saved = *__errno_location();
    close(process);
    *__errno_location() = saved;
    return copy;
}

/// Linux's Landlock system calls (5.13+, the same numbers on every architecture).
#define CPROCESS_SYS_LANDLOCK_CREATE_RULESET 444
#define CPROCESS_SYS_LANDLOCK_ADD_RULE 445
#define CPROCESS_SYS_LANDLOCK_RESTRICT_SELF 446
#define CPROCESS_LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define CPROCESS_O_PATH 010000000
#define CPROCESS_PR_SET_NO_NEW_PRIVS 38

/// The Landlock ABI version the kernel offers, or -1 with errno (ENOSYS: too old;
/// EOPNOTSUPP: built in but not enabled in lsm=).
static inline int cprocess_landlock_abi(void) {
    return (int)syscall(CPROCESS_SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1UL /* LANDLOCK_CREATE_RULESET_VERSION */);
}

/// A Landlock ruleset that denies nothing: it handles one right (making block devices) and
/// grants it beneath `/`. Restricting a thread with it makes a domain of its own, and Landlock
/// lets a process ptrace (or take descriptors from, or read the memory of) only processes of
/// its own domain or one nested in it. The ruleset's descriptor, or -1 with errno.
static inline int cprocess_landlock_ruleset(void) {
    unsigned long long handled = CPROCESS_LANDLOCK_ACCESS_FS_MAKE_BLOCK;
    int ruleset = (int)syscall(CPROCESS_SYS_LANDLOCK_CREATE_RULESET, &handled, sizeof(handled), 0);
    if (ruleset < 0) return -1;
    int root = open("/", CPROCESS_O_PATH | CPROCESS_CLOEXEC);
    if (root < 0) {
        close(ruleset);
        return -1;
    }
    struct __attribute__((packed)) {
        unsigned long long allowed_access;
        int parent_fd;
    } beneath = {CPROCESS_LANDLOCK_ACCESS_FS_MAKE_BLOCK, root};
    long added = syscall(CPROCESS_SYS_LANDLOCK_ADD_RULE, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &beneath, 0);
    int saved = *__errno_location();
    close(root);
    if (added != 0) {
        close(ruleset);
        *__errno_location() = saved;
        return -1;
    }
    return ruleset;
}

/// Puts the calling thread, and every process it starts from now on, in a new Landlock domain
/// of `ruleset` (no_new_privs first, as Landlock requires without CAP_SYS_ADMIN; apps are
/// started with it anyway). Only this thread's credentials change: 0, or -1 with errno.
static inline int cprocess_landlock_restrict_thread(int ruleset) {
    if (prctl(CPROCESS_PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) return -1;
    return (int)syscall(CPROCESS_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0);
}

#endif
