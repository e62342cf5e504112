/*
 * bdrp-blast: sends one Ethernet frame over and over out of an interface (AF_PACKET), at a given
 * rate, for a given time; prints how many it sent. The testbed's transit benchmark uses it to
 * offer a router DATA datagrams "from" a neighbour faster than a router JVM could send them.
 *
 *   bdrp-blast [--ids ID_OFFSET] IFACE FRAME_HEX PACKETS_PER_SECOND SECONDS [KEY_HEX FIRST_SEQ]
 *
 * With --ids, each packet gets its own message id: the 8 bytes (big-endian) at ID_OFFSET of the
 * frame, from their value in FRAME_HEX up by one per packet (broadcasts: a router drops a second
 * copy of one as a duplicate). The frame's UDP checksum must then be 0, so that the id can change.
 *
 * With KEY_HEX (the link's 16-byte key, 32 hex digits) and FIRST_SEQ, the frame's UDP payload ends
 * with room for the trailer of auth.udp: mac, and each packet gets its own sequence number, from
 * FIRST_SEQ up by one per packet, and the tag under the key (and its UDP checksum again, unless the
 * frame's is 0).
 *
 * Output (stdout, one line): "sent N in S.SSS s, F refused by the socket, user CPU U.UUU s" (the
 * user time is mostly the pacing loop's and the tags', which the benchmark subtracts from the
 * machine's), then with a key ", next sequence number Q".
 *
 * For tests:
 *   bdrp-blast --siphash KEY_HEX MESSAGE_HEX          prints SipHash-2-4 of the message (16 hex
 *                                                      digits, the 64-bit value)
 *   bdrp-blast --seal FRAME_HEX KEY_HEX FIRST_SEQ N   prints the first N packets as sent (hex, one
 *                                                      per line)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bdrp-udp-auth.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The bytes of hex (an even number of digits), or NULL after saying why; their count in *len. */
static unsigned char *unhex(const char *hex, size_t *len)
{
	size_t hexlen = strlen(hex);
	if (hexlen % 2) {
		fprintf(stderr, "bdrp-blast: odd number of hex digits\n");
		return NULL;
	}
	*len = hexlen / 2;
	unsigned char *b = malloc(*len + 1);
	for (size_t i = 0; i < *len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			fprintf(stderr, "bdrp-blast: not hex at byte %zu\n", i);
			free(b);
			return NULL;
		}
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	return b;
}

/* A frame of 60 to 9000 bytes from hex, or NULL after saying why. */
static unsigned char *read_frame(const char *hex, size_t *len)
{
	unsigned char *frame = unhex(hex, len);
	if (frame && (*len < 60 || *len > 9000)) {
		fprintf(stderr, "bdrp-blast: the frame must be 60 to 9000 bytes\n");
		free(frame);
		return NULL;
	}
	return frame;
}

/* The key and where the trailer goes, from KEY_HEX and the frame; 0 on success. */
static int read_key(const char *hex, const unsigned char *frame, size_t len, uint64_t *k0,
		    uint64_t *k1, struct bdrp_datagram *d)
{
	if (bdrp_key_parse(hex, k0, k1)) {
		fprintf(stderr, "bdrp-blast: the key must be 32 hex digits\n");
		return -1;
	}
	if (bdrp_datagram_find(frame, len, d)) {
		fprintf(stderr, "bdrp-blast: the frame is not a UDP datagram over IPv4 with room for "
				"a sequence number and a tag\n");
		return -1;
	}
	return 0;
}

static int siphash_command(int argc, char **argv)
{
	uint64_t k0, k1;
	size_t len;
	unsigned char *m;
	if (argc != 4 || bdrp_key_parse(argv[2], &k0, &k1) || !(m = unhex(argv[3], &len))) {
		fprintf(stderr, "usage: bdrp-blast --siphash KEY_HEX(32 digits) MESSAGE_HEX\n");
		return 2;
	}
	printf("%016llx\n", (unsigned long long)bdrp_siphash24(k0, k1, m, len));
	return 0;
}

static int seal_command(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bdrp-blast --seal FRAME_HEX KEY_HEX FIRST_SEQ COUNT\n");
		return 2;
	}
	size_t len;
	unsigned char *frame = read_frame(argv[2], &len);
	uint64_t k0, k1;
	struct bdrp_datagram d = {0, 0, 0, 0};
	if (!frame || read_key(argv[3], frame, len, &k0, &k1, &d))
		return 2;
	uint64_t seq = strtoull(argv[4], NULL, 10);
	long count = atol(argv[5]);
	for (long n = 0; n < count; n++) {
		bdrp_datagram_seal(frame, &d, k0, k1, seq++);
		for (size_t i = 0; i < len; i++)
			printf("%02x", frame[i]);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--siphash"))
		return siphash_command(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "--seal"))
		return seal_command(argc, argv);
	long id_off = -1;
	if (argc > 2 && !strcmp(argv[1], "--ids")) {
		id_off = atol(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: bdrp-blast [--ids ID_OFFSET] IFACE FRAME_HEX PACKETS_PER_SECOND "
				"SECONDS [KEY_HEX FIRST_SEQ]\n");
		return 2;
	}
	size_t len;
	unsigned char *frame = read_frame(argv[2], &len);
	if (!frame)
		return 2;
	uint64_t id = 0;
	if (id_off >= 0) {
		if ((size_t)id_off + 8 > len) {
			fprintf(stderr, "bdrp-blast: the id offset is past the frame\n");
			return 2;
		}
		for (int i = 0; i < 8; i++)
			id = id << 8 | frame[id_off + i];
	}
	int keyed = argc == 7;
	uint64_t k0 = 0, k1 = 0, seq = 0;
	struct bdrp_datagram d = {0, 0, 0, 0};
	if (keyed) {
		if (read_key(argv[5], frame, len, &k0, &k1, &d))
			return 2;
		seq = strtoull(argv[6], NULL, 10);
	}
	double rate = atof(argv[3]);
	double seconds = atof(argv[4]);
	if (!(rate > 0) || !(seconds > 0)) {
		fprintf(stderr, "bdrp-blast: rate and seconds must be positive\n");
		return 2;
	}
	int ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "bdrp-blast: no interface %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "bdrp-blast: AF_PACKET socket: %s\n", strerror(errno));
		return 1;
	}
	struct sockaddr_ll to;
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = ifindex;
	to.sll_halen = ETH_ALEN;
	memcpy(to.sll_addr, frame, ETH_ALEN);

	/* Paced in bursts of up to 32: the n-th packet is due at start + n / rate. */
	double start = now();
	double end = start + seconds;
	uint64_t sent = 0, failed = 0;
	for (;;) {
		double t = now();
		if (t >= end)
			break;
		uint64_t due = (uint64_t)((t - start) * rate);
		if (sent + failed >= due) {
			double wait = (sent + failed + 1) / rate - (t - start);
			if (wait > 0.0002) {
				struct timespec ts = {0, (long)(wait * 1e9 / 2)};
				nanosleep(&ts, NULL);
			}
			continue;
		}
		for (int k = 0; k < 32 && sent + failed < due; k++) {
			if (id_off >= 0) {
				uint64_t v = id++;
				for (int i = 7; i >= 0; i--) {
					frame[id_off + i] = v & 0xff;
					v >>= 8;
				}
			}
			if (keyed)
				bdrp_datagram_seal(frame, &d, k0, k1, seq++);
			if (sendto(fd, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
				sent++;
			else
				failed++;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("sent %llu in %.3f s, %llu refused by the socket, user CPU %.3f s",
	       (unsigned long long)sent, now() - start, (unsigned long long)failed,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	if (keyed)
		printf(", next sequence number %llu", (unsigned long long)seq);
	printf("\n");
	return 0;
}
