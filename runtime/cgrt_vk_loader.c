/* cgrt_vk_loader.c: opens the Vulkan loader with dlopen and fills the function table from the
 * X-macro lists of cgrt_vk.h (after Halide's vulkan_functions.h): no link-time dependency on
 * libvulkan, so the library loads and reports "no Vulkan driver found" on machines without. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_vk.h"

cg_status cgrt_vk_load_library(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
    /* CONVGRAD_VK_LOADER names another loader (a Vulkan SDK's, say) */
    const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
    const char *chosen = getenv("CONVGRAD_VK_LOADER");
    size_t count = 2;
    if (chosen && *chosen) names[0] = chosen, count = 1;
    const char *error = "";
    for (size_t i = 0; i < count && !c->library; i++) {
        c->library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!c->library) error = dlerror();
    }
    if (!c->library) {
        snprintf(msg, CG_MSG_MAX,
                 "no Vulkan driver found: the Vulkan loader cannot be loaded (%.120s); install "
                 "libvulkan1 and a driver (mesa-vulkan-drivers for lavapipe)",
                 error ? error : "");
        return CG_ERR_DEVICE;
    }
    void *symbol = dlsym(c->library, "vkGetInstanceProcAddr");
    memcpy(&c->fn.vkGetInstanceProcAddr, &symbol, sizeof symbol);
    if (!c->fn.vkGetInstanceProcAddr) {
        snprintf(msg, CG_MSG_MAX, "no Vulkan driver found: libvulkan has no vkGetInstanceProcAddr");
        return CG_ERR_DEVICE;
    }
#define LOAD_GLOBAL(name)                                                                          \
    c->fn.name = (PFN_##name)c->fn.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name);
    CGRT_VK_GLOBAL_FUNCTIONS(LOAD_GLOBAL)
#undef LOAD_GLOBAL
    if (!c->fn.vkCreateInstance || !c->fn.vkEnumerateInstanceLayerProperties ||
        !c->fn.vkEnumerateInstanceExtensionProperties) {
        snprintf(msg, CG_MSG_MAX, "no Vulkan driver found: the loader lacks vkCreateInstance");
        return CG_ERR_DEVICE;
    }
    if (!c->fn.vkEnumerateInstanceVersion) {
        snprintf(msg, CG_MSG_MAX, "the Vulkan loader is 1.0; convgrad needs Vulkan 1.1");
        return CG_ERR_DEVICE;
    }
    return CG_OK;
}

cg_status cgrt_vk_load_instance(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
#define LOAD_INSTANCE(name)                                                                        \
    c->fn.name = (PFN_##name)c->fn.vkGetInstanceProcAddr(c->instance, #name);                      \
    if (!c->fn.name) {                                                                             \
        snprintf(msg, CG_MSG_MAX, "Vulkan: the loader has no %s", #name);                          \
        return CG_ERR_DEVICE;                                                                      \
    }
    CGRT_VK_INSTANCE_FUNCTIONS(LOAD_INSTANCE)
    if (c->validation) {
        CGRT_VK_DEBUG_FUNCTIONS(LOAD_INSTANCE)
    }
#undef LOAD_INSTANCE
    return CG_OK;
}

cg_status cgrt_vk_load_device(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
#define LOAD_DEVICE(name)                                                                          \
    c->fn.name = (PFN_##name)c->fn.vkGetDeviceProcAddr(c->device, #name);                          \
    if (!c->fn.name) {                                                                             \
        snprintf(msg, CG_MSG_MAX, "Vulkan: the driver has no %s", #name);                          \
        return CG_ERR_DEVICE;                                                                      \
    }
    CGRT_VK_DEVICE_FUNCTIONS(LOAD_DEVICE)
#undef LOAD_DEVICE
    return CG_OK;
}

void cgrt_vk_unload_library(cgrt_vk_context *c) {
    if (c->library) dlclose(c->library);
    c->library = NULL;
}
