// wake_lateness: the machine's own scheduling floor, measured the way Tutti's paced device clock wakes
// (PacedDeviceClock): a thread at SCHED_FIFO (priority 70, as `tutti peer` runs its audio threads), memory
// locked, sleeping with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to a grid of periods, reading the
// clock after each wake-up. A wake-up's lateness is the clock read less the deadline. Nothing else runs in
// the loop, so any lateness is the kernel's and the machine's (a shared VM's stolen time, other threads of
// the same priority, interrupts), not the application's.
//
//   wake_lateness [--seconds S] [--period-us US] [--priority P] [--cpu N | --per-cpu] [--list-over US] [--stream]
//
// --per-cpu runs one such thread pinned to each CPU this process may use, all on the same grid: a thread that
// may move to any CPU dodges a CPU the hypervisor has taken away, as a peer's clock thread, which runs where
// it ran last, does not. The main thread meanwhile reads each CPU's stolen time (/proc/stat's "steal": time
// the hypervisor ran something else on that virtual CPU) every 50 ms.
//
// Prints one JSON line on stdout: {"seconds","periodMicroseconds","priority","realtime","wakes",
// "latenessMicroseconds":{"p50","p99","p999","max"},"over":{"100":n,"250":n,...},"worst":[[t_s, us], ...]}:
// "startUnixSeconds" is the first deadline on the wall clock (to set the worst wake-ups beside other logs);
// "over" counts the wake-ups later than each threshold in µs (half a 64-frame packet at 48 kHz is 667 µs), and
// "worst" lists the ten latest wake-ups with the second of the run they came in; "late" lists every wake-up later
// than --list-over µs (667 by default; at most 10000) as [wall-clock seconds, µs] ([…, µs, cpu] with
// --per-cpu), to set beside a stream's glitches in a run alongside (tutti-bench-analyze stats JSONL PROBE).
// With --per-cpu also "cpus" (each thread's figures) and "steal": {"milliseconds": {cpu: ms over the run},
// "increases": [[wall-clock seconds, cpu, ms], …]} (each 50 ms read that found more stolen time; the kernel
// counts it in clock ticks, so an increase is a multiple of 1000/USER_HZ ms). The figures over all threads
// are at the top level. "realtime" is false when SCHED_FIFO was refused (not root and no rtprio limit); the
// run then measures ordinary threads.
//
// --stream: no summary; each wake-up later than --list-over µs is printed at once, one line each,
// "[wall-clock seconds, µs, cpu]" (cpu -1 when not pinned), until --seconds have passed or the process is
// stopped (SIGTERM; without --seconds it runs until then): a probe that runs beside a whole test run, whose
// stalls the test looks up by time while it still runs (scripts/lab-test).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { MAX_CPUS = 64, MAX_STEAL = 20000, MAX_LISTED = 10000 };
static const long thresholds[] = {100, 250, 500, 667, 1000, 1333, 2000};
#define THRESHOLD_COUNT (sizeof thresholds / sizeof *thresholds)

static int compare_longs(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/// One sleeping thread: its CPU (-1: any), the grid, and each wake-up's lateness (ns); with --stream no
/// lateness is kept: the wake-ups later than `stream_over_ns` are printed as they come.
struct sleeper {
    int cpu, priority, realtime;
    long wakes, period_us;
    long long start, stream_over_ns;
    long *lateness;
    pthread_t thread;
};

static void *sleep_on_grid(void *argument) {
    struct sleeper *s = argument;
    if (s->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s->cpu, &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
            fprintf(stderr, "wake_lateness: cannot pin a thread to CPU %d\n", s->cpu);
    }
    struct sched_param param = {.sched_priority = s->priority};
    s->realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
    for (long k = 0; k < s->wakes; k++) {
        long long deadline = s->start + k * s->period_us * 1000LL;
        struct timespec spec = {.tv_sec = deadline / 1000000000LL, .tv_nsec = deadline % 1000000000LL};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, NULL) == EINTR) {}
        long late = (long)(now_ns() - deadline);
        if (!s->lateness) {
            if (late > s->stream_over_ns) {
                flockfile(stdout);
                printf("[%.4f,%.1f,%d]\n", wall_seconds() - late / 1e9, late / 1000.0, s->cpu);
                fflush(stdout);
                funlockfile(stdout);
            }
            continue;
        }
        s->lateness[k] = late;
    }
    return NULL;
}

/// Each CPU's stolen time in ms from /proc/stat ("cpuN user nice system idle iowait irq softirq steal …");
/// returns how many CPUs it read, -1 if it could not.
static int read_steal(double *milliseconds, int capacity) {
    FILE *file = fopen("/proc/stat", "r");
    if (!file) return -1;
    static long ticks_per_second;
    if (!ticks_per_second) ticks_per_second = sysconf(_SC_CLK_TCK);
    char line[512];
    int count = 0;
    for (int i = 0; i < capacity; i++) milliseconds[i] = -1;
    while (fgets(line, sizeof line, file)) {
        int cpu;
        unsigned long long v[8];
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]) == 9 && cpu >= 0 && cpu < capacity) {
            milliseconds[cpu] = (double)v[7] * 1000.0 / (double)ticks_per_second;
            count++;
        }
    }
    fclose(file);
    return count;
}

static void print_summary(long *lateness, long wakes) {
    long over[THRESHOLD_COUNT] = {0};
    for (long k = 0; k < wakes; k++)
        for (size_t t = 0; t < THRESHOLD_COUNT; t++)
            if (lateness[k] > thresholds[t] * 1000) over[t]++;
    qsort(lateness, (size_t)wakes, sizeof *lateness, compare_longs);
    printf("\"latenessMicroseconds\":{\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f},", lateness[wakes / 2] / 1000.0,
           lateness[(long)(wakes * 0.99)] / 1000.0, lateness[(long)(wakes * 0.999)] / 1000.0, lateness[wakes - 1] / 1000.0);
    printf("\"over\":{");
    for (size_t t = 0; t < THRESHOLD_COUNT; t++) printf("%s\"%ld\":%ld", t ? "," : "", thresholds[t], over[t]);
    printf("}");
}

int main(int argc, char **argv) {
    double seconds = 60;
    long period_us = 1333;   // a 64-frame period at 48 kHz, rounded down to the microsecond
    int priority = 70, cpu = -1, per_cpu = 0, stream = 0, seconds_given = 0;
    long list_over_us = 667;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[++i]), seconds_given = 1;
        else if (strcmp(argv[i], "--stream") == 0) stream = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--period-us") == 0) period_us = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--priority") == 0) priority = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--cpu") == 0) cpu = atoi(argv[++i]);
        else if (strcmp(argv[i], "--per-cpu") == 0) per_cpu = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--list-over") == 0) list_over_us = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: wake_lateness [--seconds S] [--period-us US] [--priority P] [--cpu N | --per-cpu] [--list-over US] [--stream]\n");
            return 2;
        }
    }
    if (seconds <= 0 || period_us <= 0) {
        fprintf(stderr, "wake_lateness: --seconds and --period-us must be positive\n");
        return 2;
    }
    if (per_cpu && cpu >= 0) {
        fprintf(stderr, "wake_lateness: --cpu and --per-cpu exclude each other\n");
        return 2;
    }
    mlockall(MCL_CURRENT | MCL_FUTURE);

    // The threads: one unpinned (or pinned to --cpu), or one pinned to each CPU of this process's set.
    struct sleeper sleepers[MAX_CPUS];
    int count = 0;
    if (per_cpu) {
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
            fprintf(stderr, "wake_lateness: cannot read this process's CPUs: %s\n", strerror(errno));
            return 1;
        }
        for (int c = 0; c < MAX_CPUS; c++)
            if (CPU_ISSET(c, &allowed)) sleepers[count++] = (struct sleeper){.cpu = c};
    } else {
        sleepers[count++] = (struct sleeper){.cpu = cpu};
    }
    if (stream && !seconds_given) seconds = 1e9;   // until stopped
    long wakes = (long)(seconds * 1e6 / period_us);
    long long start = now_ns() + 10000000LL;   // first deadline 10 ms from now
    double start_unix = wall_seconds() + 0.01;  // the first deadline, on the wall clock
    for (int i = 0; i < count; i++) {
        sleepers[i].priority = priority;
        sleepers[i].wakes = wakes;
        sleepers[i].period_us = period_us;
        sleepers[i].start = start;
        sleepers[i].stream_over_ns = list_over_us * 1000LL;
        sleepers[i].lateness = stream ? NULL : calloc((size_t)wakes, sizeof(long));
        if ((!stream && !sleepers[i].lateness) || pthread_create(&sleepers[i].thread, NULL, sleep_on_grid, &sleepers[i]) != 0) {
            fprintf(stderr, "wake_lateness: cannot start a thread\n");
            return 1;
        }
    }

    if (stream) {
        for (int i = 0; i < count; i++) pthread_join(sleepers[i].thread, NULL);
        return 0;
    }
    // Meanwhile, with --per-cpu, each CPU's stolen time every 50 ms, until the grid's end.
    static double steal_first[MAX_CPUS], steal_last[MAX_CPUS], steal_now[MAX_CPUS];
    static double increase_time[MAX_STEAL], increase_ms[MAX_STEAL];
    static int increase_cpu[MAX_STEAL];
    int increases = 0, steal_cpus = per_cpu ? read_steal(steal_first, MAX_CPUS) : -1;
    if (steal_cpus > 0) {
        memcpy(steal_last, steal_first, sizeof steal_last);
        long long end = start + wakes * period_us * 1000LL;
        while (now_ns() < end) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = 50000000L};
            nanosleep(&pause, NULL);
            if (read_steal(steal_now, MAX_CPUS) <= 0) continue;
            double when = wall_seconds();
            for (int c = 0; c < MAX_CPUS; c++) {
                if (steal_now[c] > steal_last[c] && steal_last[c] >= 0 && increases < MAX_STEAL) {
                    increase_time[increases] = when;
                    increase_cpu[increases] = c;
                    increase_ms[increases++] = steal_now[c] - steal_last[c];
                }
                steal_last[c] = steal_now[c];
            }
        }
    }
    int realtime = 1;
    for (int i = 0; i < count; i++) {
        pthread_join(sleepers[i].thread, NULL);
        realtime &= sleepers[i].realtime;
    }
    if (!realtime) fprintf(stderr, "wake_lateness: SCHED_FIFO refused: measuring ordinary threads\n");

    // All threads' wake-ups together, in deadline order (k, then thread).
    long total = wakes * count;
    long *all = malloc((size_t)total * sizeof(long));
    if (!all) {
        fprintf(stderr, "wake_lateness: out of memory\n");
        return 1;
    }
    for (long k = 0; k < wakes; k++)
        for (int i = 0; i < count; i++) all[k * count + i] = sleepers[i].lateness[k];

    // The ten latest wake-ups, with when they came, before sorting.
    long worst[10];
    int worst_count = 0;
    for (long j = 0; j < total; j++) {
        int at;
        if (worst_count < 10) {
            at = worst_count++;
        } else {
            if (all[j] <= all[worst[9]]) continue;
            at = 9;
        }
        worst[at] = j;
        for (int m = at; m > 0 && all[worst[m]] > all[worst[m - 1]]; m--) {
            long swap = worst[m];
            worst[m] = worst[m - 1];
            worst[m - 1] = swap;
        }
    }
    printf("{\"seconds\":%g,\"periodMicroseconds\":%ld,\"priority\":%d,\"realtime\":%s,\"threads\":%d,\"wakes\":%ld,"
           "\"startUnixSeconds\":%.3f,",
           seconds, period_us, priority, realtime ? "true" : "false", count, total, start_unix);
    printf("\"worst\":[");
    for (int i = 0; i < worst_count; i++)
        printf("%s[%.3f,%.1f]", i ? "," : "", (double)(worst[i] / count) * period_us / 1e6, all[worst[i]] / 1000.0);
    printf("],\"late\":[");
    long listed = 0;
    for (long j = 0; j < total && listed < MAX_LISTED; j++) {
        if (all[j] <= list_over_us * 1000) continue;
        double when = start_unix + (double)(j / count) * period_us / 1e6;
        if (per_cpu)
            printf("%s[%.4f,%.1f,%d]", listed++ ? "," : "", when, all[j] / 1000.0, sleepers[j % count].cpu);
        else
            printf("%s[%.4f,%.1f]", listed++ ? "," : "", when, all[j] / 1000.0);
    }
    printf("],");
    if (per_cpu) {
        printf("\"cpus\":[");
        for (int i = 0; i < count; i++) {
            printf("%s{\"cpu\":%d,", i ? "," : "", sleepers[i].cpu);
            print_summary(sleepers[i].lateness, wakes);
            printf("}");
        }
        printf("],");
        if (steal_cpus > 0) {
            printf("\"steal\":{\"milliseconds\":{");
            int first = 1;
            for (int i = 0; i < count; i++) {
                int c = sleepers[i].cpu;
                if (steal_first[c] < 0) continue;
                printf("%s\"%d\":%.0f", first ? "" : ",", c, steal_last[c] - steal_first[c]);
                first = 0;
            }
            printf("},\"increases\":[");
            for (int i = 0; i < increases; i++)
                printf("%s[%.3f,%d,%.0f]", i ? "," : "", increase_time[i], increase_cpu[i], increase_ms[i]);
            printf("]},");
        }
    }
    print_summary(all, total);
    printf("}\n");
    for (int i = 0; i < count; i++) free(sleepers[i].lateness);
    free(all);
    return 0;
}
