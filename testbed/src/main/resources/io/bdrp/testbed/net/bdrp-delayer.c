/*
 * bdrp-delayer: a constant propagation delay for the bdrp testbed's links, for kernels without
 * netem. An iptables rule sends the packets that arrive on a link to an NFQUEUE queue; this
 * program holds each packet's id, without its payload, in a FIFO of that queue and accepts it
 * once the link's delay has passed, so the packet reaches the stack that much later.
 *
 *   bdrp-delayer QUEUE:DELAY_US [QUEUE:DELAY_US ...]
 *
 * Prints "ready" on standard output once every queue is bound. On SIGTERM or SIGINT it accepts
 * every packet still held, prints its counters on standard error and exits 0. Any failure to set
 * up exits 1 with a message on standard error.
 *
 * One thread owns everything. A queue's delay is constant, so its due times are in arrival order
 * and a FIFO suffices; one batch verdict accepts every due packet of a queue at once. A packet's
 * arrival is the kernel's receive time stamp, so the program need not wake for each arrival:
 * while a held packet is due sooner than any packet yet to arrive could be, it sleeps until that
 * due time and then reads what has arrived meanwhile; otherwise it waits in ppoll() for a packet
 * or the due time, whichever is first. It runs at a low real-time priority when it may, so that
 * busy processes beside it do not make packets late.
 *
 * Build: cc -O2 -o bdrp-delayer bdrp-delayer.c -lnetfilter_queue
 * (Debian: apt-get install gcc libnetfilter-queue-dev)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Packets the kernel may hold for one queue; more are dropped, as by a full link buffer. */
#define QUEUE_MAXLEN 65536u
/* Socket receive buffer: room for a burst of metadata-only messages. */
#define RCVBUF_BYTES (16u << 20)
#define MAX_QUEUES 256
#define MAX_DELAY_US 10000000L
/* SCHED_FIFO priority: above every ordinary process, below the kernel's own real-time threads. */
#define RT_PRIORITY 10

struct held {
  uint32_t id;
  int64_t due_ns;
};

/* One NFQUEUE queue: its delay and the FIFO of packets held, as a power-of-two ring. */
struct queue {
  uint16_t num;
  int64_t delay_ns;
  struct nfq_q_handle *qh;
  struct held *ring;
  uint32_t mask;
  uint32_t head;  /* oldest held */
  uint32_t count; /* held now */
  uint64_t delayed;
  uint64_t stamped; /* of those, how many had the kernel's receive time stamp */
  uint32_t max_held;
  uint64_t overflow;   /* accepted at once because the FIFO was full (never, if maxlen holds) */
  int64_t late_max_ns; /* latest release after a due time */
  int64_t late_sum_ns;
};

static struct queue queues[MAX_QUEUES];
static int nqueues;
static int64_t min_delay_ns = INT64_MAX;
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, to turn the kernel's time stamps into monotonic time. */
static int64_t real_offset_ns;
static int64_t received_ns; /* when the packets being read were received, if not stamped */
static volatile sig_atomic_t stopping;
static uint64_t overruns; /* ENOBUFS: the socket buffer was full and the kernel dropped packets */

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static int64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa,
                     void *data) {
  (void)msg;
  struct queue *q = data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == NULL) {
    return 0;
  }
  uint32_t id = ntohl(ph->packet_id);
  if (q->count > q->mask) {
    q->overflow++;
    return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
  }
  int64_t arrived = received_ns;
  struct timeval tv;
  if (nfq_get_timestamp(nfa, &tv) == 0) {
    int64_t stamped = ((int64_t)tv.tv_sec * 1000000 + tv.tv_usec) * 1000 - real_offset_ns;
    /* Sane, unless the real-time clock was stepped: at most a delay before the read began (one
       that came in while reading may be a little after it). */
    if (stamped > arrived - (MAX_DELAY_US + 1000000) * 1000 && stamped < arrived + 1000000000) {
      arrived = stamped;
      q->stamped++;
    }
  }
  struct held *h = &q->ring[(q->head + q->count) & q->mask];
  h->id = id;
  h->due_ns = arrived + q->delay_ns;
  q->count++;
  if (q->count > q->max_held) {
    q->max_held = q->count;
  }
  return 0;
}

/* Accepts every packet of q due by `now` (all of them if `all`) with one batch verdict. */
static void release(struct queue *q, int64_t now, int all) {
  uint32_t n = 0;
  uint32_t last = 0;
  while (n < q->count) {
    struct held *h = &q->ring[(q->head + n) & q->mask];
    if (!all && h->due_ns > now) {
      break;
    }
    if (!all) {
      int64_t late = now - h->due_ns;
      q->late_sum_ns += late;
      if (late > q->late_max_ns) {
        q->late_max_ns = late;
      }
    }
    last = h->id;
    n++;
  }
  if (n == 0) {
    return;
  }
  /* Ids rise in arrival order; the batch verdict accepts every held id up to `last`. */
  if (nfq_set_verdict_batch(q->qh, last, NF_ACCEPT) < 0) {
    fprintf(stderr, "bdrp-delayer: verdict on queue %u failed: %s\n", q->num, strerror(errno));
  }
  q->head = (q->head + n) & q->mask;
  q->count -= n;
  q->delayed += n;
}

static int parse_arg(const char *arg, struct queue *q) {
  char *end;
  errno = 0;
  unsigned long num = strtoul(arg, &end, 10);
  if (errno != 0 || end == arg || *end != ':' || num > 65535) {
    return -1;
  }
  const char *d = end + 1;
  long us = strtol(d, &end, 10);
  if (errno != 0 || end == d || *end != '\0' || us < 0 || us > MAX_DELAY_US) {
    return -1;
  }
  q->num = (uint16_t)num;
  q->delay_ns = (int64_t)us * 1000;
  return 0;
}

/* The kernel's drop counters of queue `num` in this namespace, from procfs (0 if absent). */
static void kernel_drops(uint16_t num, unsigned long *full, unsigned long *unsent) {
  *full = 0;
  *unsent = 0;
  FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
  if (f == NULL) {
    return;
  }
  unsigned int qn, portid, total, mode, range;
  unsigned long dropped, user_dropped;
  /* queue portid total copy_mode copy_range queue_dropped user_dropped id_sequence 1 */
  while (fscanf(f, "%u %u %u %u %u %lu %lu %*u %*u", &qn, &portid, &total, &mode, &range,
                &dropped, &user_dropped) == 7) {
    if (qn == num) {
      *full = dropped;
      *unsent = user_dropped;
    }
  }
  fclose(f);
}

static void print_counters(void) {
  for (int i = 0; i < nqueues; i++) {
    struct queue *q = &queues[i];
    unsigned long full, unsent;
    kernel_drops(q->num, &full, &unsent);
    fprintf(stderr,
            "bdrp-delayer: queue %u (%" PRId64 " us): %" PRIu64 " packets delayed (%" PRIu64
            " time-stamped), at most %u held, released late by %.1f us on average and %.1f us"
            " at most; dropped: %lu (queue full), %lu (socket buffer full); %" PRIu64
            " not delayed (FIFO full)\n",
            q->num, q->delay_ns / 1000, q->delayed, q->stamped, q->max_held,
            q->delayed ? q->late_sum_ns / 1e3 / (double)q->delayed : 0.0, q->late_max_ns / 1e3,
            full, unsent, q->overflow);
  }
  if (overruns > 0) {
    fprintf(stderr, "bdrp-delayer: the socket buffer overran %" PRIu64 " times\n", overruns);
  }
  /* Includes the stack's work on each accepted packet, which runs in the verdict's system call. */
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  double sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  fprintf(stderr, "bdrp-delayer: %.3f s of CPU (user %.3f s, system %.3f s)\n", user + sys, user,
          sys);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc - 1 > MAX_QUEUES) {
    fprintf(stderr, "usage: bdrp-delayer QUEUE:DELAY_US [QUEUE:DELAY_US ...] (at most %d)\n",
            MAX_QUEUES);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    if (parse_arg(argv[i], &queues[nqueues]) < 0) {
      fprintf(stderr,
              "bdrp-delayer: '%s': expected QUEUE:DELAY_US, a queue number 0-65535 and a delay"
              " of 0-%ld microseconds\n",
              argv[i], MAX_DELAY_US);
      return 1;
    }
    if (queues[nqueues].delay_ns < min_delay_ns) {
      min_delay_ns = queues[nqueues].delay_ns;
    }
    nqueues++;
  }

  /* SIGTERM and SIGINT are delivered only inside ppoll(), so no wake-up is lost. */
  sigset_t block, waiting;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &waiting);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);

  struct nfq_handle *h = nfq_open();
  if (h == NULL) {
    fprintf(stderr,
            "bdrp-delayer: cannot open the netfilter queue netlink socket: %s (needs root and a"
            " kernel with CONFIG_NETFILTER_NETLINK_QUEUE)\n",
            strerror(errno));
    return 1;
  }
  if (nfq_bind_pf(h, AF_INET) < 0) {
    fprintf(stderr, "bdrp-delayer: cannot bind to IPv4 packets: %s\n", strerror(errno));
    return 1;
  }
  for (int i = 0; i < nqueues; i++) {
    struct queue *q = &queues[i];
    q->qh = nfq_create_queue(h, q->num, on_packet, q);
    if (q->qh == NULL) {
      fprintf(stderr,
              "bdrp-delayer: cannot bind queue %u: %s (is another program bound to it?)\n",
              q->num, strerror(errno));
      return 1;
    }
    if (nfq_set_mode(q->qh, NFQNL_COPY_META, 0) < 0) {
      fprintf(stderr, "bdrp-delayer: queue %u: cannot set metadata-only copy: %s\n", q->num,
              strerror(errno));
      return 1;
    }
    if (nfq_set_queue_maxlen(q->qh, QUEUE_MAXLEN) < 0) {
      fprintf(stderr, "bdrp-delayer: queue %u: cannot set its length: %s\n", q->num,
              strerror(errno));
      return 1;
    }
    /* Large offloaded packets are queued whole rather than segmented first: the payload is
       never looked at. Older kernels lack the flag; then they segment, which is only slower. */
    nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    q->ring = calloc(QUEUE_MAXLEN, sizeof *q->ring);
    if (q->ring == NULL) {
      fprintf(stderr, "bdrp-delayer: out of memory\n");
      return 1;
    }
    q->mask = QUEUE_MAXLEN - 1;
  }
  int fd = nfq_fd(h);
  int rcvbuf = RCVBUF_BYTES;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf); /* capped by rmem_max */
  }
  /* Any socket asking for time stamps makes the kernel stamp every packet it receives, which
     nfnetlink_queue then passes on. Without them a packet's arrival is when it is read. */
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof one);

  /* Wake at the due time, not up to the default 50 us timer slack after it. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  struct sched_param sp = {.sched_priority = RT_PRIORITY};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
    fprintf(stderr,
            "bdrp-delayer: no real-time priority (%s); busy processes may make packets late\n",
            strerror(errno));
  }

  printf("ready\n");
  fflush(stdout);

  /* Each message is one packet's metadata, well under a page. */
  static char buf[65536] __attribute__((aligned));
  int status = 0;
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  while (!stopping) {
    int64_t now = now_ns();
    int64_t next = INT64_MAX;
    for (int i = 0; i < nqueues; i++) {
      struct queue *q = &queues[i];
      release(q, now, 0);
      if (q->count > 0 && q->ring[q->head].due_ns < next) {
        next = q->ring[q->head].due_ns;
      }
    }
    struct timespec timeout;
    struct timespec *tp = NULL;
    if (next != INT64_MAX) {
      int64_t wait = next - now;
      timeout.tv_sec = wait / 1000000000;
      timeout.tv_nsec = wait % 1000000000;
      tp = &timeout;
    }
    /* A packet arriving from now on is due at now + min_delay or later: if the next due time is
       sooner, arrivals can wait in the socket until then. */
    int watch = next == INT64_MAX || next - now > min_delay_ns;
    int r = ppoll(&pfd, watch ? 1 : 0, tp, &waiting);
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "bdrp-delayer: poll: %s\n", strerror(errno));
      status = 1;
      break;
    }
    real_offset_ns = clock_ns(CLOCK_REALTIME) - now_ns();
    received_ns = now_ns();
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n >= 0) {
        nfq_handle_packet(h, buf, (int)n);
      } else if (errno == ENOBUFS) {
        overruns++;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        break;
      } else {
        fprintf(stderr, "bdrp-delayer: receive: %s\n", strerror(errno));
        status = 1;
        stopping = 1;
        break;
      }
    }
  }

  for (int i = 0; i < nqueues; i++) {
    release(&queues[i], 0, 1);
  }
  print_counters(); /* while the queues, and so their kernel counters, still exist */
  for (int i = 0; i < nqueues; i++) {
    nfq_destroy_queue(queues[i].qh);
  }
  nfq_close(h);
  return status;
}
