/* The shared ring (ring.h): frames, exceed check, lazy head, futex wake-ups. */
#define _GNU_SOURCE
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t align8(uint64_t n)
{
	return (n + BDRP_RING_ALIGN - 1) & ~(uint64_t)(BDRP_RING_ALIGN - 1);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Shared across processes: no FUTEX_PRIVATE_FLAG. */
static int futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000LL;
		ts.tv_nsec = timeout_ns % 1000000000LL;
		tp = &ts;
	}
	return (int)syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, tp, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int valid_capacity(uint64_t c)
{
	return c >= BDRP_RING_MIN_CAPACITY && c <= BDRP_RING_MAX_CAPACITY && (c & (c - 1)) == 0;
}

static void view(struct bdrp_ring *r, void *mem, uint64_t capacity)
{
	r->sh = mem;
	r->data = (uint8_t *)mem + BDRP_RING_HEADER_BYTES;
	r->capacity = capacity;
	r->mask = capacity - 1;
	r->tail = atomic_load(&r->sh->tail);
	r->delayed_head = atomic_load(&r->sh->head);
	r->head = r->delayed_head;
	r->published_head = r->delayed_head;
}

int bdrp_ring_init(struct bdrp_ring *r, void *mem, uint64_t capacity, uint64_t watermark,
		   uint64_t start)
{
	if (!valid_capacity(capacity) || watermark > capacity || start % BDRP_RING_ALIGN)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->wake_fd = -1;
	struct bdrp_ring_shared *sh = mem;
	memset(sh, 0, BDRP_RING_HEADER_BYTES);
	sh->capacity = capacity;
	sh->watermark = watermark;
	sh->start = start;
	atomic_store(&sh->tail, start);
	atomic_store(&sh->head, start);
	sh->version = BDRP_RING_VERSION;
	atomic_thread_fence(memory_order_release);
	sh->magic = BDRP_RING_MAGIC;
	view(r, mem, capacity);
	return 0;
}

int bdrp_ring_attach(struct bdrp_ring *r, void *mem, size_t bytes)
{
	struct bdrp_ring_shared *sh = mem;
	if (bytes < BDRP_RING_HEADER_BYTES || sh->magic != BDRP_RING_MAGIC ||
	    sh->version != BDRP_RING_VERSION || !valid_capacity(sh->capacity) ||
	    bytes < bdrp_ring_bytes(sh->capacity) || sh->watermark > sh->capacity)
		return -EPROTO;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->wake_fd = -1;
	view(r, mem, sh->capacity);
	return 0;
}

int bdrp_ring_create(struct bdrp_ring *r, const char *path, uint64_t capacity, uint64_t watermark)
{
	if (!valid_capacity(capacity) || watermark > capacity)
		return -EINVAL;
	int fd = path ? open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
		      : memfd_create("bdrp-ring", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t bytes = bdrp_ring_bytes(capacity);
	if (ftruncate(fd, (off_t)bytes) != 0) {
		int err = errno;
		close(fd);
		if (path)
			unlink(path);
		return -err;
	}
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int err = errno;
		close(fd);
		if (path)
			unlink(path);
		return -err;
	}
	bdrp_ring_init(r, mem, capacity, watermark, 0);
	r->fd = fd;
	r->map_bytes = bytes;
	return 0;
}

int bdrp_ring_open(struct bdrp_ring *r, const char *path, int fd)
{
	int own = path != NULL;
	if (own) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return -errno;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)BDRP_RING_HEADER_BYTES) {
		int err = errno ? errno : EPROTO;
		if (own)
			close(fd);
		return -err;
	}
	/* A ring file is one its reader made: a regular file of this user (mode 0600), never a link
	 * (O_NOFOLLOW above), a device or another user's file. */
	if (own && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		return -EPERM;
	}
	size_t bytes = (size_t)st.st_size;
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int err = errno;
		if (own)
			close(fd);
		return -err;
	}
	int rc = bdrp_ring_attach(r, mem, bytes);
	if (rc != 0) {
		munmap(mem, bytes);
		if (own)
			close(fd);
		return rc;
	}
	r->fd = own ? fd : -1;
	r->map_bytes = bytes;
	return 0;
}

void bdrp_ring_shutdown(struct bdrp_ring *r)
{
	if (!r->sh)
		return;
	atomic_store(&r->sh->closed, 1);
	atomic_store(&r->sh->reader_sleeping, 0);
	atomic_store(&r->sh->writer_waiting, 0);
	futex_wake(&r->sh->reader_sleeping);
	futex_wake(&r->sh->writer_waiting);
}

void bdrp_ring_close(struct bdrp_ring *r)
{
	if (!r->sh)
		return;
	if (r->map_bytes)
		munmap(r->sh, r->map_bytes);
	if (r->fd >= 0)
		close(r->fd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	r->wake_fd = -1;
	r->sh = NULL;
	r->data = NULL;
}

static inline void put_header(uint8_t *at, uint32_t len, uint32_t kind)
{
	memcpy(at, &len, 4);
	memcpy(at + 4, &kind, 4);
}

/* Lays out one frame after the tail without publishing it: 1, 0 full, -EMSGSIZE. */
static int put_frame(struct bdrp_ring *r, const void *payload, uint32_t len)
{
	if (len > bdrp_ring_max_frame(r))
		return -EMSGSIZE;
	uint64_t need = align8(BDRP_RING_FRAME_HEADER + (uint64_t)len);
	uint64_t off = r->tail & r->mask;
	uint64_t to_end = r->capacity - off;
	uint64_t total = need > to_end ? to_end + need : need;
	/* Exceed: against the delayed head first, the published head only when that fails. */
	if (r->tail + total - r->delayed_head > r->capacity) {
		r->delayed_head = atomic_load_explicit(&r->sh->head, memory_order_acquire);
		r->head_reads++;
		if (r->tail + total - r->delayed_head > r->capacity) {
			r->full++;
			return 0;
		}
	}
	if (need > to_end) {
		put_header(r->data + off, (uint32_t)(to_end - BDRP_RING_FRAME_HEADER), BDRP_RING_PAD);
		r->tail += to_end;
		off = 0;
	}
	memcpy(r->data + off + BDRP_RING_FRAME_HEADER, payload, len);
	put_header(r->data + off, len, BDRP_RING_DATA);
	r->tail += need;
	r->frames++;
	r->bytes += len;
	return 1;
}

/* Publishes the tail, then wakes a sleeping reader: with the reader's store-then-load, one of the
 * two sees the other. */
static void publish_tail(struct bdrp_ring *r)
{
	atomic_store_explicit(&r->sh->tail, r->tail, memory_order_seq_cst);
	if (atomic_load_explicit(&r->sh->reader_sleeping, memory_order_seq_cst) &&
	    atomic_exchange(&r->sh->reader_sleeping, 0)) {
		if (r->wake_fd >= 0) {
			/* A full socket buffer holds wake-ups already: the reader will look. */
			(void)send(r->wake_fd, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		} else {
			futex_wake(&r->sh->reader_sleeping);
		}
		r->wakes++;
	}
}

int bdrp_ring_wake_by_socket(struct bdrp_ring *r, const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	r->wake_fd = fd;
	return 0;
}

int bdrp_ring_try_write(struct bdrp_ring *r, const void *payload, uint32_t len)
{
	int rc = put_frame(r, payload, len);
	if (rc == 1)
		publish_tail(r);
	return rc;
}

long bdrp_ring_write_batch(struct bdrp_ring *r, const uint8_t *src, size_t n)
{
	size_t at = 0;
	if (n > 0 && n < 4)
		return -EINVAL;
	while (at + 4 <= n) {
		uint32_t len;
		memcpy(&len, src + at, 4);
		if ((uint64_t)at + 4 + len > n) {
			if (at == 0)
				return -EINVAL;
			break;
		}
		int rc = put_frame(r, src + at + 4, len);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (at == 0)
				return rc;
			break;
		}
		at += 4 + (size_t)len;
	}
	if (at > 0)
		publish_tail(r);
	return (long)at;
}

/* Writer: polls the published head for up to BDRP_RING_WRITER_POLL_NS (and not past `deadline`,
 * if >= 0). Returns 1 when it moved (delayed head updated), 0 when the writer should sleep. */
static int writer_poll_head(struct bdrp_ring *r, int64_t deadline)
{
	int64_t until = now_ns() + BDRP_RING_WRITER_POLL_NS;
	if (deadline >= 0 && deadline < until)
		until = deadline;
	for (uint32_t i = 1;; i++) {
		uint64_t head = atomic_load_explicit(&r->sh->head, memory_order_acquire);
		if (head != r->delayed_head) {
			r->delayed_head = head;
			return 1;
		}
		cpu_relax();
		if ((i & 63) == 0 && (now_ns() >= until || atomic_load(&r->sh->closed)))
			return 0;
	}
}

int bdrp_ring_write_wait(struct bdrp_ring *r, const void *payload, uint32_t len, int64_t timeout_ns)
{
	int64_t deadline = timeout_ns < 0 ? -1 : now_ns() + timeout_ns;
	for (;;) {
		int rc = bdrp_ring_try_write(r, payload, len);
		if (rc != 0)
			return rc;
		if (atomic_load(&r->sh->closed))
			return -EPIPE;
		int64_t left = deadline < 0 ? -1 : deadline - now_ns();
		if (deadline >= 0 && left <= 0)
			return 0;
		/* Poll the published head for a while first, as a busy reader polls the tail: a reader
		 * that publishes within it spares both ends a futex wake-up, which on a virtual machine
		 * costs the halted CPU's wake-up too. */
		if (writer_poll_head(r, deadline))
			continue;
		atomic_store_explicit(&r->sh->writer_waiting, 1, memory_order_seq_cst);
		/* The reader publishes its head when it sees the flag; look once more first. */
		uint64_t head = atomic_load_explicit(&r->sh->head, memory_order_seq_cst);
		if (head != r->delayed_head) {
			r->delayed_head = head;
			continue;
		}
		futex_wait(&r->sh->writer_waiting, 1, left);
		r->sleeps++;
	}
}

int bdrp_ring_peek(struct bdrp_ring *r, const uint8_t **payload, uint32_t *len)
{
	uint64_t tail = atomic_load_explicit(&r->sh->tail, memory_order_acquire);
	while (r->head < tail) {
		uint64_t off = r->head & r->mask;
		uint32_t n, kind;
		memcpy(&n, r->data + off, 4);
		memcpy(&kind, r->data + off + 4, 4);
		uint64_t span = align8(BDRP_RING_FRAME_HEADER + (uint64_t)n);
		if (span > r->capacity - off || span > tail - r->head)
			return -EPROTO; /* not a frame this ring's writer makes */
		if (kind == BDRP_RING_PAD) {
			r->head += span;
			continue;
		}
		if (kind != BDRP_RING_DATA)
			return -EPROTO;
		*payload = r->data + off + BDRP_RING_FRAME_HEADER;
		*len = n;
		return 1;
	}
	return 0;
}

void bdrp_ring_publish_head(struct bdrp_ring *r)
{
	atomic_store_explicit(&r->sh->head, r->head, memory_order_seq_cst);
	r->published_head = r->head;
	r->head_publications++;
	if (atomic_load_explicit(&r->sh->writer_waiting, memory_order_seq_cst) &&
	    atomic_exchange(&r->sh->writer_waiting, 0)) {
		futex_wake(&r->sh->writer_waiting);
		r->wakes++;
	}
}

void bdrp_ring_consume(struct bdrp_ring *r)
{
	uint32_t n;
	memcpy(&n, r->data + (r->head & r->mask), 4);
	r->head += align8(BDRP_RING_FRAME_HEADER + (uint64_t)n);
	r->frames++;
	r->bytes += n;
	/* A waiting writer too waits for the watermark (or the reader's sleep): it then writes a
	 * watermark's worth at once rather than one frame per wake-up. */
	if (r->head - r->published_head >= r->sh->watermark)
		bdrp_ring_publish_head(r);
}

long bdrp_ring_read(struct bdrp_ring *r, uint8_t *dst, size_t cap)
{
	size_t n = 0;
	const uint8_t *p;
	uint32_t len;
	int rc;
	while ((rc = bdrp_ring_peek(r, &p, &len)) == 1) {
		if ((size_t)len + 4 > cap - n) {
			if (n == 0)
				return -ENOBUFS;
			break;
		}
		memcpy(dst + n, &len, 4);
		memcpy(dst + n + 4, p, len);
		n += 4 + (size_t)len;
		bdrp_ring_consume(r);
	}
	if (rc < 0 && n == 0)
		return rc;
	return (long)n;
}

static inline int has_frame(struct bdrp_ring *r)
{
	return atomic_load_explicit(&r->sh->tail, memory_order_seq_cst) > r->head;
}

int bdrp_ring_prepare_sleep(struct bdrp_ring *r, uint32_t spin)
{
	for (uint32_t i = 0; i < spin; i++) {
		if (has_frame(r))
			return 1;
		cpu_relax();
	}
	if (r->head != r->published_head)
		bdrp_ring_publish_head(r);
	atomic_store_explicit(&r->sh->reader_sleeping, 1, memory_order_seq_cst);
	if (has_frame(r)) {
		atomic_store(&r->sh->reader_sleeping, 0);
		return 1;
	}
	return 0;
}

int bdrp_ring_wait(struct bdrp_ring *r, int64_t spin_ns, int64_t timeout_ns)
{
	/* Poll for spin_ns (the clock read every 64 polls): a writer that comes back within it finds
	 * the reader awake, and pays no wake-up. */
	if (spin_ns > 0) {
		int64_t until = now_ns() + spin_ns;
		for (uint32_t i = 1;; i++) {
			if (has_frame(r))
				return 1;
			cpu_relax();
			if ((i & 63) == 0 && now_ns() >= until)
				break;
		}
	}
	/* Sleep until a frame, the ring's close, or the deadline. A wake-up without a frame sleeps
	 * again: a signal interrupts the futex, and a writer that saw this reader's flag from an
	 * earlier sleep may clear it (and wake it) for a frame read already. */
	int64_t deadline = timeout_ns < 0 ? -1 : now_ns() + timeout_ns;
	for (;;) {
		if (bdrp_ring_prepare_sleep(r, 0))
			return 1;
		if (atomic_load(&r->sh->closed)) {
			atomic_store(&r->sh->reader_sleeping, 0);
			return -EPIPE;
		}
		int64_t left = deadline < 0 ? -1 : deadline - now_ns();
		if (deadline >= 0 && left <= 0) {
			atomic_store(&r->sh->reader_sleeping, 0);
			return 0;
		}
		futex_wait(&r->sh->reader_sleeping, 1, left);
		r->sleeps++;
		atomic_store(&r->sh->reader_sleeping, 0);
		if (has_frame(r))
			return 1;
		if (atomic_load(&r->sh->closed))
			return -EPIPE;
	}
}
