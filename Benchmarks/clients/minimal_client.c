/* The anchor for the gpsd client benchmark: the least a libgps client can do.
 * Watches gpsd in JSON, reads every message, counts TPV reports, and prints the count
 * when SIGTERM or SIGINT arrives; with "times", also prints each fix's time as it arrives (the
 * latency benchmark).   cc -O2 minimal_client.c -lgps -o minimal_client
 * usage: minimal_client HOST PORT [times] */
#include <gps.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop = 0;
static void on_signal(int signo) { (void)signo; stop = 1; }

int main(int argc, char **argv) {
    struct gps_data_t data;
    char message[16384];
    long tpv = 0;
    int times = argc == 4 && strcmp(argv[3], "times") == 0;
    if (argc != 3 && !times) { fprintf(stderr, "usage: %s HOST PORT [times]\n", argv[0]); return 64; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    if (gps_open(argv[1], argv[2], &data) != 0) { fprintf(stderr, "gps_open failed\n"); return 1; }
    gps_stream(&data, WATCH_ENABLE | WATCH_JSON, NULL);
    while (!stop) {
        if (!gps_waiting(&data, 500000)) continue;
        if (gps_read(&data, message, sizeof message) < 0) break;
        if (strncmp(message, "{\"class\":\"TPV\"", 14) != 0) continue;
        tpv++;
        if (times && data.fix.mode >= MODE_2D) {
            printf("%lld.%02ld\n", (long long)data.fix.time.tv_sec, data.fix.time.tv_nsec / 10000000);
            fflush(stdout);
        }
    }
    printf("%ld\n", tpv);
    gps_close(&data);
    return 0;
}
