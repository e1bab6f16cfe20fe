/* cgrt_vk.h: the Vulkan runtime's internals: the loader's function table, the device context
 * shared by every Vulkan executable of the process, and error mapping.
 *
 * libconvgrad never links against libvulkan: the loader is opened with dlopen and every entry
 * point is fetched through vkGetInstanceProcAddr / vkGetDeviceProcAddr from the X-macro lists
 * below, so a machine without Vulkan gets the clear error "no Vulkan driver found".
 */
#ifndef CGRT_VK_H
#define CGRT_VK_H

#define VK_NO_PROTOTYPES
#include <pthread.h>
#include <vulkan/vulkan.h>

#include "cg_abi.h"

#define CGRT_VK_GLOBAL_FUNCTIONS(X)                                                                \
    X(vkCreateInstance)                                                                            \
    X(vkEnumerateInstanceVersion)                                                                  \
    X(vkEnumerateInstanceLayerProperties)                                                          \
    X(vkEnumerateInstanceExtensionProperties)

#define CGRT_VK_INSTANCE_FUNCTIONS(X)                                                              \
    X(vkDestroyInstance)                                                                           \
    X(vkEnumeratePhysicalDevices)                                                                  \
    X(vkGetPhysicalDeviceProperties)                                                               \
    X(vkGetPhysicalDeviceFeatures2)                                                                \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                    \
    X(vkGetPhysicalDeviceMemoryProperties)                                                         \
    X(vkEnumerateDeviceExtensionProperties)                                                        \
    X(vkCreateDevice)                                                                              \
    X(vkGetDeviceProcAddr)

/* Present only when the validation layer (VK_EXT_debug_utils) is enabled. */
#define CGRT_VK_DEBUG_FUNCTIONS(X)                                                                 \
    X(vkCreateDebugUtilsMessengerEXT)                                                              \
    X(vkDestroyDebugUtilsMessengerEXT)

#define CGRT_VK_DEVICE_FUNCTIONS(X)                                                                \
    X(vkDestroyDevice)                                                                             \
    X(vkGetDeviceQueue)                                                                            \
    X(vkDeviceWaitIdle)                                                                            \
    X(vkCreateBuffer)                                                                              \
    X(vkDestroyBuffer)                                                                             \
    X(vkGetBufferMemoryRequirements)                                                               \
    X(vkAllocateMemory)                                                                            \
    X(vkFreeMemory)                                                                                \
    X(vkBindBufferMemory)                                                                          \
    X(vkMapMemory)                                                                                 \
    X(vkUnmapMemory)                                                                               \
    X(vkInvalidateMappedMemoryRanges)                                                              \
    X(vkCreateShaderModule)                                                                        \
    X(vkDestroyShaderModule)                                                                       \
    X(vkCreateDescriptorSetLayout)                                                                 \
    X(vkDestroyDescriptorSetLayout)                                                                \
    X(vkCreatePipelineLayout)                                                                      \
    X(vkDestroyPipelineLayout)                                                                     \
    X(vkCreateComputePipelines)                                                                    \
    X(vkDestroyPipeline)                                                                           \
    X(vkCreateDescriptorPool)                                                                      \
    X(vkDestroyDescriptorPool)                                                                     \
    X(vkAllocateDescriptorSets)                                                                    \
    X(vkUpdateDescriptorSets)                                                                      \
    X(vkCreateCommandPool)                                                                         \
    X(vkDestroyCommandPool)                                                                        \
    X(vkAllocateCommandBuffers)                                                                    \
    X(vkBeginCommandBuffer)                                                                        \
    X(vkEndCommandBuffer)                                                                          \
    X(vkCmdBindPipeline)                                                                           \
    X(vkCmdBindDescriptorSets)                                                                     \
    X(vkCmdPushConstants)                                                                          \
    X(vkCmdDispatch)                                                                               \
    X(vkCmdPipelineBarrier)                                                                        \
    X(vkCmdCopyBuffer)                                                                             \
    X(vkCmdFillBuffer)                                                                             \
    X(vkCmdWriteTimestamp)                                                                         \
    X(vkCmdResetQueryPool)                                                                         \
    X(vkCreateQueryPool)                                                                           \
    X(vkDestroyQueryPool)                                                                          \
    X(vkGetQueryPoolResults)                                                                       \
    X(vkCreateFence)                                                                               \
    X(vkDestroyFence)                                                                              \
    X(vkResetFences)                                                                               \
    X(vkWaitForFences)                                                                             \
    X(vkQueueSubmit)

#define CGRT_VK_DECLARE(name) PFN_##name name;

typedef struct cgrt_vk_functions {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    CGRT_VK_GLOBAL_FUNCTIONS(CGRT_VK_DECLARE)
    CGRT_VK_INSTANCE_FUNCTIONS(CGRT_VK_DECLARE)
    CGRT_VK_DEBUG_FUNCTIONS(CGRT_VK_DECLARE)
    CGRT_VK_DEVICE_FUNCTIONS(CGRT_VK_DECLARE)
} cgrt_vk_functions;

/* Device features a kernel may need (manifest "features"), as bits. */
enum {
    CGRT_VK_FEATURE_STORAGE16 = 1u << 0,  /* "storage_buffer_16bit" */
    CGRT_VK_FEATURE_ATOMIC_F32 = 1u << 1, /* "float32_atomic_add" */
    CGRT_VK_FEATURE_COUNT = 2
};

/* Bit of a manifest feature name, 0 when unknown; and the Vulkan name of a bit. */
unsigned cgrt_vk_feature_bit(const char *name);
const char *cgrt_vk_feature_vulkan_name(unsigned bit);

#define CGRT_VK_MAX_MESSAGES 32

/* One instance + device + compute queue, shared by every Vulkan executable of the process and
 * reference-counted (cgrt_vk_context_acquire / _release). Environment, read when it is
 * created: CONVGRAD_VK_DEVICE (substring of the device name to use), CONVGRAD_VK_VALIDATION=1
 * (Khronos validation layer with synchronization validation; every warning or error it
 * reports fails the operation that caused it). */
typedef struct cgrt_vk_context {
    void *library;
    cgrt_vk_functions fn;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
    VkPhysicalDeviceProperties properties;
    VkPhysicalDeviceMemoryProperties memory;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    uint32_t timestamp_bits; /* 0: no timestamps on the queue */
    unsigned features;       /* CGRT_VK_FEATURE_* bits enabled on the device */
    int validation;
    int lost; /* VK_ERROR_DEVICE_LOST seen: every later call fails */
    int refs;
    pthread_mutex_t queue_lock;   /* vkQueueSubmit needs external synchronization */
    pthread_mutex_t message_lock; /* the messenger may fire on any thread */
    int message_count;
    char messages[CGRT_VK_MAX_MESSAGES][CG_MSG_MAX];
} cgrt_vk_context;

/* Returns the process's context, creating it on first use. CG_ERR_DEVICE with a reason ("no
 * Vulkan driver found: ...") when Vulkan is missing or no device fits. */
cg_status cgrt_vk_context_acquire(cgrt_vk_context **context, char msg[CG_MSG_MAX]);
void cgrt_vk_context_release(cgrt_vk_context *context);

/* Validation messages recorded so far; and the first one recorded at or after `since`
 * (CG_ERR_DEVICE with it in msg, prefixed by `what`), CG_OK when there is none. */
int cgrt_vk_message_count(cgrt_vk_context *context);
cg_status cgrt_vk_messages_since(cgrt_vk_context *context, int since, const char *what,
                                 char msg[CG_MSG_MAX]);

/* Maps a VkResult to a status: out of host/device memory -> CG_ERR_NOMEM, device lost ->
 * CG_ERR_DEVICE (and marks the context lost), anything else -> CG_ERR_DEVICE; msg names the
 * call. */
cg_status cgrt_vk_check(cgrt_vk_context *context, VkResult result, const char *what,
                        char msg[CG_MSG_MAX]);

const char *cgrt_vk_result_name(VkResult result);

/* Index of a memory type allowed by `type_bits` with all of `required` (and, among those, one
 * with all of `preferred` if any), or -1. */
int cgrt_vk_memory_type(const cgrt_vk_context *context, uint32_t type_bits,
                        VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);

/* Loader (cgrt_vk_loader.c): dlopen + global entry points; then per instance and device. */
cg_status cgrt_vk_load_library(cgrt_vk_context *context, char msg[CG_MSG_MAX]);
cg_status cgrt_vk_load_instance(cgrt_vk_context *context, char msg[CG_MSG_MAX]);
cg_status cgrt_vk_load_device(cgrt_vk_context *context, char msg[CG_MSG_MAX]);
void cgrt_vk_unload_library(cgrt_vk_context *context);

#endif /* CGRT_VK_H */
