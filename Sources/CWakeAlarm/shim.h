// Linux's timerfd on CLOCK_BOOTTIME_ALARM: a timer on the boot clock (it runs on while the
// device sleeps) that wakes a suspended device when it expires (it needs CAP_WAKE_ALARM); and
// one on the wall clock that the kernel cancels at every resume (how a sleep nobody announced
// is seen).
// The Glibc module leaves sys/timerfd.h out; like CProcessControl's, this header includes no
// system header and declares what it uses (the layouts are Linux's on every 64-bit
// architecture Debian builds).
#ifndef LOCATIONKEEPALIVE_CWAKEALARM_SHIM_H
#define LOCATIONKEEPALIVE_CWAKEALARM_SHIM_H

struct cwake_timespec { long seconds; long nanoseconds; };
struct cwake_itimerspec { struct cwake_timespec interval; struct cwake_timespec value; };

int timerfd_create(int clock, int flags);
int timerfd_settime(int descriptor, int flags, const void *value, void *old);
int *__errno_location(void);

#define CWAKE_CLOCK_REALTIME 0
#define CWAKE_CLOCK_BOOTTIME 7
#define CWAKE_CLOCK_BOOTTIME_ALARM 9
/// TFD_CLOEXEC | TFD_NONBLOCK (O_CLOEXEC | O_NONBLOCK).
#define CWAKE_FLAGS (02000000 | 04000)
#define CWAKE_TIMER_ABSTIME 1
#define CWAKE_TIMER_CANCEL_ON_SET 2

/// A timer on `clock` (CWAKE_CLOCK_BOOTTIME_ALARM, or CWAKE_CLOCK_BOOTTIME for one that does
/// not wake the device), or -1 with errno (EPERM without CAP_WAKE_ALARM).
static inline int cwake_create(int clock) {
    int descriptor = timerfd_create(clock, CWAKE_FLAGS);
    return descriptor;
}

/// Arms `descriptor` to expire once at `seconds`.`nanoseconds` on its clock (both 0:
/// disarms it); 0, or -1 with errno.
static inline int cwake_set(int descriptor, long seconds, long nanoseconds) {
    struct cwake_itimerspec value = { { 0, 0 }, { seconds, nanoseconds } };
    return timerfd_settime(descriptor, CWAKE_TIMER_ABSTIME, &value, 0);
}

/// Arms `descriptor`, a timer on CWAKE_CLOCK_REALTIME, for a time that never comes, cancelled
/// whenever the wall clock jumps against the monotonic one: at every resume from a sleep (the
/// kernel treats a resume as a clock set) and at a clock set. Reading it then fails with
/// ECANCELED, and it must be armed again. 0, or -1 with errno.
static inline int cwake_watch_clock_jumps(int descriptor) {
    struct cwake_itimerspec value = { { 0, 0 }, { 1L << 40, 0 } };
    return timerfd_settime(descriptor, CWAKE_TIMER_ABSTIME | CWAKE_TIMER_CANCEL_ON_SET, &value, 0);
}

int epoll_create1(int flags);
int epoll_ctl(int set, int operation, int descriptor, void *event);
int epoll_wait(int set, void *events, int count, int timeout);

/// Linux's epoll_event: packed on x86-64 alone.
#if defined(__x86_64__)
struct __attribute__((packed)) cwake_epoll_event { unsigned int events; unsigned long long data; };
#else
struct cwake_epoll_event { unsigned int events; unsigned long long data; };
#endif

/// An epoll set (close-on-exec) for cwake_watch_expiry, or -1 with errno.
static inline int cwake_expiry_set(void) { return epoll_create1(02000000); }

/// Watches the timer `alarm` in `set` with EPOLLWAKEUP: from the moment the alarm expires (in
/// the kernel, during the resume it causes) until the next cwake_await_expiry on the set, the
/// kernel holds the device awake, so that no suspender (the kernel's autosleep, one that sleeps
/// whenever no wakelock is held) can put it back to sleep before the process has taken a
/// wakelock of its own. Needs CAP_BLOCK_SUSPEND (the kernel drops the flag without it). 0, or
/// -1 with errno.
static inline int cwake_watch_expiry(int set, int alarm) {
    struct cwake_epoll_event event = { 0x001 | (1u << 29), 0 };  /* EPOLLIN | EPOLLWAKEUP */
    return epoll_ctl(set, 1, alarm, &event);  /* EPOLL_CTL_ADD */
}

/// Waits until the watched alarm expires: 0, or -1 with errno (EINTR: wait again).
static inline int cwake_await_expiry(int set) {
    struct cwake_epoll_event event;
    return epoll_wait(set, &event, 1, -1) == 1 ? 0 : -1;
}

static inline int cwake_errno(void) { return *__errno_location(); }

#endif
