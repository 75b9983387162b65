/*
 * Loaded before libfaketime (LD_PRELOAD="timer-shim.so:libfaketime.so.1"), for the clock tests
 * and scripts/soak: libfaketime 0.9.10 converts every absolute timerfd_settime deadline as if it
 * were wall-clock time ("only CLOCK_REALTIME is handled"), monotonic ones too, so under any
 * offset every libdispatch timer (each Swift sleep) fires a year late or at once. This passes the
 * timers of every clock but the wall clock straight to the kernel, and the wall clock's through
 * libfaketime, which converts those right.
 *
 *   cc -shared -fPIC -O2 -o timer-shim.so timer-shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static signed char wall[65536];

int timerfd_create(int clockid, int flags) {
    int fd = (int)syscall(SYS_timerfd_create, clockid, flags);
    if (fd >= 0 && fd < 65536) wall[fd] = clockid == CLOCK_REALTIME || clockid == CLOCK_REALTIME_ALARM;
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    if (fd >= 0 && fd < 65536 && wall[fd]) {
        int (*faked)(int, int, const struct itimerspec *, struct itimerspec *) = dlsym(RTLD_NEXT, "timerfd_settime");
        if (faked) return faked(fd, flags, value, old);
    }
    return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
}
