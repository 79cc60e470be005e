/*
 * etshim_fake.c - an in-memory implementation of etshim.h for CI.
 *
 * It behaves like the runtime over dev::DeviceLayerFake (one device with
 * the fake's properties) but really moves data: device memory is host
 * memory, and copies and launches are queued and run only when
 * et_wait_stream is called, so a caller that frees a host buffer before
 * the wait, or reads a d2h destination before it, is caught. Launches are
 * recorded, not executed. Faults are scripted with et_fake_set_faults or
 * the ETSHIM_FAKE_FAULT environment variable (see etshim.h).
 *
 * Its profiler (et_profiler_start/stop) writes a small runtime-format
 * trace (reference et-runtime-trace.md §1-§2): StartProfiling (version 3),
 * GetDevices and GetDeviceProperties (the fake's properties), then per call
 * the events the runtime records for it (MallocDevice, FreeDevice,
 * LoadCode, Memcpy* with their DMA command, KernelLaunch with its
 * CommandSent, the ResponseReceived carrying simulated device cycles when
 * the work runs at the wait, DispatchEvent, WaitForStream) and
 * EndProfiling. Each event is one line, not cereal's pretty-printing, and
 * internal traffic (code-segment copies, CMA copies, MemoryStats) is left
 * out. Like the real one, the file is written as the events happen and
 * closed only by et_profiler_stop: a crash leaves it truncated.
 *
 * It is compiled into the Go package only with -tags etrtfake (through
 * ../fakeshim.c). Not thread-safe: the Go side serialises calls.
 */
#include "etshim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  F_HANG_OPEN = 1 << 0,
  F_OPEN_FAIL = 1 << 1,
  F_HANG_WAIT = 1 << 2,
  F_STREAM_ERROR = 1 << 3,
  F_LOAD_FAIL = 1 << 4,
  F_CRASH = 1 << 5,
};

static const struct {
  const char *name;
  int bit;
} fault_names[] = {
    {"hang_open", F_HANG_OPEN}, {"open_fail", F_OPEN_FAIL},
    {"hang_wait", F_HANG_WAIT}, {"stream_error", F_STREAM_ERROR},
    {"load_fail", F_LOAD_FAIL}, {"crash", F_CRASH},
};

static int faults;
static int faults_set; /* et_fake_set_faults was called: ignore the env */

/* The fake's properties (DeviceLayerFake: reference §2.1). */
#define FAKE_DRAM_BASE 0x8000ULL
#define FAKE_DRAM_BYTES (1ULL << 35)
#define FAKE_KERNEL_LAUNCH_EXCEPTION 1 /* DeviceErrorCode::KernelLaunchException */

typedef struct alloc {
  uint64_t base;
  size_t size;
  unsigned char *data;
  struct alloc *next;
} alloc;

enum { OP_H2D, OP_D2H, OP_LAUNCH };

typedef struct op {
  int kind;
  const void *src;
  void *dst;
  unsigned char *dev; /* device side, resolved at enqueue */
  size_t n;
  uint16_t api_id, cmd_id; /* the trace's EventIds (the launch's are equal) */
  size_t args_size;        /* a launch's argument bytes (its simulated time) */
  struct op *next;
} op;

typedef struct serr {
  et_stream_err e;
  et_hart_ctx ctxs[2];
} serr;

struct et_ctx {
  alloc *allocs;
  uint64_t next_addr;
  int next_stream;
  int next_kernel;
  op *head, *tail;
  serr *pending; /* errors produced by executed launches */
  int n_pending;
  serr *retrieved;
  int n_retrieved;
  /* The profiler: the open trace file, or NULL. */
  FILE *prof;
  uint64_t prof_events;      /* events written: the next "valueN" */
  int prof_extras;           /* extras written in the current event */
  int prof_named;            /* PT_* bits: threads already identified */
  uint16_t next_event;       /* the runtime's EventId counter */
  uint64_t dev_clock;        /* device cycle counter (Master Minion hpmcounter3) */
};

static struct {
  uint64_t count;
  int kernel;
  uint64_t shire_mask;
  int barrier, flush_l3;
  size_t args_size;
} launches;

static int fail(int code, char *err, size_t errlen, const char *fmt, const char *arg) {
  if (err && errlen > 0) {
    snprintf(err, errlen, fmt, arg ? arg : "");
  }
  return code;
}

static int parse_faults(const char *s, int *out) {
  int bits = 0;
  while (s && *s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (len > 0) {
      int found = 0;
      for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++) {
        if (strlen(fault_names[i].name) == len && strncmp(fault_names[i].name, s, len) == 0) {
          bits |= fault_names[i].bit;
          found = 1;
        }
      }
      if (!found) {
        return ET_ERR_ARG;
      }
    }
    s = end ? end + 1 : NULL;
  }
  *out = bits;
  return ET_OK;
}

int et_fake_set_faults(const char *s) {
  int bits;
  if (parse_faults(s, &bits) != ET_OK) {
    return ET_ERR_ARG;
  }
  faults = bits;
  faults_set = 1;
  return ET_OK;
}

int et_fake_launches(uint64_t *count, int *kernel, uint64_t *shire_mask, int *barrier,
                     int *flush_l3, size_t *args_size) {
  *count = launches.count;
  *kernel = launches.kernel;
  *shire_mask = launches.shire_mask;
  *barrier = launches.barrier;
  *flush_l3 = launches.flush_l3;
  *args_size = launches.args_size;
  return ET_OK;
}

static void hang(void) {
  for (;;) {
    sleep(1000);
  }
}

static void write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  if (dir && *dir) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
  } else {
    snprintf(path, sizeof path, "%s", name);
  }
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* ---- The profiler. ---- */

/* Thread ids (std::thread::id as printed: decimal strings). */
#define TH_MAIN "140000000000001"
#define TH_SENDER "140000000000002"
#define TH_RECEIVER "140000000000003"
#define TH_CALLBACK "140000000000004" /* the event manager's executor: unnamed */
enum { PT_SENDER = 1, PT_RECEIVER = 2 };

/* Variant indices of the extra values (et-runtime-trace.md §1.3). */
enum {
  X_U64 = 0,
  X_EVENT = 1,
  X_STREAM = 2,
  X_DEVICE = 3,
  X_KERNEL = 4,
  X_RSP_TYPE = 5,
  X_DURATION = 6,
  X_PROPS = 7,
  X_VERSION = 8,
  X_STRING = 10,
  X_BOOL = 11,
  X_U32 = 12,
};

/* ResponseType (rsp_type). */
enum { RSP_DMA_READ = 0, RSP_DMA_WRITE = 1, RSP_KERNEL = 2 };

/* Simulated device cycles of one command. */
#define CYC_WAIT 120
#define CYC_LAUNCH 20000
#define CYC_COPY 400

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* std::chrono::steady_clock */
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint16_t next_id(et_ctx *c) {
  c->next_event++; /* uint16: wraps at 65536, as the runtime's */
  if (c->next_event == 0) {
    c->next_event = 1;
  }
  return c->next_event;
}

static void ev_begin(et_ctx *c, const char *type, const char *cls, int64_t ts, const char *thread) {
  fprintf(c->prof, "%s\n    \"value%llu\": {\"type\": \"%s\", \"class\": \"%s\", "
                   "\"timeStamp\": {\"time_since_epoch\": {\"count\": %lld}}, "
                   "\"thread_id\": \"%s\", \"extra\": [",
          c->prof_events == 0 ? "{" : ",", (unsigned long long)c->prof_events, type, cls,
          (long long)ts, thread);
  c->prof_events++;
  c->prof_extras = 0;
}

static void ex_key(et_ctx *c, const char *key, int index) {
  fprintf(c->prof, "%s{\"key\": \"%s\", \"value\": {\"index\": %d, \"data\": ",
          c->prof_extras++ ? ", " : "", key, index);
}

/* ex_num writes an extra whose data is a plain number. */
static void ex_num(et_ctx *c, const char *key, int index, unsigned long long v) {
  ex_key(c, key, index);
  fprintf(c->prof, "%llu}}", v);
}

static void ex_dur(et_ctx *c, int64_t ns) {
  ex_key(c, "duration", X_DURATION);
  fprintf(c->prof, "{\"count\": %lld}}}", (long long)(ns < 0 ? 0 : ns));
}

static void ex_bool(et_ctx *c, const char *key, int v) {
  ex_key(c, key, X_BOOL);
  fprintf(c->prof, "%s}}", v ? "true" : "false");
}

static void ex_str(et_ctx *c, const char *key, const char *v) {
  ex_key(c, key, X_STRING);
  fprintf(c->prof, "\"%s\"}}", v); /* constant names: nothing to escape */
}

static void ev_end(et_ctx *c) { fputs("]}", c->prof); }

/* identify records IdentifyThread right after a named thread's first
 * event, as ProfilerImp does. */
static void identify(et_ctx *c, int bit, const char *thread, const char *name, int64_t ts) {
  if (c->prof_named & bit) {
    return;
  }
  c->prof_named |= bit;
  ev_begin(c, "Instant", "IdentifyThread", ts, thread);
  ex_str(c, "thread_name", name);
  ev_end(c);
}

static void ev_instant_id(et_ctx *c, const char *cls, const char *thread, int64_t ts, uint16_t id) {
  ev_begin(c, "Instant", cls, ts, thread);
  ex_num(c, "event", X_EVENT, id);
  ev_end(c);
}

static void ev_command_sent(et_ctx *c, int st, uint16_t id, uint16_t parent) {
  int64_t ts = now_ns();
  ev_begin(c, "Instant", "CommandSent", ts, TH_SENDER);
  ex_num(c, "parent_id", X_EVENT, parent);
  ex_num(c, "device_id", X_DEVICE, 0);
  ex_num(c, "stream", X_STREAM, (unsigned long long)st);
  ex_num(c, "event", X_EVENT, id);
  ev_end(c);
  identify(c, PT_SENDER, TH_SENDER, "Host Runtime Device 0 command sender", ts);
}

/* ev_response records a command's completion: the device cycles, then its
 * dispatch (and the parent's, for a copy). */
static void ev_response(et_ctx *c, const op *p, int rsp_type, uint64_t exec) {
  uint64_t start = c->dev_clock;
  c->dev_clock += CYC_WAIT + exec;
  int64_t ts = now_ns();
  ev_begin(c, "Instant", "ResponseReceived", ts, TH_RECEIVER);
  ex_num(c, "device_cmd_exec_dur", X_U64, exec);
  ex_num(c, "device_cmd_start_ts", X_U64, start);
  ex_num(c, "device_cmd_wait_dur", X_U64, CYC_WAIT);
  ex_num(c, "rsp_type", X_RSP_TYPE, (unsigned long long)rsp_type);
  ex_num(c, "event", X_EVENT, p->cmd_id);
  ev_end(c);
  identify(c, PT_RECEIVER, TH_RECEIVER, "Host Runtime Device 0 response receiver", ts);
  ev_instant_id(c, "DispatchEvent", TH_RECEIVER, now_ns(), p->cmd_id);
  if (p->api_id != p->cmd_id) {
    ev_instant_id(c, "DispatchEvent", TH_CALLBACK, now_ns(), p->api_id);
  }
}

static void ev_device_props(et_ctx *c) {
  ex_key(c, "device_properties", X_PROPS);
  /* The fake's properties (et_device_props), sizes in MB as the runtime
   * reports them (et-runtime-trace.md §1.5). */
  fprintf(c->prof,
          "{\"frequency\": 1000, \"available_shires\": 32, \"memory_bw\": 128000, "
          "\"memory_size\": %llu, \"l3_size\": 32, \"l2_shire_size\": 16, \"l2_scp_size\": 80, "
          "\"cache_line_size\": 64, \"l2_cache_banks\": 4, "
          "\"compute_minion_shire_mask\": 4294967295, \"spare_compute_minion_shire_id\": 32, "
          "\"device_arch_rev\": 0, \"form_factor\": 0, \"tdp\": 25}}}",
          (unsigned long long)FAKE_DRAM_BYTES);
}

static void prof_stop(et_ctx *c) {
  ev_begin(c, "Instant", "EndProfiling", now_ns(), TH_MAIN);
  ev_end(c);
  fputs("\n}", c->prof); /* cereal: no trailing newline */
}

int et_profiler_start(et_ctx *c, const char *path, char *err, size_t errlen) {
  if (!c || !path || !*path) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (c->prof) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: the profiler is already running%s", "");
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
    return fail(ET_ERR, err, errlen, "fake shim: profiler: cannot open %s", msg);
  }
  c->prof = f;
  c->prof_events = 0;
  c->prof_named = 0;
  int64_t t0 = now_ns();
  ev_begin(c, "Instant", "StartProfiling", t0, TH_MAIN);
  ex_num(c, "version", X_VERSION, 3);
  ev_end(c);
  /* ggml's registry init after start (et-runtime-trace.md §2.4). */
  ev_begin(c, "Complete", "GetDevices", now_ns(), TH_MAIN);
  ex_dur(c, 1000);
  ev_end(c);
  ev_begin(c, "Complete", "GetDeviceProperties", now_ns(), TH_MAIN);
  ex_dur(c, 2000);
  ev_device_props(c);
  ex_num(c, "device_id", X_DEVICE, 0);
  ev_end(c);
  return ET_OK;
}

int et_profiler_stop(et_ctx *c, char *err, size_t errlen) {
  if (!c) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (!c->prof) {
    return ET_OK;
  }
  prof_stop(c);
  int bad = ferror(c->prof);
  if (fclose(c->prof) != 0) {
    bad = 1;
  }
  c->prof = NULL;
  if (bad) {
    return fail(ET_ERR, err, errlen, "fake shim: profiler: %s", "writing the trace file failed");
  }
  return ET_OK;
}

int et_inactivity_hints(et_ctx *c, uint64_t *forwarded, uint64_t *dropped, char *err,
                        size_t errlen) {
  if (!c || !forwarded || !dropped) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  *forwarded = 0; /* no runtime, so no hints */
  *dropped = 0;
  return ET_OK;
}

static int open_common(et_ctx **out, char *err, size_t errlen) {
  if (!faults_set) {
    if (parse_faults(getenv("ETSHIM_FAKE_FAULT"), &faults) != ET_OK) {
      return fail(ET_ERR_ARG, err, errlen, "fake shim: bad ETSHIM_FAKE_FAULT %s",
                  getenv("ETSHIM_FAKE_FAULT"));
    }
  }
  memset(&launches, 0, sizeof launches);
  if (faults & F_HANG_OPEN) {
    hang();
  }
  if (faults & F_OPEN_FAIL) {
    return fail(ET_ERR, err, errlen, "%s", ""); /* like a sysemu FATAL */
  }
  et_ctx *c = calloc(1, sizeof *c);
  if (!c) {
    return fail(ET_ERR, err, errlen, "fake shim: out of memory%s", "");
  }
  c->next_addr = FAKE_DRAM_BASE;
  c->dev_clock = 1000000;
  *out = c;
  return ET_OK;
}

int et_open_sysemu(const et_sysemu_opts *o, et_ctx **out, char *err, size_t errlen) {
  if (!o || !out) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  /* The files the emulator writes (reference §3.6). */
  const char *log = o->log_file && *o->log_file ? o->log_file : "sysemu.log";
  int bits = faults;
  if (!faults_set) {
    parse_faults(getenv("ETSHIM_FAKE_FAULT"), &bits);
  }
  write_file(NULL, log,
             (bits & F_OPEN_FAIL)
                 ? "INFO fake sys_emu starting\nFATAL Error loading ELF \"fake\"\n"
                 : "INFO fake sys_emu starting\nINFO Loading ELF: \"fake\"\n");
  write_file(o->run_dir, "spio_uart0_tx.log",
             "MAIN:[txt]Configure NOC\nMAIN:[txt]MemShire Configure\n");
  write_file(o->run_dir, "pu_uart0_tx.log", "");
  return open_common(out, err, errlen);
}

int et_open_pcie(et_ctx **out, char *err, size_t errlen) {
  if (!out) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  return open_common(out, err, errlen);
}

void et_close(et_ctx *c) {
  if (!c) {
    return;
  }
  if (c->prof) {
    et_profiler_stop(c, NULL, 0);
  }
  for (alloc *a = c->allocs; a;) {
    alloc *next = a->next;
    free(a->data);
    free(a);
    a = next;
  }
  for (op *p = c->head; p;) {
    op *next = p->next;
    free(p);
    p = next;
  }
  free(c->pending);
  free(c->retrieved);
  free(c);
}

/* fake_devices is how many devices the runtime has: ETSHIM_FAKE_DEVICES
 * (1 to 64, default 1), as several cards behind one PCIe runtime. */
static int fake_devices(void) {
  const char *s = getenv("ETSHIM_FAKE_DEVICES");
  int n = s ? atoi(s) : 1;
  return n >= 1 && n <= 64 ? n : 1;
}

static int valid_dev(int dev) { return dev >= 0 && dev < fake_devices(); }

int et_device_count(et_ctx *c, int *n, char *err, size_t errlen) {
  if (!c || !n) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  *n = fake_devices();
  return ET_OK;
}

int et_device_props(et_ctx *c, int dev, et_props *p, char *err, size_t errlen) {
  if (!c || !p) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (!valid_dev(dev)) {
    return fail(ET_ERR_UNAVAILABLE, err, errlen, "fake shim: no device %s", "");
  }
  memset(p, 0, sizeof *p);
  p->frequency_mhz = 1000;
  p->available_shires = 32;
  p->memory_bandwidth_mbps = 128000;
  p->memory_bytes = FAKE_DRAM_BYTES;
  p->l3_bytes = 32ULL << 20;
  p->l2_bytes = 16ULL << 20;
  p->scratchpad_bytes = 80ULL << 20;
  p->cache_line_bytes = 64;
  p->l2_cache_banks = 4;
  p->compute_shire_mask = 0xFFFFFFFFu;
  p->spare_shire_id = 32;
  p->arch = 0;
  p->form_factor = 0;
  p->tdp_w = 25;
  p->dram_base = FAKE_DRAM_BASE;
  return ET_OK;
}

int et_stream_create(et_ctx *c, int dev, int *st, char *err, size_t errlen) {
  if (!c || !st) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (!valid_dev(dev)) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: no device%s", "");
  }
  *st = c->next_stream++;
  return ET_OK;
}

int et_stream_destroy(et_ctx *c, int st, char *err, size_t errlen) {
  (void)st;
  if (!c) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  return ET_OK;
}

static alloc *new_alloc(et_ctx *c, size_t n, uint32_t align) {
  if (align == 0) {
    align = 64;
  }
  if (align & (align - 1)) {
    return NULL;
  }
  uint64_t base = (c->next_addr + align - 1) & ~(uint64_t)(align - 1);
  if (n == 0 || base + n > FAKE_DRAM_BASE + FAKE_DRAM_BYTES) {
    return NULL;
  }
  alloc *a = calloc(1, sizeof *a);
  if (!a) {
    return NULL;
  }
  a->data = calloc(1, n);
  if (!a->data) {
    free(a);
    return NULL;
  }
  a->base = base;
  a->size = n;
  a->next = c->allocs;
  c->allocs = a;
  c->next_addr = base + n;
  return a;
}

/* find returns the host address of device range [d, d+n), or NULL. */
static unsigned char *find(et_ctx *c, uint64_t d, size_t n) {
  for (alloc *a = c->allocs; a; a = a->next) {
    if (d >= a->base && d - a->base <= a->size && n <= a->size - (d - a->base)) {
      return a->data + (d - a->base);
    }
  }
  return NULL;
}

int et_load_code(et_ctx *c, int st, const void *elf, size_t n, int64_t timeout_s, int *kernel,
                 uint64_t *load_addr, char *err, size_t errlen) {
  (void)timeout_s;
  int64_t t0 = now_ns();
  if (!c || !elf || !kernel || !load_addr) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (faults & F_LOAD_FAIL) {
    return fail(ET_ERR, err, errlen, "fake shim: loadCode: %s", "scripted load failure");
  }
  if (n < 4 || memcmp(elf, "\177ELF", 4) != 0) {
    return fail(ET_ERR, err, errlen, "fake shim: loadCode: %s", "not an ELF file");
  }
  alloc *a = new_alloc(c, n, 4096);
  if (!a) {
    return fail(ET_ERR, err, errlen, "fake shim: loadCode: %s", "out of device memory");
  }
  memcpy(a->data, elf, n);
  *kernel = c->next_kernel++;
  *load_addr = a->base;
  if (c->prof) {
    /* LoadCode, its dispatch, and the wait on it (ggml waits, as we do). */
    uint16_t id = next_id(c);
    int64_t t = now_ns();
    ev_begin(c, "Complete", "LoadCode", t0, TH_MAIN);
    ex_dur(c, t - t0);
    ex_num(c, "stream", X_STREAM, (unsigned long long)st);
    ex_num(c, "event", X_EVENT, id);
    ex_num(c, "load_address", X_U64, a->base);
    ex_num(c, "kernel_id", X_KERNEL, (unsigned long long)*kernel);
    ev_end(c);
    ev_instant_id(c, "DispatchEvent", TH_CALLBACK, now_ns(), id);
    ev_begin(c, "Complete", "WaitForEvent", t, TH_MAIN);
    ex_dur(c, now_ns() - t);
    ex_num(c, "event", X_EVENT, id);
    ev_end(c);
  }
  return ET_OK;
}

int et_unload_code(et_ctx *c, int kernel, char *err, size_t errlen) {
  if (!c || kernel < 0 || kernel >= c->next_kernel) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: unknown kernel%s", "");
  }
  return ET_OK;
}

int et_malloc(et_ctx *c, int dev, size_t n, uint32_t align, uint64_t *dptr, char *err,
              size_t errlen) {
  if (!c || !dptr || !valid_dev(dev)) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: bad argument%s", "");
  }
  int64_t t0 = now_ns();
  alloc *a = new_alloc(c, n, align);
  if (!a) {
    return fail(ET_ERR, err, errlen, "fake shim: mallocDevice: %s",
                "out of device memory or bad size/alignment");
  }
  *dptr = a->base;
  if (c->prof) {
    ev_begin(c, "Complete", "MallocDevice", t0, TH_MAIN);
    ex_dur(c, now_ns() - t0);
    ex_num(c, "device_id", X_DEVICE, 0);
    ex_num(c, "size", X_U64, n);
    ex_num(c, "alignment", X_U32, align ? align : 64);
    ex_num(c, "ptr", X_U64, a->base);
    ev_end(c);
  }
  return ET_OK;
}

int et_free(et_ctx *c, int dev, uint64_t dptr, char *err, size_t errlen) {
  if (!c || !valid_dev(dev)) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: bad argument%s", "");
  }
  for (alloc **pp = &c->allocs; *pp; pp = &(*pp)->next) {
    if ((*pp)->base == dptr) {
      int64_t t0 = now_ns();
      alloc *a = *pp;
      *pp = a->next;
      free(a->data);
      free(a);
      if (c->prof) {
        ev_begin(c, "Complete", "FreeDevice", t0, TH_MAIN);
        ex_dur(c, now_ns() - t0);
        ex_num(c, "device_id", X_DEVICE, 0);
        ex_num(c, "ptr", X_U64, dptr);
        ev_end(c);
      }
      return ET_OK;
    }
  }
  return fail(ET_ERR, err, errlen, "fake shim: freeDevice: %s", "not an allocation");
}

static op *enqueue(et_ctx *c, int kind, const void *src, void *dst, unsigned char *dev, size_t n) {
  op *p = calloc(1, sizeof *p);
  if (!p) {
    return NULL;
  }
  p->kind = kind;
  p->src = src;
  p->dst = dst;
  p->dev = dev;
  p->n = n;
  if (c->tail) {
    c->tail->next = p;
  } else {
    c->head = p;
  }
  c->tail = p;
  return p;
}

/* ev_memcpy records a copy's API event and its one DMA command. */
static void ev_memcpy(et_ctx *c, op *p, const char *cls, int st, uint64_t src, uint64_t dst,
                      int barrier, int64_t t0) {
  p->api_id = next_id(c);
  p->cmd_id = next_id(c);
  ev_command_sent(c, st, p->cmd_id, p->api_id);
  ev_begin(c, "Complete", cls, t0, TH_MAIN);
  ex_dur(c, now_ns() - t0);
  ex_num(c, "size", X_U64, p->n);
  ex_num(c, "event", X_EVENT, p->api_id);
  ex_num(c, "dst_ptr", X_U64, dst);
  ex_bool(c, "barrier", barrier);
  ex_num(c, "src_ptr", X_U64, src);
  ex_num(c, "stream", X_STREAM, (unsigned long long)st);
  ev_end(c);
}

int et_memcpy_h2d(et_ctx *c, int st, const void *h, uint64_t d, size_t n, int barrier, char *err,
                  size_t errlen) {
  int64_t t0 = now_ns();
  if (!c || !h) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  unsigned char *dev = find(c, d, n);
  if (!dev) {
    return fail(ET_ERR, err, errlen, "fake shim: memcpyHostToDevice: %s",
                "destination is not inside one allocation");
  }
  op *p = enqueue(c, OP_H2D, h, NULL, dev, n);
  if (!p) {
    return fail(ET_ERR, err, errlen, "fake shim: out of memory%s", "");
  }
  if (c->prof) {
    ev_memcpy(c, p, "MemcpyHostToDevice", st, (uint64_t)(uintptr_t)h, d, barrier, t0);
  }
  return ET_OK;
}

int et_memcpy_d2h(et_ctx *c, int st, uint64_t d, void *h, size_t n, int barrier, char *err,
                  size_t errlen) {
  int64_t t0 = now_ns();
  if (!c || !h) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  unsigned char *dev = find(c, d, n);
  if (!dev) {
    return fail(ET_ERR, err, errlen, "fake shim: memcpyDeviceToHost: %s",
                "source is not inside one allocation");
  }
  op *p = enqueue(c, OP_D2H, NULL, h, dev, n);
  if (!p) {
    return fail(ET_ERR, err, errlen, "fake shim: out of memory%s", "");
  }
  if (c->prof) {
    ev_memcpy(c, p, "MemcpyDeviceToHost", st, d, (uint64_t)(uintptr_t)h, barrier, t0);
  }
  return ET_OK;
}

int et_launch(et_ctx *c, int st, int kernel, const void *args, size_t n, uint64_t shire_mask,
              int barrier, int flush_l3, char *err, size_t errlen) {
  int64_t t0 = now_ns();
  if (!c || (n > 0 && !args)) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (kernel < 0 || kernel >= c->next_kernel) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: kernelLaunch: %s", "unknown kernel");
  }
  if (faults & F_CRASH) {
    fprintf(stderr, "fake shim: scripted crash in kernelLaunch\n");
    abort();
  }
  if (shire_mask == 0) {
    shire_mask = 0xFFFFFFFFu;
  }
  if ((shire_mask & 0xFFFFFFFFu) == 0) {
    return fail(ET_ERR, err, errlen, "fake shim: kernelLaunch: %s", "shire mask has no compute shire");
  }
  launches.count++;
  launches.kernel = kernel;
  launches.shire_mask = shire_mask;
  launches.barrier = barrier;
  launches.flush_l3 = flush_l3;
  launches.args_size = n;
  op *p = enqueue(c, OP_LAUNCH, NULL, NULL, NULL, 0);
  if (!p) {
    return fail(ET_ERR, err, errlen, "fake shim: out of memory%s", "");
  }
  p->args_size = n;
  if (c->prof) {
    /* One id for the launch and its command; KernelLaunch is recorded when
     * the API returns, after the CommandSent (et-runtime-trace.md §2.2). */
    p->api_id = p->cmd_id = next_id(c);
    ev_command_sent(c, st, p->cmd_id, p->api_id);
    ev_begin(c, "Complete", "KernelLaunch", t0, TH_MAIN);
    ex_dur(c, now_ns() - t0);
    ex_num(c, "event", X_EVENT, p->api_id);
    ex_num(c, "load_address", X_U64, UINT64_MAX);
    ex_num(c, "kernel_id", X_KERNEL, (unsigned long long)kernel);
    ex_num(c, "stream", X_STREAM, (unsigned long long)st);
    ev_end(c);
  }
  return ET_OK;
}

static void add_launch_error(et_ctx *c) {
  serr *p = realloc(c->pending, (size_t)(c->n_pending + 1) * sizeof *p);
  if (!p) {
    return;
  }
  c->pending = p;
  serr *e = &p[c->n_pending++];
  memset(e, 0, sizeof *e);
  e->e.code = FAKE_KERNEL_LAUNCH_EXCEPTION;
  e->e.device = 0;
  e->e.has_shire_mask = 1;
  e->e.cm_shire_mask = 0x1;
  e->e.n_contexts = 2;
  /* Hart 0: a load access fault; hart 1: a store page fault. */
  e->ctxs[0] = (et_hart_ctx){.type = 1, .cycle = 1000, .hart_id = 0, .mepc = 0x8005b39010,
                             .mstatus = 0, .mtval = 0xdead0000, .mcause = 5, .user_error = 0};
  e->ctxs[1] = (et_hart_ctx){.type = 1, .cycle = 1001, .hart_id = 1, .mepc = 0x8005b39020,
                             .mstatus = 0, .mtval = 0xdead0040, .mcause = 15, .user_error = 0};
}

int et_wait_stream(et_ctx *c, int st, int64_t timeout_s, char *err, size_t errlen) {
  (void)timeout_s;
  int64_t t0 = now_ns();
  if (!c) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if ((faults & F_HANG_WAIT) && c->head) {
    hang();
  }
  for (op *p = c->head; p;) {
    switch (p->kind) {
    case OP_H2D:
      memcpy(p->dev, p->src, p->n);
      if (c->prof) {
        ev_response(c, p, RSP_DMA_WRITE, CYC_COPY + p->n / 64);
      }
      break;
    case OP_D2H:
      memcpy(p->dst, p->dev, p->n);
      if (c->prof) {
        ev_response(c, p, RSP_DMA_READ, CYC_COPY + p->n / 64);
      }
      break;
    case OP_LAUNCH:
      if (faults & F_STREAM_ERROR) {
        add_launch_error(c);
      }
      if (c->prof) {
        ev_response(c, p, RSP_KERNEL, CYC_LAUNCH + p->args_size);
      }
      break;
    }
    op *next = p->next;
    free(p);
    p = next;
  }
  c->head = c->tail = NULL;
  if (c->prof) {
    ev_begin(c, "Complete", "WaitForStream", t0, TH_MAIN);
    ex_dur(c, now_ns() - t0);
    ex_num(c, "stream", X_STREAM, (unsigned long long)st);
    ev_end(c);
  }
  return ET_OK;
}

int et_stream_errors(et_ctx *c, int st, int *count, char *err, size_t errlen) {
  (void)st;
  if (!c || !count) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  free(c->retrieved);
  c->retrieved = c->pending;
  c->n_retrieved = c->n_pending;
  c->pending = NULL;
  c->n_pending = 0;
  *count = c->n_retrieved;
  return ET_OK;
}

int et_stream_error(et_ctx *c, int i, et_stream_err *out, et_hart_ctx *ctxs, int max_ctxs,
                    char *err, size_t errlen) {
  if (!c || !out || i < 0 || i >= c->n_retrieved) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: no such stream error%s", "");
  }
  serr *e = &c->retrieved[i];
  *out = e->e;
  for (int k = 0; k < e->e.n_contexts && k < max_ctxs; k++) {
    ctxs[k] = e->ctxs[k];
  }
  return ET_OK;
}
