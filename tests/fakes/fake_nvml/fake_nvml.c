/* A fake libnvidia-ml.so for tests, loaded by the agent through its real dlopen path.
 * Driven by the file named in FAKE_NVML_CONFIG, re-read on every call, one directive a line:
 *   count N                   number of GPUs (default 0)
 *   mem I USED TOTAL          memory of GPU I in bytes
 *   xid I CODE                an XID event on GPU I (each line is delivered once)
 *   hang FUNCTION             FUNCTION blocks until the line is removed
 *   lost I                    GPU I answers NVML_ERROR_GPU_IS_LOST
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
  void* device;
  unsigned long long event_type, event_data;
  unsigned int gpu_instance_id, compute_instance_id;
} nvmlEventData_t;

#define MAX_GPUS 16
static char devices[MAX_GPUS];
static int xids_delivered;
static int event_set;

struct config {
  unsigned count;
  unsigned long long used[MAX_GPUS], total[MAX_GPUS];
  int lost[MAX_GPUS];
  int xid_gpu[64], xid_code[64], xids;
  char hang[16][64];
  int hangs;
};

static void read_config(struct config* c) {
  memset(c, 0, sizeof *c);
  const char* path = getenv("FAKE_NVML_CONFIG");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[256], word[64];
  while (fgets(line, sizeof line, f)) {
    unsigned i;
    unsigned long long a, b;
    int code;
    if (sscanf(line, "count %u", &c->count) == 1) continue;
    if (sscanf(line, "mem %u %llu %llu", &i, &a, &b) == 3 && i < MAX_GPUS) {
      c->used[i] = a;
      c->total[i] = b;
    } else if (sscanf(line, "xid %u %d", &i, &code) == 2 && c->xids < 64) {
      c->xid_gpu[c->xids] = (int)i;
      c->xid_code[c->xids++] = code;
    } else if (sscanf(line, "lost %u", &i) == 1 && i < MAX_GPUS) {
      c->lost[i] = 1;
    } else if (sscanf(line, "hang %63s", word) == 1 && c->hangs < 16) {
      strcpy(c->hang[c->hangs++], word);
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

static int index_of(void* dev) { return (int)((char*)dev - devices); }

nvmlReturn_t nvmlInit_v2(void) {
  maybe_hang("nvmlInit_v2");
  return 0;
}
nvmlReturn_t nvmlShutdown(void) { return 0; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  maybe_hang("nvmlDeviceGetCount_v2");
  struct config c;
  read_config(&c);
  *n = c.count;
  return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  struct config c;
  read_config(&c);
  if (i >= c.count || i >= MAX_GPUS) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *dev = &devices[i];
  return 0;
}
nvmlReturn_t nvmlDeviceGetName(void* dev, char* name, unsigned len) {
  snprintf(name, len, "Fake GPU %d", index_of(dev));
  return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(void* dev, nvmlMemory_t* m) {
  maybe_hang("nvmlDeviceGetMemoryInfo");
  struct config c;
  read_config(&c);
  int i = index_of(dev);
  if (c.lost[i]) return 15;
  m->used = c.used[i];
  m->total = c.total[i];
  m->free = c.total[i] - c.used[i];
  return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(void* dev, nvmlUtilization_t* u) {
  (void)dev;
  u->gpu = 87;
  u->memory = 40;
  return 0;
}
nvmlReturn_t nvmlDeviceGetTemperature(void* dev, int sensor, unsigned* t) {
  (void)dev;
  (void)sensor;
  *t = 65;
  return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  (void)dev;
  *mw = 300000;
  return 0;
}
nvmlReturn_t nvmlEventSetCreate(void** set) {
  *set = &event_set;
  return 0;
}
nvmlReturn_t nvmlDeviceRegisterEvents(void* dev, unsigned long long types, void* set) {
  (void)dev;
  (void)types;
  (void)set;
  return 0;
}
nvmlReturn_t nvmlEventSetWait_v2(void* set, nvmlEventData_t* data, unsigned timeout_ms) {
  (void)set;
  (void)timeout_ms;
  struct config c;
  read_config(&c);
  if (xids_delivered >= c.xids) return 10; /* NVML_ERROR_TIMEOUT */
  data->device = &devices[c.xid_gpu[xids_delivered]];
  data->event_type = 0x8;
  data->event_data = (unsigned long long)c.xid_code[xids_delivered];
  xids_delivered++;
  return 0;
}
