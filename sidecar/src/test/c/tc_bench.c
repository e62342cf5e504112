/*
 * The TC program's cost per packet on an authenticated broadcast (udpProtection: mac), as
 * BPF_PROG_TEST_RUN times it: a transit router (number 1) takes source 5's broadcasts from its
 * tree parent and copies them to FANOUT children, no local hosts, so that each run verifies one
 * tag and makes FANOUT (the path `bdrp testbed transit --broadcast --fan-out 3 --udp-auth mac`
 * takes at its transit router). Needs root: it runs in a network namespace of its own, where one
 * end of a veth pair stands for every child's link (the other end drops the copies: they are for
 * another host's Ethernet address).
 *
 * Each object file given is loaded on its own (its own maps) and run on the same datagrams, in
 * turns, so that builds of the program can be compared on a shared CPU. Round r runs every object
 * on PACKETS fresh datagrams (a new message id and seq each: a datagram seen before would be a
 * duplicate), one BPF_PROG_TEST_RUN each, and prints the median and the mean of the durations the
 * kernel reports. At the end, per object: the median over the rounds of their median runs and,
 * against the first object, the median over the rounds of the difference between the two (which
 * ran one after the other, on a CPU as loaded).
 *
 *   tc_bench [-n PACKETS] [-r ROUNDS] [-p PAYLOAD_BYTES] [-f FANOUT] [-u mac|none] OBJ.bpf.o...
 *
 * -u none runs the same broadcasts on links without authentication (no trailer, no tags); an
 * object named as none:OBJ.bpf.o (or mac:OBJ.bpf.o) runs so whatever -u says, beside the others.
 *
 * Exits non-zero when a run does not end as a broadcast handled in the kernel (FP_BCAST).
 */
#define _GNU_SOURCE
#include <linux/types.h>

#include "fastpath.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ETH_LEN 14
#define IP_LEN 20
#define UDP_LEN 8
#define HDRS (ETH_LEN + IP_LEN + UDP_LEN)
#define SOURCE 5
#define PORT 7500

static void die(const char *what, int err)
{
	fprintf(stderr, "tc_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* ---- SipHash-2-4, the reference the router's Java side follows ---- */

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define ROUND                                                                              \
	do {                                                                               \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);               \
	} while (0)

static uint64_t siphash(uint64_t k0, uint64_t k1, const uint8_t *m, size_t len)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, m + i, 8);
		w = le64toh(w);
		v3 ^= w;
		ROUND;
		ROUND;
		v0 ^= w;
	}
	uint64_t last = (uint64_t)len << 56;
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)m[i + j] << (8 * j);
	v3 ^= last;
	ROUND;
	ROUND;
	v0 ^= last;
	v2 ^= 0xff;
	ROUND;
	ROUND;
	ROUND;
	ROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- the table and the datagrams ---- */

static uint64_t key(int from, int to, int half)
{
	return 0x0123456789abcdefULL * (uint64_t)(from * 31 + to * 7 + 1) + (uint64_t)half;
}

static uint32_t addr(int link, int end)
{
	return htonl(0x0a4d0000u | (uint32_t)link << 8 | (uint32_t)end); /* 10.77.link.end */
}

/* Neighbour 0 is router 0, the tree parent; neighbour i > 0 is router i + 1, a child. */
static void fill_table(struct fp_table *t, int fanout, int ifindex, int auth)
{
	memset(t, 0, sizeof(*t));
	t->generation = 1;
	t->self = 1;
	t->words = 1;
	t->last_mask = ~0ULL;
	t->self_bit = htobe64(1ULL << 1);
	t->udp_port = htons(PORT);
	t->count = fanout + 1;
	t->auth = auth ? FP_AUTH_MAC : FP_AUTH_NONE;
	t->hosts = 0;
	for (int i = 0; i <= fanout; i++) {
		struct fp_neigh *nb = &t->n[i];
		int router = i == 0 ? 0 : i + 1;
		nb->ip = addr(i, 2);
		nb->local_ip = addr(i, 1);
		nb->port = htons(PORT);
		nb->router = router;
		nb->ifindex = ifindex;
		uint8_t smac[6] = { 2, 0xbd, 0, 0, i, 1 }, dmac[6] = { 2, 0xbd, 0, 0, i, 2 };
		memcpy(nb->smac, smac, 6);
		memcpy(nb->dmac, dmac, 6);
		nb->key_in[0] = key(router, 1, 0);
		nb->key_in[1] = key(router, 1, 1);
		nb->key_out[0] = key(1, router, 0);
		nb->key_out[1] = key(1, router, 1);
		nb->session = 1;
		uint64_t behind = 1ULL << router;
		if (i == 0)
			behind |= 1ULL << SOURCE;
		nb->mask[0] = htobe64(behind);
	}
	for (int r = 0; r < FP_MAX_ROUTERS; r++)
		t->tree[r].parent = FP_NO_PARENT;
	t->tree[SOURCE].parent = 0;
	t->tree[SOURCE].children = ((1U << (fanout + 1)) - 1) & ~1U;
}

static uint16_t ip_sum(const uint8_t *h)
{
	uint32_t s = 0;
	for (int i = 0; i < IP_LEN; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The datagram neighbour 0 sends: a broadcast of SOURCE with message id `id`, hop limit 64, the
 * message's bytes filling it to `payload` bytes of UDP payload, with auth seq and its tag; UDP
 * checksum 0, as the testbed's blaster sends them.
 */
static void datagram(uint8_t *p, int payload, uint64_t id, uint64_t seq, int auth)
{
	memset(p, 0, HDRS + payload);
	uint8_t dmac[6] = { 2, 0xbd, 0, 0, 0, 1 }, smac[6] = { 2, 0xbd, 0, 0, 0, 2 };
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	p[12] = 0x08;
	uint8_t *ip = p + ETH_LEN;
	ip[0] = 0x45;
	uint16_t tot = htons(IP_LEN + UDP_LEN + payload);
	memcpy(ip + 2, &tot, 2);
	ip[8] = 64;
	ip[9] = 17;
	uint32_t src = addr(0, 2), dst = addr(0, 1);
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	uint16_t sum = htons(ip_sum(ip));
	memcpy(ip + 10, &sum, 2);
	uint8_t *udp = ip + IP_LEN;
	uint16_t port = htons(PORT), ulen = htons(UDP_LEN + payload);
	memcpy(udp, &port, 2);
	memcpy(udp + 2, &port, 2);
	memcpy(udp + 4, &ulen, 2);
	uint8_t *f = udp + UDP_LEN;
	int frame = auth ? payload - FP_AUTH_TRAILER : payload;
	uint32_t length = htonl(frame - 4);
	memcpy(f + FP_OFF_LENGTH, &length, 4);
	f[FP_OFF_VERSION] = FP_VERSION;
	f[FP_OFF_TYPE] = FP_TYPE_DATA;
	f[FP_OFF_HOP] = 64;
	f[FP_OFF_FLAGS] = FP_FLAG_BROADCAST;
	f[FP_OFF_SOURCE + 1] = SOURCE;
	uint64_t be_id = htobe64(id);
	memcpy(f + FP_OFF_ID, &be_id, 8);
	for (int i = FP_OFF_D; i < frame; i++)
		f[i] = (uint8_t)(i * 7);
	if (!auth)
		return;
	uint64_t be_seq = htobe64(seq);
	memcpy(f + frame, &be_seq, 8);
	uint64_t tag = htole64(siphash(key(0, 1, 0), key(0, 1, 1), f, frame + 8));
	memcpy(f + frame + 8, &tag, 8);
}

/* ---- running ---- */

struct prog {
	const char *name; /* as given */
	const char *path;
	int auth;
	struct bpf_object *obj;
	int prog_fd, counters_fd;
	double *round; /* the median run's ns, by round */
};

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of n sorted values. */
static double median(const double *v, int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t counter(struct prog *p, __u32 which)
{
	int cpus = libbpf_num_possible_cpus();
	__u64 v[cpus];
	if (bpf_map_lookup_elem(p->counters_fd, &which, v))
		die("reading the counters", errno);
	uint64_t s = 0;
	for (int i = 0; i < cpus; i++)
		s += v[i];
	return s;
}

static void load(struct prog *p, struct fp_table *t)
{
	p->obj = bpf_object__open_file(p->path, NULL);
	if (!p->obj)
		die(p->path, errno);
	struct bpf_program *prog = bpf_object__find_program_by_name(p->obj, "bdrp_ingress");
	if (!prog)
		die("the object has no bdrp_ingress", ENOENT);
	/* The verifier's statistics, to compare what each build costs it. */
	static char log[65536];
	bpf_program__set_log_buf(prog, log, sizeof(log));
	bpf_program__set_log_level(prog, 4);
	if (bpf_object__load(p->obj))
		die("loading the program", errno);
	const char *stats = strstr(log, "processed ");
	if (stats)
		printf("%s: verifier %.*s\n", p->name, (int)strcspn(stats, "\n"), stats);
	struct bpf_map *table = bpf_object__find_map_by_name(p->obj, "empty_table");
	struct bpf_map *counters = bpf_object__find_map_by_name(p->obj, "counters");
	if (!table || !counters)
		die("the object has no empty_table or counters", ENOENT);
	p->prog_fd = bpf_program__fd(prog);
	p->counters_fd = bpf_map__fd(counters);
	__u32 zero = 0;
	if (bpf_map_update_elem(bpf_map__fd(table), &zero, t, BPF_ANY))
		die("writing the table", errno);
}

int main(int argc, char **argv)
{
	int packets = 20000, rounds = 6, payload = 152, fanout = 3, auth = 1;
	int opt;
	while ((opt = getopt(argc, argv, "n:r:p:f:u:")) != -1) {
		switch (opt) {
		case 'n': packets = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'p': payload = atoi(optarg); break;
		case 'f': fanout = atoi(optarg); break;
		case 'u':
			if (strcmp(optarg, "mac") && strcmp(optarg, "none"))
				goto usage;
			auth = !strcmp(optarg, "mac");
			break;
		default: goto usage;
		}
	}
	if (optind >= argc || packets < 1 || rounds < 1 || fanout < 1 || fanout >= FP_MAX_NEIGH ||
	    payload < FP_OFF_D + FP_MIN_MESSAGE + FP_AUTH_TRAILER || payload > FP_MAX_AUTH_BYTES) {
usage:
		fprintf(stderr, "usage: tc_bench [-n PACKETS] [-r ROUNDS] [-p PAYLOAD_BYTES (%d..%d)] "
				"[-f FANOUT] [-u mac|none] OBJ.bpf.o...\n",
			FP_OFF_D + FP_MIN_MESSAGE + FP_AUTH_TRAILER, FP_MAX_AUTH_BYTES);
		return 2;
	}

	/* One CPU (the per-CPU scratch and counters), one namespace with a veth pair. */
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("pinning to a CPU", errno);
	if (unshare(CLONE_NEWNET))
		die("entering a network namespace of its own (root?)", errno);
	if (system("ip link add bench0 mtu 9000 type veth peer name bench1 mtu 9000 && "
		   "ip link set bench0 up && "
		   "ip link set bench1 up") != 0)
		die("making the veth pair", EIO);
	int ifindex = if_nametoindex("bench0");
	if (!ifindex)
		die("bench0", errno);

	struct fp_table *t = malloc(sizeof(*t));
	if (!t)
		die("allocating the table", ENOMEM);
	int n = argc - optind;
	struct prog *progs = calloc(n, sizeof(*progs));
	for (int i = 0; i < n; i++) {
		struct prog *p = &progs[i];
		p->name = p->path = argv[optind + i];
		p->auth = auth;
		if (!strncmp(p->path, "none:", 5) || !strncmp(p->path, "mac:", 4)) {
			p->auth = p->path[0] == 'm';
			p->path = strchr(p->path, ':') + 1;
		}
		p->round = calloc(rounds, sizeof(double));
		fill_table(t, fanout, ifindex, p->auth);
		load(p, t);
	}

	int len = HDRS + payload;
	uint8_t *in[2] = { malloc((size_t)packets * len), malloc((size_t)packets * len) };
	uint8_t *out = malloc(len + 64);
	double *runs = malloc(packets * sizeof(double));
	struct __sk_buff ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.ifindex = ifindex;
	printf("payload %d bytes, fan-out %d, %d packets a round; ns per run:\n",
	       payload, fanout, packets);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < packets; k++) {
			uint64_t id = (uint64_t)r * packets + k + 1;
			datagram(in[0] + (size_t)k * len, payload, id, id, 0);
			datagram(in[1] + (size_t)k * len, payload, id, id, 1);
		}
		/* Every object on the same datagrams; which goes first alternates. */
		for (int j = 0; j < n; j++) {
			struct prog *p = &progs[r % 2 ? n - 1 - j : j];
			uint64_t total = 0;
			for (int k = 0; k < packets; k++) {
				LIBBPF_OPTS(bpf_test_run_opts, o,
					    .data_in = in[p->auth] + (size_t)k * len,
					    .data_size_in = len, .data_out = out,
					    .data_size_out = len + 64, .ctx_in = &ctx,
					    .ctx_size_in = sizeof(ctx), .repeat = 1);
				if (bpf_prog_test_run_opts(p->prog_fd, &o))
					die("BPF_PROG_TEST_RUN", errno);
				if (o.retval != 2 /* TC_ACT_SHOT */) {
					fprintf(stderr, "tc_bench: %s: verdict %d, not a broadcast "
							"handled in the kernel\n",
						p->name, o.retval);
					return 1;
				}
				total += o.duration;
				runs[k] = o.duration;
			}
			/* The median run: a run the scheduler cut into (the CPU is shared) counts as
			 * one, however long. */
			qsort(runs, packets, sizeof(double), by_value);
			p->round[r] = runs[packets / 2];
			printf("  round %d  %-48s median %8.1f  mean %8.1f\n", r + 1, p->name,
			       p->round[r], (double)total / packets);
		}
	}
	/* Each object against the first, round by round: the two ran one after the other, on a CPU
	 * as loaded as it was then. */
	double *diff = malloc(rounds * sizeof(double));
	for (int i = 0; i < n; i++) {
		struct prog *p = &progs[i];
		uint64_t handled = counter(p, FP_BCAST), redirect = counter(p, FP_REDIRECT_FAILED);
		if (handled != (uint64_t)packets * rounds || redirect) {
			fprintf(stderr, "tc_bench: %s: %llu broadcasts handled of %llu, %llu copies "
					"not sent\n",
				p->name, (unsigned long long)handled,
				(unsigned long long)packets * rounds, (unsigned long long)redirect);
			return 1;
		}
		for (int r = 0; r < rounds; r++)
			diff[r] = p->round[r] - progs[0].round[r];
		qsort(diff, rounds, sizeof(double), by_value);
		double *sorted = malloc(rounds * sizeof(double));
		memcpy(sorted, p->round, rounds * sizeof(double));
		qsort(sorted, rounds, sizeof(double), by_value);
		printf("%s: ns per run (the rounds' median runs) median %.0f, min %.0f, max %.0f",
		       p->name, median(sorted, rounds), sorted[0], sorted[rounds - 1]);
		if (i > 0)
			printf("; against %s in the same round: median %+.0f", progs[0].name,
			       median(diff, rounds));
		printf("\n");
		free(sorted);
	}
	return 0;
}
