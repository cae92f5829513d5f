/*
 * delayline — a tiny netem replacement built on NFQUEUE.
 *
 * Why this exists: the lab kernel has no sch_netem, but it does have
 * NFQUEUE. iptables rules inside a lab host's network namespace hand
 * packets to this program, which decides per packet whether to drop it,
 * hold it for a while, release it at once ("reorder") or release it plus
 * an identical copy ("duplicate"). Held packets stay in the kernel: we only
 * remember their packet id and issue the NF_ACCEPT verdict at their due
 * time. NFQUEUE allows verdicts out of order, which is exactly what a
 * jittered delay line needs.
 *
 * Semantics follow netem where that is cheap to do:
 *   - delay = delay_ms + U[-jitter_ms, +jitter_ms], clamped at 0. Packets
 *     are released in due-time order, so jitter reorders packets the way
 *     netem does (netem without a rate limit reorders too).
 *   - with probability reorder_pct a packet skips the delay entirely.
 *   - with probability loss_pct a packet is dropped.
 *   - with probability duplicate_pct a packet is released and a copy is
 *     injected right after it through a raw socket. The copy carries
 *     --mark so the iptables rule does not queue it again.
 *
 * Every packet consumes the same four random draws from a seeded
 * splitmix64 generator, so a given --seed and a given packet sequence
 * always produce the same decisions.
 *
 * Counters are printed to stderr on SIGUSR1 and on exit (SIGTERM/SIGINT).
 * On exit all held packets are released (accepted) instead of being
 * dropped by the kernel when the queue goes away, so clearing an
 * impairment does not eat in-flight traffic.
 *
 * Build: gcc -O2 -o delayline delayline.c -lnetfilter_queue -lnfnetlink
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netfilter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <libnfnetlink/libnfnetlink.h>

/* Netfilter hook numbers as reported in nfqnl_msg_packet_hdr.hook. */
#define HOOK_PRE_ROUTING 0
#define HOOK_LOCAL_IN 1

/* ------------------------------------------------------------------ */
/* Configuration and counters                                          */

static struct {
	unsigned queue;
	double delay_ms, jitter_ms, loss_pct, reorder_pct, dup_pct;
	uint64_t seed;
	int seed_given;
	const char *dev;
	uint32_t mark;
	uint32_t maxlen;
	const char *pidfile;
} cfg = {
	.queue = 0,
	.dev = "eth0",
	.mark = 0x10000,
	.maxlen = 8192,
};

static struct {
	uint64_t received, passed, dropped, delayed, reordered, duplicated;
	uint64_t dup_skipped, dup_failed, enobufs, verdict_errors;
	uint64_t max_held;
} st;

static volatile sig_atomic_t want_stats, want_exit;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_stats = 1;
	else
		want_exit = 1;
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("delayline: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ------------------------------------------------------------------ */
/* Deterministic randomness                                            */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rnd(void)
{
	return (double)(splitmix64() >> 11) * 0x1.0p-53;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Held packets: a binary min-heap ordered by (due, seq).              */
/* seq keeps packets with equal due times in arrival order, so a pure  */
/* delay without jitter never reorders.                                */

struct held {
	uint64_t due;
	uint64_t seq;
	uint32_t id;
	int dup;              /* inject a copy when released */
	int ingress;          /* arrived on the device (PREROUTING/INPUT) */
	unsigned char *data;  /* packet copy, only when dup */
	size_t len;
};

static struct held *heap;
static size_t heap_len, heap_cap;
static uint64_t next_seq;

static int held_before(const struct held *a, const struct held *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct held h)
{
	if (heap_len == heap_cap) {
		heap_cap = heap_cap ? heap_cap * 2 : 1024;
		heap = realloc(heap, heap_cap * sizeof *heap);
		if (!heap)
			die("out of memory");
	}
	size_t i = heap_len++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!held_before(&h, &heap[parent]))
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = h;
	if (heap_len > st.max_held)
		st.max_held = heap_len;
}

static struct held heap_pop(void)
{
	struct held top = heap[0];
	struct held last = heap[--heap_len];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct held *best = &last;
		if (l < heap_len && held_before(&heap[l], best)) {
			m = l;
			best = &heap[l];
		}
		if (r < heap_len && held_before(&heap[r], best))
			m = r;
		if (m == i)
			break;
		heap[i] = heap[m];
		i = m;
	}
	if (heap_len > 0)
		heap[i] = last;
	return top;
}

/* ------------------------------------------------------------------ */
/* Duplicate injection                                                 */
/*
 * Egress copies go out through raw sockets bound to the device, exactly
 * like the original would. Ingress copies are sent to the local stack:
 * a raw packet whose destination is a local address is routed over
 * loopback and delivered to the receiving socket, which is what a
 * duplicated incoming packet looks like to an application. Multicast and
 * broadcast ingress copies cannot be delivered that way (they would leave
 * through the device instead), so they are skipped and counted.
 */

static int raw4_dev = -1, raw4_local = -1, raw6_dev = -1, raw6_local = -1;
static unsigned dev_ifindex;

static int open_raw(int family, int bind_dev)
{
	int fd = socket(family, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0)
		die("raw socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &cfg.mark, sizeof cfg.mark) < 0)
		die("SO_MARK: %s", strerror(errno));
	int zero = 0;
	/* The original multicast was already looped back locally before
	 * NFQUEUE saw it; the copy must only go on the wire. */
	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, sizeof zero);
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof zero);
	if (bind_dev &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, cfg.dev, strlen(cfg.dev) + 1) < 0)
		die("SO_BINDTODEVICE %s: %s", cfg.dev, strerror(errno));
	return fd;
}

static void inject_copy(const unsigned char *p, size_t len, int ingress)
{
	ssize_t rv = -1;
	if (len >= 20 && (p[0] >> 4) == 4) {
		struct sockaddr_in dst = { .sin_family = AF_INET };
		memcpy(&dst.sin_addr, p + 16, 4);
		uint32_t d = ntohl(dst.sin_addr.s_addr);
		if (ingress && (IN_MULTICAST(d) || d == INADDR_BROADCAST)) {
			st.dup_skipped++;
			return;
		}
		rv = sendto(ingress ? raw4_local : raw4_dev, p, len, 0,
			    (struct sockaddr *)&dst, sizeof dst);
	} else if (len >= 40 && (p[0] >> 4) == 6) {
		struct sockaddr_in6 dst = { .sin6_family = AF_INET6 };
		memcpy(&dst.sin6_addr, p + 24, 16);
		if (ingress && IN6_IS_ADDR_MULTICAST(&dst.sin6_addr)) {
			st.dup_skipped++;
			return;
		}
		if (IN6_IS_ADDR_LINKLOCAL(&dst.sin6_addr) ||
		    IN6_IS_ADDR_MC_LINKLOCAL(&dst.sin6_addr))
			dst.sin6_scope_id = dev_ifindex;
		rv = sendto(ingress ? raw6_local : raw6_dev, p, len, 0,
			    (struct sockaddr *)&dst, sizeof dst);
	} else {
		st.dup_skipped++;
		return;
	}
	if (rv < 0)
		st.dup_failed++;
	else
		st.duplicated++;
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */

static struct nfq_q_handle *qh;

/* Returns 0 if the kernel took the verdict. */
static int release(struct held *h)
{
	if (nfq_set_verdict(qh, h->id, NF_ACCEPT, 0, NULL) < 0) {
		st.verdict_errors++;
		return -1;
	}
	st.passed++;
	if (h->dup && h->data)
		inject_copy(h->data, h->len, h->ingress);
	free(h->data);
	h->data = NULL;
	return 0;
}

/* Release everything that is due. A failed verdict is retried on the
 * next round rather than lost: a packet without a verdict would sit in
 * the kernel queue forever. */
static void release_due(uint64_t now)
{
	while (heap_len > 0 && heap[0].due <= now) {
		struct held h = heap_pop();
		if (release(&h) < 0) {
			h.due = now + 1000000; /* retry in 1 ms */
			heap_push(h);
			return;
		}
	}
}

static int on_packet(struct nfq_q_handle *q, struct nfgenmsg *msg,
		     struct nfq_data *nfa, void *unused)
{
	(void)q;
	(void)msg;
	(void)unused;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	if (!ph)
		return 0;
	st.received++;

	/* Always draw all four numbers so decisions stay aligned with the
	 * packet index whatever the configuration. */
	double u_loss = rnd(), u_reorder = rnd(), u_jitter = rnd(), u_dup = rnd();

	struct held h = {
		.id = ntohl(ph->packet_id),
		.seq = next_seq++,
		.ingress = ph->hook == HOOK_PRE_ROUTING || ph->hook == HOOK_LOCAL_IN,
	};

	if (u_loss * 100.0 < cfg.loss_pct) {
		if (nfq_set_verdict(qh, h.id, NF_DROP, 0, NULL) < 0)
			st.verdict_errors++;
		st.dropped++;
		return 0;
	}

	if (u_dup * 100.0 < cfg.dup_pct) {
		unsigned char *payload;
		int len = nfq_get_payload(nfa, &payload);
		if (len > 0) {
			h.data = malloc((size_t)len);
			if (h.data) {
				memcpy(h.data, payload, (size_t)len);
				h.len = (size_t)len;
				h.dup = 1;
			}
		}
		if (!h.dup)
			st.dup_failed++;
	}

	uint64_t now = mono_ns();
	double delay_ms = cfg.delay_ms;
	if (u_reorder * 100.0 < cfg.reorder_pct) {
		delay_ms = 0;
		st.reordered++;
	} else {
		delay_ms += (2.0 * u_jitter - 1.0) * cfg.jitter_ms;
		if (delay_ms < 0)
			delay_ms = 0;
	}

	if (delay_ms <= 0) {
		h.due = now;
		if (release(&h) < 0)
			heap_push(h);
		return 0;
	}
	st.delayed++;
	h.due = now + (uint64_t)(delay_ms * 1e6);
	heap_push(h);
	return 0;
}

/* ------------------------------------------------------------------ */

static void print_stats(const char *why)
{
	fprintf(stderr,
		"delayline: %s queue=%u received=%" PRIu64 " passed=%" PRIu64
		" dropped=%" PRIu64 " delayed=%" PRIu64 " reordered=%" PRIu64
		" duplicated=%" PRIu64 " dup_skipped=%" PRIu64 " dup_failed=%" PRIu64
		" held=%zu max_held=%" PRIu64 " enobufs=%" PRIu64
		" verdict_errors=%" PRIu64 "\n",
		why, cfg.queue, st.received, st.passed, st.dropped, st.delayed,
		st.reordered, st.duplicated, st.dup_skipped, st.dup_failed,
		heap_len, st.max_held, st.enobufs, st.verdict_errors);
	fflush(stderr);
}

static double parse_num(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: expected a number in [%g, %g], got '%s'", opt, lo, hi, s);
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: delayline [--queue N] [--delay-ms X] [--jitter-ms Y] [--loss-pct P]\n"
		"                 [--reorder-pct R] [--duplicate-pct D] [--seed S]\n"
		"                 [--dev IFNAME] [--mark M] [--maxlen N] [--pidfile PATH]\n"
		"Holds NFQUEUE packets like netem would. Injected duplicates carry --mark\n"
		"(default 0x10000); exclude it from the NFQUEUE rule to avoid loops.\n"
		"SIGUSR1 prints counters; SIGTERM releases held packets, prints, exits.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, 0, 'q' },
		{ "delay-ms", required_argument, 0, 'd' },
		{ "jitter-ms", required_argument, 0, 'j' },
		{ "loss-pct", required_argument, 0, 'l' },
		{ "reorder-pct", required_argument, 0, 'r' },
		{ "duplicate-pct", required_argument, 0, 'u' },
		{ "seed", required_argument, 0, 's' },
		{ "dev", required_argument, 0, 'i' },
		{ "mark", required_argument, 0, 'm' },
		{ "maxlen", required_argument, 0, 'n' },
		{ "pidfile", required_argument, 0, 'p' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': cfg.queue = (unsigned)parse_num("--queue", optarg, 0, 65535); break;
		case 'd': cfg.delay_ms = parse_num("--delay-ms", optarg, 0, 60000); break;
		case 'j': cfg.jitter_ms = parse_num("--jitter-ms", optarg, 0, 60000); break;
		case 'l': cfg.loss_pct = parse_num("--loss-pct", optarg, 0, 100); break;
		case 'r': cfg.reorder_pct = parse_num("--reorder-pct", optarg, 0, 100); break;
		case 'u': cfg.dup_pct = parse_num("--duplicate-pct", optarg, 0, 100); break;
		case 's': {
			char *end;
			errno = 0;
			cfg.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				die("--seed: expected an unsigned integer, got '%s'", optarg);
			cfg.seed_given = 1;
			break;
		}
		case 'i': cfg.dev = optarg; break;
		case 'm': cfg.mark = (uint32_t)parse_num("--mark", optarg, 1, 4294967295.0); break;
		case 'n': cfg.maxlen = (uint32_t)parse_num("--maxlen", optarg, 1, 1 << 20); break;
		case 'p': cfg.pidfile = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	rng_state = cfg.seed_given ? cfg.seed
				   : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	dev_ifindex = if_nametoindex(cfg.dev);
	if (!dev_ifindex)
		die("no such device '%s'", cfg.dev);
	if (cfg.dup_pct > 0) {
		raw4_dev = open_raw(AF_INET, 1);
		raw4_local = open_raw(AF_INET, 0);
		raw6_dev = open_raw(AF_INET6, 1);
		raw6_local = open_raw(AF_INET6, 0);
	}

	struct nfq_handle *h = nfq_open();
	if (!h)
		die("nfq_open: %s (is nfnetlink_queue available? are we root?)", strerror(errno));
	/* Binding per protocol family is a no-op on modern kernels but still
	 * required on old ones; errors are harmless there. */
	nfq_bind_pf(h, AF_INET);
	nfq_bind_pf(h, AF_INET6);
	qh = nfq_create_queue(h, (uint16_t)cfg.queue, on_packet, NULL);
	if (!qh)
		die("cannot bind queue %u: %s (already in use?)", cfg.queue, strerror(errno));
	/* Payload is only needed to build duplicates; skip copying otherwise. */
	if (nfq_set_mode(qh, cfg.dup_pct > 0 ? NFQNL_COPY_PACKET : NFQNL_COPY_META, 0xffff) < 0)
		die("nfq_set_mode: %s", strerror(errno));
	if (nfq_set_queue_maxlen(qh, cfg.maxlen) < 0)
		die("nfq_set_queue_maxlen: %s", strerror(errno));
	/* A big receive buffer absorbs bursts; overruns show up as ENOBUFS
	 * (the kernel then drops the packet it could not deliver, so no
	 * queue entry is leaked) and are counted, not fatal. */
	nfnl_rcvbufsiz(nfq_nfnlh(h), 8 << 20);

	int fd = nfq_fd(h);

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* Signals are only delivered inside ppoll(), so flag checks cannot
	 * race with a signal arriving just before we go to sleep. */
	sigset_t blocked, during_poll;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGHUP);
	sigaddset(&blocked, SIGUSR1);
	sigprocmask(SIG_BLOCK, &blocked, &during_poll);
	sigdelset(&during_poll, SIGTERM);
	sigdelset(&during_poll, SIGINT);
	sigdelset(&during_poll, SIGHUP);
	sigdelset(&during_poll, SIGUSR1);

	if (cfg.pidfile) {
		FILE *pf = fopen(cfg.pidfile, "w");
		if (!pf)
			die("pidfile %s: %s", cfg.pidfile, strerror(errno));
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	fprintf(stderr,
		"delayline: ready queue=%u delay_ms=%g jitter_ms=%g loss_pct=%g "
		"reorder_pct=%g duplicate_pct=%g seed=%" PRIu64 " dev=%s mark=0x%x\n",
		cfg.queue, cfg.delay_ms, cfg.jitter_ms, cfg.loss_pct, cfg.reorder_pct,
		cfg.dup_pct, cfg.seed_given ? cfg.seed : rng_state, cfg.dev, cfg.mark);
	fflush(stderr);

	static char buf[256 * 1024] __attribute__((aligned));
	for (;;) {
		release_due(mono_ns());
		if (want_stats) {
			want_stats = 0;
			print_stats("stats");
		}
		if (want_exit)
			break;

		struct timespec ts, *tsp = NULL;
		if (heap_len > 0) {
			uint64_t now = mono_ns();
			uint64_t wait = heap[0].due > now ? heap[0].due - now : 0;
			ts.tv_sec = (time_t)(wait / 1000000000ull);
			ts.tv_nsec = (long)(wait % 1000000000ull);
			tsp = &ts;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = ppoll(&pfd, 1, tsp, &during_poll);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll: %s", strerror(errno));
		}
		if (pr == 0)
			continue;

		/* Bounded batch so a flood cannot starve due releases. */
		for (int i = 0; i < 256; i++) {
			ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
					break;
				if (errno == ENOBUFS) {
					st.enobufs++;
					continue;
				}
				die("recv: %s", strerror(errno));
			}
			nfq_handle_packet(h, buf, (int)n);
		}
	}

	/* Hand every held packet back now instead of letting the kernel drop
	 * them when the queue is destroyed. */
	while (heap_len > 0) {
		struct held hh = heap_pop();
		if (nfq_set_verdict(qh, hh.id, NF_ACCEPT, 0, NULL) < 0)
			st.verdict_errors++;
		else
			st.passed++;
		free(hh.data);
	}
	print_stats("exit");
	nfq_destroy_queue(qh);
	nfq_close(h);
	if (cfg.pidfile)
		unlink(cfg.pidfile);
	return 0;
}
