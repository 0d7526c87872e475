// The backend registry: every registered backend (reg) and its devices, in registration order.
//
// The built-in backends (CPU always; CUDA when built with GGML_USE_CUDA) register themselves on first use,
// GPUs first so that "best" and the device order put them before the CPU. Backends in shared libraries
// can be added with ggml_backend_load(). The registry is the one piece of global state of ggml-backend;
// a mutex guards it.
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef GGML_USE_CUDA
ggml_backend_reg_t ggml_backend_cuda_reg(void);
#endif

#define GGML_MAX_BACKEND_REGS    16
#define GGML_MAX_BACKEND_DEVICES 64

struct reg_entry {
    ggml_backend_reg_t reg;
    void *             handle; // dlopen handle when loaded from a library, else NULL
};

static struct {
    struct reg_entry   regs[GGML_MAX_BACKEND_REGS];
    size_t             n_regs;
    ggml_backend_dev_t devs[GGML_MAX_BACKEND_DEVICES];
    size_t             n_devs;
} g_registry;

static pthread_mutex_t g_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t  g_registry_once  = PTHREAD_ONCE_INIT;

static void registry_add_device_locked(ggml_backend_dev_t device) {
    for (size_t i = 0; i < g_registry.n_devs; i++) {
        if (g_registry.devs[i] == device) {
            return;
        }
    }
    if (g_registry.n_devs >= GGML_MAX_BACKEND_DEVICES) {
        GGML_LOG_ERROR("ggml_backend_device_register: too many devices (max %d)\n", GGML_MAX_BACKEND_DEVICES);
        return;
    }
    g_registry.devs[g_registry.n_devs++] = device;
}

static bool registry_add_reg_locked(ggml_backend_reg_t reg, void * handle) {
    if (reg == NULL) {
        return false;
    }
    for (size_t i = 0; i < g_registry.n_regs; i++) {
        if (g_registry.regs[i].reg == reg) {
            return true;
        }
    }
    if (g_registry.n_regs >= GGML_MAX_BACKEND_REGS) {
        GGML_LOG_ERROR("ggml_backend_register: too many backends (max %d)\n", GGML_MAX_BACKEND_REGS);
        return false;
    }
    g_registry.regs[g_registry.n_regs].reg    = reg;
    g_registry.regs[g_registry.n_regs].handle = handle;
    g_registry.n_regs++;
    const size_t n = ggml_backend_reg_dev_count(reg);
    for (size_t i = 0; i < n; i++) {
        registry_add_device_locked(ggml_backend_reg_dev_get(reg, i));
    }
    return true;
}

static void registry_init(void) {
    pthread_mutex_lock(&g_registry_mutex);
#ifdef GGML_USE_CUDA
    registry_add_reg_locked(ggml_backend_cuda_reg(), NULL);
#endif
    registry_add_reg_locked(ggml_backend_cpu_reg(), NULL);
    pthread_mutex_unlock(&g_registry_mutex);
}

static void registry_ensure(void) {
    pthread_once(&g_registry_once, registry_init);
}

void ggml_backend_register(ggml_backend_reg_t reg) {
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    registry_add_reg_locked(reg, NULL);
    pthread_mutex_unlock(&g_registry_mutex);
}

void ggml_backend_device_register(ggml_backend_dev_t device) {
    if (device == NULL) {
        return;
    }
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    registry_add_device_locked(device);
    pthread_mutex_unlock(&g_registry_mutex);
}

size_t ggml_backend_reg_count(void) {
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    const size_t n = g_registry.n_regs;
    pthread_mutex_unlock(&g_registry_mutex);
    return n;
}

ggml_backend_reg_t ggml_backend_reg_get(size_t index) {
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    ggml_backend_reg_t reg = index < g_registry.n_regs ? g_registry.regs[index].reg : NULL;
    pthread_mutex_unlock(&g_registry_mutex);
    if (reg == NULL) {
        GGML_LOG_ERROR("%s: backend index %zu out of range\n", __func__, index);
    }
    return reg;
}

ggml_backend_reg_t ggml_backend_reg_by_name(const char * name) {
    if (name == NULL) {
        return NULL;
    }
    const size_t n = ggml_backend_reg_count();
    for (size_t i = 0; i < n; i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        if (reg != NULL && strcasecmp(ggml_backend_reg_name(reg), name) == 0) {
            return reg;
        }
    }
    return NULL;
}

size_t ggml_backend_dev_count(void) {
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    const size_t n = g_registry.n_devs;
    pthread_mutex_unlock(&g_registry_mutex);
    return n;
}

ggml_backend_dev_t ggml_backend_dev_get(size_t index) {
    registry_ensure();
    pthread_mutex_lock(&g_registry_mutex);
    ggml_backend_dev_t dev = index < g_registry.n_devs ? g_registry.devs[index] : NULL;
    pthread_mutex_unlock(&g_registry_mutex);
    if (dev == NULL) {
        GGML_LOG_ERROR("%s: device index %zu out of range\n", __func__, index);
    }
    return dev;
}

ggml_backend_dev_t ggml_backend_dev_by_name(const char * name) {
    if (name == NULL) {
        return NULL;
    }
    const size_t n = ggml_backend_dev_count();
    for (size_t i = 0; i < n; i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (dev != NULL && strcasecmp(ggml_backend_dev_name(dev), name) == 0) {
            return dev;
        }
    }
    return NULL;
}

ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type) {
    const size_t n = ggml_backend_dev_count();
    for (size_t i = 0; i < n; i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (dev != NULL && ggml_backend_dev_type(dev) == type) {
            return dev;
        }
    }
    return NULL;
}

ggml_backend_t ggml_backend_init_by_name(const char * name, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    if (dev == NULL) {
        GGML_LOG_ERROR("%s: no device named '%s'\n", __func__, name ? name : "(null)");
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(type);
    if (dev == NULL) {
        GGML_LOG_ERROR("%s: no device of type %d\n", __func__, (int) type);
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_best(void) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU);
    if (dev == NULL) {
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_IGPU);
    }
    if (dev == NULL) {
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    }
    if (dev == NULL) {
        GGML_LOG_ERROR("%s: no device available\n", __func__);
        return NULL;
    }
    return ggml_backend_dev_init(dev, NULL);
}

//
// dynamic loading
//

ggml_backend_reg_t ggml_backend_load(const char * path) {
    if (path == NULL) {
        GGML_LOG_ERROR("%s: path is NULL\n", __func__);
        return NULL;
    }
    registry_ensure();
    void * handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        GGML_LOG_ERROR("%s: failed to load %s: %s\n", __func__, path, dlerror());
        return NULL;
    }
    // function pointers from dlsym go through a union: ISO C does not allow converting void * to them
    union { void * p; ggml_backend_score_t fn; } score = { dlsym(handle, "ggml_backend_score") };
    if (score.p != NULL && score.fn() == 0) {
        GGML_LOG_INFO("%s: backend %s is not supported on this system\n", __func__, path);
        dlclose(handle);
        return NULL;
    }
    union { void * p; ggml_backend_init_t fn; } init = { dlsym(handle, "ggml_backend_init") };
    if (init.p == NULL) {
        GGML_LOG_ERROR("%s: %s does not export ggml_backend_init\n", __func__, path);
        dlclose(handle);
        return NULL;
    }
    ggml_backend_reg_t reg = init.fn();
    if (reg == NULL || reg->api_version != GGML_BACKEND_API_VERSION) {
        GGML_LOG_ERROR("%s: %s: %s (expected API version %d)\n", __func__, path,
                       reg == NULL ? "initialization failed" : "incompatible API version", GGML_BACKEND_API_VERSION);
        dlclose(handle);
        return NULL;
    }
    pthread_mutex_lock(&g_registry_mutex);
    const bool ok = registry_add_reg_locked(reg, handle);
    pthread_mutex_unlock(&g_registry_mutex);
    if (!ok) {
        dlclose(handle);
        return NULL;
    }
    return reg;
}

void ggml_backend_unload(ggml_backend_reg_t reg) {
    if (reg == NULL) {
        return;
    }
    registry_ensure();
    void * handle = NULL;
    pthread_mutex_lock(&g_registry_mutex);
    for (size_t i = 0; i < g_registry.n_regs; i++) {
        if (g_registry.regs[i].reg != reg) {
            continue;
        }
        handle = g_registry.regs[i].handle;
        memmove(&g_registry.regs[i], &g_registry.regs[i + 1], (g_registry.n_regs - i - 1) * sizeof(g_registry.regs[0]));
        g_registry.n_regs--;
        // drop the devices of this reg, keeping the order of the others
        size_t k = 0;
        for (size_t j = 0; j < g_registry.n_devs; j++) {
            if (g_registry.devs[j]->reg != reg) {
                g_registry.devs[k++] = g_registry.devs[j];
            }
        }
        g_registry.n_devs = k;
        break;
    }
    pthread_mutex_unlock(&g_registry_mutex);
    if (handle != NULL) {
        dlclose(handle);
    }
}

void ggml_backend_load_all(void) {
    ggml_backend_load_all_from_path(NULL);
}

// loads every libggml-<name>.so in dir_path, plus the library named by GGML_BACKEND_PATH (an out-of-tree
// backend); with dir_path NULL only the latter. The built-in backends need no loading.
void ggml_backend_load_all_from_path(const char * dir_path) {
    registry_ensure();
    if (dir_path != NULL) {
        DIR * dir = opendir(dir_path);
        if (dir == NULL) {
            GGML_LOG_ERROR("%s: cannot open directory %s\n", __func__, dir_path);
        } else {
            struct dirent * ent;
            while ((ent = readdir(dir)) != NULL) {
                const char * name = ent->d_name;
                const size_t len = strlen(name);
                if (strncmp(name, "libggml-", 8) != 0 || len < 12 || strcmp(name + len - 3, ".so") != 0) {
                    continue;
                }
                char path[4096];
                if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir_path, name) >= sizeof(path)) {
                    continue;
                }
                ggml_backend_load(path);
            }
            closedir(dir);
        }
    }
    const char * extra = getenv("GGML_BACKEND_PATH");
    if (extra != NULL && *extra) {
        ggml_backend_load(extra);
    }
}
