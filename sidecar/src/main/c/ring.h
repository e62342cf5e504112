/*
 * A single-producer, single-consumer ring of variable-size frames in memory the reader owns and
 * the writer writes into: the link transport between two routers on one host (shared memory) and,
 * with the same layout, over RDMA (rdma.c).
 *
 * Positions are byte counts since the ring was made (64 bits, never wrapping); a position's offset
 * in the data area is the count modulo the capacity, a power of two.
 *
 *  - tail: where the writer writes next. The writer publishes it (release) after a frame is
 *    complete, so the reader never sees part of a frame, even if the writer dies mid-frame.
 *  - head: where the reader reads next. The reader keeps it locally and publishes it lazily:
 *    when it has consumed at least the watermark since the last publication, and before it
 *    sleeps (a writer waiting for room is woken then, not for every frame).
 *  - delayed head: the writer's copy of the last published head. A write checks against it
 *    alone ("exceed": tail + bytes - delayed head > capacity); only when that fails does the
 *    writer read the published head again, and if the frame still does not fit the ring is full:
 *    the write returns 0 (or waits, in bdrp_ring_write_wait) and nothing unread is overwritten.
 *
 * A frame is an 8-byte header (payload length, kind) and the payload, padded to 8 bytes. A frame
 * never straddles the end of the data area: when it would, the writer fills the rest with a
 * padding frame and starts again at offset 0, so every frame is contiguous in memory.
 *
 * An idle reader costs no CPU: after polling for a while it says it is sleeping and waits on a
 * futex in the shared header, which the writer wakes after publishing a tail. A writer waiting
 * for space sleeps the same way until the reader publishes a head.
 */
#ifndef BDRP_RING_H
#define BDRP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define BDRP_RING_MAGIC 0x52524442u /* "BDRR" little-endian */
#define BDRP_RING_VERSION 1u
#define BDRP_RING_HEADER_BYTES 4096u /* the shared header; the data area follows */
#define BDRP_RING_FRAME_HEADER 8u
#define BDRP_RING_ALIGN 8u
#define BDRP_RING_MIN_CAPACITY 4096u
#define BDRP_RING_MAX_CAPACITY (1ull << 32)
/* How long a writer waiting for space polls the reader's head before it sleeps on the futex. */
#define BDRP_RING_WRITER_POLL_NS 100000

enum { BDRP_RING_DATA = 1, BDRP_RING_PAD = 2 };

/* The shared header. Each field one side writes has its own cache line. */
struct bdrp_ring_shared {
	uint32_t magic;
	uint32_t version;
	uint64_t capacity;  /* bytes in the data area, a power of two */
	uint64_t watermark; /* bytes the reader consumes before it publishes its head */
	uint64_t start;     /* the position both ends started at */
	uint8_t pad0[64 - 32];
	_Atomic uint64_t tail; /* written by the writer */
	uint8_t pad1[64 - 8];
	_Atomic uint64_t head; /* published by the reader */
	uint8_t pad2[64 - 8];
	_Atomic uint32_t reader_sleeping; /* futex: 1 while the reader sleeps or is about to */
	uint8_t pad3[64 - 4];
	_Atomic uint32_t writer_waiting; /* futex: 1 while the writer waits for space */
	uint8_t pad4[64 - 4];
	_Atomic uint32_t closed; /* set by either end when it leaves */
	uint8_t pad5[64 - 4];
};

/* One end's view of a ring. */
struct bdrp_ring {
	struct bdrp_ring_shared *sh;
	uint8_t *data;
	uint64_t capacity;
	uint64_t mask;
	size_t map_bytes;
	int fd;
	/* writer */
	uint64_t tail;
	uint64_t delayed_head;
	int wake_fd; /* a Unix datagram socket to the reader's event loop, or -1: futex */
	/* reader */
	uint64_t head;
	uint64_t published_head;
	/* counters, of this end */
	uint64_t frames;
	uint64_t bytes;
	uint64_t full;              /* writes refused for want of space */
	uint64_t head_publications; /* heads the reader published */
	uint64_t head_reads;        /* published heads the writer read back */
	uint64_t sleeps;            /* times this end slept on the futex */
	uint64_t wakes;             /* times this end woke the other */
};

/* The largest payload a ring of this capacity takes: a quarter of it, less the header. */
static inline uint64_t bdrp_ring_max_frame(const struct bdrp_ring *r)
{
	return r->capacity / 4 - BDRP_RING_FRAME_HEADER;
}

/* Bytes a mapping of a ring with this capacity needs. */
static inline size_t bdrp_ring_bytes(uint64_t capacity)
{
	return BDRP_RING_HEADER_BYTES + (size_t)capacity;
}

/*
 * Lays out a new ring in `mem` (bdrp_ring_bytes(capacity) bytes, zeroed or not) and attaches `r`
 * to it as its reader. `start` is the first position (0 in use; tests start anywhere to wrap at
 * every offset). Returns 0 or -EINVAL (capacity not a power of two in range, watermark above it).
 */
int bdrp_ring_init(struct bdrp_ring *r, void *mem, uint64_t capacity, uint64_t watermark,
		   uint64_t start);

/* Attaches `r` to a ring laid out in `mem` of `bytes` bytes, checking its header. */
int bdrp_ring_attach(struct bdrp_ring *r, void *mem, size_t bytes);

/*
 * Makes a ring in a new shared-memory file at `path` (created, mode 0600, must not exist), or in
 * an anonymous memfd when `path` is NULL, mapped and attached as its reader. Returns 0 or -errno.
 */
int bdrp_ring_create(struct bdrp_ring *r, const char *path, uint64_t capacity, uint64_t watermark);

/*
 * Maps the ring in the file at `path` (or the descriptor `fd` if path is NULL) as its writer. A ring
 * is a file its reader made: a path that is a symbolic link is refused (-ELOOP), and so is one that
 * is not a regular file of this process's user (-EPERM).
 */
int bdrp_ring_open(struct bdrp_ring *r, const char *path, int fd);

/*
 * Writer: wakes a sleeping reader with a datagram to the Unix socket at `path` (which the reader's
 * event loop listens on) instead of the futex. Returns 0 or -errno.
 */
int bdrp_ring_wake_by_socket(struct bdrp_ring *r, const char *path);

/*
 * Reader in an event loop: before it goes back to waiting for its wake socket, polls `spin` times,
 * then publishes its head and says it sleeps. Returns 1 if a frame arrived meanwhile (it then does
 * not sleep: read on), 0 if it may wait.
 */
int bdrp_ring_prepare_sleep(struct bdrp_ring *r, uint32_t spin);

/*
 * Marks the ring closed and wakes both ends, leaving it mapped: a reader or writer waiting in
 * another thread returns -EPIPE. The reader's router does this when it stops; a writer that goes
 * away only closes its mapping, and a later writer may take its place.
 */
void bdrp_ring_shutdown(struct bdrp_ring *r);

/* Unmaps and closes what create or open made (after bdrp_ring_shutdown if a thread waits). */
void bdrp_ring_close(struct bdrp_ring *r);

/*
 * Writer: appends one frame of `len` bytes if it fits without overtaking unread data. Returns 1
 * written, 0 full (nothing written), -EMSGSIZE larger than bdrp_ring_max_frame.
 */
int bdrp_ring_try_write(struct bdrp_ring *r, const void *payload, uint32_t len);

/*
 * Writer: appends the frames of `src` (n bytes: each a 4-byte little-endian length and the frame,
 * as bdrp_ring_read gives them) in order while they fit, and publishes the tail once. Returns the
 * bytes of `src` written (whole frames; 0: the first did not fit), -EMSGSIZE if the first is larger
 * than bdrp_ring_max_frame, -EINVAL if it is cut short.
 */
long bdrp_ring_write_batch(struct bdrp_ring *r, const uint8_t *src, size_t n);

/*
 * Writer: as bdrp_ring_try_write, waiting up to `timeout_ns` for space (< 0: without limit): it
 * polls the reader's head for BDRP_RING_WRITER_POLL_NS, then sleeps on the futex until the reader
 * publishes a head.
 * Returns 1, 0 on timeout, -EMSGSIZE, or -EPIPE if the reader closed the ring.
 */
int bdrp_ring_write_wait(struct bdrp_ring *r, const void *payload, uint32_t len, int64_t timeout_ns);

/*
 * Reader: the next frame's payload and length, without consuming it. Returns 1, or 0 when the
 * ring holds no complete frame.
 */
int bdrp_ring_peek(struct bdrp_ring *r, const uint8_t **payload, uint32_t *len);

/* Reader: consumes the frame peek returned, publishing the head when the watermark says so. */
void bdrp_ring_consume(struct bdrp_ring *r);

/*
 * Reader: copies whole frames, each as a 4-byte little-endian length and its payload, into `dst`
 * (up to `cap` bytes) and consumes them. Returns the bytes copied (0: nothing to read), or
 * -ENOBUFS when the next frame alone does not fit in `cap`.
 */
long bdrp_ring_read(struct bdrp_ring *r, uint8_t *dst, size_t cap);

/*
 * Reader: waits until a frame is there: polls for `spin_ns`, then publishes its head, says it is
 * sleeping and sleeps on the futex for up to `timeout_ns` (< 0: without limit); a wake-up that
 * brings no frame sleeps again. Returns 1 when a frame is there, 0 on timeout, -EPIPE if the
 * writer closed the ring and it is empty.
 */
int bdrp_ring_wait(struct bdrp_ring *r, int64_t spin_ns, int64_t timeout_ns);

/* Reader: publishes its head now (consumed bytes since the last publication otherwise wait). */
void bdrp_ring_publish_head(struct bdrp_ring *r);

#endif
