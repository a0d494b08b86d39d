/* A fake libnvidia-ml.so for tests, loaded by the agent through its real dlopen path. It
 * exports the entry points the agent resolves, under the versioned names nvml.h maps to,
 * with the real struct layouts (src/agent/nvml_api.h), and answers from the file named in
 * FAKE_NVML_CONFIG, re-read on every call, one directive a line (I: a GPU index):
 *   count N                              number of GPUs (default 0)
 *   mem I USED TOTAL                     memory of GPU I in bytes
 *   temp I C [SLOWDOWN]                  temperature and slowdown threshold (default 65, 87)
 *   power I MILLIWATTS | util I PCT      (defaults 300000, 87)
 *   clocks I SM_MHZ MEM_MHZ              (defaults 1980, 2619)
 *   reasons I BITS                       clock event reasons, decimal or 0x hex (default 0)
 *   ecc I N                              volatile uncorrected ECC errors (default 0)
 *   remap I CORR UNC PENDING FAILURE     remapped rows (default 0 0 0 0)
 *   retired I SBE DBE PENDING            retired pages (default 0 0 0)
 *   pcie I REPLAYS GEN MAXGEN WIDTH MAXWIDTH   (default 0 5 5 16 16)
 *   recovery I ACTION                    GPU recovery action, field 230 (default 0: none)
 *   nvlinks I N                          GPU I has N NVLinks (default 0: not supported)
 *   nvlink I LINK UP REPLAY RECOVERY CRC_FLIT CRC_DATA   one link's state and counters
 *   proc I PID BYTES                     a compute process on GPU I (BYTES -1: not available)
 *   xid I CODE                           an XID event on GPU I (each line is delivered once)
 *   hang FUNCTION                        FUNCTION blocks until the line is removed
 *   unsupported FUNCTION                 FUNCTION answers NVML_ERROR_NOT_SUPPORTED
 *   lost I                               GPU I answers NVML_ERROR_GPU_IS_LOST
 * The UUID of GPU I is GPU-00000000-fake-0000-0000-00000000000I, its bus id
 * 00000000:I+0x10:00.0 (GPU 0 at 00000000:10:00.0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
  void* device;
  unsigned long long event_type, event_data;
  unsigned int gpu_instance_id, compute_instance_id;
} nvmlEventData_t;
typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    unsigned int uiVal;
    unsigned long long ullVal;
  } value;
} nvmlFieldValue_t;

enum {
  OK = 0,
  INVALID_ARGUMENT = 2,
  NOT_SUPPORTED = 3,
  INSUFFICIENT_SIZE = 7,
  TIMEOUT = 10,
  GPU_IS_LOST = 15
};

#define MAX_GPUS 16
#define MAX_LINKS 36
#define MAX_PROCS 8
static char devices[MAX_GPUS];
static int xids_delivered;
static int event_set;

struct link {
  unsigned up;
  unsigned long long replay, recovery, crc_flit, crc_data;
};
struct gpu {
  unsigned long long used, total, reasons, ecc, procs_bytes[MAX_PROCS];
  unsigned temp, slowdown, power, util, sm_clock, mem_clock;
  unsigned remap[4], retired[3], pcie[5], recovery, links, procs, proc_pid[MAX_PROCS];
  struct link link[MAX_LINKS];
  int lost, procs_na[MAX_PROCS];
};
struct config {
  unsigned count;
  struct gpu gpu[MAX_GPUS];
  int xid_gpu[64], xid_code[64], xids;
  char hang[16][64], unsupported[16][64];
  int hangs, unsupporteds;
};

static void defaults(struct config* c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < MAX_GPUS; ++i) {
    struct gpu* g = &c->gpu[i];
    g->temp = 65, g->slowdown = 87, g->power = 300000, g->util = 87, g->sm_clock = 1980, g->mem_clock = 2619;
    g->pcie[1] = g->pcie[2] = 5;
    g->pcie[3] = g->pcie[4] = 16;
  }
}

/* One directive about GPU `i`; returns 0 when the line is no such directive. */
static int read_gpu_line(const char* line, struct config* c) {
  unsigned i, a, b, d, e, f;
  unsigned long long x, y;
  long long bytes;
  char word[32];
  if (sscanf(line, "%31s %u", word, &i) != 2 || i >= MAX_GPUS) return 0;
  struct gpu* g = &c->gpu[i];
  if (sscanf(line, "mem %u %llu %llu", &i, &x, &y) == 3)
    g->used = x, g->total = y;
  else if (sscanf(line, "temp %u %u %u", &i, &a, &b) >= 2) {
    g->temp = a;
    if (sscanf(line, "temp %u %u %u", &i, &a, &b) == 3) g->slowdown = b;
  } else if (sscanf(line, "power %u %u", &i, &a) == 2)
    g->power = a;
  else if (sscanf(line, "util %u %u", &i, &a) == 2)
    g->util = a;
  else if (sscanf(line, "clocks %u %u %u", &i, &a, &b) == 3)
    g->sm_clock = a, g->mem_clock = b;
  else if (sscanf(line, "reasons %u %lli", &i, (long long*)&x) == 2)
    g->reasons = x;
  else if (sscanf(line, "ecc %u %llu", &i, &x) == 2)
    g->ecc = x;
  else if (sscanf(line, "remap %u %u %u %u %u", &i, &a, &b, &d, &e) == 5)
    g->remap[0] = a, g->remap[1] = b, g->remap[2] = d, g->remap[3] = e;
  else if (sscanf(line, "retired %u %u %u %u", &i, &a, &b, &d) == 4)
    g->retired[0] = a, g->retired[1] = b, g->retired[2] = d;
  else if (sscanf(line, "pcie %u %u %u %u %u %u", &i, &a, &b, &d, &e, &f) == 6)
    g->pcie[0] = a, g->pcie[1] = b, g->pcie[2] = d, g->pcie[3] = e, g->pcie[4] = f;
  else if (sscanf(line, "recovery %u %u", &i, &a) == 2)
    g->recovery = a;
  else if (sscanf(line, "nvlinks %u %u", &i, &a) == 2)
    g->links = a < MAX_LINKS ? a : MAX_LINKS;
  else if (sscanf(line, "nvlink %u %u %u %llu %llu", &i, &a, &b, &x, &y) >= 3 && a < MAX_LINKS) {
    unsigned long long r[4] = {0, 0, 0, 0};
    sscanf(line, "nvlink %u %u %u %llu %llu %llu %llu", &i, &a, &b, &r[0], &r[1], &r[2], &r[3]);
    g->link[a] = (struct link){b, r[0], r[1], r[2], r[3]};
  } else if (sscanf(line, "proc %u %u %lld", &i, &a, &bytes) == 3 && g->procs < MAX_PROCS) {
    g->proc_pid[g->procs] = a;
    g->procs_na[g->procs] = bytes < 0;
    g->procs_bytes[g->procs++] = bytes < 0 ? 0 : (unsigned long long)bytes;
  } else if (sscanf(line, "lost %u", &i) == 1 && strncmp(line, "lost", 4) == 0)
    g->lost = 1;
  else
    return 0;
  return 1;
}

static void read_config(struct config* c) {
  defaults(c);
  const char* path = getenv("FAKE_NVML_CONFIG");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[256], word[64];
  while (fgets(line, sizeof line, f)) {
    unsigned i;
    int code;
    if (sscanf(line, "count %u", &c->count) == 1) continue;
    if (sscanf(line, "xid %u %d", &i, &code) == 2 && c->xids < 64) {
      c->xid_gpu[c->xids] = (int)i;
      c->xid_code[c->xids++] = code;
    } else if (sscanf(line, "hang %63s", word) == 1 && c->hangs < 16) {
      strcpy(c->hang[c->hangs++], word);
    } else if (sscanf(line, "unsupported %63s", word) == 1 && c->unsupporteds < 16) {
      strcpy(c->unsupported[c->unsupporteds++], word);
    } else {
      read_gpu_line(line, c);
    }
  }
  fclose(f);
}

static void maybe_hang(const char* fn) {
  for (;;) {
    struct config c;
    read_config(&c);
    int hang = 0;
    for (int i = 0; i < c.hangs; ++i) hang |= strcmp(c.hang[i], fn) == 0;
    if (!hang) return;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* The configuration for a call of `fn` on `dev` (hanging first when told to); the call's
 * answer when it must not go on (unsupported, lost), else OK with *g set. */
static struct config current;
static nvmlReturn_t enter(const char* fn, void* dev, struct gpu** g) {
  maybe_hang(fn);
  read_config(&current);
  for (int i = 0; i < current.unsupporteds; ++i)
    if (strcmp(current.unsupported[i], fn) == 0) return NOT_SUPPORTED;
  if (!dev) return OK;
  int i = (int)((char*)dev - devices);
  if (i < 0 || i >= MAX_GPUS) return INVALID_ARGUMENT;
  *g = &current.gpu[i];
  return (*g)->lost ? GPU_IS_LOST : OK;
}
#define ENTER(dev)                               \
  struct gpu* g = NULL;                          \
  nvmlReturn_t rc_ = enter(__func__, (dev), &g); \
  if (rc_ != OK) return rc_;                     \
  (void)g

nvmlReturn_t nvmlInit_v2(void) {
  maybe_hang("nvmlInit_v2");
  return OK;
}
nvmlReturn_t nvmlShutdown(void) { return OK; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  ENTER(NULL);
  *n = current.count;
  return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  ENTER(NULL);
  if (i >= current.count || i >= MAX_GPUS) return INVALID_ARGUMENT;
  *dev = &devices[i];
  return OK;
}
nvmlReturn_t nvmlDeviceGetName(void* dev, char* name, unsigned len) {
  ENTER(NULL);
  snprintf(name, len, "Fake GPU %d", (int)((char*)dev - devices));
  return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(void* dev, char* uuid, unsigned len) {
  ENTER(NULL);
  snprintf(uuid, len, "GPU-00000000-fake-0000-0000-%012d", (int)((char*)dev - devices));
  return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(void* dev, nvmlPciInfo_t* pci) {
  ENTER(NULL);
  int i = (int)((char*)dev - devices);
  memset(pci, 0, sizeof *pci);
  pci->bus = (unsigned)(0x10 + i);
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  return OK;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(void* dev, nvmlMemory_t* m) {
  ENTER(dev);
  m->used = g->used;
  m->total = g->total;
  m->free = g->total - g->used;
  return OK;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(void* dev, nvmlUtilization_t* u) {
  ENTER(dev);
  u->gpu = g->util;
  u->memory = 40;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(void* dev, int sensor, unsigned* t) {
  ENTER(dev);
  if (sensor != 0) return INVALID_ARGUMENT;
  *t = g->temp;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(void* dev, int which, unsigned* t) {
  ENTER(dev);
  if (which != 1) return NOT_SUPPORTED; /* only NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */
  *t = g->slowdown;
  return OK;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  ENTER(dev);
  *mw = g->power;
  return OK;
}
nvmlReturn_t nvmlDeviceGetClockInfo(void* dev, int type, unsigned* mhz) {
  ENTER(dev);
  if (type == 1)
    *mhz = g->sm_clock;
  else if (type == 2)
    *mhz = g->mem_clock;
  else
    return INVALID_ARGUMENT;
  return OK;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* bits) {
  ENTER(dev);
  *bits = g->reasons;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(void* dev, int type, int counter, unsigned long long* n) {
  ENTER(dev);
  if (type != 1 || counter != 0) return INVALID_ARGUMENT;
  *n = g->ecc;
  return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(void* dev, unsigned* corr, unsigned* unc, unsigned* pending,
                                       unsigned* fail) {
  ENTER(dev);
  *corr = g->remap[0], *unc = g->remap[1], *pending = g->remap[2], *fail = g->remap[3];
  return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPages(void* dev, int cause, unsigned* count, unsigned long long* addresses) {
  ENTER(dev);
  if (cause < 0 || cause > 1 || !count) return INVALID_ARGUMENT;
  unsigned have = g->retired[cause], room = *count;
  for (unsigned k = 0; k < have && k < room; ++k) addresses[k] = 0x1000ull * (k + 1);
  *count = have;
  return have > room ? INSUFFICIENT_SIZE : OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(void* dev, int* pending) {
  ENTER(dev);
  *pending = g->retired[2] != 0;
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  ENTER(dev);
  if (g->links == 0) return NOT_SUPPORTED;
  if (link >= g->links) return INVALID_ARGUMENT;
  *active = (int)g->link[link].up;
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(void* dev, unsigned link, int counter, unsigned long long* v) {
  ENTER(dev);
  if (g->links == 0) return NOT_SUPPORTED;
  if (link >= g->links || counter < 0 || counter > 4) return INVALID_ARGUMENT;
  const struct link* l = &g->link[link];
  const unsigned long long values[5] = {l->replay, l->recovery, l->crc_flit, l->crc_data, 0};
  *v = values[counter];
  return OK;
}
static nvmlReturn_t pcie_value(void* dev, int which, unsigned* v) {
  struct gpu* g = NULL;
  nvmlReturn_t rc = enter(which == 0   ? "nvmlDeviceGetPcieReplayCounter"
                          : which == 1 ? "nvmlDeviceGetCurrPcieLinkGeneration"
                          : which == 2 ? "nvmlDeviceGetMaxPcieLinkGeneration"
                          : which == 3 ? "nvmlDeviceGetCurrPcieLinkWidth"
                                       : "nvmlDeviceGetMaxPcieLinkWidth",
                          dev, &g);
  if (rc != OK) return rc;
  *v = g->pcie[which];
  return OK;
}
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(void* dev, unsigned* v) { return pcie_value(dev, 0, v); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(void* dev, unsigned* v) { return pcie_value(dev, 1, v); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(void* dev, unsigned* v) { return pcie_value(dev, 2, v); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(void* dev, unsigned* v) { return pcie_value(dev, 3, v); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(void* dev, unsigned* v) { return pcie_value(dev, 4, v); }
nvmlReturn_t nvmlDeviceGetFieldValues(void* dev, int n, nvmlFieldValue_t* values) {
  ENTER(dev);
  for (int k = 0; k < n; ++k) {
    values[k].nvmlReturn = values[k].fieldId == 230 ? OK : NOT_SUPPORTED;
    values[k].valueType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
    values[k].value.ullVal = 0;
    values[k].value.uiVal = g->recovery;
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, nvmlProcessInfo_t* infos) {
  ENTER(dev);
  if (*count < g->procs) {
    *count = g->procs;
    return INSUFFICIENT_SIZE;
  }
  for (unsigned k = 0; k < g->procs; ++k) {
    infos[k].pid = g->proc_pid[k];
    infos[k].usedGpuMemory = g->procs_na[k] ? ~0ull : g->procs_bytes[k];
    infos[k].gpuInstanceId = infos[k].computeInstanceId = 0xFFFFFFFFu;
  }
  *count = g->procs;
  return OK;
}
nvmlReturn_t nvmlEventSetCreate(void** set) {
  *set = &event_set;
  return OK;
}
nvmlReturn_t nvmlEventSetFree(void* set) {
  (void)set;
  return OK;
}
nvmlReturn_t nvmlDeviceRegisterEvents(void* dev, unsigned long long types, void* set) {
  (void)dev;
  (void)types;
  (void)set;
  return OK;
}
nvmlReturn_t nvmlEventSetWait_v2(void* set, nvmlEventData_t* data, unsigned timeout_ms) {
  (void)set;
  (void)timeout_ms;
  struct config c;
  read_config(&c);
  if (xids_delivered >= c.xids) return TIMEOUT;
  data->device = &devices[c.xid_gpu[xids_delivered]];
  data->event_type = 0x8;
  data->event_data = (unsigned long long)c.xid_code[xids_delivered];
  xids_delivered++;
  return OK;
}
