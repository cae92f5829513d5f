// jack_impulse: the bench's round-trip probe, a JACK client that plays a test signal and records what
// comes back, sample-counted on the JACK server's own frame clock.
//
//   jack_impulse [--name NAME] [--seconds S] [--interval-ms MS] [--tone-hz HZ]
//                [--out-to PORT,PORT] [--in-from PORT,PORT] RAWFILE
//
// Ports: NAME:out_1, out_2 (played) and NAME:in_1, in_2 (recorded). out_1 is a continuous sine (HZ, half
// scale) for judging the returned audio (gaps, clicks); out_2 is an impulse train: one sample at 0.9 every
// MS milliseconds, the first at frame MS/2 of the recording (0 elsewhere). After activation the client
// connects out_k -> --out-to's k-th port and --in-from's k-th port -> in_k, then records S seconds of
// in_1/in_2 starting with the first period after the connections are made; frame 0 of the recording is
// frame 0 of the played signal, so an impulse found at recording frame r that was played at frame p
// took r - p frames around the loop.
//
// Writes RAWFILE (float32 little-endian, in_1/in_2 interleaved) and prints one JSON line on stdout:
// {"rate","period","frames","intervalFrames","firstImpulseFrame","toneHz","xruns","serverCycles"}.
//
// serverCycles describes the server's own clock over the recording: each cycle's start on CLOCK_MONOTONIC
// (the callback's wake-up less jack_frames_since_cycle_start) against its frame counter, fitted with a
// least-squares line: "ppm" is the server's rate off nominal, "residualMs" the cycle starts' distance from
// the line (p1, median, p99, and min/max): how far a dummy server on a loaded machine wanders.
// Exits 1 (with a message on stderr) if the server is not running or a connection fails.
//
// Realtime-safe: the process callback only reads and writes preallocated memory and atomics.
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static jack_port_t *out_ports[2], *in_ports[2];
static float *recording;          // frames * 2
static long total_frames;         // to record
static atomic_long recorded;      // frames recorded so far (written by the process thread)
static atomic_int running;        // set once the connections are made
static atomic_int xruns;
static long interval_frames, first_impulse;
static double tone_step;          // radians per frame
static long played;               // frames played since running (process thread only)
static jack_client_t *client;
static long long *cycle_starts;   // per recorded cycle: CLOCK_MONOTONIC ns of the cycle's start
static jack_nframes_t *cycle_frames; // and the server's frame counter at it
static long max_cycles;
static atomic_long cycles;        // cycles observed (written by the process thread)
static double sample_rate;

static long long monotonic_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int process(jack_nframes_t nframes, void *arg) {
	(void)arg;
	float *out1 = jack_port_get_buffer(out_ports[0], nframes);
	float *out2 = jack_port_get_buffer(out_ports[1], nframes);
	const float *in1 = jack_port_get_buffer(in_ports[0], nframes);
	const float *in2 = jack_port_get_buffer(in_ports[1], nframes);
	if (!atomic_load_explicit(&running, memory_order_acquire)) {
		memset(out1, 0, nframes * sizeof(float));
		memset(out2, 0, nframes * sizeof(float));
		return 0;
	}
	long done = atomic_load_explicit(&recorded, memory_order_relaxed);
	long cycle = atomic_load_explicit(&cycles, memory_order_relaxed);
	if (done < total_frames && cycle < max_cycles) {
		long long wake = monotonic_ns();
		cycle_starts[cycle] = wake - (long long)(jack_frames_since_cycle_start(client) * 1e9 / sample_rate);
		cycle_frames[cycle] = jack_last_frame_time(client);
		atomic_store_explicit(&cycles, cycle + 1, memory_order_release);
	}
	for (jack_nframes_t i = 0; i < nframes; i++) {
		long n = played + i;
		out1[i] = (float)(0.5 * sin(tone_step * (double)(n % 480000)));
		out2[i] = (n >= first_impulse && (n - first_impulse) % interval_frames == 0) ? 0.9f : 0.0f;
		if (done < total_frames) {
			recording[2 * done] = in1[i];
			recording[2 * done + 1] = in2[i];
			done++;
		}
	}
	played += nframes;
	atomic_store_explicit(&recorded, done, memory_order_release);
	return 0;
}

static int on_xrun(void *arg) {
	(void)arg;
	atomic_fetch_add_explicit(&xruns, 1, memory_order_relaxed);
	return 0;
}

static int compare_doubles(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// Prints ,"serverCycles":{...} for the cycles observed (nothing if fewer than 16).
static void print_server_cycles(void) {
	long n = atomic_load(&cycles);
	if (n < 16) return;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (long i = 0; i < n; i++) {
		double x = (double)(jack_nframes_t)(cycle_frames[i] - cycle_frames[0]);
		double y = (double)(cycle_starts[i] - cycle_starts[0]);
		sx += x; sy += y; sxx += x * x; sxy += x * y;
	}
	double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), intercept = (sy - slope * sx) / n;
	double *residuals = malloc(sizeof(double) * (size_t)n);
	if (!residuals) return;
	for (long i = 0; i < n; i++) {
		double x = (double)(jack_nframes_t)(cycle_frames[i] - cycle_frames[0]);
		residuals[i] = ((double)(cycle_starts[i] - cycle_starts[0]) - (intercept + slope * x)) / 1e6;
	}
	qsort(residuals, (size_t)n, sizeof(double), compare_doubles);
	printf(",\"serverCycles\":{\"n\":%ld,\"ppm\":%.1f,\"residualMs\":{\"min\":%.3f,\"p1\":%.3f,\"median\":%.3f,"
	       "\"p99\":%.3f,\"max\":%.3f}}",
	       n, (slope / (1e9 / sample_rate) - 1) * 1e6, residuals[0], residuals[n / 100], residuals[n / 2],
	       residuals[n - 1 - n / 100], residuals[n - 1]);
	free(residuals);
}

static int split2(const char *list, char out[2][256]) {
	const char *comma = strchr(list, ',');
	if (!comma || (size_t)(comma - list) >= 256 || strlen(comma + 1) >= 256) return -1;
	memcpy(out[0], list, (size_t)(comma - list));
	out[0][comma - list] = 0;
	strcpy(out[1], comma + 1);
	return 0;
}

int main(int argc, char **argv) {
	const char *name = "impulse", *out_to = NULL, *in_from = NULL, *path = NULL;
	double seconds = 10, interval_ms = 250, tone_hz = 1000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc) interval_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--tone-hz") && i + 1 < argc) tone_hz = atof(argv[++i]);
		else if (!strcmp(argv[i], "--out-to") && i + 1 < argc) out_to = argv[++i];
		else if (!strcmp(argv[i], "--in-from") && i + 1 < argc) in_from = argv[++i];
		else if (argv[i][0] != '-' && !path) path = argv[i];
		else { fprintf(stderr, "jack_impulse: bad argument '%s'\n", argv[i]); return 2; }
	}
	if (!path || seconds <= 0 || seconds > 1000 || interval_ms < 10) {
		fprintf(stderr, "usage: jack_impulse [--name N] [--seconds S] [--interval-ms MS] [--tone-hz HZ] "
		                "[--out-to P1,P2] [--in-from P1,P2] RAWFILE\n");
		return 2;
	}
	jack_status_t status;
	client = jack_client_open(name, JackNoStartServer | JackUseExactName, &status);
	if (!client) { fprintf(stderr, "jack_impulse: cannot open client '%s' (status 0x%x)\n", name, status); return 1; }
	double rate = jack_get_sample_rate(client);
	sample_rate = rate;
	total_frames = (long)(seconds * rate);
	max_cycles = total_frames / 16 + 16;  // periods of 16 frames or more
	cycle_starts = calloc((size_t)max_cycles, sizeof(long long));
	cycle_frames = calloc((size_t)max_cycles, sizeof(jack_nframes_t));
	interval_frames = (long)(interval_ms * rate / 1000);
	first_impulse = interval_frames / 2;
	tone_step = 2 * M_PI * tone_hz / rate;
	recording = calloc((size_t)total_frames * 2, sizeof(float));
	if (!recording || !cycle_starts || !cycle_frames) { fprintf(stderr, "jack_impulse: out of memory\n"); return 1; }
	static const char *outs[2] = {"out_1", "out_2"}, *ins[2] = {"in_1", "in_2"};
	for (int k = 0; k < 2; k++) {
		out_ports[k] = jack_port_register(client, outs[k], JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
		in_ports[k] = jack_port_register(client, ins[k], JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
		if (!out_ports[k] || !in_ports[k]) { fprintf(stderr, "jack_impulse: cannot register ports\n"); return 1; }
	}
	jack_set_process_callback(client, process, NULL);
	jack_set_xrun_callback(client, on_xrun, NULL);
	if (jack_activate(client)) { fprintf(stderr, "jack_impulse: cannot activate\n"); return 1; }
	char ports[2][256];
	if (out_to) {
		if (split2(out_to, ports)) { fprintf(stderr, "jack_impulse: --out-to wants P1,P2\n"); return 2; }
		for (int k = 0; k < 2; k++)
			if (jack_connect(client, jack_port_name(out_ports[k]), ports[k])) {
				fprintf(stderr, "jack_impulse: cannot connect %s -> %s\n", jack_port_name(out_ports[k]), ports[k]);
				return 1;
			}
	}
	if (in_from) {
		if (split2(in_from, ports)) { fprintf(stderr, "jack_impulse: --in-from wants P1,P2\n"); return 2; }
		for (int k = 0; k < 2; k++)
			if (jack_connect(client, ports[k], jack_port_name(in_ports[k]))) {
				fprintf(stderr, "jack_impulse: cannot connect %s -> %s\n", ports[k], jack_port_name(in_ports[k]));
				return 1;
			}
	}
	atomic_store_explicit(&running, 1, memory_order_release);
	// The server may stall (xruns, a loaded machine): wait up to twice the duration plus 5 s.
	for (long waited_ms = 0; atomic_load_explicit(&recorded, memory_order_acquire) < total_frames; waited_ms += 20) {
		if (waited_ms > (long)(seconds * 2000) + 5000) break;
		usleep(20000);
	}
	jack_deactivate(client);
	long frames = atomic_load(&recorded);
	FILE *file = fopen(path, "wb");
	if (!file || fwrite(recording, sizeof(float) * 2, (size_t)frames, file) != (size_t)frames || fclose(file)) {
		fprintf(stderr, "jack_impulse: cannot write %s\n", path);
		return 1;
	}
	printf("{\"rate\":%.0f,\"period\":%u,\"frames\":%ld,\"intervalFrames\":%ld,\"firstImpulseFrame\":%ld,"
	       "\"toneHz\":%g,\"xruns\":%d",
	       rate, jack_get_buffer_size(client), frames, interval_frames, first_impulse, tone_hz, atomic_load(&xruns));
	print_server_cycles();
	printf("}\n");
	jack_client_close(client);
	return frames == total_frames ? 0 : 1;
}
