/*
 * Property tests of the shared ring (ring.h), run by RingCTest through `ring_test`:
 * random frame sizes against a model, wrap-around starting at every offset, watermark edges, a
 * full ring refusing and then blocking its writer, a wake-up without a frame not ending a wait, a
 * reader and a writer in separate processes,
 * and a writer killed (SIGKILL) in the middle of a frame. Prints one line per property and exits
 * non-zero at the first failure, naming it.
 */
#define _GNU_SOURCE
#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond, ...)                                                                 \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                    \
			fprintf(stderr, "\n");                                           \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static uint64_t rng_state;

static uint64_t next_random(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The payload of frame `seq`: its length is chosen by the caller, its bytes by seq. */
static void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static void check_payload(const uint8_t *p, uint32_t len, uint32_t want_len, uint64_t seq)
{
	CHECK(len == want_len, "frame %llu: length %u, wrote %u", (unsigned long long)seq, len,
	      want_len);
	for (uint32_t i = 0; i < len; i++)
		CHECK(p[i] == (uint8_t)(seq * 131 + i * 7 + (i >> 8)),
		      "frame %llu: byte %u differs", (unsigned long long)seq, i);
}

static void *region(size_t bytes)
{
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap %zu", bytes);
	return m;
}

/*
 * One reader and one writer view of the same memory, driven at random against a model: a FIFO of
 * (seq, length). A write must succeed exactly when the frame (and padding) fits between the tail
 * and the head the reader last published; every frame read must be the oldest written.
 */
static void random_against_model(uint64_t capacity, uint64_t watermark, uint64_t start,
				 int steps)
{
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, watermark, start) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	enum { Q = 1 << 16 };
	static uint32_t qlen[Q];
	static uint64_t qseq[Q];
	size_t qh = 0, qt = 0;
	uint64_t seq = 0;
	uint8_t *buf = malloc(capacity);
	uint32_t max = (uint32_t)bdrp_ring_max_frame(&wr);
	for (int s = 0; s < steps; s++) {
		if (next_random() % 2) {
			uint32_t len;
			switch (next_random() % 4) {
			case 0: len = 0; break;
			case 1: len = (uint32_t)(next_random() % 16); break;
			case 2: len = (uint32_t)(next_random() % (max + 1)); break;
			default: len = max - (uint32_t)(next_random() % 9); break;
			}
			fill(buf, len, seq);
			uint64_t need = (8 + (uint64_t)len + 7) & ~7ULL;
			uint64_t off = wr.tail & (capacity - 1);
			uint64_t total = need > capacity - off ? capacity - off + need : need;
			uint64_t published = atomic_load(&rd.sh->head);
			int fits = wr.tail + total - published <= capacity;
			int rc = bdrp_ring_try_write(&wr, buf, len);
			CHECK(rc == fits, "write of %u bytes at tail %llu, published head %llu: got %d",
			      len, (unsigned long long)wr.tail, (unsigned long long)published, rc);
			CHECK(wr.tail - rd.head <= capacity, "tail overtook the head");
			if (rc == 1) {
				qlen[qt % Q] = len;
				qseq[qt % Q] = seq;
				qt++;
				seq++;
			}
		} else {
			const uint8_t *p;
			uint32_t len;
			int rc = bdrp_ring_peek(&rd, &p, &len);
			CHECK(rc == (qh < qt), "peek with %zu frames queued: %d", qt - qh, rc);
			if (rc == 1) {
				check_payload(p, len, qlen[qh % Q], qseq[qh % Q]);
				/* Watermark: the head is published exactly when the bytes consumed since
				 * the last publication (headers and padding included) reach it. */
				uint64_t last = rd.published_head;
				bdrp_ring_consume(&rd);
				uint64_t shared = atomic_load(&rd.sh->head);
				if (rd.head - last >= watermark)
					CHECK(shared == rd.head, "head %llu not published at watermark %llu",
					      (unsigned long long)rd.head, (unsigned long long)watermark);
				else
					CHECK(shared == last, "head published below watermark %llu",
					      (unsigned long long)watermark);
				qh++;
			}
		}
	}
	/* Drain: everything written arrives, in order, once. */
	const uint8_t *p;
	uint32_t len;
	while (bdrp_ring_peek(&rd, &p, &len) == 1) {
		CHECK(qh < qt, "a frame nobody wrote");
		check_payload(p, len, qlen[qh % Q], qseq[qh % Q]);
		bdrp_ring_consume(&rd);
		qh++;
	}
	CHECK(qh == qt, "%zu frames lost", qt - qh);
	free(buf);
	munmap(mem, bytes);
}

static void wrap_at_every_offset(void)
{
	uint64_t capacity = 4096;
	for (uint64_t start = 0; start < 2 * capacity; start += 8)
		random_against_model(capacity, 512, start, 400);
	printf("ok wrap-around at every offset (%llu starts)\n", (unsigned long long)(capacity / 4));
}

static void random_sizes(void)
{
	uint64_t wms[] = {0, 8, 1000, 16384, 65536};
	for (size_t i = 0; i < sizeof(wms) / sizeof(wms[0]); i++)
		random_against_model(65536, wms[i], 0, 200000);
	printf("ok random frame sizes against a model, watermarks 0 to capacity\n");
}

/* The head is published exactly when the watermark is reached, and before the reader sleeps. */
static void watermark_edges(void)
{
	uint64_t capacity = 4096, watermark = 64;
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, watermark, 0) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	uint8_t b[64] = {0};
	/* Frames of 8-byte payload take 16 bytes: 3 stay below 64, the 4th reaches it. */
	for (int i = 0; i < 8; i++)
		CHECK(bdrp_ring_try_write(&wr, b, 8) == 1, "write");
	const uint8_t *p;
	uint32_t len;
	for (int i = 1; i <= 3; i++) {
		CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
		bdrp_ring_consume(&rd);
		CHECK(atomic_load(&rd.sh->head) == 0, "head published after %d bytes", 16 * i);
	}
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
	bdrp_ring_consume(&rd);
	CHECK(atomic_load(&rd.sh->head) == 64, "head at the watermark: %llu",
	      (unsigned long long)atomic_load(&rd.sh->head));
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
	bdrp_ring_consume(&rd);
	CHECK(atomic_load(&rd.sh->head) == 64, "16 bytes past it: not yet");
	/* A reader about to sleep publishes what it consumed. */
	while (bdrp_ring_peek(&rd, &p, &len) == 1)
		bdrp_ring_consume(&rd);
	CHECK(bdrp_ring_wait(&rd, 10, 1000000) == 0, "empty ring: timeout");
	CHECK(atomic_load(&rd.sh->head) == 128, "head before sleeping: %llu",
	      (unsigned long long)atomic_load(&rd.sh->head));
	munmap(mem, bytes);
	printf("ok watermark edges: published at the watermark, not before, and before sleeping\n");
}

struct blocked_writer {
	struct bdrp_ring *wr;
	uint32_t len;
	_Atomic int done;
	int rc;
};

static void *write_blocking(void *arg)
{
	struct blocked_writer *w = arg;
	uint8_t b[1024];
	fill(b, w->len, 999);
	w->rc = bdrp_ring_write_wait(w->wr, b, w->len, 10LL * 1000000000LL);
	atomic_store(&w->done, 1);
	return NULL;
}

struct waiting_reader {
	struct bdrp_ring *rd;
	_Atomic int done;
	int rc;
};

static void *wait_for_frame(void *arg)
{
	struct waiting_reader *w = arg;
	w->rc = bdrp_ring_wait(w->rd, 0, 10LL * 1000000000LL);
	atomic_store(&w->done, 1);
	return NULL;
}

/* A wake-up that brings no frame (a writer clearing the flag of an earlier sleep, a signal) does
 * not end a wait: the reader sleeps again until a frame, and returns it. */
static void a_wake_up_without_a_frame_does_not_end_the_wait(void)
{
	uint64_t capacity = 4096;
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, 1024, 0) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	struct waiting_reader w = {.rd = &rd};
	pthread_t t;
	pthread_create(&t, NULL, wait_for_frame, &w);
	while (!atomic_load(&rd.sh->reader_sleeping))
		sched_yield();
	/* What a writer does after publishing a tail, with no frame behind it. */
	CHECK(atomic_exchange(&rd.sh->reader_sleeping, 0) == 1, "the reader said it sleeps");
	syscall(SYS_futex, (uint32_t *)&rd.sh->reader_sleeping, FUTEX_WAKE, 1, NULL, NULL, 0);
	/* The reader goes back to sleep, or (before the fix) returns with nothing. */
	while (!atomic_load(&rd.sh->reader_sleeping) && !atomic_load(&w.done))
		sched_yield();
	CHECK(!atomic_load(&w.done), "the wait ended without a frame: %d", w.rc);
	uint8_t b[64];
	fill(b, 64, 5);
	CHECK(bdrp_ring_write_wait(&wr, b, 64, -1) == 1, "write");
	pthread_join(t, NULL);
	CHECK(w.rc == 1, "the wait returned the frame: %d", w.rc);
	const uint8_t *p;
	uint32_t len;
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
	check_payload(p, len, 64, 5);
	munmap(mem, bytes);
	printf("ok a wake-up without a frame does not end the wait\n");
}

/* A full ring refuses try_write, blocks write_wait until the reader frees space, and never
 * lets the writer overwrite what is unread. */
static void full_ring_blocks_the_writer(void)
{
	uint64_t capacity = 4096;
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, capacity, 0) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	uint8_t b[1024];
	uint64_t n = 0;
	for (;;) {
		fill(b, 1000, n);
		int rc = bdrp_ring_try_write(&wr, b, 1000);
		if (rc == 0)
			break;
		n++;
	}
	CHECK(n == 4, "1000-byte frames in a 4096-byte ring: %llu", (unsigned long long)n);
	CHECK(wr.full == 1, "the refusal was counted");
	struct blocked_writer w = {.wr = &wr, .len = 1000};
	pthread_t t;
	pthread_create(&t, NULL, write_blocking, &w);
	/* Wait until the writer has said it waits; it cannot have written. */
	while (!atomic_load(&rd.sh->writer_waiting))
		sched_yield();
	CHECK(!atomic_load(&w.done), "the writer wrote into a full ring");
	const uint8_t *p;
	uint32_t len;
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
	check_payload(p, len, 1000, 0);
	bdrp_ring_consume(&rd); /* below the watermark: not published, the writer still waits */
	CHECK(atomic_load(&rd.sh->head) == 0, "head published below the watermark");
	CHECK(!atomic_load(&w.done), "the writer wrote before the head was published");
	bdrp_ring_publish_head(&rd); /* as the reader does before it sleeps */
	pthread_join(t, NULL);
	CHECK(w.rc == 1, "the blocked write went through once space was freed: %d", w.rc);
	for (uint64_t i = 1; i < 4; i++) {
		CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek %llu", (unsigned long long)i);
		check_payload(p, len, 1000, i);
		bdrp_ring_consume(&rd);
	}
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "the blocked frame");
	check_payload(p, len, 1000, 999);
	bdrp_ring_consume(&rd);
	CHECK(bdrp_ring_try_write(&wr, b, (uint32_t)bdrp_ring_max_frame(&wr) + 1) == -EMSGSIZE,
	      "a frame above a quarter of the ring is refused");
	munmap(mem, bytes);
	printf("ok a full ring refuses, then blocks its writer until space is freed\n");
}

/* A batch goes in whole frames while they fit, published once; the rest is left for later. */
static void batch_writes(void)
{
	uint64_t capacity = 4096;
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, 0, 0) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	uint8_t src[16384];
	size_t n = 0;
	uint32_t lens[64];
	int frames = 0;
	for (; frames < 40; frames++) { /* 40 frames of 100 to 300 bytes: more than the ring holds */
		uint32_t len = 100 + (uint32_t)(next_random() % 200);
		lens[frames] = len;
		memcpy(src + n, &len, 4);
		fill(src + n + 4, len, (uint64_t)frames);
		n += 4 + len;
	}
	long w = bdrp_ring_write_batch(&wr, src, n);
	CHECK(w > 0 && (size_t)w < n, "a partial batch: %ld of %zu", w, n);
	uint64_t publications = atomic_load(&wr.sh->tail);
	CHECK(publications == wr.tail, "the tail published");
	/* Whole frames only: w ends at a frame boundary. */
	size_t at = 0;
	int written = 0;
	while (at < (size_t)w) {
		at += 4 + lens[written];
		written++;
	}
	CHECK(at == (size_t)w, "the batch stopped between frames");
	const uint8_t *p;
	uint32_t len;
	for (int i = 0; i < written; i++) {
		CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "frame %d of the batch", i);
		check_payload(p, len, lens[i], (uint64_t)i);
		bdrp_ring_consume(&rd);
	}
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 0, "nothing beyond the batch");
	/* The rest goes once there is room. */
	long w2 = bdrp_ring_write_batch(&wr, src + w, n - (size_t)w);
	CHECK(w2 > 0, "the rest, after the reader freed room");
	CHECK(bdrp_ring_write_batch(&wr, src, 3) == -EINVAL, "a batch cut inside a length");
	munmap(mem, bytes);
	printf("ok a batch goes in whole frames while they fit, published once\n");
}

/* A writer process and a reader process over a memfd: every frame, in order, intact. */
static void two_processes(void)
{
	struct bdrp_ring rd;
	CHECK(bdrp_ring_create(&rd, NULL, 1 << 16, 1 << 12) == 0, "create");
	const uint64_t frames = 300000;
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct bdrp_ring wr;
		if (bdrp_ring_open(&wr, NULL, rd.fd) != 0)
			_exit(2);
		uint8_t b[2048];
		rng_state = 42;
		for (uint64_t s = 0; s < frames; s++) {
			uint32_t len = (uint32_t)(next_random() % 2000);
			fill(b, len, s);
			if (bdrp_ring_write_wait(&wr, b, len, 60LL * 1000000000LL) != 1)
				_exit(3);
		}
		_exit(0);
	}
	rng_state = 42;
	uint64_t s = 0;
	uint8_t *buf = malloc(1 << 16);
	while (s < frames) {
		long n = bdrp_ring_read(&rd, buf, 1 << 16);
		CHECK(n >= 0, "read: %ld", n);
		if (n == 0) {
			int rc = bdrp_ring_wait(&rd, 100000, 30LL * 1000000000LL);
			CHECK(rc == 1, "the writer stalled at frame %llu", (unsigned long long)s);
			continue;
		}
		for (long i = 0; i < n; s++) {
			uint32_t len;
			memcpy(&len, buf + i, 4);
			check_payload(buf + i + 4, len, (uint32_t)(next_random() % 2000), s);
			i += 4 + len;
		}
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer exit status %d", status);
	CHECK(rd.sleeps > 0 || rd.frames == frames, "reader accounted");
	free(buf);
	bdrp_ring_close(&rd);
	printf("ok a writer and a reader in separate processes: %llu frames in order\n",
	       (unsigned long long)frames);
}

/*
 * A writer killed with SIGKILL halfway through a frame: the reader gets every frame the writer
 * published, and nothing of the one it was writing.
 */
static void writer_killed_mid_frame(void)
{
	struct bdrp_ring rd;
	CHECK(bdrp_ring_create(&rd, NULL, 1 << 14, 0) == 0, "create");
	for (int round = 0; round < 50; round++) {
		uint64_t published = 10 + (uint64_t)round * 7;
		pid_t pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			struct bdrp_ring wr;
			if (bdrp_ring_open(&wr, NULL, rd.fd) != 0)
				_exit(2);
			uint8_t b[512];
			for (uint64_t s = 0; s < published; s++) {
				fill(b, 100 + (uint32_t)s % 300, s);
				if (bdrp_ring_write_wait(&wr, b, 100 + (uint32_t)s % 300, -1) != 1)
					_exit(3);
			}
			/* Half a frame: header and part of the payload, in space the exceed check
			 * gives it, tail not published. */
			uint64_t off = wr.tail & wr.mask;
			uint64_t head = atomic_load(&wr.sh->head);
			if (wr.capacity - off >= 8 + 256 && wr.tail + 8 + 256 - head <= wr.capacity) {
				uint32_t len = 256, kind = BDRP_RING_DATA;
				memcpy(wr.data + off, &len, 4);
				memcpy(wr.data + off + 4, &kind, 4);
				memset(wr.data + off + 8, 0xAB, 100);
			}
			kill(getpid(), SIGKILL);
			_exit(4);
		}
		/* Read alongside the writer (the ring is smaller than what it writes). */
		const uint8_t *p;
		uint32_t len;
		uint64_t s = 0;
		while (s < published) {
			int rc = bdrp_ring_peek(&rd, &p, &len);
			CHECK(rc >= 0, "round %d: peek %d", round, rc);
			if (rc == 0) {
				CHECK(bdrp_ring_wait(&rd, 100000, 10LL * 1000000000LL) == 1,
				      "round %d: stalled at frame %llu", round, (unsigned long long)s);
				continue;
			}
			check_payload(p, len, 100 + (uint32_t)s % 300, s);
			bdrp_ring_consume(&rd);
			s++;
		}
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer killed: %d", status);
		CHECK(bdrp_ring_peek(&rd, &p, &len) == 0, "round %d: a frame after the last published",
		      round);
		CHECK(bdrp_ring_wait(&rd, 0, 1000000) == 0, "nothing more after the kill");
	}
	bdrp_ring_close(&rd);
	printf("ok a writer killed mid-frame: every published frame, nothing of the torn one\n");
}

/* An idle reader sleeps (futex) and a write wakes it. */
static void idle_reader_sleeps_and_wakes(void)
{
	struct bdrp_ring rd;
	CHECK(bdrp_ring_create(&rd, NULL, 4096, 0) == 0, "create");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct bdrp_ring wr;
		if (bdrp_ring_open(&wr, NULL, rd.fd) != 0)
			_exit(2);
		/* Write once the reader sleeps. */
		while (!atomic_load(&wr.sh->reader_sleeping))
			sched_yield();
		uint8_t b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
		_exit(bdrp_ring_try_write(&wr, b, 8) == 1 && wr.wakes == 1 ? 0 : 3);
	}
	int rc = bdrp_ring_wait(&rd, 0, 10LL * 1000000000LL);
	CHECK(rc == 1, "woken by the write: %d", rc);
	CHECK(rd.sleeps == 1, "slept once: %llu", (unsigned long long)rd.sleeps);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer woke the reader: %d", status);
	bdrp_ring_close(&rd);
	printf("ok an idle reader sleeps on the futex and the next write wakes it\n");
}

/*
 * A reader in an event loop sleeps on a Unix datagram socket: after prepare_sleep, the next write
 * sends it one datagram; while it reads, writes send nothing.
 */
static void wake_by_socket(void)
{
	char path[108];
	snprintf(path, sizeof(path), "/tmp/bdrp-ring-test-%d.wake", (int)getpid());
	unlink(path);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path, path);
	CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0, "bind %s", path);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	uint64_t capacity = 4096;
	size_t bytes = bdrp_ring_bytes(capacity);
	void *mem = region(bytes);
	struct bdrp_ring rd, wr;
	CHECK(bdrp_ring_init(&rd, mem, capacity, 0, 0) == 0, "init");
	CHECK(bdrp_ring_attach(&wr, mem, bytes) == 0, "attach");
	CHECK(bdrp_ring_wake_by_socket(&wr, path) == 0, "connect the wake socket");
	uint8_t b[8] = {0};
	CHECK(bdrp_ring_try_write(&wr, b, 8) == 1, "write while awake");
	char got;
	CHECK(recv(s, &got, 1, MSG_DONTWAIT) < 0, "no wake-up for a reader that is awake");
	CHECK(bdrp_ring_prepare_sleep(&rd, 10) == 1, "a frame is there: do not sleep");
	const uint8_t *p;
	uint32_t len;
	CHECK(bdrp_ring_peek(&rd, &p, &len) == 1, "peek");
	bdrp_ring_consume(&rd);
	CHECK(bdrp_ring_prepare_sleep(&rd, 10) == 0, "empty: sleep");
	CHECK(bdrp_ring_try_write(&wr, b, 8) == 1, "write to a sleeping reader");
	CHECK(recv(s, &got, 1, 0) == 1, "the write sent a wake-up datagram");
	CHECK(bdrp_ring_try_write(&wr, b, 8) == 1, "write again");
	CHECK(recv(s, &got, 1, MSG_DONTWAIT) < 0, "one wake-up per sleep");
	CHECK(wr.wakes == 1, "wakes counted: %llu", (unsigned long long)wr.wakes);
	bdrp_ring_close(&wr);
	close(s);
	unlink(path);
	munmap(mem, bytes);
	printf("ok a reader in an event loop is woken by one datagram per sleep\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	rng_state = 1;
	watermark_edges();
	full_ring_blocks_the_writer();
	batch_writes();
	wrap_at_every_offset();
	random_sizes();
	two_processes();
	writer_killed_mid_frame();
	idle_reader_sleeps_and_wakes();
	a_wake_up_without_a_frame_does_not_end_the_wait();
	wake_by_socket();
	printf("all ring properties hold\n");
	return 0;
}
