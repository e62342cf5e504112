/*
 * bdrp-udp-auth.h: the MAC protection of a UDP link's datagrams (auth.udp: mac), for the testbed's
 * C tools that put DATA datagrams on a wire themselves (bdrp-blast, bdrp-probe). A protected
 * datagram is the DATA frame, then the sequence number (u64, big-endian), then the tag: SipHash-2-4
 * under the link's 16-byte key of the frame and the sequence number, written little-endian (see
 * docs/wire-protocol.md, "Datagram protection"; the routers' own code is DatagramAuth.java).
 */
#ifndef BDRP_UDP_AUTH_H
#define BDRP_UDP_AUTH_H

#include <stddef.h>
#include <stdint.h>

/* Bytes the protection adds after the frame: the sequence number and the tag. */
#define BDRP_MAC_TRAILER 16

static uint64_t bdrp_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t bdrp_rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

/* One SipRound over the state v0..v3. */
static void bdrp_sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = bdrp_rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = bdrp_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = bdrp_rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = bdrp_rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = bdrp_rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = bdrp_rotl(v[2], 32);
}

/*
 * SipHash-2-4 of len bytes at m under the key whose bytes 0..7 and 8..15, read little-endian, are
 * k0 and k1: two rounds per 8-byte word, the last word holding the remaining bytes and the length
 * in its top byte, then four finishing rounds.
 */
static uint64_t bdrp_siphash24(uint64_t k0, uint64_t k1, const unsigned char *m, size_t len)
{
	uint64_t v[4] = {
		k0 ^ 0x736f6d6570736575ULL,
		k1 ^ 0x646f72616e646f6dULL,
		k0 ^ 0x6c7967656e657261ULL,
		k1 ^ 0x7465646279746573ULL,
	};
	size_t whole = len & ~(size_t)7;
	for (size_t i = 0; i < whole; i += 8) {
		uint64_t w = bdrp_le64(m + i);
		v[3] ^= w;
		bdrp_sipround(v);
		bdrp_sipround(v);
		v[0] ^= w;
	}
	uint64_t last = (uint64_t)(len & 0xff) << 56;
	for (size_t i = whole; i < len; i++)
		last |= (uint64_t)m[i] << (8 * (i - whole));
	v[3] ^= last;
	bdrp_sipround(v);
	bdrp_sipround(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		bdrp_sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Where a protected datagram lies in an Ethernet frame (IPv4, UDP). */
struct bdrp_datagram {
	size_t ip;      /* the IPv4 header */
	size_t udp;     /* the UDP header */
	size_t payload; /* the UDP payload: the DATA frame, then the trailer */
	size_t length;  /* the UDP payload's bytes, trailer included */
};

/*
 * Finds the UDP payload of an Ethernet frame of len bytes; 0 when found and it has room for a
 * trailer after some frame bytes, -1 otherwise.
 */
static int bdrp_datagram_find(const unsigned char *f, size_t len, struct bdrp_datagram *d)
{
	if (len < 14 + 20 + 8 || f[12] != 0x08 || f[13] != 0x00)
		return -1; /* not IPv4 */
	d->ip = 14;
	size_t ihl = (size_t)(f[d->ip] & 0x0f) * 4;
	if ((f[d->ip] >> 4) != 4 || ihl < 20 || f[d->ip + 9] != 17)
		return -1; /* not UDP over IPv4 */
	d->udp = d->ip + ihl;
	if (d->udp + 8 > len)
		return -1;
	size_t udp_len = (size_t)f[d->udp + 4] << 8 | f[d->udp + 5];
	if (udp_len < 8 + 1 + BDRP_MAC_TRAILER || d->udp + udp_len > len)
		return -1;
	d->payload = d->udp + 8;
	d->length = udp_len - 8;
	return 0;
}

/* Sum of 16-bit big-endian words (the last byte padded with zero), for the Internet checksum. */
static uint64_t bdrp_sum16(const unsigned char *p, size_t len)
{
	uint64_t s = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint64_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint64_t)p[len - 1] << 8;
	return s;
}

/*
 * Writes seq and the tag into the last BDRP_MAC_TRAILER bytes of the datagram's payload, under
 * the key (k0, k1). The UDP checksum is computed again unless it is 0 (none), which stays.
 */
static void bdrp_datagram_seal(unsigned char *f, const struct bdrp_datagram *d, uint64_t k0,
			       uint64_t k1, uint64_t seq)
{
	unsigned char *p = f + d->payload;
	size_t at = d->length - BDRP_MAC_TRAILER;
	for (int i = 7; i >= 0; i--) {
		p[at + i] = seq & 0xff;
		seq >>= 8;
	}
	uint64_t tag = bdrp_siphash24(k0, k1, p, at + 8);
	for (int i = 0; i < 8; i++) {
		p[at + 8 + i] = tag & 0xff;
		tag >>= 8;
	}
	unsigned char *csum = f + d->udp + 6;
	if (csum[0] == 0 && csum[1] == 0)
		return;
	csum[0] = csum[1] = 0;
	size_t udp_len = d->length + 8;
	uint64_t s = bdrp_sum16(f + d->ip + 12, 8) + 17 + udp_len + bdrp_sum16(f + d->udp, udp_len);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	uint16_t c = (uint16_t)~s;
	if (c == 0)
		c = 0xffff;
	csum[0] = c >> 8;
	csum[1] = c & 0xff;
}

/* Reads a 16-byte key from 32 hex digits into (k0, k1); 0 when it is one, -1 otherwise. */
static int bdrp_key_parse(const char *hex, uint64_t *k0, uint64_t *k1)
{
	unsigned char key[16];
	for (int i = 0; i < 32; i++) {
		char c = hex[i];
		int v = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (v < 0)
			return -1;
		if (i % 2 == 0)
			key[i / 2] = (unsigned char)(v << 4);
		else
			key[i / 2] |= (unsigned char)v;
	}
	if (hex[32] != '\0')
		return -1;
	*k0 = bdrp_le64(key);
	*k1 = bdrp_le64(key + 8);
	return 0;
}

#endif
