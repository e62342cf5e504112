/*
 * bdrp-blast: sends one Ethernet frame over and over out of an interface (AF_PACKET), at a given
 * rate, for a given time; prints how many it sent. The testbed's transit benchmark uses it to
 * offer a router DATA datagrams "from" a neighbour faster than a router JVM could send them.
 *
 *   bdrp-blast IFACE FRAME_HEX PACKETS_PER_SECOND SECONDS
 *
 * Output (stdout, one line): "sent N in S.SSS s, F refused by the socket, user CPU U.UUU s" (the
 * user time is mostly the pacing loop's, which the benchmark subtracts from the machine's).
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

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bdrp-blast IFACE FRAME_HEX PACKETS_PER_SECOND SECONDS\n");
		return 2;
	}
	size_t hexlen = strlen(argv[2]);
	if (hexlen % 2 || hexlen < 2 * 60 || hexlen > 2 * 9000) {
		fprintf(stderr, "bdrp-blast: the frame must be 60 to 9000 bytes of hex\n");
		return 2;
	}
	size_t len = hexlen / 2;
	unsigned char *frame = malloc(len);
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(argv[2][2 * i]), lo = hexval(argv[2][2 * i + 1]);
		if (hi < 0 || lo < 0) {
			fprintf(stderr, "bdrp-blast: not hex at byte %zu\n", i);
			return 2;
		}
		frame[i] = (unsigned char)(hi << 4 | lo);
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
			if (sendto(fd, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
				sent++;
			else
				failed++;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("sent %llu in %.3f s, %llu refused by the socket, user CPU %.3f s\n",
	       (unsigned long long)sent, now() - start, (unsigned long long)failed,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	return 0;
}
