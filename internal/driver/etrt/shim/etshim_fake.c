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
 * It is compiled into the Go package only with -tags etrtfake (through
 * ../fakeshim.c). Not thread-safe: the Go side serialises calls.
 */
#include "etshim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int et_device_count(et_ctx *c, int *n, char *err, size_t errlen) {
  if (!c || !n) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  *n = 1;
  return ET_OK;
}

int et_device_props(et_ctx *c, int dev, et_props *p, char *err, size_t errlen) {
  if (!c || !p) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  if (dev != 0) {
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
  if (dev != 0) {
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
  (void)st;
  (void)timeout_s;
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
  if (!c || !dptr || dev != 0) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: bad argument%s", "");
  }
  alloc *a = new_alloc(c, n, align);
  if (!a) {
    return fail(ET_ERR, err, errlen, "fake shim: mallocDevice: %s",
                "out of device memory or bad size/alignment");
  }
  *dptr = a->base;
  return ET_OK;
}

int et_free(et_ctx *c, int dev, uint64_t dptr, char *err, size_t errlen) {
  if (!c || dev != 0) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: bad argument%s", "");
  }
  for (alloc **pp = &c->allocs; *pp; pp = &(*pp)->next) {
    if ((*pp)->base == dptr) {
      alloc *a = *pp;
      *pp = a->next;
      free(a->data);
      free(a);
      return ET_OK;
    }
  }
  return fail(ET_ERR, err, errlen, "fake shim: freeDevice: %s", "not an allocation");
}

static int enqueue(et_ctx *c, int kind, const void *src, void *dst, unsigned char *dev, size_t n) {
  op *p = calloc(1, sizeof *p);
  if (!p) {
    return ET_ERR;
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
  return ET_OK;
}

int et_memcpy_h2d(et_ctx *c, int st, const void *h, uint64_t d, size_t n, int barrier, char *err,
                  size_t errlen) {
  (void)st;
  (void)barrier;
  if (!c || !h) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  unsigned char *dev = find(c, d, n);
  if (!dev) {
    return fail(ET_ERR, err, errlen, "fake shim: memcpyHostToDevice: %s",
                "destination is not inside one allocation");
  }
  return enqueue(c, OP_H2D, h, NULL, dev, n);
}

int et_memcpy_d2h(et_ctx *c, int st, uint64_t d, void *h, size_t n, int barrier, char *err,
                  size_t errlen) {
  (void)st;
  (void)barrier;
  if (!c || !h) {
    return fail(ET_ERR_ARG, err, errlen, "fake shim: NULL argument%s", "");
  }
  unsigned char *dev = find(c, d, n);
  if (!dev) {
    return fail(ET_ERR, err, errlen, "fake shim: memcpyDeviceToHost: %s",
                "source is not inside one allocation");
  }
  return enqueue(c, OP_D2H, NULL, h, dev, n);
}

int et_launch(et_ctx *c, int st, int kernel, const void *args, size_t n, uint64_t shire_mask,
              int barrier, int flush_l3, char *err, size_t errlen) {
  (void)st;
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
  return enqueue(c, OP_LAUNCH, NULL, NULL, NULL, 0);
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
  (void)st;
  (void)timeout_s;
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
      break;
    case OP_D2H:
      memcpy(p->dst, p->dev, p->n);
      break;
    case OP_LAUNCH:
      if (faults & F_STREAM_ERROR) {
        add_launch_error(c);
      }
      break;
    }
    op *next = p->next;
    free(p);
    p = next;
  }
  c->head = c->tail = NULL;
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
