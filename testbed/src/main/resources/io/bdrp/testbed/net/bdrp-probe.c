/*
 * bdrp-probe: one-way latency of single packets across a router. Opens a packet socket on the
 * receiving interface in its namespace (with kernel receive timestamps) and another on the
 * sending interface in its namespace, then sends COUNT copies of an Ethernet frame, one at a
 * time, each with its sequence number written at SEQ_OFFSET (8 bytes, big-endian: "bdrp" and the
 * probe's index, XORed with the frame's own 8 bytes there, so that a frame with a fresh message id
 * there gives fresh ids; the frame's UDP checksum must be 0 so that the number can change), and
 * waits up to 200 ms for it to arrive.
 *
 *   bdrp-probe SEND_NETNS SEND_IFACE RECV_NETNS RECV_IFACE FRAME_HEX SEQ_OFFSET COUNT INTERVAL_US
 *              [KEY_HEX FIRST_SEQ]
 *
 * With KEY_HEX (a link's 16-byte key, 32 hex digits) and FIRST_SEQ, the frame's UDP payload ends
 * with room for the trailer of auth.udp: mac, and each copy sent gets its sequence number (from
 * FIRST_SEQ up by one per copy) and tag written there after its probe number.
 *
 * Output (stdout): "received R of N; min A p50 B p90 C p99 D max E us"
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bdrp-udp-auth.h"

static int enter(const char *netns)
{
	int fd = open(netns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "bdrp-probe: cannot enter %s: %s\n", netns, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int packet_socket(const char *iface, int *ifindex)
{
	*ifindex = if_nametoindex(iface);
	if (!*ifindex) {
		fprintf(stderr, "bdrp-probe: no interface %s\n", iface);
		return -1;
	}
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "bdrp-probe: AF_PACKET socket: %s\n", strerror(errno));
		return -1;
	}
	struct sockaddr_ll a;
	memset(&a, 0, sizeof(a));
	a.sll_family = AF_PACKET;
	a.sll_protocol = htons(ETH_P_ALL);
	a.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "bdrp-probe: bind to %s: %s\n", iface, strerror(errno));
		return -1;
	}
	return fd;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = v & 0xff;
		v >>= 8;
	}
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 9 && argc != 11) {
		fprintf(stderr, "usage: bdrp-probe SEND_NETNS SEND_IFACE RECV_NETNS RECV_IFACE "
				"FRAME_HEX SEQ_OFFSET COUNT INTERVAL_US [KEY_HEX FIRST_SEQ]\n");
		return 2;
	}
	size_t len = strlen(argv[5]) / 2;
	unsigned char *frame = malloc(len);
	for (size_t i = 0; i < len; i++) {
		unsigned int byte;
		if (sscanf(argv[5] + 2 * i, "%2x", &byte) != 1) {
			fprintf(stderr, "bdrp-probe: not hex at byte %zu\n", i);
			return 2;
		}
		frame[i] = (unsigned char)byte;
	}
	size_t seq_off = (size_t)atol(argv[6]);
	int count = atoi(argv[7]);
	long interval = atol(argv[8]);
	if (seq_off + 8 > len || count < 1 || interval < 0) {
		fprintf(stderr, "bdrp-probe: bad offset, count or interval\n");
		return 2;
	}
	int keyed = argc == 11;
	uint64_t k0 = 0, k1 = 0, link_seq = 0;
	struct bdrp_datagram d = {0, 0, 0, 0};
	if (keyed) {
		if (bdrp_key_parse(argv[9], &k0, &k1)) {
			fprintf(stderr, "bdrp-probe: the key must be 32 hex digits\n");
			return 2;
		}
		if (bdrp_datagram_find(frame, len, &d) || seq_off + 8 > d.payload + d.length - 16) {
			fprintf(stderr, "bdrp-probe: the frame is not a UDP datagram over IPv4 with room "
					"for a sequence number and a tag after the probe number\n");
			return 2;
		}
		link_seq = strtoull(argv[10], NULL, 10);
	}
	int rx_if, tx_if;
	if (enter(argv[3]))
		return 1;
	int rx = packet_socket(argv[4], &rx_if);
	if (rx < 0)
		return 1;
	int on = 1;
	setsockopt(rx, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	if (enter(argv[1]))
		return 1;
	int tx = packet_socket(argv[2], &tx_if);
	if (tx < 0)
		return 1;
	struct sockaddr_ll to;
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = tx_if;
	to.sll_halen = ETH_ALEN;
	memcpy(to.sll_addr, frame, ETH_ALEN);

	uint64_t base = get64(frame + seq_off);
	double *lat = calloc(count, sizeof(double));
	int got = 0;
	unsigned char buf[9216];
	char control[256];
	for (int i = 0; i < count; i++) {
		uint64_t seq = base ^ (0x62647270ULL << 32 | (uint64_t)i); /* "bdrp", i */
		put64(frame + seq_off, seq);
		if (keyed)
			bdrp_datagram_seal(frame, &d, k0, k1, link_seq++);
		struct timespec t0;
		clock_gettime(CLOCK_REALTIME, &t0);
		if (sendto(tx, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
			fprintf(stderr, "bdrp-probe: send: %s\n", strerror(errno));
			return 1;
		}
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += 200000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		for (;;) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long left = (deadline.tv_sec - now.tv_sec) * 1000 +
				    (deadline.tv_nsec - now.tv_nsec) / 1000000;
			if (left <= 0)
				break;
			struct pollfd p = {rx, POLLIN, 0};
			if (poll(&p, 1, (int)left) <= 0)
				break;
			struct sockaddr_ll from;
			struct iovec iov = {buf, sizeof(buf)};
			struct msghdr m;
			memset(&m, 0, sizeof(m));
			m.msg_name = &from;
			m.msg_namelen = sizeof(from);
			m.msg_iov = &iov;
			m.msg_iovlen = 1;
			m.msg_control = control;
			m.msg_controllen = sizeof(control);
			ssize_t n = recvmsg(rx, &m, 0);
			if (n < (ssize_t)(seq_off + 8) || from.sll_pkttype == PACKET_OUTGOING)
				continue;
			if (get64(buf + seq_off) != seq)
				continue;
			struct timespec ts = {0, 0};
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS)
					memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			}
			if (ts.tv_sec == 0)
				clock_gettime(CLOCK_REALTIME, &ts);
			lat[got++] = (ts.tv_sec - t0.tv_sec) * 1e6 + (ts.tv_nsec - t0.tv_nsec) / 1e3;
			break;
		}
		if (interval > 0)
			usleep((useconds_t)interval);
	}
	if (got == 0) {
		printf("received 0 of %d\n", count);
		return 0;
	}
	qsort(lat, got, sizeof(double), cmp);
	printf("received %d of %d; min %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f us\n", got, count,
	       lat[0], lat[got / 2], lat[(int)(got * 0.9)], lat[(int)(got * 0.99)], lat[got - 1]);
	return 0;
}
