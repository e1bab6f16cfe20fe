/* cgrt_vk_context.c: the process's Vulkan context: instance (with the validation layer on
 * request), device choice, one compute queue, the optional features convgrad kernels use, and
 * VkResult -> cg_status mapping. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_vk.h"

static pthread_mutex_t context_lock = PTHREAD_MUTEX_INITIALIZER;
static cgrt_vk_context *shared_context; /* guarded by context_lock */

static const char *const feature_names[CGRT_VK_FEATURE_COUNT] = {"storage_buffer_16bit",
                                                                 "float32_atomic_add"};
static const char *const feature_vulkan_names[CGRT_VK_FEATURE_COUNT] = {
    "storageBuffer16BitAccess", "shaderBufferFloat32AtomicAdd (VK_EXT_shader_atomic_float)"};

unsigned cgrt_vk_feature_bit(const char *name) {
    for (unsigned i = 0; i < CGRT_VK_FEATURE_COUNT; i++)
        if (!strcmp(name, feature_names[i])) return 1u << i;
    return 0;
}

const char *cgrt_vk_feature_vulkan_name(unsigned bit) {
    for (unsigned i = 0; i < CGRT_VK_FEATURE_COUNT; i++)
        if (bit == 1u << i) return feature_vulkan_names[i];
    return "?";
}

const char *cgrt_vk_result_name(VkResult result) {
    switch (result) {
#define NAME(r)                                                                                    \
    case r: return #r;
        NAME(VK_SUCCESS)
        NAME(VK_NOT_READY)
        NAME(VK_TIMEOUT)
        NAME(VK_INCOMPLETE)
        NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
        NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        NAME(VK_ERROR_INITIALIZATION_FAILED)
        NAME(VK_ERROR_DEVICE_LOST)
        NAME(VK_ERROR_MEMORY_MAP_FAILED)
        NAME(VK_ERROR_LAYER_NOT_PRESENT)
        NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
        NAME(VK_ERROR_FEATURE_NOT_PRESENT)
        NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
        NAME(VK_ERROR_TOO_MANY_OBJECTS)
        NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
        NAME(VK_ERROR_UNKNOWN)
#undef NAME
    default: return "VkResult error";
    }
}

cg_status cgrt_vk_check(cgrt_vk_context *c, VkResult result, const char *what,
                        char msg[CG_MSG_MAX]) {
    switch (result) {
    case VK_SUCCESS: return CG_OK;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        snprintf(msg, CG_MSG_MAX, "Vulkan: out of %s memory in %s",
                 result == VK_ERROR_OUT_OF_HOST_MEMORY ? "host" : "device", what);
        return CG_ERR_NOMEM;
    case VK_ERROR_DEVICE_LOST:
        if (c) c->lost = 1;
        snprintf(msg, CG_MSG_MAX,
                 "Vulkan: device lost in %s (the driver reset the GPU; destroy every Vulkan "
                 "executable and create them again)",
                 what);
        return CG_ERR_DEVICE;
    default:
        snprintf(msg, CG_MSG_MAX, "Vulkan: %s failed: %s", what, cgrt_vk_result_name(result));
        return CG_ERR_DEVICE;
    }
}

int cgrt_vk_memory_type(const cgrt_vk_context *c, uint32_t type_bits,
                        VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
    int fallback = -1;
    for (uint32_t i = 0; i < c->memory.memoryTypeCount; i++) {
        VkMemoryPropertyFlags flags = c->memory.memoryTypes[i].propertyFlags;
        if (!(type_bits & (1u << i)) || (flags & required) != required) continue;
        if ((flags & preferred) == preferred) return (int)i;
        if (fallback < 0) fallback = (int)i;
    }
    return fallback;
}

/* ---- validation messages ---- */

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user) {
    (void)types;
    cgrt_vk_context *c = user;
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
    pthread_mutex_lock(&c->message_lock);
    if (c->message_count < CGRT_VK_MAX_MESSAGES)
        snprintf(c->messages[c->message_count], CG_MSG_MAX, "%s",
                 data && data->pMessage ? data->pMessage : "(no text)");
    c->message_count++;
    pthread_mutex_unlock(&c->message_lock);
    if (getenv("CONVGRAD_VK_VERBOSE"))
        fprintf(stderr, "convgrad: vulkan validation: %s\n",
                data && data->pMessage ? data->pMessage : "");
    return VK_FALSE;
}

int cgrt_vk_message_count(cgrt_vk_context *c) {
    pthread_mutex_lock(&c->message_lock);
    int count = c->message_count;
    pthread_mutex_unlock(&c->message_lock);
    return count;
}

cg_status cgrt_vk_messages_since(cgrt_vk_context *c, int since, const char *what,
                                 char msg[CG_MSG_MAX]) {
    cg_status status = CG_OK;
    pthread_mutex_lock(&c->message_lock);
    if (c->message_count > since) {
        status = CG_ERR_DEVICE;
        if (since < CGRT_VK_MAX_MESSAGES)
            snprintf(msg, CG_MSG_MAX, "%s: Vulkan validation: %.200s", what, c->messages[since]);
        else
            snprintf(msg, CG_MSG_MAX, "%s: %d Vulkan validation messages", what,
                     c->message_count - since);
    }
    pthread_mutex_unlock(&c->message_lock);
    return status;
}

/* ---- instance ---- */

static int has_layer(cgrt_vk_context *c, const char *name) {
    uint32_t count = 0;
    if (c->fn.vkEnumerateInstanceLayerProperties(&count, NULL) != VK_SUCCESS || !count) return 0;
    VkLayerProperties *layers = calloc(count, sizeof *layers);
    int found = 0;
    if (layers && c->fn.vkEnumerateInstanceLayerProperties(&count, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = !strcmp(layers[i].layerName, name);
    free(layers);
    return found;
}

static cg_status create_instance(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
    static const char *const layer = "VK_LAYER_KHRONOS_validation";
    const char *extensions[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                                 VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    if (c->validation && !has_layer(c, layer)) {
        snprintf(msg, CG_MSG_MAX,
                 "CONVGRAD_VK_VALIDATION is set but %s is not installed (vulkan-validationlayers)",
                 layer);
        return CG_ERR_DEVICE;
    }
    uint32_t version = 0;
    c->fn.vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_1) {
        snprintf(msg, CG_MSG_MAX, "the Vulkan loader is %u.%u; convgrad needs Vulkan 1.1",
                 VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
        return CG_ERR_DEVICE;
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "convgrad",
                             .pEngineName = "convgrad",
                             .apiVersion = VK_API_VERSION_1_1};
    /* synchronization validation: core validation alone misses missing barriers */
    VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = enables};
    VkDebugUtilsMessengerCreateInfoEXT messenger = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .pNext = &features,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = c};
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                 .pNext = c->validation ? &messenger : NULL,
                                 .pApplicationInfo = &app,
                                 .enabledLayerCount = c->validation ? 1 : 0,
                                 .ppEnabledLayerNames = &layer,
                                 .enabledExtensionCount = c->validation ? 2 : 0,
                                 .ppEnabledExtensionNames = extensions};
    VkResult result = c->fn.vkCreateInstance(&info, NULL, &c->instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
        snprintf(msg, CG_MSG_MAX, "no Vulkan driver found: the loader finds no driver (ICD)%s%s",
                 getenv("VK_ICD_FILENAMES") ? "; VK_ICD_FILENAMES=" : "",
                 getenv("VK_ICD_FILENAMES") ? getenv("VK_ICD_FILENAMES") : "");
        return CG_ERR_DEVICE;
    }
    cg_status status = cgrt_vk_check(c, result, "vkCreateInstance", msg);
    if (status == CG_OK) status = cgrt_vk_load_instance(c, msg);
    if (status == CG_OK && c->validation) {
        messenger.pNext = NULL;
        status = cgrt_vk_check(
            c, c->fn.vkCreateDebugUtilsMessengerEXT(c->instance, &messenger, NULL, &c->messenger),
            "vkCreateDebugUtilsMessengerEXT", msg);
    }
    return status;
}

/* ---- device ---- */

static int type_rank(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

static int contains_nocase(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return 1;
    }
    return n == 0;
}

/* A queue family with compute, preferring one without graphics (NVIDIA's async compute
 * family); UINT32_MAX when there is none. */
static uint32_t compute_family(cgrt_vk_context *c, VkPhysicalDevice device, uint32_t *bits) {
    uint32_t count = 0, best = UINT32_MAX;
    c->fn.vkGetPhysicalDeviceQueueFamilyProperties(device, &count, NULL);
    VkQueueFamilyProperties families[32];
    if (count > 32) count = 32;
    c->fn.vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families);
    for (uint32_t i = 0; i < count; i++) {
        if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || !families[i].queueCount) continue;
        int dedicated = !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
        if (best == UINT32_MAX || dedicated) {
            best = i;
            *bits = families[i].timestampValidBits;
            if (dedicated) break;
        }
    }
    return best;
}

static cg_status pick_device(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
    uint32_t count = 0;
    cg_status status = cgrt_vk_check(c, c->fn.vkEnumeratePhysicalDevices(c->instance, &count, NULL),
                                     "vkEnumeratePhysicalDevices", msg);
    if (status != CG_OK) return status;
    if (!count) {
        snprintf(msg, CG_MSG_MAX, "no Vulkan driver found: the loader lists no device");
        return CG_ERR_DEVICE;
    }
    VkPhysicalDevice devices[16];
    if (count > 16) count = 16;
    c->fn.vkEnumeratePhysicalDevices(c->instance, &count, devices);
    const char *wanted = getenv("CONVGRAD_VK_DEVICE");
    int best_rank = -1;
    char names[160] = "";
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceProperties p;
        c->fn.vkGetPhysicalDeviceProperties(devices[i], &p);
        uint32_t bits = 0, family = compute_family(c, devices[i], &bits);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s'%s'", i ? ", " : "",
                 p.deviceName);
        if (family == UINT32_MAX || p.apiVersion < VK_API_VERSION_1_1) continue;
        if (wanted && *wanted && !contains_nocase(p.deviceName, wanted)) continue;
        int rank = type_rank(p.deviceType);
        if (rank <= best_rank) continue;
        best_rank = rank;
        c->physical = devices[i];
        c->properties = p;
        c->queue_family = family;
        c->timestamp_bits = bits;
    }
    if (best_rank < 0) {
        if (wanted && *wanted)
            snprintf(msg, CG_MSG_MAX,
                     "CONVGRAD_VK_DEVICE='%.40s' matches no Vulkan 1.1 device with a compute "
                     "queue; devices: %s",
                     wanted, names);
        else
            snprintf(msg, CG_MSG_MAX, "no Vulkan 1.1 device with a compute queue; devices: %s",
                     names);
        return CG_ERR_DEVICE;
    }
    c->fn.vkGetPhysicalDeviceMemoryProperties(c->physical, &c->memory);
    return CG_OK;
}

static int has_device_extension(cgrt_vk_context *c, const char *name) {
    uint32_t count = 0;
    c->fn.vkEnumerateDeviceExtensionProperties(c->physical, NULL, &count, NULL);
    VkExtensionProperties *list = calloc(count ? count : 1, sizeof *list);
    int found = 0;
    if (list &&
        c->fn.vkEnumerateDeviceExtensionProperties(c->physical, NULL, &count, list) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = !strcmp(list[i].extensionName, name);
    free(list);
    return found;
}

static cg_status create_device(cgrt_vk_context *c, char msg[CG_MSG_MAX]) {
    /* Enable exactly the optional features a convgrad kernel may need, when present. */
    int atomic_ext = has_device_extension(c, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDevice16BitStorageFeatures storage16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .pNext = atomic_ext ? &atomic : NULL};
    VkPhysicalDeviceFeatures2 query = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                       .pNext = &storage16};
    c->fn.vkGetPhysicalDeviceFeatures2(c->physical, &query);
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
        .shaderBufferFloat32AtomicAdd = atomic.shaderBufferFloat32AtomicAdd};
    VkPhysicalDevice16BitStorageFeatures storage16_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .storageBuffer16BitAccess = storage16.storageBuffer16BitAccess};
    int use_atomic = atomic_ext && atomic.shaderBufferFloat32AtomicAdd;
    storage16_on.pNext = use_atomic ? &atomic_on : NULL;
    VkPhysicalDeviceFeatures2 enable = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                        .pNext = &storage16_on};
    if (storage16.storageBuffer16BitAccess) c->features |= CGRT_VK_FEATURE_STORAGE16;
    if (use_atomic) c->features |= CGRT_VK_FEATURE_ATOMIC_F32;
    const char *extensions[] = {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = c->queue_family,
                                     .queueCount = 1,
                                     .pQueuePriorities = &priority};
    VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &enable,
                               .queueCreateInfoCount = 1,
                               .pQueueCreateInfos = &queue,
                               .enabledExtensionCount = use_atomic ? 1 : 0,
                               .ppEnabledExtensionNames = extensions};
    cg_status status = cgrt_vk_check(c, c->fn.vkCreateDevice(c->physical, &info, NULL, &c->device),
                                     "vkCreateDevice", msg);
    if (status == CG_OK) status = cgrt_vk_load_device(c, msg);
    if (status == CG_OK) c->fn.vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);
    return status;
}

static void destroy(cgrt_vk_context *c) {
    if (c->device) {
        c->fn.vkDeviceWaitIdle(c->device);
        c->fn.vkDestroyDevice(c->device, NULL);
    }
    if (c->messenger) c->fn.vkDestroyDebugUtilsMessengerEXT(c->instance, c->messenger, NULL);
    if (c->instance) c->fn.vkDestroyInstance(c->instance, NULL);
    cgrt_vk_unload_library(c);
    pthread_mutex_destroy(&c->queue_lock);
    pthread_mutex_destroy(&c->message_lock);
    free(c);
}

cg_status cgrt_vk_context_acquire(cgrt_vk_context **out, char msg[CG_MSG_MAX]) {
    *out = NULL;
    pthread_mutex_lock(&context_lock);
    if (shared_context) {
        shared_context->refs++;
        *out = shared_context;
        pthread_mutex_unlock(&context_lock);
        return CG_OK;
    }
    cgrt_vk_context *c = calloc(1, sizeof *c);
    if (!c) {
        pthread_mutex_unlock(&context_lock);
        snprintf(msg, CG_MSG_MAX, "out of memory");
        return CG_ERR_NOMEM;
    }
    pthread_mutex_init(&c->queue_lock, NULL);
    pthread_mutex_init(&c->message_lock, NULL);
    const char *validation = getenv("CONVGRAD_VK_VALIDATION");
    c->validation = validation && *validation && strcmp(validation, "0") != 0;
    cg_status status = cgrt_vk_load_library(c, msg);
    if (status == CG_OK) status = create_instance(c, msg);
    if (status == CG_OK) status = pick_device(c, msg);
    if (status == CG_OK) status = create_device(c, msg);
    if (status == CG_OK) status = cgrt_vk_messages_since(c, 0, "device creation", msg);
    if (status != CG_OK) {
        destroy(c);
        pthread_mutex_unlock(&context_lock);
        return status;
    }
    c->refs = 1;
    shared_context = *out = c;
    pthread_mutex_unlock(&context_lock);
    return CG_OK;
}

void cgrt_vk_context_release(cgrt_vk_context *c) {
    if (!c) return;
    pthread_mutex_lock(&context_lock);
    if (--c->refs == 0) {
        shared_context = NULL;
        destroy(c);
    }
    pthread_mutex_unlock(&context_lock);
}
