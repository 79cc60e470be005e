/*
 * etshim.h - the C ABI between et (Go, cgo) and the ET runtime (C++).
 *
 * Two implementations share this header:
 *   etshim.cpp       the real one, over rt::IRuntime and dev::IDeviceLayer
 *                    (C++17, needs an ET install; see docs/etrt.md);
 *   etshim_fake.c    an in-memory fake with scripted faults, for CI.
 *
 * Conventions:
 *   - every function that can fail returns an ET_* status code and, when it
 *     is not ET_OK, writes a NUL-terminated message into err[0..errlen);
 *     err may be NULL. The message may be empty: sys_emu's FATAL errors
 *     reach the host with an empty text (the details are in sysemu.log);
 *   - no function throws; the real shim catches every exception;
 *   - handles (device, stream, kernel) are the runtime's integer ids;
 *     device addresses are uint64_t;
 *   - host buffers given to et_memcpy_h2d / et_memcpy_d2h are used
 *     asynchronously: they must stay valid until et_wait_stream returns.
 */
#ifndef ETSHIM_H
#define ETSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
#define ET_OK 0
#define ET_ERR 1             /* the runtime or device layer threw */
#define ET_ERR_TIMEOUT 2     /* a wait returned before the work finished */
#define ET_ERR_ARG 3         /* a bad argument (unknown id, NULL pointer) */
#define ET_ERR_UNAVAILABLE 4 /* no such device, or it cannot be opened */

typedef struct et_ctx et_ctx; /* owns the device layer and the runtime */

/* Options for the in-process emulator (emu::SysEmuOptions). Strings may be
 * NULL, meaning "". */
typedef struct et_sysemu_opts {
  const char *bootrom_elf;        /* bootromTrampolineToBL2ElfPath */
  const char *bl2_elf;            /* spBL2ElfPath */
  const char *machine_minion_elf; /* machineMinionElfPath */
  const char *master_minion_elf;  /* masterMinionElfPath */
  const char *worker_minion_elf;  /* workerMinionElfPath */
  const char *executable_path;    /* executablePath (unused by the library) */
  const char *run_dir;            /* runDir: UART logs land here */
  const char *log_file;           /* logFile: sysemu.log (relative to the CWD!) */
  uint64_t max_cycles;            /* maxCycles; 0 means UINT64_MAX */
  uint64_t shire_mask;            /* minionShiresMask; 0 means 0x1FFFFFFFF */
  int memcheck;                   /* the coherency checker (keep it off) */
  int l1_scp_check, l2_scp_check, flb_check, tstore_check;
  const char *const *extra_opts; /* additionalOptions */
  int n_extra_opts;
} et_sysemu_opts;

/* A flat copy of rt::DeviceProperties (sizes converted to bytes). */
typedef struct et_props {
  uint32_t frequency_mhz;
  uint32_t available_shires;
  uint32_t memory_bandwidth_mbps;
  uint64_t memory_bytes; /* host-managed DRAM */
  uint64_t l3_bytes, l2_bytes, scratchpad_bytes;
  uint32_t cache_line_bytes;
  uint32_t l2_cache_banks;
  uint32_t compute_shire_mask;
  uint32_t spare_shire_id;
  int32_t arch;        /* 0 etsoc1, 1 pantero, 2 gepardo, -1 unknown */
  int32_t form_factor; /* 0 pcie, 1 m2 */
  uint32_t tdp_w;
  uint64_t dram_base; /* localDRAMBaseAddress_ */
} et_props;

/* One hart's rt::ErrorContext, without the GPRs. */
typedef struct et_hart_ctx {
  uint64_t type; /* 0 hang, 1 U-mode exception, 2 system abort, 3 self abort,
                    4 kernel execution error, 5 tensor error, 6 bus error */
  uint64_t cycle;
  uint64_t hart_id;
  uint64_t mepc;
  uint64_t mstatus;
  uint64_t mtval;
  uint64_t mcause;
  int64_t user_error;
} et_hart_ctx;

/* One rt::StreamError. */
typedef struct et_stream_err {
  int32_t code;        /* the rt::DeviceErrorCode value */
  char code_name[96];  /* std::to_string(code), or "" (the fake) */
  int32_t device;
  int32_t has_shire_mask;
  uint64_t cm_shire_mask;
  int32_t n_contexts; /* how many error contexts the error carries */
} et_stream_err;

/* Opening and closing. */
int et_open_sysemu(const et_sysemu_opts *o, et_ctx **out, char *err, size_t errlen);
int et_open_pcie(et_ctx **out, char *err, size_t errlen);
void et_close(et_ctx *c);

/* Devices. */
int et_device_count(et_ctx *c, int *n, char *err, size_t errlen);
int et_device_props(et_ctx *c, int dev, et_props *out, char *err, size_t errlen);

/* Streams. */
int et_stream_create(et_ctx *c, int dev, int *st, char *err, size_t errlen);
int et_stream_destroy(et_ctx *c, int st, char *err, size_t errlen);

/* Code: loads an ELF and waits (at most timeout_s seconds) for the load to
 * finish, so the ELF bytes may be freed when it returns. */
int et_load_code(et_ctx *c, int st, const void *elf, size_t n, int64_t timeout_s,
                 int *kernel, uint64_t *load_addr, char *err, size_t errlen);
int et_unload_code(et_ctx *c, int kernel, char *err, size_t errlen);

/* Device memory. align 0 means the cache line (64). */
int et_malloc(et_ctx *c, int dev, size_t n, uint32_t align, uint64_t *dptr,
              char *err, size_t errlen);
int et_free(et_ctx *c, int dev, uint64_t dptr, char *err, size_t errlen);

/* Asynchronous copies: h must stay valid until et_wait_stream returns. */
int et_memcpy_h2d(et_ctx *c, int st, const void *h, uint64_t d, size_t n,
                  int barrier, char *err, size_t errlen);
int et_memcpy_d2h(et_ctx *c, int st, uint64_t d, void *h, size_t n,
                  int barrier, char *err, size_t errlen);

/* Launch. shire_mask 0 means the device's compute shire mask. */
int et_launch(et_ctx *c, int st, int kernel, const void *args, size_t n,
              uint64_t shire_mask, int barrier, int flush_l3, char *err,
              size_t errlen);

/* Waits for all work on the stream: ET_OK, or ET_ERR_TIMEOUT after
 * timeout_s seconds (at least 1). */
int et_wait_stream(et_ctx *c, int st, int64_t timeout_s, char *err, size_t errlen);

/* Stream errors: et_stream_errors moves the stream's errors into the
 * context (rt::IRuntime::retrieveStreamErrors) and sets *count; then
 * et_stream_error copies error i and up to max_ctxs of its contexts. */
int et_stream_errors(et_ctx *c, int st, int *count, char *err, size_t errlen);
int et_stream_error(et_ctx *c, int i, et_stream_err *out, et_hart_ctx *ctxs,
                    int max_ctxs, char *err, size_t errlen);

/* The runtime's own profiler (rt::IRuntime::getProfiler, reference
 * et-runtime-trace.md §1-§2), as ggml-et starts it with GGML_ET_PROFILE:
 * et_profiler_start opens path for writing (truncating it) and starts the
 * profiler with JSON output into it, then queries the devices and their
 * properties so that the trace carries GetDevices and GetDeviceProperties
 * (the device frequency), as ggml's registry init does after start.
 * et_profiler_stop waits for nothing: call it after et_wait_stream, so the
 * responses are in the trace. It records EndProfiling, lets the profiler
 * write and close the root JSON object, then closes the file; without a
 * running profiler it does nothing. Starting a running profiler is
 * ET_ERR_ARG; a file that cannot be opened is ET_ERR. et_close stops a
 * running profiler first, so the file is complete. */
int et_profiler_start(et_ctx *c, const char *path, char *err, size_t errlen);
int et_profiler_stop(et_ctx *c, char *err, size_t errlen);

/* The runtime calls the device layer's hintInactivity whenever no event is
 * in flight, which parks sys_emu; the real shim hands the runtime a
 * forwarding device layer that drops those hints while et is inside a
 * shim call or made one less than 100 ms ago (docs/etrt.md, "No idle
 * stalls"). et_inactivity_hints reports how many hints it passed on to the
 * device layer and how many it dropped since the open. The fake has no
 * runtime and reports 0 and 0. */
int et_inactivity_hints(et_ctx *c, uint64_t *forwarded, uint64_t *dropped, char *err,
                        size_t errlen);

/* The fake only: scripted faults, a comma-separated list (the
 * ETSHIM_FAKE_FAULT environment variable is read at open):
 *   hang_open     et_open_* never returns (sys_emu waiting for iATU 3)
 *   open_fail     et_open_* fails with an empty message (a FATAL)
 *   hang_wait     et_wait_stream never returns
 *   stream_error  each launch leaves a KernelLaunchException stream error
 *                 with two hart contexts
 *   load_fail     et_load_code fails
 *   crash         et_launch calls abort() (the worker dies)
 * Returns ET_ERR_ARG for an unknown fault name. The ETSHIM_FAKE_DEVICES
 * environment variable (1 to 64, default 1) is how many devices
 * et_device_count reports: several cards behind one runtime. */
int et_fake_set_faults(const char *faults);
/* The fake only: how many kernels were launched since the last open, and
 * the last launch's parameters. */
int et_fake_launches(uint64_t *count, int *kernel, uint64_t *shire_mask,
                     int *barrier, int *flush_l3, size_t *args_size);

#ifdef __cplusplus
}
#endif

#endif /* ETSHIM_H */
