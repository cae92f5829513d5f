// wake_lateness: the machine's own scheduling floor, measured the way Tutti's paced device clock wakes
// (PacedDeviceClock): one thread at SCHED_FIFO (priority 70, as `tutti peer` runs its audio threads), memory
// locked, sleeping with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to a grid of periods, reading the
// clock after each wake-up. A wake-up's lateness is the clock read less the deadline. Nothing else runs in
// the loop, so any lateness is the kernel's and the machine's (a shared VM's stolen time, other threads of
// the same priority, interrupts), not the application's.
//
//   wake_lateness [--seconds S] [--period-us US] [--priority P] [--cpu N] [--list-over US]
//
// Prints one JSON line on stdout: {"seconds","periodMicroseconds","priority","realtime","wakes",
// "latenessMicroseconds":{"p50","p99","p999","max"},"over":{"100":n,"250":n,...},"worst":[[t_s, us], ...]}:
// "startUnixSeconds" is the first deadline on the wall clock (to set the worst wake-ups beside other logs);
// "over" counts the wake-ups later than each threshold in µs (half a 64-frame packet at 48 kHz is 667 µs), and
// "worst" lists the ten latest wake-ups with the second of the run they came in; "late" lists every wake-up later
// than --list-over µs (667 by default; at most 10000) as [wall-clock seconds, µs], to set beside a stream's
// glitches in a run alongside (tutti-bench-analyze stats JSONL PROBE). "realtime" is false when
// SCHED_FIFO was refused (not root and no rtprio limit); the run then measures an ordinary thread.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static int compare_longs(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    double seconds = 60;
    long period_us = 1333;   // a 64-frame period at 48 kHz, rounded down to the microsecond
    int priority = 70, cpu = -1;
    long list_over_us = 667;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--period-us") == 0) period_us = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--priority") == 0) priority = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--cpu") == 0) cpu = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--list-over") == 0) list_over_us = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: wake_lateness [--seconds S] [--period-us US] [--priority P] [--cpu N] [--list-over US]\n");
            return 2;
        }
    }
    if (seconds <= 0 || period_us <= 0) {
        fprintf(stderr, "wake_lateness: --seconds and --period-us must be positive\n");
        return 2;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "wake_lateness: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
            return 1;
        }
    }
    struct sched_param param = {.sched_priority = priority};
    int realtime = sched_setscheduler(0, SCHED_FIFO, &param) == 0;
    if (!realtime) fprintf(stderr, "wake_lateness: SCHED_FIFO refused (%s): measuring an ordinary thread\n", strerror(errno));
    mlockall(MCL_CURRENT | MCL_FUTURE);

    long wakes = (long)(seconds * 1e6 / period_us);
    long *lateness = calloc((size_t)wakes, sizeof *lateness);   // ns
    if (!lateness) {
        fprintf(stderr, "wake_lateness: out of memory\n");
        return 1;
    }
    long long start = now_ns() + 10000000LL;   // first deadline 10 ms from now
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    double start_unix = (double)wall.tv_sec + wall.tv_nsec / 1e9 + 0.01;   // the first deadline, on the wall clock
    for (long k = 0; k < wakes; k++) {
        long long deadline = start + k * period_us * 1000LL;
        struct timespec spec = {.tv_sec = deadline / 1000000000LL, .tv_nsec = deadline % 1000000000LL};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, NULL) == EINTR) {}
        lateness[k] = (long)(now_ns() - deadline);
    }

    // The ten latest wake-ups, with when they came, before sorting.
    long worst[10];
    int worst_count = 0;
    for (long k = 0; k < wakes; k++) {
        int at;
        if (worst_count < 10) {
            at = worst_count++;
        } else {
            if (lateness[k] <= lateness[worst[9]]) continue;
            at = 9;
        }
        worst[at] = k;
        for (int j = at; j > 0 && lateness[worst[j]] > lateness[worst[j - 1]]; j--) {
            long swap = worst[j];
            worst[j] = worst[j - 1];
            worst[j - 1] = swap;
        }
    }
    static const long thresholds[] = {100, 250, 500, 667, 1000, 1333, 2000};
    long over[sizeof thresholds / sizeof *thresholds] = {0};
    for (long k = 0; k < wakes; k++)
        for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++)
            if (lateness[k] > thresholds[t] * 1000) over[t]++;

    printf("{\"seconds\":%g,\"periodMicroseconds\":%ld,\"priority\":%d,\"realtime\":%s,\"wakes\":%ld,\"startUnixSeconds\":%.3f,",
           seconds, period_us, priority, realtime ? "true" : "false", wakes, start_unix);
    printf("\"worst\":[");
    for (int i = 0; i < worst_count; i++)
        printf("%s[%.3f,%.1f]", i ? "," : "", (double)worst[i] * period_us / 1e6, lateness[worst[i]] / 1000.0);
    printf("],\"late\":[");
    long listed = 0;
    for (long k = 0; k < wakes && listed < 10000; k++)
        if (lateness[k] > list_over_us * 1000)
            printf("%s[%.4f,%.1f]", listed++ ? "," : "", start_unix + (double)k * period_us / 1e6, lateness[k] / 1000.0);
    printf("],");
    qsort(lateness, (size_t)wakes, sizeof *lateness, compare_longs);
    printf("\"latenessMicroseconds\":{\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f},", lateness[wakes / 2] / 1000.0,
           lateness[(long)(wakes * 0.99)] / 1000.0, lateness[(long)(wakes * 0.999)] / 1000.0, lateness[wakes - 1] / 1000.0);
    printf("\"over\":{");
    for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++)
        printf("%s\"%ld\":%ld", t ? "," : "", thresholds[t], over[t]);
    printf("}}\n");
    free(lateness);
    return 0;
}
